package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/connect/connecttest"
)

func TestConnectSettings(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds.properties")
	if err := os.WriteFile(creds, []byte("# Connect\nusername: fred\npassword=pw-hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	worker := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(worker, []byte("config.storage.topic=my-configs\nstatus.storage.topic = my-status\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	props := filepath.Join(dir, "sluice.properties")
	body := "ksql.connect.url=http://127.0.0.1:8083\nksql.connect.basic.auth.credentials.source=FILE\nksql.connect.basic.auth.credentials.file=" + creds +
		"\nksql.connect.request.timeout.ms=2500\nksql.connect.worker.config=" + worker + "\n"
	if err := os.WriteFile(props, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseConfig([]string{"--config", props}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.connect.url != "http://127.0.0.1:8083" || c.connect.timeout != 2500*time.Millisecond || c.connect.credentialsSource != "FILE" {
		t.Errorf("settings %+v", c.connect)
	}
	cl, topics, err := c.connect.client(nil)
	if err != nil || cl == nil {
		t.Fatal(err)
	}
	if strings.Join(slices.Sorted(slices.Values(topics)), ",") != "connect-offsets,my-configs,my-status" {
		t.Errorf("worker topics %v", topics)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--connect-url", "localhost:8083"}, "is not an http:// or https:// URL"},
		{[]string{"--connect-user", "u"}, "need --connect-url"},
		{[]string{"--connect-url", "http://h:8083", "--connect-user", "u"}, "--connect-user and --connect-password"},
		{[]string{"--connect-url", "http://h:8083", "--connect-credentials-source", "FILE"}, "needs --connect-credentials-file"},
		{[]string{"--connect-url", "http://h:8083", "--connect-credentials-source", "USER_INFO"}, "is not NONE or FILE"},
	} {
		if _, err := parseConfig(tc.args, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
	}
	// The password from the environment.
	c, err = parseConfig([]string{"--connect-url", "http://h:8083", "--connect-user", "u"}, func(k string) string {
		if k == "SLUICE_CONNECT_PASSWORD" {
			return "pw"
		}
		return ""
	}, io.Discard)
	if err != nil || c.connect.password != "pw" {
		t.Errorf("SLUICE_CONNECT_PASSWORD: %v, %+v", err, c.connect)
	}
}

// TestConnectorsOverRESTAndShell runs the connector statements against a
// fake Connect worker (with basic authentication) through /ksql, as
// ksqlDB's clients send them, and through the shell over gRPC.
func TestConnectorsOverRESTAndShell(t *testing.T) {
	w := connecttest.New()
	defer w.Close()
	w.User, w.Password = "fred", "pw-connect"
	var logs bytes.Buffer
	srv := startServerOpts(t, t.TempDir(), &logs, nil, "--connect-url", w.URL, "--connect-user", "fred", "--connect-password", "pw-connect")
	defer srv.stop()

	ksql := func(sql string) (int, []map[string]any, string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"ksql": sql})
		resp, err := http.Post("http://"+srv.addrs.HTTP+"/ksql", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out []map[string]any
		_ = json.Unmarshal(raw, &out)
		return resp.StatusCode, out, string(raw)
	}
	create := "CREATE SOURCE CONNECTOR `pg-src` WITH ('connector.class'='io.debezium.connector.postgresql.PostgresConnector', " +
		"'database.password'='pw-hunter2', 'topic.prefix'='pg');"
	status, ents, raw := ksql(create)
	if status != 200 || len(ents) != 1 || ents[0]["@type"] != "connector_info" {
		t.Fatalf("CREATE: %d %s", status, raw)
	}
	info := ents[0]["info"].(map[string]any)
	if info["name"] != "pg-src" || info["type"] != "source" || info["config"].(map[string]any)["database.password"] != "[hidden]" {
		t.Errorf("connector_info %s", raw)
	}
	if strings.Contains(raw, "pw-hunter2") {
		t.Errorf("the reply shows the password: %s", raw)
	}
	if w.Config("pg-src")["database.password"] != "pw-hunter2" {
		t.Errorf("the worker got %v", w.Config("pg-src"))
	}

	status, _, raw = ksql(create)
	if status != 409 || !strings.Contains(raw, `"error_code":40900`) || !strings.Contains(raw, "Connector pg-src already exists") || strings.Contains(raw, "pw-hunter2") {
		t.Errorf("CREATE again: %d %s", status, raw)
	}
	_, ents, raw = ksql(strings.Replace(create, "CONNECTOR `pg-src`", "CONNECTOR IF NOT EXISTS `pg-src`", 1))
	if len(ents) != 1 || ents[0]["@type"] != "warning_entity" || ents[0]["message"] != "Connector pg-src already exists" {
		t.Errorf("IF NOT EXISTS: %s", raw)
	}

	w.FailTask("pg-src", 0, "java.lang.IllegalStateException: boom\n\tat x.y")
	_, ents, raw = ksql("SHOW CONNECTORS;")
	if len(ents) != 1 || ents[0]["@type"] != "connector_list" {
		t.Fatalf("SHOW: %s", raw)
	}
	list := ents[0]["connectors"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["state"] != "WARNING (0/1 tasks RUNNING)" || list[0].(map[string]any)["className"] != "io.debezium.connector.postgresql.PostgresConnector" {
		t.Errorf("connector_list %s", raw)
	}
	_, ents, raw = ksql("DESCRIBE CONNECTOR `pg-src`;")
	if len(ents) != 1 || ents[0]["@type"] != "connector_description" || ents[0]["connectorClass"] != "io.debezium.connector.postgresql.PostgresConnector" {
		t.Fatalf("DESCRIBE: %s", raw)
	}
	st := ents[0]["status"].(map[string]any)
	task := st["tasks"].([]any)[0].(map[string]any)
	if st["name"] != "pg-src" || st["type"] != "source" || task["state"] != "FAILED" || !strings.HasPrefix(task["trace"].(string), "java.lang.IllegalStateException: boom") {
		t.Errorf("connector_description %s", raw)
	}

	// The shell draws the same answers.
	out := srv.sh(t, nil, "SHOW CONNECTORS;\nDESCRIBE CONNECTOR `pg-src`;\nLIST SINK CONNECTORS;")
	for _, want := range []string{"Connector Name", "pg-src", "SOURCE", "WARNING (0/1 tasks RUNNING)",
		"Class                : io.debezium.connector.postgresql.PostgresConnector", "FAILED", "Task 0 trace:\njava.lang.IllegalStateException: boom",
		"database.password = [hidden]"} {
		if !strings.Contains(out, want) {
			t.Errorf("shell output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pw-hunter2") {
		t.Errorf("the shell shows the password:\n%s", out)
	}
	out = srv.sh(t, nil, "DROP CONNECTOR `pg-src`;\nDROP CONNECTOR IF EXISTS `pg-src`;")
	if !strings.Contains(out, `Dropped connector "pg-src"`) || !strings.Contains(out, "Connector 'pg-src' does not exist.") {
		t.Errorf("DROP in the shell:\n%s", out)
	}

	status, _, raw = ksql("DROP CONNECTOR `pg-src`;")
	if status != 404 || !strings.Contains(raw, "Failed to drop connector: Connector pg-src not found") {
		t.Errorf("DROP of a missing one: %d %s", status, raw)
	}
	_, ents, raw = ksql("DROP CONNECTOR IF EXISTS `pg-src`;")
	if len(ents) != 1 || ents[0]["@type"] != "warning_entity" {
		t.Errorf("DROP IF EXISTS: %s", raw)
	}
	if strings.Contains(logs.String(), "pw-hunter2") || strings.Contains(logs.String(), "pw-connect") {
		t.Errorf("the logs show a password:\n%s", logs.String())
	}
}
