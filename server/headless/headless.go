package headless

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine/api"
)

// Message is ksqlDB's answer to an interactive request in headless mode.
const Message = "The server is running in headless mode. Interactive use is disabled."

// allowedRPC are the gRPC methods (by prefix of their full name) a
// headless server still answers: health, reflection and Info. Any other
// method, including ones added later, is refused.
var allowedRPC = []string{"/grpc.health.v1.Health/", "/grpc.reflection.", "/sluice.v1.Sluice/Info"}

func allowed(method string) bool {
	for _, p := range allowedRPC {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

var errHeadless = status.Error(codes.FailedPrecondition, Message)

// ServerOptions are the gRPC interceptors refusing interactive calls.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if !allowed(info.FullMethod) {
				return nil, errHeadless
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if !allowed(info.FullMethod) {
				return errHeadless
			}
			return h(srv, ss)
		}),
	}
}

// Middleware refuses every HTTP request but those to the paths in allow
// (probes, metrics, server information) with 403 and a ksqlDB-style
// error body.
func Middleware(next http.Handler, allow ...string) http.Handler {
	ok := map[string]bool{}
	for _, p := range allow {
		ok[p] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"@type":"generic_error","error_code":40300,"message":"`+Message+`"}`+"\n")
	})
}

// Executor runs statements; *engine.Engine implements it.
type Executor interface {
	Execute(ctx context.Context, s *api.Session, sql string, opts ...api.Options) ([]api.Result, error)
}

// markerName is the file under the data directory that keeps the digest
// of the queries file once it ran to its end.
const markerName = "headless-queries.sha256"

// Run runs the queries file at path in a fresh session, once per data
// directory: its statements create streams, tables and persistent queries
// that the engine keeps, so a restart finds them replayed from the catalog
// and does not run the file again. A restart with a different file is
// refused, as ksqlDB asks headless servers to keep the same file. It
// returns the number of statements run (0 when the file had run already).
func Run(ctx context.Context, eng Executor, path, dataDir string) (int, error) {
	script, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading the queries file: %w", err)
	}
	sum := sha256.Sum256(script)
	digest := hex.EncodeToString(sum[:])
	marker := filepath.Join(dataDir, markerName)
	prev, err := os.ReadFile(marker)
	switch {
	case err == nil && strings.TrimSpace(string(prev)) == digest:
		return 0, nil
	case err == nil:
		return 0, fmt.Errorf("the queries file %s changed since it ran on the data directory %s; "+
			"a headless server keeps running the statements of the file it started with: "+
			"start it with that file, or with a new --data-dir (and --service-id) for the new one", path, dataDir)
	case !errors.Is(err, fs.ErrNotExist):
		return 0, fmt.Errorf("reading %s: %w", marker, err)
	}
	// A query has no client to read it in headless mode: refuse it before
	// it runs.
	admit := func(st api.StatementInfo) error {
		if st.Kind.IsQuery() {
			return &api.StatementError{Code: api.CodeBadStatement, Line: st.Line, Col: st.Col,
				Msg: "a query (SELECT or PRINT) has no client in headless mode; write its rows to a topic with CREATE STREAM ... AS SELECT instead"}
		}
		return nil
	}
	res, err := eng.Execute(ctx, api.NewSession(), string(script), api.Options{Admit: admit})
	for _, r := range res {
		if r.Stream != nil {
			r.Stream.Close()
		}
	}
	if err != nil {
		return len(res), fmt.Errorf("the queries file %s: statement %d: %w", path, len(res)+1, err)
	}
	if err := os.WriteFile(marker, []byte(digest+"\n"), 0o644); err != nil {
		return len(res), fmt.Errorf("writing %s: %w", marker, err)
	}
	return len(res), nil
}
