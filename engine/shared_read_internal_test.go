package engine

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// feedClient is a kafka.Client whose consumers read what the test feeds:
// each Poll returns one fed batch of the records at or after the
// consumer's assigned offsets.
type feedClient struct {
	kafka.Client
	mu        sync.Mutex
	consumers []*feedConsumer
}

func (c *feedClient) NewConsumer(kafka.ConsumerOptions) (kafka.Consumer, error) {
	fc := &feedConsumer{batches: make(chan []*kafka.Record, 16), from: map[int32]int64{}}
	c.mu.Lock()
	c.consumers = append(c.consumers, fc)
	c.mu.Unlock()
	return fc, nil
}

func (c *feedClient) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.consumers)
}

type feedConsumer struct {
	batches chan []*kafka.Record
	mu      sync.Mutex
	from    map[int32]int64
}

func (f *feedConsumer) Assign(offsets map[string]map[int32]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ps := range offsets {
		for p, o := range ps {
			f.from[p] = o
		}
	}
}

func (f *feedConsumer) Poll(ctx context.Context) ([]*kafka.Record, error) {
	select {
	case b := <-f.batches:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *feedConsumer) Close() {}

func records(part int32, from, to int64) []*kafka.Record {
	var out []*kafka.Record
	for o := from; o < to; o++ {
		out = append(out, &kafka.Record{Topic: "t", Partition: part, Offset: o})
	}
	return out
}

func pollOffsets(t *testing.T, c kafka.Consumer, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []int64
	for len(out) < n {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("poll: %v (after %v)", err, out)
		}
		for _, r := range recs {
			out = append(out, r.Offset)
		}
	}
	return out
}

// TestSharedReaderBacklog: a subscriber that starts behind the shared
// reader gets the records it missed from the backlog; one that starts
// before the backlog reads on a consumer of its own; the last to leave
// closes the reader.
func TestSharedReaderBacklog(t *testing.T) {
	fc := &feedClient{}
	sr := newSharedReads(fc, slog.New(slog.NewTextHandler(io.Discard, nil)))
	client := sr.clientFor("t")
	sub := func(start int64) kafka.Consumer {
		c, err := client.NewConsumer(kafka.ConsumerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.Assign(map[string]map[int32]int64{"t": {0: start}})
		return c
	}

	a := sub(10)
	if fc.count() != 1 {
		t.Fatalf("%d consumers after the first subscriber, want the shared one", fc.count())
	}
	shared := fc.consumers[0]
	shared.batches <- records(0, 10, 15)
	if got := pollOffsets(t, a, 5); got[0] != 10 || got[4] != 14 {
		t.Fatalf("a got %v", got)
	}

	// b started at 12, which the reader passed: offsets 12..14 come from
	// the backlog, then the live ones.
	b := sub(12)
	shared.batches <- records(0, 15, 17)
	if got := pollOffsets(t, b, 5); len(got) != 5 || got[0] != 12 || got[4] != 16 {
		t.Fatalf("b got %v, want 12..16", got)
	}
	if got := pollOffsets(t, a, 2); got[0] != 15 {
		t.Fatalf("a got %v, want 15, 16", got)
	}

	// Fill the backlog past its size: a subscriber from offset 0 is
	// older than it and reads on its own consumer.
	shared.batches <- records(0, 17, 17+3*sharedBacklog)
	pollOffsets(t, a, 3*sharedBacklog)
	pollOffsets(t, b, 3*sharedBacklog)
	c := sub(0)
	if fc.count() != 2 {
		t.Errorf("%d consumers, want the shared one and c's own", fc.count())
	}
	if from := fc.consumers[1].from[0]; from != 0 {
		t.Errorf("c's own consumer starts at %d, want 0", from)
	}
	c.Close()

	a.Close()
	sr.mu.Lock()
	open := len(sr.readers)
	sr.mu.Unlock()
	if open != 1 {
		t.Errorf("%d shared readers after one of two subscribers left, want 1", open)
	}
	b.Close()
	sr.mu.Lock()
	open = len(sr.readers)
	sr.mu.Unlock()
	if open != 0 {
		t.Errorf("%d shared readers after the last subscriber left, want 0", open)
	}
}
