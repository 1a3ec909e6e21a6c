package shell

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
	"github.com/sluice-sql/sluice/server"
)

// scriptedEngine answers each statement from a table of canned results and
// records the session it was given.
type scriptedEngine struct {
	api.Unimplemented
	t        *testing.T
	answers  map[string]func(s *api.Session) ([]api.Result, error)
	sessions []map[string]string
}

func (e *scriptedEngine) Execute(_ context.Context, s *api.Session, sql string, _ ...api.Options) ([]api.Result, error) {
	e.sessions = append(e.sessions, map[string]string{"props": join(s.Properties), "vars": join(s.Variables)})
	f, ok := e.answers[sql]
	if !ok {
		e.t.Errorf("unexpected statement %q", sql)
		return nil, &api.StatementError{Statement: sql, Msg: "unexpected", Code: 40001}
	}
	return f(s)
}

func join(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

// entity answers with en.
func entity(en api.Entity) func(*api.Session) ([]api.Result, error) {
	return func(*api.Session) ([]api.Result, error) {
		return []api.Result{{Kind: api.ResultEntity, Entity: en}}, nil
	}
}

// sourcesOf lists sources of kind.
func sourcesOf(kind api.SourceKind, srcs ...api.SourceInfo) *api.SourceList {
	for i := range srcs {
		srcs[i].Kind = kind
	}
	return &api.SourceList{Kind: kind, Sources: srcs}
}

func msg(stmt, text string) func(*api.Session) ([]api.Result, error) {
	return func(*api.Session) ([]api.Result, error) {
		return []api.Result{{Statement: stmt, Kind: api.ResultStatus, Message: text}}, nil
	}
}

func newTestShell(t *testing.T, eng server.Engine) (*Shell, *strings.Builder, *strings.Builder) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(eng, server.Options{})
	go srv.Serve(lis)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
	})
	var out, errOut strings.Builder
	sh := New(sluicev1.NewSluiceClient(conn), &out, &errOut)
	sh.Server = lis.Addr().String()
	return sh, &out, &errOut
}

func TestRunScript(t *testing.T) {
	rows := [][]any{{"alice", int64(3)}, {"bob", nil}}
	eng := &scriptedEngine{t: t, answers: map[string]func(*api.Session) ([]api.Result, error){
		"SET 'auto.offset.reset'='earliest';": func(s *api.Session) ([]api.Result, error) {
			s.Properties["auto.offset.reset"] = "earliest"
			return []api.Result{{Kind: api.ResultStatus, Message: "Successfully changed local property 'auto.offset.reset' to 'earliest'."}}, nil
		},
		"SHOW STREAMS;": func(*api.Session) ([]api.Result, error) {
			return entity(sourcesOf(api.SourceStream, api.SourceInfo{Name: "USERS", Topic: "users", KeyFormat: "KAFKA", ValueFormat: "JSON"}))(nil)
		},
		"SELECT * FROM users\n  EMIT CHANGES LIMIT 2;": func(*api.Session) ([]api.Result, error) {
			i := 0
			st := api.NewStream("transient_1", api.Columns([]types.Column{{Name: "NAME", Type: types.StringType}, {Name: "N", Type: types.BigintType}}, 0),
				func(context.Context) ([]any, error) {
					if i == len(rows) {
						return nil, io.EOF
					}
					i++
					return rows[i-1], nil
				}, func() {}, func() api.EndReason { return api.EndLimit })
			return []api.Result{{Kind: api.ResultRows, Stream: st}}, nil
		},
		"DROP STREAM nope;": func(*api.Session) ([]api.Result, error) {
			return nil, &api.StatementError{Statement: "DROP STREAM nope;", Line: 1, Col: 13,
				Msg: "stream NOPE does not exist: check SHOW STREAMS", Code: 40001}
		},
	}}
	sh, out, errOut := newTestShell(t, eng)
	script := `-- a script
SET 'auto.offset.reset'='earliest';
SHOW STREAMS;
SELECT * FROM users
  EMIT CHANGES LIMIT 2;
  DROP STREAM nope;
SHOW STREAMS;
`
	err := sh.Run(context.Background(), "demo.sql", script)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Run = %v, want an *Error", err)
	}
	const wantOut = `Successfully changed local property 'auto.offset.reset' to 'earliest'.
+-------------+-------------+------------+--------------+----------+
| Stream Name | Kafka Topic | Key Format | Value Format | Windowed |
+-------------+-------------+------------+--------------+----------+
| USERS       | users       | KAFKA      | JSON         | false    |
+-------------+-------------+------------+--------------+----------+
+-------+------+
| NAME  | N    |
+-------+------+
| alice | 3    |
| bob   | null |
+-------+------+
Limit Reached
`
	if out.String() != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, wantOut)
	}
	const wantErr = `Error: demo.sql:6:15: stream NOPE does not exist: check SHOW STREAMS
DROP STREAM nope;
            ^
`
	if errOut.String() != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, wantErr)
	}
	if len(eng.sessions) != 4 {
		t.Fatalf("%d statements ran, want 4 (stop at the failing one)", len(eng.sessions))
	}
	if got := eng.sessions[1]["props"]; got != "auto.offset.reset=earliest" {
		t.Errorf("session sent after SET = %q", got)
	}
}

