package exec

import "context"

// TapRow is one row a persistent query's sink writes, as the query's final
// projection lays it out: its Output columns (key columns first) and, for
// a windowed sink, the window bounds after them. Delete marks a row
// without a value (a table's tombstone).
type TapRow struct {
	Values []any
	Time   int64
	Delete bool
}

// Tap receives the rows the sink of a persistent query writes into its
// user topic (not its repartition topics), as they are encoded, for
// scalable push queries (see Deps.Tap). Active is asked for every batch
// and must be cheap: while it is false the task copies nothing. Rows gets
// copies the tap may keep, and must not block: a tap whose reader falls
// behind drops that reader, never the query.
type Tap interface {
	Active() bool
	Rows(ctx context.Context, rows []TapRow)
}

// tapping reports whether the rows the task's sink writes go to the
// query's Tap now too.
func (t *task) tapping() bool {
	return t.tapSink && t.q.deps.Tap != nil && t.q.deps.Tap.Active()
}
