package headless

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine/api"
)

// fakeExec answers each run with results and err, counting the runs; it
// asks the options' Admit about each statement of kinds first.
type fakeExec struct {
	results []api.Result
	kinds   []api.StatementKind
	err     error
	runs    int
}

func (f *fakeExec) Execute(_ context.Context, _ *api.Session, _ string, opts ...api.Options) ([]api.Result, error) {
	f.runs++
	for i, k := range f.kinds {
		for _, o := range opts {
			if o.Admit == nil {
				continue
			}
			if err := o.Admit(api.StatementInfo{Kind: k, Index: i, Line: i + 1, Col: 1}); err != nil {
				return f.results[:i], err
			}
		}
	}
	return f.results, f.err
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "q.sql")
	if err := os.WriteFile(file, []byte("CREATE STREAM s AS SELECT * FROM t;"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := &fakeExec{results: []api.Result{{Kind: api.ResultStatus}}}
	if n, err := Run(context.Background(), ok, file, dir); n != 1 || err != nil {
		t.Fatalf("first run: %d, %v", n, err)
	}
	if n, err := Run(context.Background(), ok, file, dir); n != 0 || err != nil || ok.runs != 1 {
		t.Fatalf("second run: %d, %v, %d runs", n, err, ok.runs)
	}

	// A failing statement is named; the file runs again next time.
	dir2 := t.TempDir()
	bad := &fakeExec{results: []api.Result{{}}, err: errors.New("line 2:1: boom")}
	if _, err := Run(context.Background(), bad, file, dir2); err == nil || !strings.Contains(err.Error(), "statement 2: line 2:1: boom") {
		t.Errorf("failing statement: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir2, markerName)); err == nil {
		t.Error("a failed run was marked done")
	}

	// A query has no client: it is refused before it runs.
	for _, k := range []api.StatementKind{api.StatementPush, api.StatementPull, api.StatementPrint} {
		push := &fakeExec{results: []api.Result{{}, {}}, kinds: []api.StatementKind{api.StatementOther, k}}
		if _, err := Run(context.Background(), push, file, t.TempDir()); err == nil || !strings.Contains(err.Error(), "statement 2: line 2:1: a query (SELECT or PRINT) has no client in headless mode") {
			t.Errorf("query kind %d: %v", k, err)
		}
	}

	// A row stream that still comes back is closed.
	closed := false
	rows := &fakeExec{results: []api.Result{{Kind: api.ResultRows, Stream: api.NewStream("q", nil,
		func(context.Context) ([]any, error) { return nil, io.EOF }, func() { closed = true }, nil)}}}
	if _, err := Run(context.Background(), rows, file, t.TempDir()); err != nil || !closed {
		t.Errorf("row stream: %v, closed %v", err, closed)
	}
}

func TestMiddleware(t *testing.T) {
	h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }), "/info")
	for path, code := range map[string]int{"/info": 204, "/ksql": 403, "/": 403} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", path, nil))
		if w.Code != code || (code == 403 && !strings.Contains(w.Body.String(), Message)) {
			t.Errorf("%s: %d %s", path, w.Code, w.Body.String())
		}
	}
}
