package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/kafka"
)

// TestPlaygroundRestart checks that a restart on the same DataDir keeps
// topics, records and committed group offsets.
func TestPlaygroundRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)

	pg, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	addr := pg.Addr()
	c, err := kafka.NewFranz(kafka.Config{Brokers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic(ctx, kafka.TopicSpec{Name: "kept", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	p, err := c.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kafka.Record
	for i := range 20 {
		recs = append(recs, &kafka.Record{Topic: "kept", Partition: int32(i % 2), Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)})
	}
	if err := p.Produce(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitOffsets(ctx, "kept-group", map[string]map[int32]int64{"kept": {0: 4, 1: 10}}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	pg.Close()
	pg.Close()

	// Reopen on the same address too, as a restarted server would.
	pg, err = kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: addr, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	if pg.Addr() != addr {
		t.Fatalf("restarted on %s, want %s", pg.Addr(), addr)
	}
	c = newClient(t, kafka.NewFranz, pg.Addr())
	info, err := c.DescribeTopic(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if info.Partitions != 2 {
		t.Fatalf("topic after restart: %+v", info)
	}
	offs, err := c.ListOffsets(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if want := []kafka.Offsets{{0, 10}, {0, 10}}; !slices.Equal(offs, want) {
		t.Fatalf("offsets after restart: got %v, want %v", offs, want)
	}
	committed, err := c.FetchOffsets(ctx, "kept-group", "kept")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{4, 10}; !slices.Equal(committed, want) {
		t.Fatalf("committed offsets after restart: got %v, want %v", committed, want)
	}
	cons := newConsumer(t, c, map[string]map[int32]int64{"kept": {0: kafka.OffsetStart, 1: kafka.OffsetStart}})
	got := pollN(ctx, t, cons, 20)
	byKey := map[string]string{}
	for _, r := range got {
		byKey[string(r.Key)] = string(r.Value)
	}
	for _, r := range recs {
		if byKey[string(r.Key)] != string(r.Value) {
			t.Fatalf("record %q after restart: got value %q, want %q", r.Key, byKey[string(r.Key)], r.Value)
		}
	}
	// The restarted broker keeps taking writes after the reloaded log.
	p2 := newProducer(t, c)
	more := []*kafka.Record{{Topic: "kept", Partition: 0, Value: []byte("after")}}
	if err := p2.Produce(ctx, more); err != nil {
		t.Fatal(err)
	}
	if more[0].Offset != 10 {
		t.Fatalf("first offset after restart: %d, want 10", more[0].Offset)
	}
}

// TestPlaygroundAutoCreate checks that an outside client asking for a
// missing topic gets it created with the default partition count.
func TestPlaygroundAutoCreate(t *testing.T) {
	ctx := testCtx(t)
	pg, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DefaultPartitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	c, err := kafka.NewFranz(kafka.Config{Brokers: []string{pg.Addr()}, AllowAutoTopicCreation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Produce(ctx, []*kafka.Record{{Topic: "auto", Partition: -1, Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	info, err := c.DescribeTopic(ctx, "auto")
	if err != nil {
		t.Fatal(err)
	}
	if info.Partitions != 3 {
		t.Fatalf("auto-created topic: %+v, want 3 partitions", info)
	}
}

// TestPlaygroundAddrInUse checks that a taken address is an error.
func TestPlaygroundAddrInUse(t *testing.T) {
	pg := startPlayground(t, "")
	if _, err := kafka.StartPlayground(context.Background(), kafka.PlaygroundConfig{Addr: pg.Addr()}); err == nil {
		t.Fatal("second playground on the same address: no error")
	}
}
