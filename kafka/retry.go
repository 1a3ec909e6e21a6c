package kafka

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Temporary reports whether err, returned by a Client, Producer or
// Consumer of either adapter, is one Kafka itself calls retriable: a
// broker down or restarting, a leader or coordinator moving, too few
// in-sync replicas for a while, a timeout. The same call may succeed
// later, so callers retry it (with backoff, within a deadline) rather
// than fail. ErrClosed and context errors are not temporary.
func Temporary(err error) bool {
	switch {
	case err == nil, errors.Is(err, ErrClosed),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, ErrUnknownTopic):
		// Retriable in Kafka: a partition moving between brokers, or a
		// broker that does not know a new topic yet. A topic that is
		// really gone fails once the caller's deadline passes.
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.Is(err, sarama.ErrOutOfBrokers), errors.Is(err, sarama.ErrNotConnected),
		errors.Is(err, sarama.ErrControllerNotAvailable),
		errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, kgo.ErrRecordRetries):
		return true
	}
	if breakerOpen(err) {
		return true
	}
	if kgo.IsRetryableBrokerErr(err) {
		// franz-go's own connection failures: a broker connection that
		// died under a request (a broker restarting), a read cut short.
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable
	}
	var se sarama.KError
	if errors.As(err, &se) {
		return retriableCodes[int16(se)]
	}
	return false
}

// OffsetOutOfRange reports whether err says a fetch asked for an offset
// the partition's leader does not hold. Besides records deleted by
// retention, this happens for a moment after a leader change, while the
// new leader's log end is behind the high watermark its predecessor
// reported; reading again from the same offset then succeeds.
func OffsetOutOfRange(err error) bool {
	return errors.Is(err, sarama.ErrOffsetOutOfRange) || errors.Is(err, kerr.OffsetOutOfRange)
}

// retriableCodes are the Kafka protocol error codes that Kafka marks
// retriable and sarama reports as a KError.
var retriableCodes = map[int16]bool{
	int16(sarama.ErrUnknownTopicOrPartition):         true,
	int16(sarama.ErrLeaderNotAvailable):              true,
	int16(sarama.ErrNotLeaderForPartition):           true,
	int16(sarama.ErrRequestTimedOut):                 true,
	int16(sarama.ErrBrokerNotAvailable):              true,
	int16(sarama.ErrNetworkException):                true,
	int16(sarama.ErrOffsetsLoadInProgress):           true,
	int16(sarama.ErrConsumerCoordinatorNotAvailable): true,
	int16(sarama.ErrNotCoordinatorForConsumer):       true,
	int16(sarama.ErrNotEnoughReplicas):               true,
	int16(sarama.ErrNotEnoughReplicasAfterAppend):    true,
	int16(sarama.ErrNotController):                   true,
	int16(sarama.ErrKafkaStorageError):               true,
	int16(sarama.ErrFencedLeaderEpoch):               true,
	int16(sarama.ErrUnknownLeaderEpoch):              true,
}

// breakerOpen reports whether err is the error sarama's producer returns
// while its circuit breaker is open (after failures to reach a partition's
// leader; it closes again after 10 s). It is go-resiliency's
// breaker.ErrBreakerOpen, matched by its text so that this package needs
// no direct dependency on go-resiliency.
func breakerOpen(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "circuit breaker is open" {
			return true
		}
	}
	return false
}
