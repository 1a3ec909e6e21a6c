package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sql/sluice/cmd/cli/shell"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
	"github.com/sluice-sql/sluice/server"
)

// The tests run the sluice command as its own process: the test binary
// re-executed with runMainEnv set runs main instead of the tests.
const runMainEnv = "SLUICE_CLI_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// testServer is a Sluice server with a playground broker, in process.
type testServer struct {
	addr   string
	client sluicev1.SluiceClient
	eng    *engine.Engine
}

func startTestServer(t *testing.T, configure ...func(*engine.Config)) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pg, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka"), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{pg.Addr()}, ClientID: "sluice", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.Config{Kafka: client, DataDir: filepath.Join(dir, "state"), ServiceID: "sluice", Logger: log}
	for _, c := range configure {
		c(&cfg)
	}
	eng, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(eng, server.Options{Version: "1.2.3", ServiceID: "sluice", KafkaBootstrapServers: pg.Addr(), Playground: true, Logger: log})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		<-served
		eng.Close()
		client.Close()
		pg.Close()
		cancel()
	})
	return &testServer{addr: lis.Addr().String(), client: sluicev1.NewSluiceClient(conn), eng: eng}
}

// exec runs statements outside the shell, as another user would.
func (s *testServer) exec(t *testing.T, sql string) {
	t.Helper()
	s.execWith(t, nil, sql)
}

// execWith runs statements with session properties props.
func (s *testServer) execWith(t *testing.T, props map[string]string, sql string) {
	t.Helper()
	stream, err := s.client.Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: sql, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s: %v", sql, err)
			}
			return
		}
	}
}

// sluiceCmd returns the sluice command with args, run as its own process.
func sluiceCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}

// ansi matches the terminal control sequences readline and the shell write.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\r`)

// terminal is the shell running on a pseudo-terminal: what it wrote, with
// control sequences stripped, is matched by expect.
type terminal struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	raw  bytes.Buffer
	seen int           // offset in the stripped screen text of the last match
	more chan struct{} // signalled after each read
	done chan struct{} // closed when the process's output ends
}

func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	cmd := sluiceCmd(args...)
	cmd.Env = append(cmd.Env, "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, pty: f, cmd: cmd, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.raw.Write(buf[:n])
			term.mu.Unlock()
			select {
			case term.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
	})
	return term
}

// screen returns everything written so far without control sequences.
func (term *terminal) screen() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return ansi.ReplaceAllString(term.raw.String(), "")
}

// expect waits until the text after the last match contains want, and
// returns that text up to and including want.
func (term *terminal) expect(want string) string {
	term.t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		s := term.screen()
		if i := strings.Index(s[term.seen:], want); i >= 0 {
			got := s[term.seen : term.seen+i+len(want)]
			term.seen += i + len(want)
			return got
		}
		select {
		case <-term.more:
		case <-term.done:
			if !strings.Contains(term.screen()[term.seen:], want) {
				term.t.Fatalf("the shell ended without printing %q; after the last match it printed:\n%s", want, term.screen()[term.seen:])
			}
		case <-deadline.C:
			term.t.Fatalf("timed out waiting for %q; after the last match the screen has:\n%s", want, s[term.seen:])
		}
	}
}

// send types text (use \r for Enter, \t for TAB, \x03 for Ctrl-C).
func (term *terminal) send(text string) {
	term.t.Helper()
	if _, err := term.pty.WriteString(text); err != nil {
		term.t.Fatal(err)
	}
}