func TestRunUnfinishedStatement(t *testing.T) {
	eng := &scriptedEngine{t: t, answers: map[string]func(*api.Session) ([]api.Result, error){
		"SHOW STREAMS;": msg("SHOW STREAMS;", "none"),
	}}
	sh, _, errOut := newTestShell(t, eng)
	if err := sh.Run(context.Background(), "", "SHOW STREAMS;\nSHOW\n  TABLES"); err == nil {
		t.Fatal("Run succeeded")
	}
	const want = "Error: line 3:9: the statement has no terminating ';': end it with ';'\nSHOW\n  TABLES\n        ^\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
}

func TestRunScriptCommand(t *testing.T) {
	eng := &scriptedEngine{t: t, answers: map[string]func(*api.Session) ([]api.Result, error){
		"DEFINE x = 'y';": func(s *api.Session) ([]api.Result, error) {
			s.Variables["x"] = "y"
			return nil, nil
		},
		"SHOW VARIABLES;": msg("SHOW VARIABLES;", "x"),
	}}
	sh, out, errOut := newTestShell(t, eng)
	sh.readFile = func(path string) ([]byte, error) {
		if path != "it's.sql" {
			t.Errorf("path = %q", path)
		}
		return []byte("DEFINE x = 'y';"), nil
	}
	if err := sh.Run(context.Background(), "", "run script 'it''s.sql';\nSHOW VARIABLES;"); err != nil {
		t.Fatalf("Run = %v (%s)", err, errOut)
	}
	if out.String() != "x\n" || sh.Variables["x"] != "y" || eng.sessions[1]["vars"] != "x=y" {
		t.Errorf("out = %q, variables = %v, sent %v", out, sh.Variables, eng.sessions)
	}
}

// blockingEngine starts a push query that never ends by itself.
type blockingEngine struct {
	api.Unimplemented
	waiting, closed chan struct{}
}

func (e *blockingEngine) Execute(context.Context, *api.Session, string, ...api.Options) ([]api.Result, error) {
	st := api.NewStream("transient_2", api.Columns([]types.Column{{Name: "X", Type: types.IntType}}, 0),
		func(ctx context.Context) ([]any, error) {
			e.waiting <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}, func() {
			select {
			case <-e.closed:
			default:
				close(e.closed)
			}
		}, nil)
	return []api.Result{{Kind: api.ResultRows, Stream: st}}, nil
}

func TestRunInterrupted(t *testing.T) {
	eng := &blockingEngine{waiting: make(chan struct{}, 1), closed: make(chan struct{})}
	sh, out, _ := newTestShell(t, eng)
	ctx, cancel := context.WithCancel(context.Background())
	// At a terminal the header shows as the query starts.
	sh.Interactive, sh.TermWidth, sh.TermHeight = true, 80, 24
	printed := make(chan struct{})
	sh.out = &notifyWriter{w: out, written: printed}
	go func() {
		<-eng.waiting
		<-printed // the header is on screen
		cancel()
	}()
	if err := sh.Run(ctx, "", "SELECT * FROM s EMIT CHANGES; SHOW STREAMS;"); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run = %v, want ErrInterrupted", err)
	}
	<-eng.closed
	const want = `Press CTRL-C to interrupt
+------+
| X    |
+------+

+------+
Query terminated
`
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
}

// notifyWriter closes written after its first write.
type notifyWriter struct {
	w       io.Writer
	written chan struct{}
}

func (n *notifyWriter) Write(p []byte) (int, error) {
	select {
	case <-n.written:
	default:
		defer close(n.written)
	}
	return n.w.Write(p)
}

func TestRunInvalidUTF8(t *testing.T) {
	eng := &scriptedEngine{t: t, answers: map[string]func(*api.Session) ([]api.Result, error){
		"SHOW STREAMS;": msg("SHOW STREAMS;", "none"),
	}}
	sh, out, errOut := newTestShell(t, eng)
	// 'café' saved as Latin-1.
	err := sh.Run(context.Background(), "latin1.sql", "SHOW STREAMS;\n  INSERT INTO s (v)\n  VALUES ('caf\xe9');\nSHOW STREAMS;")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Run = %v, want an *Error", err)
	}
	const want = "Error: latin1.sql:3:15: the statement is not valid UTF-8 text; save the script as UTF-8\nINSERT INTO s (v)\n  VALUES ('caf\uFFFD');\n              ^\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
	if out.String() != "none\n" || len(eng.sessions) != 1 {
		t.Errorf("stdout = %q after %d statements, want the first statement only", out, len(eng.sessions))
	}
}
