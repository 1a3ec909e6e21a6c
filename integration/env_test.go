package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// runID is this test binary's suffix for topic and service names: the
// broker may be shared with earlier runs.
var runID = func() string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}()

// requireKafka returns the brokers named by SLUICE_TEST_KAFKA. Without it
// the test skips, or fails when CI=true: CI must not pass by skipping.
func requireKafka(t *testing.T) []string {
	t.Helper()
	addr := os.Getenv("SLUICE_TEST_KAFKA")
	if addr == "" {
		msg := "SLUICE_TEST_KAFKA is not set: these tests need a real Apache Kafka (run `make test-kafka`, or scripts/kafka.sh up and set SLUICE_TEST_KAFKA to what it prints)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return strings.Split(addr, ",")
}

// nodes is the number of nodes SLUICE_TEST_KAFKA_NODES says the cluster
// started by scripts/kafka.sh has (1 when unset).
func nodes(t *testing.T) int {
	t.Helper()
	s := os.Getenv("SLUICE_TEST_KAFKA_NODES")
	if s == "" {
		return 1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("SLUICE_TEST_KAFKA_NODES=%q: want a node count", s)
	}
	return n
}

// requireNodes skips a test written for a cluster of n nodes on another
// cluster: make test-kafka runs each group on the cluster it needs.
func requireNodes(t *testing.T, n int) {
	t.Helper()
	if got := nodes(t); got != n {
		t.Skipf("needs a %d-node cluster started by scripts/kafka.sh (SLUICE_TEST_KAFKA_NODES=%d); this one has %d", n, n, got)
	}
}

// requireTool returns the path of an outside program, skipping (failing
// under CI=true) when it is not installed.
func requireTool(t *testing.T, name, hint string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s is not installed (%s)", name, hint)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// adapter is one of Sluice's Kafka clients.
type adapter struct {
	name string
	new  func(kafka.Config) (kafka.Client, error)
}

var adapters = []adapter{
	{"franz", kafka.NewFranz},
	{"sarama", kafka.NewSarama},
}

// forEachAdapter runs f as a subtest per adapter, with a client on the
// test broker.
func forEachAdapter(t *testing.T, f func(t *testing.T, a adapter, cl kafka.Client)) {
	brokers := requireKafka(t)
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			start := time.Now()
			cl := newClient(t, a, brokers)
			f(t, a, cl)
			t.Logf("timing: %s took %s", t.Name(), time.Since(start).Round(time.Millisecond))
		})
	}
}

func newClient(t *testing.T, a adapter, brokers []string) kafka.Client {
	t.Helper()
	cl, err := a.new(kafka.Config{Brokers: brokers, ClientID: "sluice-it-" + a.name, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// testLogger writes the engine's and the clients' warnings and errors
// into the test's log when SLUICE_TEST_KAFKA_LOG is set, and nowhere
// otherwise (a broker fault makes the clients log a warning per retry).
func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("SLUICE_TEST_KAFKA_LOG") == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// topicName returns a topic name unique to this run.
func topicName(base string) string { return base + "_" + runID }

// createTopic creates a topic with parts partitions, waits until the
// brokers know it, and deletes it when the test ends.
func createTopic(t *testing.T, cl kafka.Client, name string, parts int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.CreateTopic(ctx, kafka.TopicSpec{Name: name, Partitions: parts}); err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	if err := kafka.AwaitTopic(ctx, cl, name, parts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cl.DeleteTopic(ctx, name)
	})
}

// readAll reads every record now in topic, in partition and offset order.
func readAll(t *testing.T, ctx context.Context, cl kafka.Client, topic string) []*kafka.Record {
	t.Helper()
	recs, err := kafka.ReadAll(ctx, cl, topic)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// repoRoot is the repository's top directory, found from the test's
// working directory (the package directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// kafkaScript runs scripts/kafka.sh with args (kill, stop, start N,
// controller) on the cluster the environment names, and returns its
// output.
func kafkaScript(t *testing.T, args ...string) string {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "kafka.sh"), args...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("scripts/kafka.sh %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	t.Logf("timing: scripts/kafka.sh %s took %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return strings.TrimSpace(string(out))
}
