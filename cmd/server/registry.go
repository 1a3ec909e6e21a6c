package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/registry"
)

// startRegistry returns the schema registry of the engine: a client of
// --schema-registry-url; else, with the playground, the built-in registry,
// kept in the playground's _schemas topic and served on
// --schema-registry-addr (its bound address is returned), behind the
// server's basic authentication when it has one; else none. The engine
// uses the built-in registry in process, without credentials. stop shuts
// the built-in registry down.
func startRegistry(ctx context.Context, cfg config, client kafka.Client, sec *security, log *slog.Logger) (reg registry.Client, addr string, stop func(), err error) {
	stop = func() {}
	if cfg.registryURL != "" {
		c, err := registry.NewHTTPClient(cfg.registryURL, registry.ClientOptions{})
		if err != nil {
			return nil, "", stop, fmt.Errorf("--schema-registry-url: %w", err)
		}
		log.Info("using the schema registry", "url", c.URL())
		return c, "", stop, nil
	}
	if len(cfg.bootstrap) > 0 {
		if cfg.sources["schema-registry-addr"] != "" {
			log.Warn("--schema-registry-addr is ignored: the built-in schema registry runs with the playground only; with --bootstrap-servers give --schema-registry-url")
		}
		log.Info("no schema registry: the AVRO, PROTOBUF and JSON_SR formats need --schema-registry-url (or ksql.schema.registry.url)")
		return nil, "", stop, nil
	}
	j, err := registry.NewKafkaJournal(ctx, client, registry.DefaultTopic)
	if err != nil {
		return nil, "", stop, err
	}
	m, err := registry.OpenMemory(ctx, j)
	if err != nil {
		j.Close()
		return nil, "", stop, err
	}
	logSkippedEntries(log, j.Topic(), m.Skipped())
	lis, err := net.Listen("tcp", cfg.registryAddr)
	if err != nil {
		j.Close()
		return nil, "", stop, fmt.Errorf("listening for the built-in schema registry on %s: %w (choose another --schema-registry-addr, or give --schema-registry-url)", cfg.registryAddr, err)
	}
	srv := &http.Server{
		Handler:           sec.registry(registry.NewServer(m)),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// With --tls-cert the registry serves TLS as the other listeners do,
	// so that its users' passwords do not travel in clear.
	srv.TLSConfig = sec.httpTLS()
	useTLS := srv.TLSConfig != nil // Serve changes the configuration
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		if useTLS {
			err = srv.ServeTLS(lis, "", "")
		} else {
			err = srv.Serve(lis)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving the built-in schema registry", "err", err)
		}
	}()
	addr = lis.Addr().String()
	url := registryURL(cfg, addr)
	if sec.users != nil {
		log.Info("built-in schema registry (Confluent's REST API; requires HTTP basic authentication with the server's users, as Confluent's clients send it with basic.auth.user.info)",
			"url", url, "topic", registry.DefaultTopic, "basic_auth", true, "tls", useTLS)
	} else {
		log.Info("built-in schema registry (Confluent's REST API; no authentication: for development)", "url", url, "topic", registry.DefaultTopic, "basic_auth", false, "tls", useTLS)
	}
	stop = func() {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		<-done
		j.Close()
	}
	return m, addr, stop, nil
}

// registryURL is the registry's address for the Info call: without
// credentials, "" for none.
func registryURL(cfg config, addr string) string {
	switch {
	case cfg.registryURL != "":
		return registry.Redact(cfg.registryURL)
	case addr != "" && cfg.tlsCert != "":
		return "https://" + addr
	case addr != "":
		return "http://" + addr
	}
	return ""
}

// logSkippedEntries reports the journal entries the built-in registry did
// not load, one error each with the topic and offset, then a summary. The
// journal is never rewritten to repair them.
func logSkippedEntries(log *slog.Logger, topic string, skipped []registry.SkippedEntry) {
	if len(skipped) == 0 {
		return
	}
	offsets := make([]int64, len(skipped))
	for i, s := range skipped {
		offsets[i] = s.Offset
		log.Error("schema registry: a journal record is skipped", "topic", topic, "offset", s.Offset, "key", s.Key, "reason", s.Reason)
	}
	log.Error("schema registry: journal records were skipped; the others are loaded. The journal is never rewritten: register the schemas again if they are needed, and keep the topic writable by Sluice alone",
		"topic", topic, "skipped", len(skipped), "offsets", offsets)
}
