package kafka

import (
	"context"
	"fmt"
	"sort"
)

// ReadAll returns every committed record now in topic, sorted by partition
// and offset: it reads each partition from its start to the end offset it
// had when called, with read_committed, counting transaction markers as
// read. Records of a transaction still open at the end are not returned
// (nor waited for past the end). The sarama client returns no markers:
// use it on topics written without transactions.
func ReadAll(ctx context.Context, c Client, topic string) ([]*Record, error) {
	bounds, err := c.ListStableOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	assign := map[int32]int64{}
	ends := map[int32]int64{}
	for p, b := range bounds {
		if b.End > b.Start {
			assign[int32(p)] = b.Start
			ends[int32(p)] = b.End
		}
	}
	if len(ends) == 0 {
		return nil, nil
	}
	cons, err := c.NewConsumer(ConsumerOptions{ClientID: "sluice-read-all", ReadCommitted: true, KeepControl: true})
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	cons.Assign(map[string]map[int32]int64{topic: assign})
	var out []*Record
	for len(ends) > 0 {
		got, err := cons.Poll(ctx)
		if err != nil {
			return out, fmt.Errorf("kafka: read %s: %w (%d records read, %d partitions not to their end)", topic, err, len(out), len(ends))
		}
		for _, r := range got {
			end, ok := ends[r.Partition]
			if !ok || r.Offset >= end {
				continue
			}
			if r.Offset+1 >= end {
				delete(ends, r.Partition)
			}
			if !r.Control {
				out = append(out, r)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].Offset < out[j].Offset
	})
	return out, nil
}
