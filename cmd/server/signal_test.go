package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sql/sluice/cmd/cli/shell"
)

// TestMain lets a test run the server's main in a child process (to send
// it signals).
func TestMain(m *testing.M) {
	if os.Getenv("SLUICE_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSIGTERM stops a server process with SIGTERM while its query has work:
// it drains, commits and closes, exits 0, and a restart on the same data
// directory neither loses nor repeats a row.
func TestSIGTERM(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(os.Args[0], "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--playground-addr", "127.0.0.1:0", "--schema-registry-addr", "127.0.0.1:0", "--data-dir", dir, "--log-format", "json")
	cmd.Env = append(os.Environ(), "SLUICE_TEST_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "Sluice server listening on ") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("server did not start: %q\n%s", lines.Text(), stderr.String())
	}
	grpcAddr := strings.TrimPrefix(lines.Text(), "Sluice server listening on ")
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	child := &runningServer{conn: conn}
	sess := shell.New(nil, nil, nil)
	child.sh(t, sess, `SET 'auto.offset.reset'='earliest';
CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM big AS SELECT k, v FROM s WHERE v > 1;
INSERT INTO s (k, v) VALUES ('a', 1);
INSERT INTO s (k, v) VALUES ('b', 2);
INSERT INTO s (k, v) VALUES ('c', 3);`)
	conn.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the server exited with %v after SIGTERM:\n%s", err, stderr.String())
	}
	logs := stderr.String()
	for _, want := range []string{`"msg":"shutting down: draining calls, then committing and closing queries"`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}

	srv := startServer(t, dir)
	defer srv.stop()
	srv.sh(t, sess, "INSERT INTO s (k, v) VALUES ('d', 4);")
	got := sinkRecords(t, srv.addrs.Kafka, "BIG", 3)
	want := `b {"V":2}|c {"V":3}|d {"V":4}`
	if strings.Join(got, "|") != want {
		t.Errorf("sink after SIGTERM and restart: %q, want %q", strings.Join(got, "|"), want)
	}
}
