package auth

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// lockedBuffer is a log destination safe for a server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines are the lines logged so far.
func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSuffix(l.b.String(), "\n"), "\n")
}

// clock is a test clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// guarded returns users with alice and a Failures logging to a buffer on
// a test clock.
func guarded() (*Users, *Failures, *lockedBuffer, *clock) {
	logs := &lockedBuffer{}
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	f := &Failures{Log: slog.New(slog.NewTextHandler(logs, nil)), Now: clk.now}
	u := NewUsers()
	u.Add("alice", "pw-secret-42")
	u.SetFailures(f)
	return u, f, logs, clk
}

// TestFailuresHTTP checks that refused requests are counted per kind,
// that failed logins are logged with the user and the remote address but
// never the password, and that the log keeps to a line a second however
// many fail.
func TestFailuresHTTP(t *testing.T) {
	u, f, logs, clk := guarded()
	h := u.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }), "/livez")
	if got := f.Counts(); len(got) != 1 || got[SurfaceHTTP] != (Count{}) {
		t.Errorf("counts before any request: %v, want http at zero", got)
	}
	do := func(path, authz string) int {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = "192.0.2.7:50122"
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if code := do("/ksql", HeaderValue("alice", "pw-secret-42")); code != 204 {
		t.Fatalf("the right password: %d", code)
	}
	if code := do("/livez", ""); code != 204 {
		t.Fatalf("an exempt path: %d", code)
	}
	if got := f.Counts()[SurfaceHTTP]; got != (Count{}) {
		t.Errorf("accepted and exempt requests counted: %+v", got)
	}

	const n = 50
	for i := range n {
		if code := do("/ksql", HeaderValue("alice", fmt.Sprintf("guess-%d", i))); code != 401 {
			t.Fatalf("a wrong password: %d", code)
		}
	}
	for range 3 {
		do("/ksql", "") // counted, not logged
	}
	if got := f.Counts()[SurfaceHTTP]; got != (Count{Failed: n, Missing: 3}) {
		t.Errorf("counts %+v, want %d failed and 3 missing", got, n)
	}
	lines := logs.lines()
	if len(lines) != 1 {
		t.Fatalf("%d failed logins in one instant logged %d lines, want 1:\n%s", n, len(lines), strings.Join(lines, "\n"))
	}
	for _, want := range []string{"level=WARN", `msg="failed login"`, "surface=http", "user=alice", "remote=192.0.2.7:50122", `reason="wrong password"`, "suppressed=0"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line lacks %s: %s", want, lines[0])
		}
	}

	// Within the second, still nothing; after it, one line counting the
	// failed logins it did not log.
	clk.advance(999 * time.Millisecond)
	do("/ksql", HeaderValue("mallory", "pw-secret-42"))
	if got := len(logs.lines()); got != 1 {
		t.Errorf("a failure within the second logged: %d lines", got)
	}
	clk.advance(time.Millisecond)
	do("/ksql", HeaderValue("mallory", "pw-secret-42"))
	lines = logs.lines()
	if len(lines) != 2 || !strings.Contains(lines[1], "user=mallory") || !strings.Contains(lines[1], `reason="unknown user"`) ||
		!strings.Contains(lines[1], fmt.Sprintf("suppressed=%d", n)) {
		t.Errorf("the line after a second: %q", lines)
	}
	// Not basic authentication: no user to name, and the token unlogged.
	clk.advance(time.Second)
	do("/ksql", "Bearer pw-secret-42")
	clk.advance(time.Second)
	do("/ksql", "Basic "+strings.Repeat("x", 7)) // not base64
	lines = logs.lines()
	if len(lines) != 4 || !strings.Contains(lines[2], `user="" `) || !strings.Contains(lines[2], `reason="not basic authentication"`) {
		t.Errorf("malformed credentials: %q", lines)
	}
	for _, l := range lines {
		if strings.Contains(l, "pw-secret-42") || strings.Contains(l, "guess-") {
			t.Errorf("a line shows a password: %s", l)
		}
	}
	if got := f.Counts()[SurfaceHTTP]; got != (Count{Failed: n + 4, Missing: 3}) {
		t.Errorf("counts %+v", got)
	}
}

