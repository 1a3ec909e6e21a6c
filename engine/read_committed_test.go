package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// TestPushQueryReadsCommitted writes one transaction that aborts and one
// that commits to a stream's topic: a push query from the earliest offset
// and a live-tail one (through the shared reader) both see the committed
// record and never the aborted one.
func TestPushQueryReadsCommitted(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := h.exec.Execute(ctx, h.sess, `CREATE STREAM s (id VARCHAR KEY, n INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`); err != nil {
		t.Fatal(err)
	}
	live, err := h.exec.Execute(ctx, h.sess, `SELECT id, n FROM s EMIT CHANGES;`)
	if err != nil {
		t.Fatal(err)
	}
	defer live[0].stream.Close()

	p, err := h.client.NewProducer(kafka.ProducerOptions{TransactionalID: "read-committed-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	txn := p.(kafka.TxnProducer)
	write := func(key string, n int, commit bool) {
		t.Helper()
		if err := txn.Begin(); err != nil {
			t.Fatal(err)
		}
		rec := &kafka.Record{Topic: "s", Key: []byte(key), Value: fmt.Appendf(nil, `{"N":%d}`, n)}
		if err := txn.Produce(ctx, []*kafka.Record{rec}); err != nil {
			t.Fatal(err)
		}
		end := txn.Abort
		if commit {
			end = txn.Commit
		}
		if err := end(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write("aborted", 1, false)
	write("committed", 2, true)
	// A plain record after both: once a query shows it, it has read past
	// both transactions.
	produce(t, h, "s", []string{`last {"N":3}`})

	if _, err := h.exec.Execute(ctx, h.sess, `SET 'auto.offset.reset'='earliest';`); err != nil {
		t.Fatal(err)
	}
	early, err := h.exec.Execute(ctx, h.sess, `SELECT id, n FROM s EMIT CHANGES;`)
	if err != nil {
		t.Fatal(err)
	}
	defer early[0].stream.Close()
	for name, st := range map[string]rowStream{"live": live[0].stream, "earliest": early[0].stream} {
		var got []string
		for len(got) == 0 || got[len(got)-1] != "last 3" {
			row, _, err := st.Next(ctx)
			if err != nil {
				t.Fatalf("%s: %v after %v", name, err, got)
			}
			got = append(got, fmt.Sprintf("%v %v", row[0], row[1]))
		}
		if want := "[committed 2 last 3]"; fmt.Sprint(got) != want {
			t.Errorf("%s push query read %v, want %s", name, got, want)
		}
	}
}
