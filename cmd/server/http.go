package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	//lint:ignore SA1019 net/http serves HTTP/2 with prior knowledge only; x/net's h2c is the one Upgrade handler there is.
	"golang.org/x/net/http2/h2c"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/server/rest"
)

// newREST returns the ksqlDB-compatible REST API over eng.
func newREST(eng *engine.Engine, client kafka.Client, clusterID string, cfg config, log *slog.Logger) *rest.Handler {
	return rest.New(eng, rest.Options{
		Version:            version,
		ServiceID:          cfg.serviceID,
		KafkaClusterID:     clusterID,
		ReadTimeout:        cfg.httpReadTimeout,
		InsertsIdleTimeout: cfg.insertsIdleTimeout,
		CheckKafka: func(ctx context.Context) error {
			_, err := client.ListTopics(ctx)
			return err
		},
		Logger: log,
	})
}

// httpServer is the HTTP listener: the REST API (once the engine is open),
// the probes and /metrics, over HTTP/1.1 and HTTP/2 (h2c, prior knowledge,
// without TLS; negotiated with TLS).
type httpServer struct {
	addr string
	srv  *http.Server
	// rest is the REST API once the engine is open.
	rest   *atomic.Pointer[rest.Handler]
	served chan error
	once   sync.Once
	err    error
}

// startHTTP listens on addr and serves h; with tlsConfig, over TLS. On
// shutdown it first ends the open streams of the REST API in restAPI.
//
// readTimeout bounds how long a request's headers and body may take to
// arrive (the REST API's handlers lift it once a body is in, and
// /inserts-stream replaces it by its idle timeout between rows), and how
// long a kept-alive connection may stay idle; headers alone get 10s.
func startHTTP(addr string, h http.Handler, restAPI *atomic.Pointer[rest.Handler], tlsConfig *tls.Config, readTimeout time.Duration, log *slog.Logger) (*httpServer, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for HTTP on %s: %w", addr, err)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	s := &httpServer{addr: lis.Addr().String(), rest: restAPI, served: make(chan error, 1)}
	if tlsConfig == nil {
		h = upgradeH2C(h)
	}
	s.srv = &http.Server{
		Handler:           h,
		Protocols:         &protocols,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: min(10*time.Second, readTimeout),
		ReadTimeout:       readTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Open query streams end first, so that Shutdown need not wait for
	// them.
	s.srv.RegisterOnShutdown(s.closeREST)
	go func() {
		var err error
		if tlsConfig != nil {
			err = s.srv.ServeTLS(lis, "", "")
		} else {
			err = s.srv.Serve(lis)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.served <- err
	}()
	return s, nil
}

// upgradeH2C serves the HTTP/1.1 requests that ask to switch to HTTP/2
// (Upgrade: h2c, RFC 7540 section 3.2) over HTTP/2, as some ksqlDB clients
// reach /inserts-stream; the standard library serves HTTP/2 with prior
// knowledge only. The upgraded request's body is read whole first, within
// the server's read timeout and the REST API's request size limit.
func upgradeH2C(h http.Handler) http.Handler {
	// The upgraded request is served on the HTTP/2 connection's stream 1,
	// but keeps the HTTP/1.1 it was sent with: say HTTP/2, as it is.
	h2 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 1 {
			r = r.Clone(r.Context())
			r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
		}
		h.ServeHTTP(w, r)
	})
	//lint:ignore SA1019 as for the import: no other Upgrade handler exists.
	up := h2c.NewHandler(h2, &http2.Server{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 1 && strings.EqualFold(r.Header.Get("Upgrade"), "h2c") {
			http.MaxBytesHandler(up, maxUpgradeBody).ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// maxUpgradeBody bounds the body of a request upgraded to HTTP/2, which is
// read whole before it is served: the REST API's default request limit.
const maxUpgradeBody = 1 << 20

func (s *httpServer) closeREST() {
	if h := s.rest.Load(); h != nil {
		h.Close()
	}
}

// shutdown ends open query streams, then waits for requests in progress
// until ctx ends, when it closes the connections left. Safe to call twice.
func (s *httpServer) shutdown(ctx context.Context) error {
	s.once.Do(func() {
		s.closeREST()
		s.err = s.srv.Shutdown(ctx)
		if s.err != nil {
			_ = s.srv.Close()
		}
		if serr := <-s.served; serr != nil && s.err == nil {
			s.err = serr
		}
	})
	return s.err
}