// TestFailuresGRPC checks the interceptors count and log refused calls
// with the caller's address, and rate-limit their lines too.
func TestFailuresGRPC(t *testing.T) {
	u, f, logs, clk := guarded()
	srv := grpc.NewServer(u.ServerOptions()...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	check := func(opts ...grpc.CallOption) codes.Code {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}, opts...)
		return status.Code(err)
	}
	if code := check(grpc.PerRPCCredentials(Basic{User: "alice", Password: "pw-secret-42", Insecure: true})); code != codes.OK {
		t.Fatalf("the right password: %v", code)
	}
	const n = 20
	for range n {
		if code := check(grpc.PerRPCCredentials(Basic{User: "alice", Password: "nope", Insecure: true})); code != codes.Unauthenticated {
			t.Fatalf("a wrong password: %v", code)
		}
	}
	check()
	if got := f.Counts(); got[SurfaceGRPC] != (Count{Failed: n, Missing: 1}) {
		t.Errorf("counts %v, want %d failed and 1 missing on grpc", got, n)
	}
	lines := logs.lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "surface=grpc") || !strings.Contains(lines[0], "user=alice") ||
		!strings.Contains(lines[0], "remote=127.0.0.1:") {
		t.Errorf("lines: %q", lines)
	}
	clk.advance(time.Second)
	check(grpc.PerRPCCredentials(Basic{User: "bob", Password: "nope", Insecure: true}))
	if lines = logs.lines(); len(lines) != 2 || !strings.Contains(lines[1], fmt.Sprintf("suppressed=%d", n-1)) {
		t.Errorf("the line after a second: %q", lines)
	}
}

// TestGuard checks a guard for another surface answers with its own body,
// counts under its own name and has its own rate limit.
func TestGuard(t *testing.T) {
	u, f, logs, _ := guarded()
	rest := u.Middleware(http.NotFoundHandler())
	for range 3 {
		r := httptest.NewRequest("GET", "/ksql", nil)
		r.Header.Set("Authorization", HeaderValue("alice", "wrong"))
		rest.ServeHTTP(httptest.NewRecorder(), r)
	}
	const body = `{"error_code":401,"message":"Unauthorized"}`
	h := u.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Caller(r.Context()) == "" {
			t.Error("an accepted request without its caller")
		}
		w.WriteHeader(200)
	}), SurfaceRegistry, "application/vnd.schemaregistry.v1+json", body)
	r := httptest.NewRequest("POST", "/subjects/x-value/versions", nil)
	r.Header.Set("Authorization", HeaderValue("alice", "wrong"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 401 || w.Body.String() != body || w.Header().Get("Content-Type") != "application/vnd.schemaregistry.v1+json" ||
		!strings.HasPrefix(w.Header().Get("WWW-Authenticate"), `Basic realm="`) {
		t.Errorf("refused: %d %v %q", w.Code, w.Header(), w.Body.String())
	}
	r.Header.Set("Authorization", "basic "+strings.TrimPrefix(HeaderValue("alice", "pw-secret-42"), "Basic "))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("the right password, scheme in lower case: %d", w.Code)
	}
	if got := f.Counts(); got[SurfaceRegistry] != (Count{Failed: 1}) || got[SurfaceHTTP] != (Count{Failed: 3}) || len(got) != 2 {
		t.Errorf("counts %v", got)
	}
	// The same instant: one line for each surface.
	if lines := logs.lines(); len(lines) != 2 || !strings.Contains(lines[0], "surface=http") || !strings.Contains(lines[1], "surface=schema-registry") {
		t.Errorf("lines: %q", lines)
	}
	// Without SetFailures nothing is counted, and nothing breaks.
	v := NewUsers()
	v.Add("alice", "pw")
	r.Header.Set("Authorization", HeaderValue("alice", "x"))
	w = httptest.NewRecorder()
	v.Middleware(http.NotFoundHandler()).ServeHTTP(w, r)
	if w.Code != 401 {
		t.Errorf("without failures: %d", w.Code)
	}
}

func TestShorten(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	got := shorten(long)
	if len(got) > maxUserLen+3 || !strings.HasSuffix(got, "...") || !strings.HasPrefix(long, strings.TrimSuffix(got, "...")) {
		t.Errorf("shorten: %q", got)
	}
	if got := shorten("a\xffb"); got != "a\uFFFDb" {
		t.Errorf("invalid UTF-8: %q", got)
	}
}
