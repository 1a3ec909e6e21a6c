package exec

import (
	"context"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
)

// filterOp drops rows whose predicate is not true, and a stream's rows
// without a value (counted apart from the rows the predicate rejects).
type filterOp struct {
	// pred is compiled for this task alone: its repeated
	// subexpressions are computed once per row.
	pred    *eval.Shared
	retract bool
	text    string
	errs    ErrorSink
	counts  *counters
	out     Batch
}

func newFilterOp(e *expr.Expr, retract bool) (*filterOp, error) {
	ev, err := eval.CompileShared([]*expr.Expr{e})
	if err != nil {
		return nil, err
	}
	return &filterOp{pred: ev, text: e.String(), retract: retract}, nil
}

func (f *filterOp) Open(_ context.Context, oc *OpContext) error {
	f.errs, f.counts = oc.Errors, oc.counts
	return nil
}

// OnBatch passes the rows whose predicate is true. With retract (a WHERE
// on a table, HAVING) it follows Kafka Streams' KTable filter: a change
// whose new row fails, or a delete, goes on as a delete of its key when
// the key's old row passed, and is dropped when it did not; when the old
// row is not known the delete always goes on. The rows that go on carry
// their old row only if it passed.
func (f *filterOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	f.out.Reset()
	var dropped, nulls int64
	for i := 0; i < b.Len(); i++ {
		row, kind := b.Row(i), b.Kind(i)
		n := f.out.Len()
		old, oldKnown := b.Old(i)
		if oldKnown && old != nil && !f.passes(old) {
			old = nil
		}
		if kind.Base() == NullValue {
			switch {
			case !f.retract:
				// A stream's record without a value: ksqlDB's
				// predicate is false for it, whatever it says.
				nulls++
			case !oldKnown:
				f.out.Append(row, b.Time(i), kind)
			case old != nil:
				f.out.AppendChange(row, old, b.Time(i), kind)
			}
			f.out.SetHeaders(n, b.Headers(i))
			continue
		}
		// A failing sub-expression yields null and is logged; the
		// condition's value decides, as in ksqlDB.
		f.pred.Row()
		v, err := f.pred.Eval(0, row)
		if err != nil {
			f.errs.RowError("error evaluating WHERE "+f.text+": "+err.Error(), row)
		}
		pass := eval.Truthy(v)
		if !pass {
			dropped++
		}
		switch {
		case pass && oldKnown:
			f.out.AppendChange(row, old, b.Time(i), kind)
		case pass:
			f.out.Append(row, b.Time(i), kind)
		case !f.retract:
		case !oldKnown:
			f.out.Append(row, b.Time(i), NullValue|Filtered|kind&KeyAbsent)
		case old != nil:
			f.out.AppendChange(row, old, b.Time(i), NullValue|Filtered|kind&KeyAbsent)
		}
		f.out.SetHeaders(n, b.Headers(i))
	}
	f.counts.addFiltered(dropped)
	f.counts.addNulls(nulls)
	if f.out.Len() == 0 {
		return nil
	}
	return out.Emit(ctx, &f.out)
}

// passes evaluates the predicate on an old row, which was logged already
// if it failed when it was new.
func (f *filterOp) passes(row []any) bool {
	f.pred.Row()
	v, _ := f.pred.Eval(0, row)
	return eval.Truthy(v)
}

func (f *filterOp) OnCommit(context.Context, Emitter) error { return nil }
func (f *filterOp) Close(context.Context) error             { return nil }

var _ Operator = (*filterOp)(nil)
