package exec

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/state"
)

// OpContext is what an operator learns when it opens.
type OpContext struct {
	QueryID   string
	Partition int32
	Logger    *slog.Logger
	// Errors receives rows the operator could not process: they go to the
	// processing log and the query goes on.
	Errors ErrorSink
	// State is the task's state cache; nil for a query without state.
	State *state.TaskCache
	// counts are the task's counters; nil outside a task.
	counts *counters
}

// counters are one task's figures, read concurrently by Query.Stats. A
// task adds to them once per batch (or per operator call), never per
// record.
type counters struct {
	// in are the records read, out the rows written to the sink or the
	// push output, filtered the rows a WHERE or HAVING dropped, errors
	// the records and rows sent to the processing log, late the records
	// a window dropped because they came after its grace period, nulls
	// the records of a stream with a null value that a step dropped
	// (see addNulls).
	in, out, filtered, errors, late, nulls atomic.Int64
	// lastTime is the timestamp of the last record read, in
	// milliseconds; 0 before the first.
	lastTime atomic.Int64
	// The task goroutine's wall time, in nanoseconds: waiting in polls,
	// processing (decoding, operators, sinks, state), waiting for its
	// outputs' acknowledgement (and, pipelined, for the previous batch's
	// flight to land), for its commits (offsets, transactions), and
	// writing state to the store.
	poll, work, produce, commit, persist atomic.Int64
}

// timed adds the nanoseconds since start to *n.
func timed(n *atomic.Int64, start time.Time) { n.Add(int64(time.Since(start))) }

// waited sums the waits counted within work: produce, commit, persist.
func (c *counters) waited() int64 {
	return c.produce.Load() + c.commit.Load() + c.persist.Load()
}

// addFiltered counts n rows a filter dropped; c may be nil.
func (c *counters) addFiltered(n int64) {
	if c != nil && n > 0 {
		c.filtered.Add(n)
	}
}

// addNulls counts n records of a stream whose value is null and that a
// step dropped, having no row to make of them: a WHERE, an aggregate, a
// join, a table function, a repartition or a push query's output. A
// projection and a PARTITION BY pass such a record on and the sink
// writes it with a null value, so it is counted out instead. c may be
// nil.
func (c *counters) addNulls(n int64) {
	if c != nil && n > 0 {
		c.nulls.Add(n)
	}
}

// addLate counts n records a window dropped as late; c may be nil.
func (c *counters) addLate(n int64) {
	if c != nil && n > 0 {
		c.late.Add(n)
	}
}

// ErrorSink records a problem with one row.
type ErrorSink interface {
	RowError(msg string, row []any)
}

// Emitter receives an operator's output.
type Emitter interface {
	// Emit passes b downstream. b is valid only during the call.
	Emit(ctx context.Context, b *Batch) error
}

// Operator is one vertex of a running topology. A single task goroutine
// calls its methods in sequence; implementations need no locking.
//
// Time moves with the rows: an operator that keeps time (a window, a
// stream-stream join) takes its stream time, the largest record time it
// has seen, from the rows of each batch, and closes what that time passed
// while it processes the batch (see windowAggregateOp.advance and
// joinOp.emitClosed). No other call drives it.
type Operator interface {
	// Open prepares the operator; it binds its state tables, if any.
	Open(ctx context.Context, oc *OpContext) error
	// OnBatch processes rows that arrived on input port in. b is valid only
	// until OnBatch returns; copy what you keep.
	OnBatch(ctx context.Context, in int, b *Batch, out Emitter) error
	// OnCommit stages state for the commit that is about to happen.
	OnCommit(ctx context.Context, out Emitter) error
	// Close releases the operator; safe after a failed Open, and twice.
	Close(ctx context.Context) error
}

// emitterFunc adapts a function to Emitter.
type emitterFunc func(ctx context.Context, b *Batch) error

func (f emitterFunc) Emit(ctx context.Context, b *Batch) error { return f(ctx, b) }
