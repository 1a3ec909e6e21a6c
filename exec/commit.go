package exec

import "context"

// commitMode is how a task commits a batch: it makes the records the
// batch produced (t.pending) durable and commits the task's input
// positions after them. newTask chooses it once, by the query's
// guarantee and what the task keeps:
//
//   - atLeastOnce (flight.go): produce, then commit the group's offsets
//     once the produce is acknowledged; a task without state pipelines
//     the two with the processing of its next batch (a flight).
//   - exactlyOnce (eos.go): one Kafka transaction per commit, holding
//     the changelog, output and positions records.
//   - replayMode (replay.go): produce only, no position to commit.
//
// Only the task's goroutine calls it.
type commitMode interface {
	// start prepares the mode when the task runs, before it reads
	// anything; ctx is the task's run context.
	start(ctx context.Context) error
	// transactional reports whether commits are Kafka transactions: the
	// task then restores its changelogs up to their last stable offset,
	// and gathers the polls of its commit interval into one commit.
	transactional() bool
	// commit produces t.pending, whose first changelogs records are the
	// batch's changelog records, and commits the input positions up to
	// next (the sides' are in t.sides). later says the commit goes on in
	// the background (a flight): the task's position moves when it
	// lands, not now.
	commit(ctx context.Context, next int64, changelogs int) (later bool, err error)
	// passSource moves the source position past transaction markers, to
	// next: now, or when the commit in the air lands. It reports whether
	// the position moved now.
	passSource(next int64) bool
	// watch returns ctx, cancelled too once a commit in the air fails,
	// for a poll not to wait for records meanwhile.
	watch(ctx context.Context) (context.Context, context.CancelFunc)
	// failed reports whether a commit in the air failed; land waits for
	// the commit in the air, if any, and returns its error.
	failed() bool
	land() error
}
