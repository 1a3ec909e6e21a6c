package rest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/failpoint"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
	"github.com/sluice-sql/sluice/server"
	"github.com/sluice-sql/sluice/server/rest"
)

// goroutinesBackTo waits until the process runs at most n goroutines, and
// fails with their stacks if it still runs more after a while: a polling
// barrier for what requests left behind to exit.
func goroutinesBackTo(t *testing.T, n int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for runtime.NumGoroutine() > n {
		select {
		case <-tick.C:
		case <-deadline:
			buf := make([]byte, 4<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
	}
}

// clients are an HTTP/1.1 and an h2c client with transports of their own,
// whose connections close returns.
func clients() (h1, h2 *http.Client, closeAll func()) {
	t1 := &http.Transport{}
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	t2 := &http.Transport{Protocols: p}
	return &http.Client{Transport: t1}, &http.Client{Transport: t2}, func() {
		t1.CloseIdleConnections()
		t2.CloseIdleConnections()
	}
}

// request builds a POST of body (JSON unless []byte) to path.
func (e *env) request(t *testing.T, ctx context.Context, path string, body any) *http.Request {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		b, _ = json.Marshal(body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestClientGoneCancelsStatement holds statements of REST requests where
// they are about to be planned and closes the clients: each statement's
// context ends, nothing is applied, and the requests' goroutines exit.
func TestClientGoneCancelsStatement(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	// Warm what every request shares.
	e.post(t, e.h2, "/query-stream", "", map[string]any{"sql": "SELECT * FROM orders;"})
	hold := failpoint.Pause(engine.PlanningPoint)
	defer hold.Release()
	for _, c := range []struct {
		name, path string
		http2      bool
		body       map[string]any
	}{
		{"ksql over HTTP/1.1", "/ksql", false, map[string]any{"ksql": "CREATE STREAM big AS SELECT * FROM orders WHERE amount > 10;"}},
		{"push query over HTTP/1.1", "/query-stream", false, map[string]any{"sql": "SELECT * FROM orders EMIT CHANGES;"}},
		{"push query over HTTP/2", "/query", true, map[string]any{"ksql": "SELECT * FROM orders EMIT CHANGES;"}},
		{"pull query over HTTP/2", "/query-stream", true, map[string]any{"sql": "SELECT * FROM orders;"}},
	} {
		base := runtime.NumGoroutine()
		h1, h2, closeConns := clients()
		client := h1
		if c.http2 {
			client = h2
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			resp, err := client.Do(e.request(t, ctx, c.path, c.body))
			if err == nil {
				resp.Body.Close()
				err = fmt.Errorf("answered %s", resp.Status)
			}
			done <- err
		}()
		<-hold.Reached()
		cancel() // the client goes: its connection or stream closes
		if err := <-hold.Left(); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: the held statement left with %v, want its context cancelled", c.name, err)
		}
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: the client saw %v", c.name, err)
		}
		closeConns()
		goroutinesBackTo(t, base)
	}
	if _, err := e.eng.DescribeSource("BIG"); err == nil {
		t.Fatal("the cancelled CREATE STREAM AS SELECT was applied")
	}
	if n := e.eng.PushQueries(); n != 0 {
		t.Fatalf("%d push query places held", n)
	}
}

// TestStatementTimeoutOverREST holds a statement past the engine's
// statement timeout: /ksql answers 408 with the error naming the setting.
func TestStatementTimeoutOverREST(t *testing.T) {
	e := newEnvWith(t, nil, func(c *engine.Config) { c.StatementTimeout = 100 * time.Millisecond })
	seed(t, e)
	hold := failpoint.Pause(engine.PlanningPoint)
	defer hold.Release()
	status, body, _ := e.post(t, e.h1, "/ksql", "", map[string]any{"ksql": "CREATE STREAM big AS SELECT * FROM orders;"})
	b := decode(t, body)
	if status != http.StatusRequestTimeout || b["error_code"] != 40800.0 || !strings.Contains(b["message"].(string), "--statement-timeout") ||
		!strings.Contains(b["message"].(string), "statement timeout of 100ms") {
		t.Fatalf("status %d: %s", status, body)
	}
	if !errors.Is(<-hold.Left(), engine.ErrStatementTimeout) {
		t.Fatal("the hold did not end with the statement timeout")
	}
	status, body, _ = e.post(t, e.h2, "/query-stream", "", map[string]any{"sql": "SELECT * FROM orders EMIT CHANGES;"})
	if status != http.StatusRequestTimeout || decode(t, body)["error_code"] != 40800.0 {
		t.Fatalf("push query: status %d: %s", status, body)
	}
}

// stalled sends a request announcing a body of 100 bytes and none over a
// connection of its own, and returns the response the server gave.
func (e *env) stalled(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A bound on the test, far above the server's timeout.
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", path)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s: no response: %v", path, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// The connection is closed after the answer.
	if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("%s: the connection stayed open (%d, %v)", path, n, err)
	}
	return resp, body
}

// TestRequestBodyTimeout sends requests that announce a body and send none:
// each is cut off at the read timeout with 408, over HTTP/1.1 and HTTP/2,
// while push queries already streaming go on.
func TestRequestBodyTimeout(t *testing.T) {
	e := newEnvWith(t, func(o *rest.Options) { o.ReadTimeout = 200 * time.Millisecond }, nil)
	seed(t, e)
	// Push queries started before the stalled requests, over both
	// protocols: the read timeout must not cut their responses.
	push1 := e.open(t, e.h1, "/query-stream", "", map[string]any{"sql": "SELECT id FROM orders EMIT CHANGES;"})
	push2 := e.open(t, e.h2, "/query-stream", "", map[string]any{"sql": "SELECT id FROM orders EMIT CHANGES;"})
	push1.next(t)
	push2.next(t)

	for _, path := range []string{"/ksql", "/query", "/query-stream", "/close-query"} {
		resp, body := e.stalled(t, path)
		b := decode(t, body)
		if resp.StatusCode != http.StatusRequestTimeout || b["error_code"] != 40800.0 || !strings.Contains(b["message"].(string), "--http-read-timeout") {
			t.Fatalf("%s: %s: %s", path, resp.Status, body)
		}
	}
	// Over HTTP/2 the stream is answered the same.
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequest(http.MethodPost, e.url+"/ksql", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 100
	resp, err := e.h2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || resp.ProtoMajor != 2 {
		t.Fatalf("HTTP/2: %s: %s", resp.Status, body)
	}

	// Well past the timeout (the stalled requests began after the push
	// queries), the push queries still deliver.
	e.ksql(t, "INSERT INTO orders (id, item, amount) VALUES ('late', 'kiwi', 1.0);", nil)
	for _, l := range []*lines{push1, push2} {
		if row := l.next(t); row != `["late"]` {
			t.Fatalf("row %s", row)
		}
	}
}

// TestInsertsStreamIdleTimeout leaves an /inserts-stream without its next
// row: the stream ends with an error ack at the idle timeout, which is not
// the read timeout; a stream without its first line is cut at the read
// timeout.
func TestInsertsStreamIdleTimeout(t *testing.T) {
	e := newEnvWith(t, func(o *rest.Options) {
		o.ReadTimeout = 100 * time.Millisecond
		o.InsertsIdleTimeout = 400 * time.Millisecond
	}, nil)
	seed(t, e)

	start := func(first string) (*io.PipeWriter, *http.Response) {
		pr, pw := io.Pipe()
		req, err := http.NewRequest(http.MethodPost, e.url+"/inserts-stream", pr)
		if err != nil {
			t.Fatal(err)
		}
		if first != "" {
			go func() { _, _ = io.WriteString(pw, first) }()
		}
		resp, err := e.h2.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close(); pw.Close() })
		return pw, resp
	}
	if _, resp := start(""); resp.StatusCode != http.StatusRequestTimeout {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("no first line: %s: %s", resp.Status, b)
	}

	pw, resp := start(`{"target":"orders"}` + "\n")
	sc := bufio.NewScanner(resp.Body)
	// A gap longer than the read timeout between two rows is fine: the
	// stalled request's 408 says the read timeout has passed.
	e.stalled(t, "/ksql")
	if _, err := io.WriteString(pw, `{"ID":"i1","ITEM":"a","AMOUNT":1}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if !sc.Scan() || sc.Text() != `{"status":"ok","seq":0}` {
		t.Fatalf("ack %q: %v", sc.Text(), sc.Err())
	}
	// Then no row: the idle timeout ends the stream.
	if !sc.Scan() {
		t.Fatalf("no ack at the idle timeout: %v", sc.Err())
	}
	var a map[string]any
	if err := json.Unmarshal(sc.Bytes(), &a); err != nil || a["status"] != "error" || a["error_code"] != 40800.0 ||
		!strings.Contains(a["message"].(string), "--inserts-idle-timeout") {
		t.Fatalf("ack %s", sc.Text())
	}
	if sc.Scan() {
		t.Fatalf("the stream goes on: %s", sc.Text())
	}
}

// TestPushQueryLimitAcrossAPIs opens push queries up to ksqlDB's default
// ksql.max.push.queries (100) over REST (both endpoints, HTTP/1.1 and
// HTTP/2) and gRPC (PushQuery and Execute, as the shell runs them): the
// 101st is refused on each with ksqlDB's message, and once they are
// closed the goroutines are back to where they were and a push query
// runs again.
func TestPushQueryLimitAcrossAPIs(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := server.New(e.eng, server.Options{Logger: quiet})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	// Warm what push queries share.
	l := e.open(t, e.h2, "/query-stream", "", map[string]any{"sql": "SELECT * FROM orders EMIT CHANGES LIMIT 1;"})
	e.ksql(t, "INSERT INTO orders (id, item, amount) VALUES ('w', 'warm', 1.0);", nil)
	l.next(t)
	l.next(t)
	l.end(t)
	l.resp.Body.Close()

	base := runtime.NumGoroutine()
	h1, h2, closeConns := clients()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	gc := sluicev1.NewSluiceClient(conn)
	ctx, cancel := context.WithCancel(context.Background())
	var bodies []io.Closer
	const sql = "SELECT id FROM orders EMIT CHANGES;"
	for i := range engine.DefaultMaxPushQueries {
		switch i % 5 {
		case 0, 1: // REST /query-stream, HTTP/2 and HTTP/1.1
			c := h2
			if i%5 == 1 {
				c = h1
			}
			resp, err := c.Do(e.request(t, ctx, "/query-stream", map[string]any{"sql": sql}))
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("push query %d: %v %v", i, resp, err)
			}
			// The header is written once the query runs.
			if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, resp.Body)
		case 2: // REST /query
			resp, err := h2.Do(e.request(t, ctx, "/query", map[string]any{"ksql": sql}))
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("push query %d: %v %v", i, resp, err)
			}
			if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, resp.Body)
		case 3: // gRPC PushQuery
			call, err := gc.PushQuery(ctx, &sluicev1.PushQueryRequest{Sql: sql})
			if err != nil {
				t.Fatal(err)
			}
			if m, err := call.Recv(); err != nil || m.GetHeader() == nil {
				t.Fatalf("push query %d: %v %v", i, m, err)
			}
		case 4: // gRPC Execute, as the shell
			call, err := gc.Execute(ctx, &sluicev1.ExecuteRequest{Sql: sql})
			if err != nil {
				t.Fatal(err)
			}
			for {
				m, err := call.Recv()
				if err != nil {
					t.Fatalf("push query %d: %v", i, err)
				}
				if m.GetStreamHeader() != nil {
					break
				}
			}
		}
	}
	if n := e.eng.PushQueries(); n != engine.DefaultMaxPushQueries {
		t.Fatalf("%d push queries running", n)
	}

	const refusal = "Not executing statement(s) as it would cause the number of active, push queries to exceed the configured limit. " +
		"Terminate existing PUSH queries, or increase the 'ksql.max.push.queries' setting via the 'ksql-server.properties' file. " +
		"Current push query count: 100. Configured limit: 100.\n"
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/query-stream", map[string]any{"sql": sql}},
		{"/query", map[string]any{"ksql": sql}},
		{"/query", map[string]any{"ksql": "PRINT orders;"}},
	} {
		status, body, _ := e.post(t, e.h2, c.path, "", c.body)
		b := decode(t, body)
		msg, _ := b["message"].(string)
		if status != 400 || b["error_code"] != 40001.0 || !strings.HasPrefix(msg, refusal) || !strings.Contains(msg, "--max-push-queries") {
			t.Fatalf("the 101st on %s: %d %s", c.path, status, body)
		}
	}
	call, err := gc.PushQuery(ctx, &sluicev1.PushQueryRequest{Sql: sql})
	if err == nil {
		_, err = call.Recv()
	}
	if st := status.Convert(err); st.Code() != codes.ResourceExhausted || !strings.HasPrefix(st.Message(), refusal) {
		t.Fatalf("the 101st over gRPC: %v", err)
	}
	// Other statements still run.
	e.ksql(t, "SHOW QUERIES;", nil)

	cancel()
	for _, b := range bodies {
		b.Close()
	}
	conn.Close()
	closeConns()
	goroutinesBackTo(t, base)
	if n := e.eng.PushQueries(); n != 0 {
		t.Fatalf("%d push query places held after the clients went", n)
	}
	l = e.open(t, e.h2, "/query-stream", "", map[string]any{"sql": "SELECT id FROM orders EMIT CHANGES LIMIT 1;"})
	e.ksql(t, "INSERT INTO orders (id, item, amount) VALUES ('after', 'plum', 2.0);", nil)
	l.next(t)
	if row := l.next(t); row != `["after"]` {
		t.Fatalf("row %s", row)
	}
}
