package health

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProbes(t *testing.T) {
	p := &Probes{}
	mux := http.NewServeMux()
	p.Register(mux)
	get := func(path string) (int, string) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w.Code, w.Body.String()
	}
	expect := func(stage, path string, code int, body string) {
		t.Helper()
		c, b := get(path)
		if c != code || !strings.Contains(b, body) {
			t.Errorf("%s: %s = %d %q, want %d %q", stage, path, c, b, code, body)
		}
	}
	expect("starting", "/livez", 200, "ok")
	expect("starting", "/readyz", 503, "starting")
	var kafkaErr error
	p.SetReady(func(context.Context) error { return kafkaErr })
	expect("ready", "/readyz", 200, "ok")
	kafkaErr = errors.New("kafka is not reachable: dial tcp: connection refused")
	expect("kafka down", "/readyz", 503, "kafka is not reachable")
	kafkaErr = nil
	p.SetStopping()
	expect("stopping", "/readyz", 503, "shutting down")
	expect("stopping", "/livez", 200, "ok")
}
