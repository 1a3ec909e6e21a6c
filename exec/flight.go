package exec

import (
	"context"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// flight is the produce and offset commit of a batch of a pipelined
// at-least-once task (see atLeastOnce).
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

// atLeastOnce commits a batch by producing its records and, once they
// are acknowledged (acks=all), committing the group's offsets after them.
// A failure leaves the offsets where they were, so the batch is read
// again: its records may be written twice, never lost.
//
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
//
// Coalescing. A flight's produce and commit cost about the same however
// many records it carries, and take longer than processing a poll's
// records, so a task draining a backlog would spend most of its time
// waiting for flights of one poll each. When a batch is processed while
// the previous flight is still in the air, the task holds its records
// instead and processes what its consumer has fetched already (a poll
// that does not wait, kafka.BufferedPoller), adding to the held records,
// until nothing more is fetched, the flight lands or maxCoalesce records
// (or maxCoalesceBytes) are held; then one flight carries them all:
//
//	task:   process k ─▶ launch k ─▶ process k+1 ─▶ process k+2 ─▶ … ─▶ land k ─▶ launch k+1..k+n
//
// So under load flights grow with what arrives while one is in the air,
// and the produce requests and offset commits per record fall; a task fed
// slowly still launches each batch as soon as the last one landed.
type atLeastOnce struct {
	t *task
	// pipelined says the task produces in flights: it has no state, no
	// join sides and no end offset (a pull query, which compares its
	// position with the end after each batch).
	pipelined bool
	// flight is the produce and offset commit of the last batch of a
	// pipelined task, running while the task processes the next one;
	// spare is the pending slice it gives back. runCtx is the context
	// the task runs under.
	flight *flight
	spare  []*kafka.Record
	runCtx context.Context
	// buffered is the task's consumer when it can poll without waiting
	// (coalescing needs it). held says t.pending holds processed records
	// no flight carries yet, whose source offsets end at heldNext;
	// heldPast is where transaction markers read meanwhile move the
	// position past them (passSource). err is a held flight's failure.
	buffered kafka.BufferedPoller
	held     bool
	heldNext int64
	heldPast int64
	err      error
	// heldBytes are the key and value bytes of t.pending's first counted
	// records, the ones the last room call saw.
	heldBytes int
	counted   int
}

// maxCoalesce and maxCoalesceBytes (their keys and values) bound the
// output records a pipelined task holds while a flight is in the air (see
// Coalescing): the memory they take, and what a failed flight writes
// again. Past a thousand records a flight's cost per record no longer
// falls, while each held record is memory, in the task and in the
// producer's buffers.
const (
	maxCoalesce      = 1 << 10
	maxCoalesceBytes = 256 << 10
)

// newAtLeastOnce returns t's at-least-once commit mode; t has its state
// and join sides.
func newAtLeastOnce(t *task) *atLeastOnce {
	m := &atLeastOnce{t: t, pipelined: t.cache == nil && len(t.sides) == 0 && t.into == nil && t.q.deps.EndOffsets == nil}
	if m.pipelined {
		m.buffered, _ = t.consumer.(kafka.BufferedPoller)
	}
	return m
}

func (m *atLeastOnce) start(ctx context.Context) error {
	m.runCtx = ctx
	return nil
}

func (m *atLeastOnce) transactional() bool { return false }

func (m *atLeastOnce) commit(ctx context.Context, next int64, _ int) (bool, error) {
	t := m.t
	if m.pipelined {
		// The flight moves the position once the batch is committed.
		if m.coalescing() {
			m.held, m.heldNext = true, next
			return true, nil
		}
		return true, m.launch(next)
	}
	start := time.Now()
	err := t.produce(ctx, t.pending)
	timed(&t.stats.produce, start)
	clear(t.pending)
	t.pending = t.pending[:0]
	if err != nil {
		return false, err
	}
	start = time.Now()
	defer timed(&t.stats.commit, start)
	return false, t.commitOffsets(ctx, next)
}

// coalescing reports whether the batch just processed is held for a
// later flight: the previous one is still in the air and the task has
// room for more (room).
func (m *atLeastOnce) coalescing() bool {
	return m.buffered != nil && m.flight != nil && m.flight.done.Err() == nil && m.room()
}

// room reports whether the task holds fewer records than maxCoalesce and
// fewer bytes than maxCoalesceBytes.
func (m *atLeastOnce) room() bool {
	p := m.t.pending
	if len(p) >= maxCoalesce {
		return false
	}
	for _, r := range p[min(m.counted, len(p)):] {
		m.heldBytes += len(r.Key) + len(r.Value)
	}
	m.counted = len(p)
	return m.heldBytes < maxCoalesceBytes
}

// pollHeld, while the task holds records, returns what its consumer has
// fetched already; when there is nothing, it launches the held records
// (waiting for the flight in the air to land) and returns none, and the
// task polls as usual. A failure is kept for failed and land.
func (m *atLeastOnce) pollHeld() ([]*kafka.Record, error) {
	if !m.held || m.err != nil {
		return nil, nil
	}
	if f := m.flight; f != nil && f.done.Err() == nil && m.room() {
		recs, err := m.buffered.PollBuffered()
		if len(recs) > 0 || err != nil {
			return recs, err
		}
	}
	m.err = m.launchHeld()
	return nil, nil
}

// launchHeld launches the held records, if any.
func (m *atLeastOnce) launchHeld() error {
	if !m.held {
		return nil
	}
	return m.launch(m.heldNext)
}

// launch starts the flight of the pending records, committing the source
// offsets up to next after them, once the previous flight has landed.
func (m *atLeastOnce) launch(next int64) error {
	t := m.t
	landing := time.Now()
	err := m.wait()
	timed(&t.stats.produce, landing)
	if err != nil {
		return err
	}
	past := m.heldPast
	m.held, m.heldNext, m.heldPast = false, 0, 0
	m.heldBytes, m.counted = 0, 0
	parent := m.runCtx
	if parent == nil {
		parent = context.Background()
	}
	work, cancel := batchCtx(parent)
	f := &flight{recs: t.pending, past: past}
	f.done, f.finish = context.WithCancel(context.Background())
	t.pending, m.spare = m.spare[:0], nil
	m.flight = f
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

// passSource moves the source position at once without a flight in the
// air, else when the flight lands (never past records whose outputs are
// not acknowledged yet, which the flush barrier would take for done).
func (m *atLeastOnce) passSource(next int64) bool {
	t, f := m.t, m.flight
	if m.held {
		// Behind the held records: moved when their flight lands.
		m.heldPast = max(m.heldPast, next)
		return false
	}
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

func (m *atLeastOnce) failed() bool {
	return m.err != nil || m.flight != nil && m.flight.failed()
}

// land launches the held records and waits for the flight in the air.
func (m *atLeastOnce) land() error {
	if m.err != nil {
		return m.err
	}
	if err := m.launchHeld(); err != nil {
		m.err = err
		return err
	}
	return m.wait()
}

// wait waits for the flight in the air, if any, and returns its error.
func (m *atLeastOnce) wait() error {
	f := m.flight
	if f == nil {
		return nil
	}
	<-f.done.Done()
	m.flight = nil
	m.spare = f.recs[:0]
	return f.err
}

// watch cancels the poll when the flight in the air fails, so that the
// task ends with its error instead of waiting for a record.
func (m *atLeastOnce) watch(ctx context.Context) (context.Context, context.CancelFunc) {
	f := m.flight
	if f == nil {
		return ctx, func() {}
	}
	pctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(f.done, func() {
		if f.err != nil {
			cancel()
		}
	})
	return pctx, func() {
		stop()
		cancel()
	}
}
