package exec

import (
	"context"
	"log/slog"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// retryKafka calls f until it succeeds, fails with an error that is not
// kafka.Temporary, or ctx ends (returning f's last error), backing off
// between calls. A broker restarting, or a leader or coordinator moving,
// then delays the task instead of ending the query in ERROR.
func retryKafka(ctx context.Context, log *slog.Logger, what string, f func() error) error {
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || !kafka.Temporary(err) || ctx.Err() != nil {
			return err
		}
		if attempt == 1 {
			log.Warn("Kafka is not available; retrying", "op", what, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// pollBackoff waits after the fails-th poll in a row failed with a
// temporary error; false when ctx ended meanwhile.
func pollBackoff(ctx context.Context, fails int) bool {
	wait := 50 * time.Millisecond << min(fails-1, 5)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// boundedCtx gives ctx a deadline of stopGrace when it has none, so that
// retryKafka at a query's start gives up on a cluster that stays away.
func boundedCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, stopGrace)
}

// outageGrace bounds how long a running task retries one batch's produce
// and commit through a Kafka outage before its query ends in ERROR.
const outageGrace = 5 * time.Minute

// batchCtx is the context a polled batch is processed under. It outlives
// ctx, so that a stop finishes the batch (its output produced, its offsets
// committed), by stopGrace; while ctx lives it ends after outageGrace.
func batchCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	work, cancel := context.WithTimeout(context.WithoutCancel(ctx), outageGrace)
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(stopGrace, cancel) })
	return work, func() {
		stop()
		cancel()
	}
}
