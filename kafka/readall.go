package kafka

import (
	"context"
	"fmt"
	"sort"
)

// ReadAll returns every record now in topic, sorted by partition and
// offset: it reads each partition from its start to the end offset it had
// when called. It reads uncommitted records too, as the end offsets count
// every record (and transaction marker); use it on topics written without
// transactions.
func ReadAll(ctx context.Context, c Client, topic string) ([]*Record, error) {
	bounds, err := c.ListOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	assign := map[int32]int64{}
	want := 0
	for p, b := range bounds {
		if b.End > b.Start {
			assign[int32(p)] = b.Start
			want += int(b.End - b.Start)
		}
	}
	if want == 0 {
		return nil, nil
	}
	cons, err := c.NewConsumer(ConsumerOptions{ClientID: "sluice-read-all"})
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	cons.Assign(map[string]map[int32]int64{topic: assign})
	out := make([]*Record, 0, want)
	for len(out) < want {
		got, err := cons.Poll(ctx)
		if err != nil {
			return out, fmt.Errorf("kafka: read %s: %w (%d of %d records read)", topic, err, len(out), want)
		}
		out = append(out, got...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].Offset < out[j].Offset
	})
	return out, nil
}
