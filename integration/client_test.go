package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// TestClient checks each adapter's admin, produce, consume and offset
// calls against the real broker.
func TestClient(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, a adapter, cl kafka.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		topic := topicName("client_" + a.name)
		createTopic(t, cl, topic, 4)
		if err := cl.CreateTopic(ctx, kafka.TopicSpec{Name: topic, Partitions: 4}); !errors.Is(err, kafka.ErrTopicExists) {
			t.Fatalf("creating %s again: got %v, want ErrTopicExists", topic, err)
		}
		info, err := cl.DescribeTopic(ctx, topic)
		if err != nil || info.Partitions != 4 {
			t.Fatalf("describe %s: %+v, %v", topic, info, err)
		}
		if _, err := cl.DescribeTopic(ctx, topicName("no_such_topic")); !errors.Is(err, kafka.ErrUnknownTopic) {
			t.Fatalf("describe a missing topic: got %v, want ErrUnknownTopic", err)
		}

		p, err := cl.NewProducer(kafka.ProducerOptions{ClientID: "sluice-it"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		const n = 400
		ts := time.UnixMilli(1_700_000_000_000)
		recs := make([]*kafka.Record, n)
		for i := range recs {
			recs[i] = &kafka.Record{
				Topic: topic, Partition: -1,
				Key:       fmt.Appendf(nil, "k%d", i%37),
				Value:     fmt.Appendf(nil, "v%d", i),
				Timestamp: ts.Add(time.Duration(i) * time.Millisecond),
				Headers:   []kafka.Header{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}},
			}
		}
		if err := p.Produce(ctx, recs); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if want := kafka.KeyPartition(r.Key, 4); r.Partition != want {
				t.Fatalf("key %s went to partition %d; murmur2 says %d", r.Key, r.Partition, want)
			}
		}

		got := readAll(t, ctx, cl, topic)
		if len(got) != n {
			t.Fatalf("read %d records, want %d", len(got), n)
		}
		byValue := map[string]*kafka.Record{}
		for _, r := range got {
			byValue[string(r.Value)] = r
		}
		for i, w := range recs {
			r := byValue[string(w.Value)]
			if r == nil {
				t.Fatalf("record %d (%s) not read back", i, w.Value)
			}
			if string(r.Key) != string(w.Key) || r.Partition != w.Partition || r.Offset != w.Offset ||
				!r.Timestamp.Equal(w.Timestamp) || len(r.Headers) != 1 || string(r.Headers[0].Value) != fmt.Sprint(i) {
				t.Fatalf("record %d read back as %+v, produced %+v", i, r, w)
			}
		}

		bounds, err := cl.ListOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		total := int64(0)
		commit := map[int32]int64{}
		for p, b := range bounds {
			total += b.End - b.Start
			commit[int32(p)] = b.End
		}
		if total != n {
			t.Fatalf("offsets %+v hold %d records, want %d", bounds, total, n)
		}
		group := topicName("group_" + a.name)
		if err := cl.CommitOffsets(ctx, group, map[string]map[int32]int64{topic: commit}); err != nil {
			t.Fatal(err)
		}
		fetched, err := cl.FetchOffsets(ctx, group, topic)
		if err != nil {
			t.Fatal(err)
		}
		for p, off := range fetched {
			if off != commit[int32(p)] {
				t.Fatalf("fetched offsets %v, committed %v", fetched, commit)
			}
		}
		if err := cl.DeleteGroup(ctx, group); err != nil {
			t.Fatal(err)
		}
	})
}
