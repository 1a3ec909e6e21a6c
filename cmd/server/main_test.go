package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--bootstrap-servers", " a:9092, b:9092 ,", "--kafka-client", "sarama", "--log-level", "debug"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.bootstrap, "|") != "a:9092|b:9092" || c.kafkaClient != "sarama" || c.logLevel != slog.LevelDebug {
		t.Errorf("config = %+v", c)
	}
	d, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config{grpcAddr: "127.0.0.1:8089", dataDir: "./sluice-data", kafkaClient: "franz",
		playgroundAddr: "127.0.0.1:9092", serviceID: "sluice", logLevel: slog.LevelInfo, shutdownTimeout: 10 * time.Second}
	if d.grpcAddr != want.grpcAddr || d.dataDir != want.dataDir || d.kafkaClient != want.kafkaClient ||
		d.playgroundAddr != want.playgroundAddr || d.serviceID != want.serviceID || d.logLevel != want.logLevel ||
		d.shutdownTimeout != want.shutdownTimeout || len(d.bootstrap) != 0 {
		t.Errorf("defaults = %+v, want %+v", d, want)
	}
	for _, args := range [][]string{
		{"--kafka-client", "confluent"},
		{"--log-level", "loud"},
		{"--data-dir", ""},
		{"extra"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded", args)
		}
	}
}

func TestHealthAndInfo(t *testing.T) {
	srv := startServer(t, t.TempDir())
	defer srv.stop()
	if srv.addrs.GRPC == "" || srv.addrs.Kafka == "" {
		t.Fatalf("addrs = %+v", srv.addrs)
	}
	h, err := healthpb.NewHealthClient(srv.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health = %v, %v", h, err)
	}
	info, err := sluicev1.NewSluiceClient(srv.conn).Info(context.Background(), &sluicev1.InfoRequest{})
	if err != nil || !info.GetPlayground() || info.GetKafkaBootstrapServers() != srv.addrs.Kafka || info.GetServiceId() != "sluice" {
		t.Errorf("info = %v, %v", info, err)
	}
}
