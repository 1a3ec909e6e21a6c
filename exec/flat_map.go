package exec

import (
	"context"
	"fmt"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
)

// flatMapOp runs table functions: each input row becomes one row per
// element of the longest array argument, carrying the input columns and one
// element of each array (null where an array is shorter).
type flatMapOp struct {
	args   []eval.Evaluator
	cube   []bool // CUBE_EXPLODE rather than EXPLODE, per argument
	texts  []string
	errs   ErrorSink
	counts *counters
	out    Batch
	arena  []any // backing store of the output rows, reused across batches
	lists  [][]any
}

func newFlatMapOp(es []*expr.Expr, funcs []string) (*flatMapOp, error) {
	f := &flatMapOp{lists: make([][]any, len(es)), cube: make([]bool, len(es))}
	for i, e := range es {
		ev, err := eval.Compile(e)
		if err != nil {
			return nil, err
		}
		name := "EXPLODE"
		if i < len(funcs) && funcs[i] != "" {
			name = funcs[i]
		}
		switch name {
		case "EXPLODE":
		case "CUBE_EXPLODE":
			f.cube[i] = true
		default:
			return nil, fmt.Errorf("exec: unknown table function %s", name)
		}
		f.args = append(f.args, ev)
		f.texts = append(f.texts, name+"("+e.String()+")")
	}
	return f, nil
}

// maxCubeColumns bounds CUBE_EXPLODE's input, as ksqlDB does: n values
// give up to 2^n rows.
const maxCubeColumns = 20

// cube returns every combination of the values of cols, each value kept
// or replaced by null, in ksqlDB's order: all null first, then counting
// up in binary with the last value as the lowest bit. A value that is
// null already has one possibility, so no combination is repeated.
func cube(cols []any) ([]any, error) {
	n := len(cols)
	if n > maxCubeColumns {
		return nil, fmt.Errorf("CUBE_EXPLODE input size (%d) exceeds the maximum of %d columns. The output cardinality is 2^N rows and would exhaust server memory.", n, maxCubeColumns)
	}
	present := 0
	for i, c := range cols {
		if c != nil {
			present |= 1 << (n - 1 - i)
		}
	}
	var out []any
	for mask := 0; mask < 1<<n; mask++ {
		if mask&present != mask {
			continue
		}
		row := make([]any, n)
		for i := range cols {
			if mask&(1<<(n-1-i)) != 0 {
				row[i] = cols[i]
			}
		}
		out = append(out, row)
	}
	return out, nil
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
			if f.cube[j] && list != nil {
				if list, err = cube(list); err != nil {
					f.errs.RowError("error computing "+f.texts[j]+": "+err.Error(), in)
				}
			}
			f.lists[j] = list
			n = max(n, len(list))
		}
		w := len(in) + len(f.args)
		from := f.out.Len()
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
		f.out.SetHeaders(from, b.Headers(i))
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
