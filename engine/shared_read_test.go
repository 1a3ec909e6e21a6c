package engine_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// countingClient counts the consumers opened on a client.
type countingClient struct {
	kafka.Client
	consumers *atomic.Int64
}

func (c countingClient) NewConsumer(opts kafka.ConsumerOptions) (kafka.Consumer, error) {
	c.consumers.Add(1)
	return c.Client.NewConsumer(opts)
}

// TestPushQueriesShareOneRead runs 50 live-tail push queries, each with
// its own filter and projection, on one source of two partitions: they
// read through one consumer, and each sees exactly its rows. A push query
// from the earliest offset reads on its own consumers. Once every query
// has ended, the next one opens a new shared reader.
func TestPushQueriesShareOneRead(t *testing.T) {
	for _, adapter := range []struct {
		name string
		new  func(kafka.Config) (kafka.Client, error)
	}{{"franz", kafka.NewFranz}, {"sarama", kafka.NewSarama}} {
		t.Run(adapter.name, func(t *testing.T) { testShareOneRead(t, adapter.new) })
	}
}

func testShareOneRead(t *testing.T, newAdapter func(kafka.Config) (kafka.Client, error)) {
	var consumers atomic.Int64
	newClient := func(cfg kafka.Config) (kafka.Client, error) {
		c, err := newAdapter(cfg)
		return countingClient{c, &consumers}, err
	}
	h := newHarness(t, newClient, inProcess)
	defer h.close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := h.exec.Execute(ctx, h.sess, `CREATE STREAM s (id VARCHAR KEY, n INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=2);`); err != nil {
		t.Fatal(err)
	}

	const queries, records = 50, 200
	before := consumers.Load()
	streams := make([]rowStream, queries)
	for i := range streams {
		// Query i keeps the rows whose n is a multiple of i+1.
		sql := fmt.Sprintf("SELECT id, n * 10 AS m FROM s WHERE n %% %d = 0 EMIT CHANGES;", i+1)
		res, err := h.exec.Execute(ctx, h.sess, sql)
		if err != nil {
			t.Fatal(err)
		}
		streams[i] = res[0].stream
	}
	defer func() {
		for _, st := range streams {
			st.Close()
		}
	}()

	var lines []string
	for n := 1; n <= records; n++ {
		lines = append(lines, fmt.Sprintf("k%d {\"N\":%d}", n, n))
	}
	produce(t, h, "s", lines)

	var wg sync.WaitGroup
	errs := make(chan error, queries)
	for i, st := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got, want []string
			for n := i + 1; n <= records; n += i + 1 {
				want = append(want, fmt.Sprintf("k%d %d", n, n*10))
			}
			for range want {
				row, _, err := st.Next(ctx)
				if err != nil {
					errs <- fmt.Errorf("query %d: %v", i, err)
					return
				}
				got = append(got, fmt.Sprintf("%v %v", row[0], row[1]))
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				errs <- fmt.Errorf("query %d: got %v, want %v", i, got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := consumers.Load() - before; n != 1 {
		t.Errorf("%d push queries opened %d consumers, want 1 shared", queries, n)
	}

	// From the earliest offset: a read of its own, one consumer a
	// partition.
	before = consumers.Load()
	res, err := h.exec.Execute(ctx, h.sess, `SET 'auto.offset.reset'='earliest'; SELECT id FROM s EMIT CHANGES LIMIT 3;`)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, _, err := res[1].stream.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	res[1].stream.Close()
	if n := consumers.Load() - before; n != 2 {
		t.Errorf("a push query from the earliest offset opened %d consumers, want 2 of its own", n)
	}
	delete(h.sess.Properties, "auto.offset.reset")

	// The last subscriber closed the shared reader; a new query opens
	// another.
	for _, st := range streams {
		st.Close()
	}
	before = consumers.Load()
	res, err = h.exec.Execute(ctx, h.sess, `SELECT id FROM s EMIT CHANGES;`)
	if err != nil {
		t.Fatal(err)
	}
	produce(t, h, "s", []string{`k1 {"N":1}`})
	if _, _, err := res[0].stream.Next(ctx); err != nil {
		t.Fatal(err)
	}
	res[0].stream.Close()
	if n := consumers.Load() - before; n != 1 {
		t.Errorf("a push query after the others ended opened %d consumers, want 1 new shared reader", n)
	}
}

// produce writes records given as the corpus's produce directive reads
// them.
func produce(t *testing.T, h *harness, topic string, lines []string) {
	t.Helper()
	p, err := h.client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	recs := make([]*kafka.Record, len(lines))
	for i, l := range lines {
		recs[i] = parseRecord(t, topic, l)
	}
	if err := p.Produce(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
}
