package main

import (
	"context"
	"crypto/tls"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/registry"
	"github.com/sluice-sql/sluice/server/auth"
	"github.com/sluice-sql/sluice/server/headless"
	"github.com/sluice-sql/sluice/server/health"
	"github.com/sluice-sql/sluice/server/metrics"
	"github.com/sluice-sql/sluice/server/rest"
)

// security is the server's TLS and authentication, applied to both
// listeners (and authentication to the built-in schema registry). Each
// listener takes its own copy of tls (httpTLS, grpc).
type security struct {
	tls   *tls.Config
	users *auth.Users // nil: no authentication
	// failures counts and logs the requests users refuse; nil without
	// authentication.
	failures *auth.Failures
}

// newSecurity reads the TLS and authentication settings; failed logins
// are logged to log (see auth.Failures).
func newSecurity(cfg config, log *slog.Logger) (*security, error) {
	s := &security{}
	if cfg.tlsCert != "" {
		c, err := auth.ServerTLS(cfg.tlsCert, cfg.tlsKey, cfg.tlsClientCA)
		if err != nil {
			return nil, err
		}
		s.tls = c
	}
	if cfg.usersFile != "" {
		u, err := auth.LoadUsers(cfg.usersFile)
		if err != nil {
			return nil, err
		}
		s.users = u
	}
	if cfg.user != "" {
		if s.users == nil {
			s.users = auth.NewUsers()
		}
		s.users.Add(cfg.user, cfg.password)
	}
	if s.users != nil {
		s.failures = &auth.Failures{Log: log}
		s.users.SetFailures(s.failures)
	}
	return s, nil
}

// httpTLS is the HTTP listener's TLS configuration, nil without TLS.
func (s *security) httpTLS() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.Clone()
}

// http wraps the HTTP handler in authentication; the probes are exempt.
func (s *security) http(h http.Handler) http.Handler {
	if s.users == nil {
		return h
	}
	return s.users.Middleware(h, health.Paths...)
}

// registry wraps the built-in schema registry's handler in
// authentication, every route included (schemas can be sensitive). A
// refused request gets Confluent Schema Registry's 401:
// {"error_code":401,"message":"Unauthorized"}.
func (s *security) registry(h http.Handler) http.Handler {
	if s.users == nil {
		return h
	}
	return s.users.Guard(h, auth.SurfaceRegistry, registry.ContentType, registryUnauthorized)
}

// registryUnauthorized is the body of the registry's 401, as Confluent's.
const registryUnauthorized = `{"error_code":401,"message":"Unauthorized"}` + "\n"

// loginMetrics is the /metrics collector of the refused requests, per
// surface: sluice_auth_failed_logins_total (credentials that did not
// match) and sluice_auth_missing_credentials_total (none given). Without
// authentication it has no families.
func (s *security) loginMetrics() []metrics.Family {
	counts := s.failures.Counts()
	if counts == nil {
		return nil
	}
	failed := metrics.Family{Name: "sluice_auth_failed_logins_total", Type: "counter",
		Help: "Requests refused because their credentials did not match (unknown user, wrong password, not basic authentication), by surface."}
	missing := metrics.Family{Name: "sluice_auth_missing_credentials_total", Type: "counter",
		Help: "Requests refused because they carried no credentials, by surface."}
	for _, surface := range slices.Sorted(maps.Keys(counts)) {
		c := counts[surface]
		failed.Samples = append(failed.Samples, metrics.Sample{Labels: []string{"surface", surface}, Value: float64(c.Failed)})
		missing.Samples = append(missing.Samples, metrics.Sample{Labels: []string{"surface", surface}, Value: float64(c.Missing)})
	}
	return []metrics.Family{failed, missing}
}

// skippedRecordMetrics is the /metrics collector of the records of the
// server's own topics skipped at start: the command log's
// (sluice_command_log_records_skipped_total, once the engine is open) and
// the built-in schema registry's journal's
// (sluice_schema_registry_journal_records_skipped_total, when it runs).
func skippedRecordMetrics(eng *atomic.Pointer[engine.Engine], reg *atomic.Pointer[registry.Memory]) metrics.Collector {
	return func() []metrics.Family {
		var out []metrics.Family
		if e := eng.Load(); e != nil {
			out = append(out, metrics.Family{Name: "sluice_command_log_records_skipped_total", Type: "counter",
				Help:    "Command log records not applied: unreadable, refused, or depending on a skipped one (the log names each offset).",
				Samples: []metrics.Sample{{Value: float64(len(e.SkippedCommands()))}}})
		}
		if m := reg.Load(); m != nil {
			out = append(out, metrics.Family{Name: "sluice_schema_registry_journal_records_skipped_total", Type: "counter",
				Help:    "Records of the built-in schema registry's journal not loaded: unreadable or refused (the log names each offset).",
				Samples: []metrics.Sample{{Value: float64(len(m.Skipped()))}}})
		}
		return out
	}
}

// grpc are the gRPC server options: TLS credentials and authentication
// interceptors on every method.
func (s *security) grpc() []grpc.ServerOption {
	var opts []grpc.ServerOption
	if s.tls != nil {
		// A copy: the HTTP server sets its own ALPN protocols in its
		// configuration.
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.tls.Clone())))
	}
	if s.users != nil {
		opts = append(opts, s.users.ServerOptions()...)
	}
	return opts
}

// route is one route of the HTTP listener.
type route struct{ Method, Path string }

// opsRoutes are the routes the server itself serves besides the REST API.
var opsRoutes = []route{{"GET", "/livez"}, {"GET", "/readyz"}, {"GET", "/metrics"}}

// headlessPaths are the paths a headless server still answers: probes,
// metrics, and ksqlDB's server information and health check.
var headlessPaths = append([]string{"/metrics", "/info", "/healthcheck"}, health.Paths...)

// httpRoutes are every route of the HTTP listener: ours and the REST
// API's; the security test checks each.
func httpRoutes() []route {
	out := append([]route(nil), opsRoutes...)
	for _, r := range rest.Routes() {
		out = append(out, route{r.Method, r.Path})
	}
	return out
}

// newHTTPHandler serves the probes, /metrics and, once the engine is open,
// the REST API in restAPI (503 before). In headless mode only the probes,
// /metrics, /info and /healthcheck answer. /metrics also writes what the
// collectors return.
func newHTTPHandler(probes *health.Probes, eng *atomic.Pointer[engine.Engine], restAPI *atomic.Pointer[rest.Handler], isHeadless bool, collectors ...metrics.Collector) http.Handler {
	mux := http.NewServeMux()
	probes.Register(mux)
	mux.Handle("GET /metrics", metrics.Handler(func(ctx context.Context) []engine.QueryMetrics {
		if e := eng.Load(); e != nil {
			return e.Metrics(ctx)
		}
		return nil
	}, version, collectors...))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h := restAPI.Load()
		if h == nil {
			rest.WriteError(w, 50300, "the server is starting: it is replaying its catalog; /readyz answers 200 once it serves")
			return
		}
		h.ServeHTTP(w, r)
	})
	var h http.Handler = mux
	if isHeadless {
		h = headless.Middleware(h, headlessPaths...)
	}
	return h
}
