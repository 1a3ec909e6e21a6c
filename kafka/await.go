package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AwaitTopic waits until topic can be used: every broker the client asks
// knows it and each of its partitions has a leader that lists offsets.
// A real Kafka cluster answers CreateTopics before its brokers' metadata
// caches hold the new topic, so a ListOffsets or a fetch right after it
// can fail with UNKNOWN_TOPIC_OR_PARTITION. partitions > 0 also waits for
// that many partitions. It gives up when ctx is done, or after a minute
// when ctx has no deadline, returning the last error.
func AwaitTopic(ctx context.Context, cl Client, topic string, partitions int32) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Minute)
		defer cancel()
	}
	wait := 10 * time.Millisecond
	for {
		bounds, err := cl.ListOffsets(ctx, topic)
		if err == nil && partitions > 0 && int32(len(bounds)) < partitions {
			err = fmt.Errorf("kafka: topic %q has %d of its %d partitions", topic, len(bounds), partitions)
		}
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrClosed) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("kafka: topic %q is not usable yet: %w", topic, err)
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}
