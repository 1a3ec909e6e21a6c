package exec

import (
	"context"
	"sync"

	"github.com/sluice-sql/sluice/kafka"
)

// Pipelined produce. A task without state committing at-least-once does
// not wait for a batch's outputs to be acknowledged before it processes
// the next batch: the produce and the offset commit after it run as one
// flight while the task goes on, and the task waits for that flight only
// when it has the next batch to send:
//
//	task:   process k ─▶ launch k ─▶ process k+1 ─▶ land k ─▶ launch k+1 ─▶ …
//	flight:                produce k (acks=all) ─▶ commit offsets k ─▶ position k
//
// Offsets are still committed only after the outputs before them are
// acknowledged, and in order (one flight at a time); the task's position,
// which the flush barrier reads, moves when the flight ends, and so does a
// move past transaction markers polled meanwhile (passSource). A failed
// flight fails the task at its next batch, or stops its poll at once.
type flight struct {
	// done is cancelled when the flight ends; err is then set.
	done   context.Context
	finish context.CancelFunc
	err    error
	recs   []*kafka.Record
	// mu guards moved, set when the flight moved the position, and
	// past, a position beyond the flight's that transaction markers read
	// meanwhile lead to (see passSource): the flight moves the position
	// there when it lands, not before, for the records before the markers
	// are only done then.
	mu    sync.Mutex
	moved bool
	past  int64
}

// failed reports whether the flight ended with an error.
func (f *flight) failed() bool { return f.done.Err() != nil && f.err != nil }

// pipelined reports whether t produces in flights: an at-least-once task
// without state, join sides or an end offset (a pull query, which
// compares its position with the end after each batch).
func (t *task) pipelined() bool {
	return !t.exactlyOnce() && t.cache == nil && len(t.sides) == 0 && t.into == nil && t.q.deps.EndOffsets == nil
}

// launch starts the flight of the pending records, committing the source
// offsets up to next after them, once the previous flight has landed.
func (t *task) launch(next int64) error {
	if err := t.land(); err != nil {
		return err
	}
	parent := t.runCtx
	if parent == nil {
		parent = context.Background()
	}
	work, cancel := batchCtx(parent)
	f := &flight{recs: t.pending}
	f.done, f.finish = context.WithCancel(context.Background())
	t.pending, t.spare = t.spare[:0], nil
	t.flight = f
	go func() {
		defer f.finish()
		defer cancel()
		if f.err = t.produce(work, f.recs); f.err == nil {
			f.err = t.commitOffsets(work, next)
		}
		clear(f.recs)
		if f.err != nil {
			return
		}
		f.mu.Lock()
		t.pos.Store(max(next, f.past))
		f.moved = true
		f.mu.Unlock()
		if t.q.deps.Progress != nil {
			t.q.deps.Progress()
		}
	}()
	return nil
}

// passSource moves the source position past a transaction marker, to
// next: at once without a flight in the air, else when the flight lands
// (never past records whose outputs are not acknowledged yet, which the
// flush barrier would take for done). It reports whether the position
// moved now.
func (t *task) passSource(next int64) bool {
	f := t.flight
	if f == nil {
		t.pos.Store(next)
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.moved {
		// In the air, or failed: then the task fails at its next batch
		// from where it stands.
		f.past = max(f.past, next)
		return false
	}
	t.pos.Store(max(next, t.pos.Load()))
	return true
}

// land waits for the flight in the air, if any, and returns its error.
func (t *task) land() error {
	f := t.flight
	if f == nil {
		return nil
	}
	<-f.done.Done()
	t.flight = nil
	t.spare = f.recs[:0]
	return f.err
}

// pollWatching polls as poll does, returning early when the flight in the
// air fails, so that the task ends with its error instead of waiting for
// a record.
func (t *task) pollWatching(ctx context.Context) ([]*kafka.Record, error) {
	f := t.flight
	if f == nil {
		return t.poll(ctx)
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(f.done, func() {
		if f.err != nil {
			cancel()
		}
	})
	defer stop()
	return t.poll(pctx)
}
