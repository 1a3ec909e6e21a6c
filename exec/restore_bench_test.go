package exec

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/state"
)

// BenchmarkRestore measures how fast a task rebuilds its state from a
// changelog into an empty store: b.N changelog records over 100,000 keys
// (as a GROUP BY over 100,000 groups writes them), read from the embedded
// broker and written to Pebble. Reported as changelog records/s.
func BenchmarkRestore(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	defer broker.Close()
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()

	g := aggGraph("REGION")
	g.QueryID = "CTAS_BENCH_1"
	step := g.Steps[0]
	if err := client.CreateTopic(ctx, kafka.TopicSpec{Name: step.Changelog, Partitions: 1}); err != nil {
		b.Fatal(err)
	}
	prod, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	const keys, chunk = 100_000, 10_000
	value := make([]byte, 24) // about the size of a COUNT and SUM state
	for sent := 0; sent < b.N; {
		n := min(chunk, b.N-sent)
		recs := make([]*kafka.Record, n)
		for i := range recs {
			recs[i] = &kafka.Record{Topic: step.Changelog, Partition: 0, Key: fmt.Appendf(nil, "key-%06d", (sent+i)%keys), Value: value}
		}
		if err := prod.Produce(ctx, recs); err != nil {
			b.Fatal(err)
		}
		sent += n
	}
	prod.Close()

	store, err := state.Open(filepath.Join(b.TempDir(), "state"), state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	q := &Query{graph: g, deps: Deps{Kafka: client, State: store, StateNamespace: g.QueryID, Logger: discardLogger()}}
	t := &task{q: q, partition: 0}
	b.ResetTimer()
	if err := restoreState(ctx, t); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got := t.restored.Load(); got != int64(b.N) {
		b.Fatalf("restored %d records, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
