package kafka

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestTemporary(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrClosed, false},
		{context.DeadlineExceeded, false},
		{fmt.Errorf("kafka: produce: %w", context.Canceled), false},
		{errors.New("kafka: record too large"), false},
		{fmt.Errorf("commit: %w", sarama.ErrOutOfBrokers), true},
		{fmt.Errorf("produce: %w", sarama.ErrNotEnoughReplicas), true},
		{fmt.Errorf("produce: %w", sarama.ErrMessageSizeTooLarge), false},
		{fmt.Errorf("produce: %w", kerr.NotLeaderForPartition), true},
		{fmt.Errorf("produce: %w", kerr.TopicAuthorizationFailed), false},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{fmt.Errorf("produce to \"t\": %w", errors.New("circuit breaker is open")), true},
		{fmt.Errorf("%w: %w", ErrUnknownTopic, sarama.ErrUnknownTopicOrPartition), true},
	} {
		if got := Temporary(c.err); got != c.want {
			t.Errorf("Temporary(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestOffsetOutOfRange(t *testing.T) {
	if !OffsetOutOfRange(fmt.Errorf("kafka: poll %q partition %d: %w", "t", 0, sarama.ErrOffsetOutOfRange)) ||
		!OffsetOutOfRange(fmt.Errorf("poll: %w", kerr.OffsetOutOfRange)) || OffsetOutOfRange(sarama.ErrOutOfBrokers) {
		t.Fatal("OffsetOutOfRange does not tell an out-of-range fetch")
	}
}
