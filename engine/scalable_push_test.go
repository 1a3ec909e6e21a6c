package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// TestScalablePushSlowReader checks that a scalable push query whose
// reader falls more than engine.ScalablePushBuffer rows behind is ended
// with ErrScalablePushBehind while the persistent query it reads goes on,
// and that a second one, which keeps up, is not.
func TestScalablePushSlowReader(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	ctx := t.Context()
	h.sess.Properties["ksql.query.push.v2.enabled"] = "true"
	if _, err := h.exec.Execute(ctx, h.sess, `CREATE STREAM s (k VARCHAR KEY, v BIGINT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM out AS SELECT k, v FROM s EMIT CHANGES;`); err != nil {
		t.Fatal(err)
	}
	slow, err := h.exec.Execute(ctx, h.sess, "SELECT * FROM out EMIT CHANGES;")
	if err != nil {
		t.Fatal(err)
	}
	defer slow[0].stream.Close()
	if id := slow[0].stream.ID(); !strings.HasPrefix(id, "SCALABLE_PUSH_QUERY_") {
		t.Fatalf("id %s", id)
	}
	n := engine.ScalablePushBuffer + 1
	recs := make([]*kafka.Record, n)
	for i := range recs {
		recs[i] = &kafka.Record{Topic: "s", Partition: -1, Key: []byte(fmt.Sprint("k", i)), Value: fmt.Appendf(nil, `{"V":%d}`, i)}
	}
	p, err := h.client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Produce(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	_, _, err = slow[0].stream.Next(ctx)
	if !errors.Is(err, engine.ErrScalablePushBehind) {
		t.Fatalf("slow reader: %v, want ErrScalablePushBehind", err)
	}
	// The persistent query went on: a new subscriber sees the next row.
	fresh, err := h.exec.Execute(ctx, h.sess, "SELECT v FROM out EMIT CHANGES;")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh[0].stream.Close()
	if _, err := h.exec.Execute(ctx, h.sess, "INSERT INTO s (k, v) VALUES ('last', 7);"); err != nil {
		t.Fatal(err)
	}
	row, _, err := fresh[0].stream.Next(ctx)
	if err != nil || len(row) != 1 || row[0] != int64(7) {
		t.Fatalf("fresh reader: %v %v", row, err)
	}
}
