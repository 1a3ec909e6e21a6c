package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/internal/failpoint"
)

// A statement's work is bounded: it stops when its caller's context ends
// (the client went away) or when the server's statement timeout passes,
// until it commits.
//
//	Execute ─▶ statementContext (deadline) ─▶ ddl lock ─▶ planning ─▶ checks, topics, registry ─▶ commit ─▶ command log ─▶ start/stop queries
//	           └───────────── cancellation honoured: the statement fails, nothing applied ─────────────┘   └── runs to its end ──────────────┘
//
// A statement commits (commit) just before the first step it could not
// undo: writing its command to the command log, or stopping a query
// before writing TERMINATE, PAUSE or CREATE OR REPLACE. From there on it
// ignores its context's end and runs to its end, so that no statement is
// left half-applied: a command in the log whose query did not start, or a
// query stopped whose command was never written. Push queries and PRINT
// are bounded while they plan and start; the stream they return runs
// until its client closes it, without the deadline.

// DefaultStatementTimeout is how long a statement may run by default
// before the server stops it.
const DefaultStatementTimeout = 60 * time.Second

// DefaultMaxPushQueries is ksqlDB's default ksql.max.push.queries: how many
// push queries (and PRINTs) may run at once on a server.
const DefaultMaxPushQueries = 100

// The pause points of statements (see package failpoint), where tests
// hold them: PlanningPoint where a statement is about to be planned,
// before anything of it is applied, and CommittedPoint where it has just
// committed (a pause there lasts until released, whatever its context
// does).
const (
	PlanningPoint  = "statement-plan"
	CommittedPoint = "statement-committed"
)

// timeoutError is the cause of a statement context whose deadline passed.
type timeoutError struct{ d time.Duration }

func (t *timeoutError) Error() string {
	return fmt.Sprintf("the statement did not finish within the server's statement timeout of %s", t.d)
}

func (t *timeoutError) Is(target error) bool { return target == ErrStatementTimeout }

// stmtKey is the context key of a statement's stmtState.
type stmtKey struct{}

// stmtState is what a running statement's context says about it.
type stmtState struct {
	// committed is set once the statement passed the point from which it
	// runs to its end (see commit).
	committed atomic.Bool
	// lastCommand is one past the command-log offset of the statement's
	// last command; 0 while it wrote none.
	lastCommand atomic.Int64
}

// statementContext returns the context one statement runs in: ctx with
// the server's statement timeout.
func (e *Engine) statementContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx = context.WithValue(ctx, stmtKey{}, &stmtState{})
	if d := e.cfg.StatementTimeout; d > 0 {
		return context.WithTimeoutCause(ctx, d, &timeoutError{d})
	}
	return context.WithCancel(ctx)
}

// commit marks the point from which a statement runs to its end whatever
// happens to its client: it fails if ctx has ended already, and otherwise
// returns a context that does not end, for the rest of the statement.
func commit(ctx context.Context) (context.Context, error) {
	if ctx.Err() != nil {
		return ctx, context.Cause(ctx)
	}
	if st, ok := ctx.Value(stmtKey{}).(*stmtState); ok {
		st.committed.Store(true)
	}
	ctx = context.WithoutCancel(ctx)
	_ = failpoint.Wait(ctx, CommittedPoint)
	return ctx, nil
}

// planning is where a statement is about to be planned: the pause point
// of tests, then a check that its context is still running.
func planning(ctx context.Context) error {
	if err := failpoint.Wait(ctx, PlanningPoint); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// interrupted turns the error of a statement that stopped because its
// context ended (before it committed) into the error its client sees: the
// statement timeout, named with the setting that raises it, or the client's
// own cancellation. Other errors pass as they are.
func (e *Engine) interrupted(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if st, ok := ctx.Value(stmtKey{}).(*stmtState); ok && st.committed.Load() {
		return err
	}
	cause := context.Cause(ctx)
	var te *timeoutError
	if errors.As(cause, &te) {
		return &StatementError{Code: CodeStatementTimeout, Cause: te,
			Msg: te.Error() + " and was stopped before it changed any stream, table, type or query. Run it again when the server is less busy, " +
				"or start the server with a longer --statement-timeout (SLUICE_STATEMENT_TIMEOUT, statement-timeout in its --config file)"}
	}
	return &StatementError{Code: CodeServerError, Cause: ctx.Err(),
		Msg: "the statement was cancelled before it changed anything: its client went away or gave up (" + cause.Error() + ")"}
}

// stmtLock is a mutex that a statement waiting for it gives up when its
// context ends. Make it with newStmtLock.
type stmtLock struct{ ch chan struct{} }

func newStmtLock() stmtLock { return stmtLock{ch: make(chan struct{}, 1)} }

// Lock locks l.
func (l stmtLock) Lock() { l.ch <- struct{}{} }

// LockContext locks l, or returns ctx's cause if ctx ends first.
func (l stmtLock) LockContext(ctx context.Context) error {
	select {
	case l.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Unlock unlocks l.
func (l stmtLock) Unlock() { <-l.ch }

// reservePush takes one of the server's ksql.max.push.queries places for a
// push query or PRINT, or refuses it with ksqlDB's message. release gives
// the place back; it is safe to call twice.
func (e *Engine) reservePush() (release func(), err error) {
	limit := e.cfg.MaxPushQueries
	if limit < 0 {
		limit = 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pushOpen >= limit {
		return nil, &StatementError{Code: CodeBadStatement, Cause: ErrPushQueryLimit, Msg: fmt.Sprintf(
			"Not executing statement(s) as it would cause the number of active, push queries to exceed the configured limit. "+
				"Terminate existing PUSH queries, or increase the 'ksql.max.push.queries' setting via the 'ksql-server.properties' file. "+
				"Current push query count: %d. Configured limit: %d.\n"+
				"Close the push queries and PRINTs you no longer read (POST /close-query, or end their requests), "+
				"or start the server with a higher --max-push-queries (SLUICE_MAX_PUSH_QUERIES, ksql.max.push.queries in its --config file).",
			e.pushOpen, limit)}
	}
	e.pushOpen++
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			e.pushOpen--
			e.mu.Unlock()
		})
	}, nil
}

// PushQueries returns how many push queries and PRINTs hold one of the
// server's ksql.max.push.queries places: those started whose Stream is not
// closed yet.
func (e *Engine) PushQueries() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pushOpen
}
