package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// BenchmarkPersistentQuery measures a filter-and-project persistent query
// end to end over the embedded broker.
func BenchmarkPersistentQuery(b *testing.B) {
	benchQuery(b, 1000, "CREATE STREAM big AS SELECT id, item, amount * qty AS total FROM orders WHERE amount > 50;")
}

// BenchmarkGroupByCount measures a GROUP BY count with its state in the
// task cache and Pebble and its changelog, over 100,000 keys.
func BenchmarkGroupByCount(b *testing.B) {
	benchQuery(b, 100_000, "CREATE TABLE counts AS SELECT id, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY id;")
}

// BenchmarkTumblingCount measures a windowed count, one-minute tumbling
// windows over 100,000 keys, with record times a millisecond apart (about
// 60,000 records a window).
func BenchmarkTumblingCount(b *testing.B) {
	benchQuery(b, 100_000, "CREATE TABLE counts AS SELECT id, COUNT(*) AS n FROM orders WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY id;")
}

// benchQuery produces b.N JSON records over keys distinct ids, the i-th at
// time i ms, then runs query from the earliest offset until Flush sees it
// caught up. records/s counts input records.
func benchQuery(b *testing.B, keys int, query string) {
	ctx := context.Background()
	dir := b.TempDir()
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
	eng, err := engine.Open(ctx, engine.Config{Kafka: client, DataDir: filepath.Join(dir, "state"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	sess := engine.NewSession()
	if _, err := eng.Execute(ctx, sess, `SET 'auto.offset.reset'='earliest';
CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, amount BIGINT, qty INT) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=1);`); err != nil {
		b.Fatal(err)
	}
	p, err := client.NewProducer(kafka.ProducerOptions{Linger: 5 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	const batch = 2000
	recs := make([]*kafka.Record, 0, batch)
	for i := 0; i < b.N; i++ {
		recs = append(recs, &kafka.Record{Topic: "orders", Partition: -1, Key: []byte(fmt.Sprintf("o%d", i%keys)), Timestamp: time.UnixMilli(int64(i)),
			Value: []byte(fmt.Sprintf(`{"item":"item-%d","amount":%d,"qty":%d}`, i, i%100, i%7))})
		if len(recs) == batch || i == b.N-1 {
			if err := p.Produce(ctx, recs); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := eng.Execute(ctx, sess, query); err != nil {
		b.Fatal(err)
	}
	if err := eng.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