// TestInteractive drives the shell as a user would at a terminal.
func TestInteractive(t *testing.T) {
	srv := startTestServer(t)
	dir := t.TempDir()
	term := startTerminal(t, "--server", srv.addr, "--history", filepath.Join(dir, "history"))

	// Banner and prompt.
	term.expect("Copyright")
	term.expect("CLI dev, Server v1.2.3 located at " + srv.addr)
	term.expect("Having trouble? Type 'help'")
	term.expect("sluice> ")

	// A statement over two lines: the second gets the continuation prompt.
	term.send("CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR)\r")
	term.expect(strings.TrimRight(shell.ContinuationPrompt, " "))
	term.send("  WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=1);\r")
	term.expect("Stream created")
	term.expect("sluice> ")

	// TAB completes a stream name from the catalog (fetched after the
	// CREATE), then a column of the stream named in the statement.
	term.send("describe cli\t")
	term.expect("describe clicks ")
	term.send(";\r")
	term.expect("PAGE")
	term.expect("sluice> ")

	term.send("SET 'auto.offset.reset'='earliest';\r")
	term.expect("Successfully changed local property")
	term.send("INSERT INTO clicks (user_id, page) VALUES ('u1', 'home');\r")
	term.expect("sluice> ")

	// A push query: the table grows as rows arrive; Ctrl-C ends the query,
	// not the shell.
	term.send("SELECT * FROM clicks EMIT CHANGES;\r")
	term.expect("Press CTRL-C to interrupt")
	term.expect("| u1 ")
	srv.exec(t, "INSERT INTO clicks (user_id, page) VALUES ('u2', 'a page with a long name');")
	term.expect("| a page with a long name |")
	term.send("\x03")
	term.expect("Query terminated")
	term.expect("sluice> ")

	// Column completion: after FROM clicks, "user" completes to user_id.
	term.send("SELECT * FROM clicks WHERE user\t")
	term.expect("WHERE user_id ")
	term.send("= 'u1' EMIT CHANGES LIMIT 1;\r")
	term.expect("| u1 ")
	term.expect("Limit Reached")
	term.expect("sluice> ")

	// \x prints one block per row.
	term.send("\\x\r")
	term.expect("Vertical output is on.")
	term.send("SELECT * FROM clicks EMIT CHANGES LIMIT 2;\r")
	term.expect("-[ RECORD 1 ]")
	term.expect("USER_ID | u1")
	term.expect("-[ RECORD 2 ]")
	term.expect("PAGE    | a page with a long name")
	term.expect("Limit Reached")
	term.send("\\x auto\r")
	term.expect("Vertical output is auto.")

	// RUN SCRIPT with DEFINE and ${var}.
	script := filepath.Join(dir, "more.sql")
	if err := os.WriteFile(script, []byte("DEFINE pg = 'cart';\nINSERT INTO clicks (user_id, page) VALUES ('u3', '${pg}');\nSHOW VARIABLES;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	term.send("RUN SCRIPT '" + script + "';\r")
	term.expect("| PG            | cart  |")
	term.expect("sluice> ")
	term.send("SELECT page FROM clicks WHERE user_id = 'u3' EMIT CHANGES LIMIT 1;\r")
	term.expect("| cart |")
	term.expect("sluice> ")

	// An error names the position and puts a caret under it.
	term.send("SELECT * FROM nope EMIT CHANGES;\r")
	got := term.expect("^")
	for _, want := range []string{"Error: line 1:15: ", "\nSELECT * FROM nope EMIT CHANGES;\n              ^"} {
		if !strings.Contains(got, want) {
			t.Errorf("error report lacks %q:\n%s", want, got)
		}
	}
	term.expect("sluice> ")

	term.send("exit\r")
	if err := term.cmd.Wait(); err != nil {
		t.Errorf("the shell exited with %v, want status 0", err)
	}

	// The history file holds each statement on one line.
	hist, err := os.ReadFile(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=1);\n"; !strings.Contains(string(hist), want) {
		t.Errorf("history file:\n%s\nlacks %q", hist, want)
	}
}

// TestTypedOutput: with --output json, a pull query's rows, SHOW QUERIES
// and DESCRIBE keep their numbers and nulls unquoted; TAB after TERMINATE
// completes a running query's id; a string left open is named as such.
func TestTypedOutput(t *testing.T) {
	srv := startTestServer(t)
	srv.execWith(t, map[string]string{"auto.offset.reset": "earliest"}, `
CREATE STREAM s (id VARCHAR KEY, n BIGINT, note VARCHAR) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
INSERT INTO s (id, n, note) VALUES ('a', 1, 'x');
INSERT INTO s (id, n, note) VALUES ('a', 2, 'y');
INSERT INTO s (id, n, note) VALUES ('b', NULL, NULL);
CREATE TABLE t AS SELECT id, COUNT(*) AS c, MAX(n) AS m FROM s GROUP BY id;`)
	if err := srv.eng.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	term := startTerminal(t, "--server", srv.addr, "--history", "", "--output", "json")
	term.expect("sluice> ")

	term.send("SELECT * FROM t WHERE id = 'b';\r")
	term.expect(`{"ID":"b","C":1,"M":null}`)
	term.send("SELECT * FROM t WHERE id = 'a';\r")
	term.expect(`{"ID":"a","C":2,"M":2}`)

	term.send("SHOW QUERIES EXTENDED;\r")
	got := term.expect("}")
	for _, want := range []string{`"Query ID":"CTAS_T_`, `"Sink Name":"T"`, `"Records In":3,`, `"Records Out":`, `"Errors":0,`} {
		if !strings.Contains(got, want) {
			t.Errorf("SHOW QUERIES EXTENDED in JSON lacks %s:\n%s", want, got)
		}
	}

	term.send("DESCRIBE t EXTENDED;\r")
	got = term.expect(`"cluster"`)
	for _, want := range []string{`"name":"T"`, `"partitions":1,`, `"timestamp":null`, `"kind":"TABLE"`, `"recordsIn":3,`, `"running":true`} {
		if !strings.Contains(got, want) {
			t.Errorf("DESCRIBE EXTENDED in JSON lacks %s:\n%s", want, got)
		}
	}
	term.expect("sluice> ")

	term.send("TERMINATE CT\t")
	term.expect("TERMINATE CTAS_T_")
	term.send(";\r")
	term.expect("Query terminated.")
	term.expect("sluice> ")

	term.send("SELECT 'abc FROM t;\r")
	term.send("\x04")
	term.expect("unterminated string literal")
}

// TestPipeline runs scripts as a pipeline would and checks the exit
// statuses.
func TestPipeline(t *testing.T) {
	srv := startTestServer(t)
	run := func(stdin string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := sluiceCmd(append([]string{"--server", srv.addr}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	// -f - reads the script from the pipe.
	setup := `SET 'auto.offset.reset'='earliest';
CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, amount DOUBLE)
  WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=1);
INSERT INTO orders (id, item, amount) VALUES ('o1', 'apple', 5.5);
INSERT INTO orders (id, item, amount) VALUES ('o2', 'pear, green', 25);
`
	out, errOut, code := run(setup, "-f", "-")
	if code != exitOK || !strings.Contains(out, "Stream created") {
		t.Fatalf("setup: status %d, stdout %q, stderr %q", code, out, errOut)
	}

	// CSV output gives clean rows on stdout.
	out, errOut, code = run("", "--output", "csv", "--property", "auto.offset.reset=earliest",
		"-e", "SELECT id, item, amount FROM orders EMIT CHANGES LIMIT 2;")
	if want := "ID,ITEM,AMOUNT\no1,apple,5.5\no2,\"pear, green\",25.0\n"; code != exitOK || out != want {
		t.Errorf("CSV: status %d, stdout %q, want %q (stderr %q)", code, out, want, errOut)
	}
	out, _, code = run("OUTPUT JSON;\nSET 'auto.offset.reset'='earliest';\nSELECT id, amount FROM orders EMIT CHANGES LIMIT 1;\n")
	if want := `{"ID":"o1","AMOUNT":5.5}` + "\n"; code != exitOK || out != want {
		t.Errorf("JSON: status %d, stdout %q, want %q", code, out, want)
	}

	// A failing statement stops the script with status 1 and a caret.
	out, errOut, code = run("SHOW STREAMS;\nSELECT * FROM orders\n  WHERE nope = 1 EMIT CHANGES;\nSHOW TABLES;\n", "-f", "-")
	if code != exitFailed {
		t.Errorf("failing script: status %d, want %d", code, exitFailed)
	}
	if strings.Contains(out, "Table Name") {
		t.Errorf("the statements after the failing one ran:\n%s", out)
	}
	if want := "Error: <stdin>:3:9: "; !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "\n  WHERE nope = 1 EMIT CHANGES;\n        ^") {
		t.Errorf("stderr = %q, want %q... and a caret under nope", errOut, want)
	}

	// Usage errors exit with 2.
	if _, _, code = run("", "-e", "SHOW STREAMS;", "-f", "x.sql"); code != exitUsage {
		t.Errorf("usage error: status %d, want %d", code, exitUsage)
	}

	// Ctrl-C (SIGINT) during a push query exits with 130.
	cmd := sluiceCmd("--server", srv.addr, "--property", "auto.offset.reset=earliest", "-e", "SELECT * FROM orders EMIT CHANGES;")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "pear") {
		n, err := stdout.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("push query output ended: %v\n%s", err, seen.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("interrupted push query: %v, want status %d", err, exitInterrupted)
	}
	if !strings.Contains(string(rest), "Query terminated") {
		t.Errorf("interrupted push query printed %q after its rows, want Query terminated", rest)
	}
}
