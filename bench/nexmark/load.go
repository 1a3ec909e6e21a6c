package nexmark

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// CreateTopics creates the three event topics with partitions partitions
// each; topics that exist are kept. They keep their records for ever: the
// events carry event times of the past (from BaseTime), which a broker's
// time-based retention would otherwise delete minutes after the load.
func CreateTopics(ctx context.Context, c kafka.Client, partitions int32) error {
	for _, t := range []string{PersonTopic, AuctionTopic, BidTopic} {
		err := c.CreateTopic(ctx, kafka.TopicSpec{Name: t, Partitions: partitions, Configs: map[string]string{"retention.ms": "-1"}})
		if err != nil && !errors.Is(err, kafka.ErrTopicExists) {
			return fmt.Errorf("nexmark: create %s: %w", t, err)
		}
	}
	return nil
}

// Load writes events [from, to) of cfg to their topics, in event order,
// batch events a request, and returns how many of each kind it wrote.
func Load(ctx context.Context, p kafka.Producer, cfg Config, from, to int64, batch int) ([3]int64, error) {
	var counts [3]int64
	if batch <= 0 {
		batch = 10_000
	}
	recs := make([]*kafka.Record, 0, batch)
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		err := p.Produce(ctx, recs)
		recs = recs[:0]
		return err
	}
	for n := from; n < to; n++ {
		e := cfg.Generate(n)
		counts[e.Kind]++
		recs = append(recs, &kafka.Record{
			Topic: Topic(e.Kind), Partition: -1,
			Key: AppendKey(nil, e), Value: AppendJSON(nil, e),
			Timestamp: time.UnixMilli(cfg.Time(n)),
		})
		if len(recs) == batch {
			if err := flush(); err != nil {
				return counts, fmt.Errorf("nexmark: produce: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return counts, fmt.Errorf("nexmark: produce: %w", err)
	}
	return counts, nil
}
