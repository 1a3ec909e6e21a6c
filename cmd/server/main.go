package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/server"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process
	}()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "sluice-server:", err)
		}
		os.Exit(1)
	}
}

// addrs are the addresses of a started server.
type addrs struct {
	// GRPC is the gRPC API's address.
	GRPC string
	// HTTP is the REST API's address.
	HTTP string
	// Kafka is the playground broker's address; empty when the server uses
	// an outside Kafka cluster.
	Kafka string
}

// config is the server's command line.
type config struct {
	grpcAddr        string
	httpAddr        string
	dataDir         string
	bootstrap       []string
	kafkaClient     string
	playgroundAddr  string
	serviceID       string
	logLevel        slog.Level
	shutdownTimeout time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("sluice-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var bootstrap, level string
	fs.StringVar(&c.grpcAddr, "grpc", "127.0.0.1:8089", "`address` of the gRPC API")
	fs.StringVar(&c.httpAddr, "http", "127.0.0.1:8088", "`address` of the ksqlDB-compatible REST API (HTTP/1.1 and h2c)")
	fs.StringVar(&c.dataDir, "data-dir", "./sluice-data", "`directory` for local state (and the playground's topics)")
	fs.StringVar(&bootstrap, "bootstrap-servers", "", "comma-separated Kafka `brokers`; empty runs a playground broker")
	fs.StringVar(&c.kafkaClient, "kafka-client", "franz", "Kafka client library: franz or sarama")
	fs.StringVar(&c.playgroundAddr, "playground-addr", "127.0.0.1:9092", "`address` of the playground broker")
	fs.StringVar(&c.serviceID, "service-id", "sluice", "`id` of the Sluice cluster; prefixes its internal topics and groups")
	fs.StringVar(&level, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long calls in progress may take to finish on shutdown")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := c.logLevel.UnmarshalText([]byte(level)); err != nil {
		return c, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	if c.kafkaClient != "franz" && c.kafkaClient != "sarama" {
		return c, fmt.Errorf("--kafka-client: %q is not franz or sarama", c.kafkaClient)
	}
	for _, b := range strings.Split(bootstrap, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.bootstrap = append(c.bootstrap, b)
		}
	}
	if c.dataDir == "" {
		return c, errors.New("--data-dir must not be empty")
	}
	return c, nil
}

// run runs the server until ctx ends, then shuts it down gracefully. Once
// it serves, it prints "Sluice server listening on <addr>" to stdout and
// calls ready (if not nil) with the bound addresses, so that tests can pass
// port 0 in --grpc and --playground-addr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addrs)) (err error) {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}

	var ready0 addrs
	brokers := cfg.bootstrap
	if len(brokers) == 0 {
		pg, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{
			Addr:    cfg.playgroundAddr,
			DataDir: filepath.Join(cfg.dataDir, "kafka"),
			Logger:  log.With("component", "playground"),
		})
		if err != nil {
			return fmt.Errorf("starting the Kafka playground on %s: %w", cfg.playgroundAddr, err)
		}
		defer pg.Close()
		ready0.Kafka = pg.Addr()
		brokers = []string{pg.Addr()}
		log.Warn("Kafka playground: this is a single-node development broker, not replicated; "+
			"do not keep data in it that you cannot lose. Outside Kafka clients (kcat, ...) can produce into it",
			"bootstrap_servers", pg.Addr(), "data_dir", filepath.Join(cfg.dataDir, "kafka"))
	}

	kcfg := kafka.Config{Brokers: brokers, ClientID: cfg.serviceID, Logger: log.With("component", "kafka")}
	var client kafka.Client
	if cfg.kafkaClient == "sarama" {
		client, err = kafka.NewSarama(kcfg)
	} else {
		client, err = kafka.NewFranz(kcfg)
	}
	if err != nil {
		return fmt.Errorf("connecting to Kafka at %s: %w", strings.Join(brokers, ","), err)
	}
	defer client.Close()

	eng, err := engine.Open(ctx, engine.Config{
		Kafka:     client,
		DataDir:   filepath.Join(cfg.dataDir, "state"),
		ServiceID: cfg.serviceID,
		Logger:    log.With("component", "engine"),
	})
	if err != nil {
		return fmt.Errorf("opening the engine: %w", err)
	}
	defer func() {
		if cerr := eng.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing the engine: %w", cerr)
		}
	}()

	lis, err := net.Listen("tcp", cfg.grpcAddr)
	if err != nil {
		return fmt.Errorf("listening for gRPC on %s: %w", cfg.grpcAddr, err)
	}
	srv := server.New(eng, server.Options{
		Version:               version,
		ServiceID:             cfg.serviceID,
		KafkaBootstrapServers: strings.Join(brokers, ","),
		Playground:            len(cfg.bootstrap) == 0,
		Logger:                log.With("component", "server"),
	})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	rest, err := startREST(cfg.httpAddr, eng, client, brokers, cfg.serviceID, log.With("component", "rest"))
	if err != nil {
		srv.Stop()
		return err
	}
	ready0.GRPC, ready0.HTTP = lis.Addr().String(), rest.addr
	fmt.Fprintf(stdout, "Sluice server listening on %s\n", ready0.GRPC)
	log.Info("serving", "grpc", ready0.GRPC, "http", ready0.HTTP, "kafka", strings.Join(brokers, ","), "kafka_client", cfg.kafkaClient,
		"service_id", cfg.serviceID, "data_dir", cfg.dataDir, "version", version)
	if ready != nil {
		ready(ready0)
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-served:
		srv.Stop()
		if err == nil {
			err = errors.New("stopped unexpectedly")
		}
		return fmt.Errorf("serving gRPC: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := rest.shutdown(sctx); err != nil {
		log.Warn("REST requests still in progress at the shutdown timeout were cut off", "err", err)
	}
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("calls still in progress at the shutdown timeout were cut off", "timeout", cfg.shutdownTimeout)
	}
	if err := <-served; err != nil {
		log.Warn("gRPC server", "err", err)
	}
	return nil
}
