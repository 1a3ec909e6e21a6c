package exec

import (
	"context"

	"github.com/sluice-sql/sluice/internal/expr"
)

// filterOp drops rows whose predicate is not true.
type filterOp struct {
	pred    expr.Evaluator
	retract bool
	text    string
	errs    ErrorSink
	out     Batch
}

func newFilterOp(e *expr.Expr, retract bool) (*filterOp, error) {
	ev, err := expr.Compile(e)
	if err != nil {
		return nil, err
	}
	return &filterOp{pred: ev, text: e.String(), retract: retract}, nil
}

func (f *filterOp) Open(_ context.Context, oc *OpContext) error {
	f.errs = oc.Errors
	return nil
}

func (f *filterOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	f.out.Reset()
	for i := 0; i < b.Len(); i++ {
		row := b.Row(i)
		if b.Kind(i).Base() == NullValue {
			if f.retract {
				f.out.Append(row, b.Time(i), b.Kind(i))
			}
			continue
		}
		// A failing sub-expression yields null and is logged; the
		// condition's value decides, as in ksqlDB.
		v, err := f.pred.Eval(row)
		if err != nil {
			f.errs.RowError("error evaluating WHERE "+f.text+": "+err.Error(), row)
		}
		switch {
		case expr.Truthy(v):
			f.out.Append(row, b.Time(i), b.Kind(i))
		case f.retract:
			f.out.Append(row, b.Time(i), NullValue|b.Kind(i)&KeyAbsent)
		}
	}
	if f.out.Len() == 0 {
		return nil
	}
	return out.Emit(ctx, &f.out)
}

func (f *filterOp) OnTime(context.Context, StreamTime, Emitter) error { return nil }
func (f *filterOp) OnCommit(context.Context, Emitter) error           { return nil }
func (f *filterOp) Close(context.Context) error                       { return nil }

var _ Operator = (*filterOp)(nil)
