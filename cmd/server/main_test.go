package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/sluice-sql/sluice/engine"
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
	cl, err := parseFlags([]string{"--cluster", "--bootstrap-servers", "k:9092", "--advertised-address", "h:8089"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cl.cluster || cl.advertised != "h:8089" || cl.sessionTimeout != 6*time.Second {
		t.Errorf("cluster config = %+v", cl)
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
	if strings.Join(d.readOnlyTopics, ",") != strings.Join(engine.DefaultReadOnlyTopics, ",") {
		t.Errorf("default read-only topics %q", d.readOnlyTopics)
	}
	if r, err := parseFlags([]string{"--readonly-topics", "audit-.*, ledger"}, io.Discard); err != nil || strings.Join(r.readOnlyTopics, "|") != "audit-.*|ledger" {
		t.Errorf("--readonly-topics: %q %v", r.readOnlyTopics, err)
	}
	if r, err := parseFlags([]string{"--readonly-topics", ""}, io.Discard); err != nil || r.readOnlyTopics == nil || len(r.readOnlyTopics) != 0 {
		t.Errorf("an empty --readonly-topics is no topic: %q %v", r.readOnlyTopics, err)
	}
	for _, args := range [][]string{
		{"--kafka-client", "confluent"},
		{"--log-level", "loud"},
		{"--data-dir", ""},
		{"extra"},
		{"--processing-guarantee", "twice"},
		{"--processing-guarantee", "exactly_once_v2", "--kafka-client", "sarama"},
		{"--cluster"}, // no brokers: the playground is one server's
		{"--cluster", "--bootstrap-servers", "k:9092", "--kafka-client", "sarama"},
		{"--advertised-address", "h:8089"},
		{"--cluster", "--bootstrap-servers", "k:9092", "--queries-file", "q.sql"},
		{"--cluster", "--bootstrap-servers", "k:9092", "--cluster-session-timeout", "10ms"},
		{"--readonly-topics", "ok,(unclosed"},
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

func TestProcessingGuaranteeSetting(t *testing.T) {
	env := map[string]string{"SLUICE_PROCESSING_GUARANTEE": "exactly_once"}
	c, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.guarantee != "exactly_once_v2" || !c.guaranteeDeprecated {
		t.Errorf("from the environment: %q (deprecated %v), want exactly_once_v2 (deprecated)", c.guarantee, c.guaranteeDeprecated)
	}
	file := t.TempDir() + "/ksql-server.properties"
	if err := os.WriteFile(file, []byte("ksql.streams.processing.guarantee=exactly_once_v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = parseConfig([]string{"--config", file}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.guarantee != "exactly_once_v2" {
		t.Errorf("from the properties file: %q, want exactly_once_v2", c.guarantee)
	}
	_, err = parseConfig([]string{"--config", file, "--kafka-client", "sarama"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--kafka-client franz") {
		t.Errorf("exactly_once_v2 with sarama: %v, want a refusal naming --kafka-client franz", err)
	}
}

func TestMemorySettings(t *testing.T) {
	none := func(string) string { return "" }
	c, err := parseConfig(nil, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.memoryLimit != 0 || c.gcPercent != engine.DefaultGCPercent {
		t.Errorf("defaults: limit %d, gc %d; want 0, %d", c.memoryLimit, c.gcPercent, engine.DefaultGCPercent)
	}
	env := map[string]string{"SLUICE_MEMORY_LIMIT": "512MiB", "GOGC": "80"}
	c, err = parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.memoryLimit != 512<<20 || c.gcPercent != -1 {
		t.Errorf("from the environment: limit %d, gc %d; want %d, -1 (GOGC's)", c.memoryLimit, c.gcPercent, 512<<20)
	}
	c, err = parseConfig([]string{"--memory-limit", "2GB", "--gc-percent", "50"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.memoryLimit != 2e9 || c.gcPercent != 50 {
		t.Errorf("flags: limit %d, gc %d; want 2e9, 50", c.memoryLimit, c.gcPercent)
	}
	for _, args := range [][]string{{"--memory-limit", "lots"}, {"--memory-limit", "-1MiB"}, {"--gc-percent", "0"}} {
		if _, err := parseConfig(args, none, io.Discard); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("parseConfig(%q): %v, want an error naming %s", args, err, args[0])
		}
	}
}

func TestClusterConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := config{dataDir: dir, serviceID: "svc", sessionTimeout: 6 * time.Second}
	cc, fwd, err := clusterConfig(cfg, "127.0.0.1:8089", &security{})
	if err != nil {
		t.Fatal(err)
	}
	fwd.Close()
	if cc.Address != "127.0.0.1:8089" || !strings.HasPrefix(cc.InstanceID, "svc-") || cc.Forward == nil {
		t.Errorf("cluster config = %+v", cc)
	}
	// The server id is kept: a restart rejoins as the same member.
	again, fwd, err := clusterConfig(cfg, "127.0.0.1:8089", &security{})
	if err != nil {
		t.Fatal(err)
	}
	fwd.Close()
	if again.InstanceID != cc.InstanceID {
		t.Errorf("instance id %q after a restart, was %q", again.InstanceID, cc.InstanceID)
	}
	if _, _, err := clusterConfig(cfg, "0.0.0.0:8089", &security{}); err == nil || !strings.Contains(err.Error(), "--advertised-address") {
		t.Errorf("listening on 0.0.0.0 without --advertised-address: err %v", err)
	}
	cfg.advertised = "host:8089"
	if cc, fwd, err := clusterConfig(cfg, "0.0.0.0:8089", &security{}); err != nil || cc.Address != "host:8089" {
		t.Errorf("advertised: %+v, %v", cc, err)
	} else {
		fwd.Close()
	}
}

// TestPlaygroundAddrUnderAuth checks that with authentication on the
// playground broker, which has none, must listen on loopback.
func TestPlaygroundAddrUnderAuth(t *testing.T) {
	env := func(string) string { return "" }
	for _, addr := range []string{"0.0.0.0:9092", ":9092", "[::]:9092", "10.1.2.3:9092", "kafka.example:9092", "localhost.example:9092", "9092"} {
		for _, auth := range [][]string{{"--auth-user", "alice", "--auth-password", "pw"}, {"--auth-users-file", "users.txt"}} {
			_, err := parseConfig(append([]string{"--playground-addr", addr}, auth...), env, io.Discard)
			if err == nil {
				t.Errorf("--playground-addr %s with %s accepted", addr, auth[0])
				continue
			}
			for _, want := range []string{"--playground-addr " + addr + " is not a loopback address", "no authentication", "127.0.0.1, localhost or ::1", "--bootstrap-servers"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("--playground-addr %s with %s: %q lacks %q", addr, auth[0], err, want)
				}
			}
		}
	}
	for _, addr := range []string{"127.0.0.1:9092", "127.0.0.2:0", "localhost:9092", "LocalHost:9092", "[::1]:9092", "[::ffff:127.0.0.1]:9092"} {
		if _, err := parseConfig([]string{"--playground-addr", addr, "--auth-user", "alice", "--auth-password", "pw"}, env, io.Discard); err != nil {
			t.Errorf("--playground-addr %s with --auth-user: %v", addr, err)
		}
	}
	// Without authentication the playground may listen anywhere; with
	// --bootstrap-servers there is no playground.
	for _, args := range [][]string{
		{"--playground-addr", "0.0.0.0:9092"},
		{"--playground-addr", "0.0.0.0:9092", "--auth-user", "alice", "--auth-password", "pw", "--bootstrap-servers", "kafka:9092"},
	} {
		if _, err := parseConfig(args, env, io.Discard); err != nil {
			t.Errorf("parseConfig(%q): %v", args, err)
		}
	}
}

func TestBoundedWorkSettings(t *testing.T) {
	none := func(string) string { return "" }
	c, err := parseConfig(nil, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.statementTimeout != 60*time.Second || c.httpReadTimeout != 30*time.Second || c.insertsIdleTimeout != 10*time.Minute || c.maxPushQueries != 100 || c.pushV2 {
		t.Errorf("defaults: statement %s, read %s, inserts idle %s, push queries %d", c.statementTimeout, c.httpReadTimeout, c.insertsIdleTimeout, c.maxPushQueries)
	}
	file := t.TempDir() + "/ksql-server.properties"
	if err := os.WriteFile(file, []byte("ksql.max.push.queries=7\nstatement-timeout=5s\nksql.query.push.v2.enabled=true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SLUICE_HTTP_READ_TIMEOUT": "2s"}
	c, err = parseConfig([]string{"--config", file, "--inserts-idle-timeout", "1m"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.maxPushQueries != 7 || !c.pushV2 || c.statementTimeout != 5*time.Second || c.httpReadTimeout != 2*time.Second || c.insertsIdleTimeout != time.Minute {
		t.Errorf("set: %+v", c)
	}
	// The flags' zeros are the engine's negatives: no limit, no push query.
	if engineTimeout(0) >= 0 || engineTimeout(time.Second) != time.Second || engineLimit(0) >= 0 || engineLimit(3) != 3 {
		t.Error("the zeros are not passed on as the engine's negatives")
	}
	for _, args := range [][]string{{"--statement-timeout", "-1s"}, {"--http-read-timeout", "0s"}, {"--inserts-idle-timeout", "0s"}, {"--max-push-queries", "-1"}} {
		if _, err := parseConfig(args, none, io.Discard); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("parseConfig(%q): %v, want an error naming %s", args, err, args[0])
		}
	}
}

// TestBuildVersion: the version reported is the one the build set, else
// the module version stamped by the go command, else dev with the commit.
func TestBuildVersion(t *testing.T) {
	info := func(main string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: main}, Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}
	for _, tc := range []struct {
		set  string
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		{"1.4.0", info("v0.0.0-x"), "1.4.0"},
		{"dev", info("v1.2.3"), "1.2.3"},
		{"dev", info("(devel)", rev), "dev-0123456789ab"},
		{"dev", info("(devel)", rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "dev-0123456789ab+dirty"},
		{"dev", info("(devel)"), "dev"},
		{"dev", func() (*debug.BuildInfo, bool) { return nil, false }, "dev"},
	} {
		if got := buildVersion(tc.set, tc.read); got != tc.want {
			t.Errorf("buildVersion(%q) = %q, want %q", tc.set, got, tc.want)
		}
	}
}
