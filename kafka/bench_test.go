package kafka_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluice-sql/sluice/kafka"
)

// BenchmarkProduceConsume produces b.N 100-byte keyed records in batches of
// 1000 to a 4-partition topic on an in-memory playground, then consumes
// them all, per adapter.
func BenchmarkProduceConsume(b *testing.B) {
	for _, a := range adapters {
		b.Run(a.name, func(b *testing.B) {
			pg := startPlayground(b, "")
			c := newClient(b, a.new, pg.Addr())
			topic := fmt.Sprintf("bench-%d", b.N)
			createTopic(b, c, topic, 4)
			p := newProducer(b, c)
			value := make([]byte, 100)
			const batch = 1000
			ctx := context.Background()
			b.ResetTimer()
			recs := make([]*kafka.Record, 0, batch)
			for i := 0; i < b.N; i += batch {
				recs = recs[:0]
				for j := i; j < min(i+batch, b.N); j++ {
					recs = append(recs, &kafka.Record{Topic: topic, Partition: -1, Key: fmt.Appendf(nil, "k%d", j), Value: value})
				}
				if err := p.Produce(ctx, recs); err != nil {
					b.Fatal(err)
				}
			}
			produced := b.Elapsed()
			cons := newConsumer(b, c, map[string]map[int32]int64{topic: {0: kafka.OffsetStart, 1: kafka.OffsetStart, 2: kafka.OffsetStart, 3: kafka.OffsetStart}})
			for n := 0; n < b.N; {
				got, err := cons.Poll(ctx)
				if err != nil {
					b.Fatal(err)
				}
				n += len(got)
			}
			b.StopTimer()
			consumed := b.Elapsed() - produced
			b.ReportMetric(float64(b.N)/produced.Seconds(), "produce-rec/s")
			b.ReportMetric(float64(b.N)/consumed.Seconds(), "consume-rec/s")
		})
	}
}
