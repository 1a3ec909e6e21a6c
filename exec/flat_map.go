package exec

import (
	"context"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
)

// flatMapOp runs table functions: each input row becomes one row per
// element of the longest array argument, carrying the input columns and one
// element of each array (null where an array is shorter).
type flatMapOp struct {
	args   []eval.Evaluator
	texts  []string
	errs   ErrorSink
	counts *counters
	out    Batch
	arena  []any // backing store of the output rows, reused across batches
	lists  [][]any
}

func newFlatMapOp(es []*expr.Expr) (*flatMapOp, error) {
	f := &flatMapOp{lists: make([][]any, len(es))}
	for _, e := range es {
		ev, err := eval.Compile(e)
		if err != nil {
			return nil, err
		}
		f.args = append(f.args, ev)
		f.texts = append(f.texts, "EXPLODE("+e.String()+")")
	}
	return f, nil
}

func (f *flatMapOp) Open(_ context.Context, oc *OpContext) error {
	f.errs, f.counts = oc.Errors, oc.counts
	return nil
}

func (f *flatMapOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	f.out.Reset()
	f.arena = f.arena[:0]
	var nulls int64
	for i := 0; i < b.Len(); i++ {
		if b.Kind(i).Base() == NullValue {
			// No value, no elements: ksqlDB's table functions give no
			// row for a record without a value.
			nulls++
			continue
		}
		in := b.Row(i)
		n := 0
		for j, ev := range f.args {
			v, err := ev.Eval(in)
			if err != nil {
				f.errs.RowError("error computing "+f.texts[j]+": "+err.Error(), in)
			}
			list, _ := v.([]any)
			f.lists[j] = list
			n = max(n, len(list))
		}
		w := len(in) + len(f.args)
		for k := 0; k < n; k++ {
			start := len(f.arena)
			f.arena = append(f.arena, in...)
			for _, list := range f.lists {
				var e any
				if k < len(list) {
					e = list[k]
				}
				f.arena = append(f.arena, e)
			}
			f.out.Append(f.arena[start:start+w:start+w], b.Time(i), b.Kind(i))
		}
	}
	f.counts.addNulls(nulls)
	if f.out.Len() == 0 {
		return nil
	}
	err := out.Emit(ctx, &f.out)
	clear(f.arena)
	return err
}

func (f *flatMapOp) OnCommit(context.Context, Emitter) error { return nil }
func (f *flatMapOp) Close(context.Context) error             { return nil }

var _ Operator = (*flatMapOp)(nil)
