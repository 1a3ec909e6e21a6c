package connect

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func newClient(t *testing.T, h http.Handler, opts Options) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if opts.URL == "" {
		opts.URL = srv.URL
	}
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func connectError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": status, "message": msg})
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:8083", "ftp://h", "http://"} {
		if _, err := New(Options{URL: u}); err == nil || !strings.Contains(err.Error(), URLFlag) {
			t.Errorf("New(%q) = %v; want an error naming %s", u, err, URLFlag)
		}
	}
}

func TestCallsAndBasicAuth(t *testing.T) {
	var auth atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("GET /base/connectors", func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		auth.Store(u + ":" + p)
		_, _ = w.Write([]byte(`["b","a"]`))
	})
	mux.HandleFunc("GET /base/connectors/{name}/topics", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"` + r.PathValue("name") + `":{"topics":["t2","t1"]}}`))
	})
	mux.HandleFunc("POST /base/connectors", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"name": body.Name, "config": body.Config, "type": "source", "tasks": []any{}})
	})
	mux.HandleFunc("DELETE /base/connectors/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, err := New(Options{URL: strings.Replace(srv.URL, "http://", "http://u:pw@", 1) + "/base/"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.URL(), "pw") {
		t.Errorf("URL() shows the password: %s", c.URL())
	}
	ctx := context.Background()
	names, err := c.Connectors(ctx)
	if err != nil || strings.Join(names, ",") != "a,b" {
		t.Fatalf("Connectors = %v, %v", names, err)
	}
	if auth.Load() != "u:pw" {
		t.Errorf("basic auth = %v, want u:pw (from the URL)", auth.Load())
	}
	topics, err := c.Topics(ctx, "my conn")
	if err != nil || strings.Join(topics, ",") != "t1,t2" {
		t.Fatalf("Topics = %v, %v", topics, err)
	}
	info, err := c.Create(ctx, "x", map[string]string{"connector.class": "C"})
	if err != nil || info.Name != "x" || info.Class() != "C" || info.Type != Source {
		t.Fatalf("Create = %+v, %v", info, err)
	}
	if err := c.Delete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
}

func TestRefusalIsConnectsMessage(t *testing.T) {
	calls := atomic.Int32{}
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		connectError(w, http.StatusNotFound, "Connector nope not found")
	}), Options{})
	_, err := c.Status(context.Background(), "nope")
	var ce *Error
	if !errors.As(err, &ce) || ce.Status != 404 || ce.Message != "Connector nope not found" || !IsNotFound(err) {
		t.Fatalf("err = %#v", err)
	}
	if calls.Load() != 1 {
		t.Errorf("a 404 was tried %d times; want once", calls.Load())
	}
}

func TestNotConnectsJSON(t *testing.T) {
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such thing", http.StatusBadRequest)
	}), Options{})
	_, err := c.Info(context.Background(), "x")
	if err == nil || err.Error() != "400 Bad Request: no such thing" {
		t.Fatalf("err = %v", err)
	}
	c = newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>proxy</html>"))
	}), Options{})
	if _, err := c.Info(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "not its JSON") {
		t.Fatalf("err = %v", err)
	}
}

func TestRetriesRebalanceAndServerErrors(t *testing.T) {
	for _, status := range []int{http.StatusConflict, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		calls := atomic.Int32{}
		c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) < 3 {
				connectError(w, status, "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)")
				return
			}
			_, _ = w.Write([]byte(`[]`))
		}), Options{Attempts: 3})
		if _, err := c.Connectors(context.Background()); err != nil {
			t.Errorf("%d twice then 200: %v", status, err)
		}
		if calls.Load() != 3 {
			t.Errorf("%d: %d calls, want 3", status, calls.Load())
		}
	}
	calls := atomic.Int32{}
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		connectError(w, http.StatusConflict, "rebalance in progress")
	}), Options{Attempts: 2})
	_, err := c.Connectors(context.Background())
	var ce *Error
	if !errors.As(err, &ce) || ce.Status != 409 || calls.Load() != 2 {
		t.Errorf("409 always: err %v after %d calls; want Connect's 409 after 2", err, calls.Load())
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := New(Options{URL: "http://" + addr, Attempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Connectors(context.Background())
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %#v; want an UnreachableError", err)
	}
	for _, want := range []string{"unreachable at http://" + addr, URLFlag, URLProperty} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

func TestTimeoutIsNamed(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), Options{Timeout: 50 * time.Millisecond})
	_, err := c.Connectors(context.Background())
	var te *TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), TimeoutSetting) || !strings.Contains(err.Error(), "50ms") {
		t.Fatalf("err = %v; want a TimeoutError naming %s", err, TimeoutSetting)
	}
}

func TestCancelledByContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 4)
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	start := time.Now()
	_, err := c.Connectors(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancelling took %s", time.Since(start))
	}
	// A caller's deadline is the caller's error, not the client's timeout.
	ctx, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := c.Connectors(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want the caller's context.DeadlineExceeded", err)
	}
}

func TestValidationAndPlugins(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /connector-plugins", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`[{"class":"io.debezium.connector.postgresql.PostgresConnector","type":"source","version":"3.6.1.Final"},{"class":"a.B","type":"sink"}]`))
	})
	mux.HandleFunc("PUT /connector-plugins/{class}/config/validate", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"name":"` + r.PathValue("class") + `","error_count":1,"configs":[
			{"definition":{"name":"database.hostname"},"value":{"name":"database.hostname","value":null,"errors":["A value is required"]}},
			{"definition":{"name":"topic.prefix"},"value":{"name":"topic.prefix","value":"p","errors":[]}}]}`))
	})
	c := newClient(t, mux, Options{})
	ps, err := c.Plugins(context.Background())
	if err != nil || len(ps) != 2 || ps[0].Class != "a.B" {
		t.Fatalf("Plugins = %v, %v", ps, err)
	}
	pg := ps[1]
	for _, name := range []string{"io.debezium.connector.postgresql.PostgresConnector", "PostgresConnector", "Postgres"} {
		if !pg.Matches(name) {
			t.Errorf("%s does not match %q", pg.Class, name)
		}
	}
	if pg.Matches("Postgre") || pg.Matches("postgresconnector") {
		t.Error("Matches takes what Connect does not")
	}
	v, err := c.Validate(context.Background(), pg.Class, map[string]string{"topic.prefix": "p"})
	if err != nil {
		t.Fatal(err)
	}
	errs := v.Errors()
	if v.ErrorCount != 1 || len(errs) != 1 || errs[0].Name != "database.hostname" || errs[0].Errors[0] != "A value is required" {
		t.Fatalf("Validation = %+v", v)
	}
}
