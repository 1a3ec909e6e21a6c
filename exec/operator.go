package exec

import (
	"context"
	"log/slog"

	"github.com/sluice-sql/sluice/state"
)

// StreamTime is the largest record time a task has seen, in milliseconds.
type StreamTime int64

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
type Operator interface {
	// Open prepares the operator; it binds its state tables, if any.
	Open(ctx context.Context, oc *OpContext) error
	// OnBatch processes rows that arrived on input port in. b is valid only
	// until OnBatch returns; copy what you keep.
	OnBatch(ctx context.Context, in int, b *Batch, out Emitter) error
	// OnTime is called when stream time advances; windows close here.
	OnTime(ctx context.Context, t StreamTime, out Emitter) error
	// OnCommit stages state for the commit that is about to happen.
	OnCommit(ctx context.Context, out Emitter) error
	// Close releases the operator; safe after a failed Open, and twice.
	Close(ctx context.Context) error
}

// emitterFunc adapts a function to Emitter.
type emitterFunc func(ctx context.Context, b *Batch) error

func (f emitterFunc) Emit(ctx context.Context, b *Batch) error { return f(ctx, b) }
