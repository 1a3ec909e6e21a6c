package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/connect/connecttest"
	"github.com/sluice-sql/sluice/engine"
)

// TestConnectorScript runs the connector statements from a script file
// (sluice -f), as a deployment would, against a fake Kafka Connect worker.
func TestConnectorScript(t *testing.T) {
	w := connecttest.New()
	defer w.Close()
	c, err := connect.New(connect.Options{URL: w.URL})
	if err != nil {
		t.Fatal(err)
	}
	srv := startTestServer(t, func(cfg *engine.Config) { cfg.Connect = c })
	script := filepath.Join(t.TempDir(), "connectors.sql")
	body := `-- the pipeline's ends
CREATE SOURCE CONNECTOR IF NOT EXISTS pg WITH (
  'connector.class'='io.debezium.connector.postgresql.PostgresConnector',
  'database.password'='pw-hunter2',
  'topic.prefix'='pg');
CREATE SINK CONNECTOR out WITH ('connector.class'='io.debezium.connector.jdbc.JdbcSinkConnector', 'topics'='COUNTS',
  'connection.url'='jdbc:postgresql://127.0.0.1/db?user=u&password=pw-hunter2');
SHOW CONNECTORS;
DESCRIBE CONNECTOR out;
DROP CONNECTOR pg;
DESCRIBE CONNECTOR pg;
SHOW TABLES;
`
	if err := os.WriteFile(script, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := sluiceCmd("--server", srv.addr, "-f", script)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailed {
		t.Fatalf("status %v; want %d: the DESCRIBE of the dropped connector fails\nstdout %s\nstderr %s", err, exitFailed, out.String(), errOut.String())
	}
	for _, want := range []string{"Created connector PG", "Created connector OUT", "RUNNING (1/1 tasks RUNNING)",
		"Related topics:\n  COUNTS", "connection.url = jdbc:postgresql://127.0.0.1/db?user=u&password=[hidden]", `Dropped connector "PG"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Table Name") {
		t.Errorf("the statements after the failing one ran:\n%s", out.String())
	}
	if want := "Failed to query connector status: Connector PG not found"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
	}
	if strings.Contains(out.String()+errOut.String(), "pw-hunter2") {
		t.Errorf("a password shows:\n%s\n%s", out.String(), errOut.String())
	}
	if w.Config("OUT")["connection.url"] != "jdbc:postgresql://127.0.0.1/db?user=u&password=pw-hunter2" {
		t.Errorf("the worker got %v", w.Config("OUT"))
	}
}
