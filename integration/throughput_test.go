package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// TestFilterThroughput measures, when SLUICE_TEST_THROUGHPUT gives a
// record count, how fast a filter query reads that many records already
// in a 4-partition topic, under each processing guarantee in turn, twice
// (same input, same engine settings), and logs records per second.
func TestFilterThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SLUICE_TEST_THROUGHPUT"))
	if n <= 0 {
		t.Skip("SLUICE_TEST_THROUGHPUT is not set to a record count")
	}
	brokers := requireKafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cl := newClient(t, adapters[0], brokers)
	topic := "throughput_" + runID
	if err := cl.CreateTopic(ctx, kafka.TopicSpec{Name: topic, Partitions: partitions}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.DeleteTopic(context.Background(), topic) })
	pr, err := cl.NewProducer(kafka.ProducerOptions{Linger: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for done := 0; done < n; {
		recs := make([]*kafka.Record, min(5000, n-done))
		for i := range recs {
			recs[i] = &kafka.Record{Topic: topic, Partition: -1, Key: fmt.Appendf(nil, "k%d", (done+i)%1000),
				Value: fmt.Appendf(nil, `{"AMOUNT":%d}`, (done+i)%100), Timestamp: time.Now()}
		}
		if err := pr.Produce(ctx, recs); err != nil {
			t.Fatal(err)
		}
		done += len(recs)
	}
	pr.Close()
	// Each guarantee twice, alternating, so that neither gets a warmer
	// broker.
	for i, g := range []string{engine.AtLeastOnce, engine.ExactlyOnceV2, engine.AtLeastOnce, engine.ExactlyOnceV2} {
		id := fmt.Sprintf("tp_%s_%d_%s", g, i, runID)
		eng, err := engine.Open(ctx, engine.Config{Kafka: cl, DataDir: filepath.Join(t.TempDir(), g), ServiceID: id, Logger: testLogger(t), ProcessingGuarantee: g})
		if err != nil {
			t.Fatal(err)
		}
		s := engine.NewSession()
		for _, sql := range []string{
			`SET 'auto.offset.reset'='earliest';`,
			fmt.Sprintf(`CREATE STREAM src_%s (k VARCHAR KEY, amount BIGINT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');`, id, topic),
		} {
			if _, err := eng.Execute(ctx, s, sql); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		if _, err := eng.Execute(ctx, s, fmt.Sprintf(`CREATE STREAM big_%s AS SELECT k, amount FROM src_%s WHERE amount >= 50;`, id, id)); err != nil {
			t.Fatal(err)
		}
		if err := eng.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		t.Logf("throughput: %s: %d records in %s: %.0f records/s", g, n, el.Round(time.Millisecond), float64(n)/el.Seconds())
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
		topics, _ := cl.ListTopics(ctx)
		for _, ti := range topics {
			if strings.Contains(strings.ToLower(ti.Name), strings.ToLower(id)) {
				_ = cl.DeleteTopic(ctx, ti.Name)
			}
		}
	}
}
