package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/server/rest"
)

// restServer is the ksqlDB-compatible REST API, served over HTTP/1.1 and
// unencrypted HTTP/2 (h2c, prior knowledge) on one listener.
type restServer struct {
	addr    string
	srv     *http.Server
	handler *rest.Handler
	served  chan error
}

// startREST listens on addr and serves the REST API over eng.
func startREST(addr string, eng *engine.Engine, client kafka.Client, brokers []string, serviceID string, log *slog.Logger) (*restServer, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for HTTP on %s: %w", addr, err)
	}
	h := rest.New(eng, rest.Options{
		Version:        version,
		ServiceID:      serviceID,
		KafkaClusterID: strings.Join(brokers, ","),
		CheckKafka: func(ctx context.Context) error {
			_, err := client.ListTopics(ctx)
			return err
		},
		Logger: log,
	})
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           h,
		Protocols:         &protocols,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Open query streams end first, so that Shutdown need not wait for
	// them.
	srv.RegisterOnShutdown(h.Close)
	s := &restServer{addr: lis.Addr().String(), srv: srv, handler: h, served: make(chan error, 1)}
	go func() {
		err := srv.Serve(lis)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.served <- err
	}()
	return s, nil
}

// shutdown ends open query streams, then waits for requests in progress
// until ctx ends, when it closes the connections left.
func (s *restServer) shutdown(ctx context.Context) error {
	s.handler.Close()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	if serr := <-s.served; serr != nil && err == nil {
		err = serr
	}
	return err
}
