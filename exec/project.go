package exec

import (
	"context"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
)

// projectOp computes output columns from input rows.
type projectOp struct {
	// exprs are compiled together for this task alone: a subexpression
	// several of them (or one of them twice) hold is computed once per
	// row.
	exprs *eval.Shared
	// keyOnly marks the expressions that read nothing but key columns
	// (or nothing): the only ones computed for a NullValue row.
	keyOnly []bool
	texts   []string
	// rekey clears KeyAbsent: the rows get a new, computed key.
	rekey bool
	// withOld computes a change's old row too, and passes it on as the
	// output's old row (a Rekey before a regrouping Repartition).
	withOld bool
	// oldArena backs the old rows, as arena the rows.
	oldArena []any
	errs     ErrorSink
	out      Batch
	arena    []any // backing store of the output rows, reused across batches
	// span: every expression reads one input column, in order from
	// first (SELECT * and the like), so an output row is that span of
	// its input row, passed on without a copy.
	span  bool
	first int
}

// newProjectOp compiles es; inKeys are the input columns that are key
// columns.
func newProjectOp(es []*expr.Expr, inKeys map[int]bool) (*projectOp, error) {
	ev, err := eval.CompileShared(es)
	if err != nil {
		return nil, err
	}
	p := &projectOp{exprs: ev}
	for _, e := range es {
		only := true
		for _, c := range expr.Columns(e) {
			if !inKeys[c] {
				only = false
			}
		}
		p.keyOnly = append(p.keyOnly, only)
		p.texts = append(p.texts, e.String())
	}
	p.span = len(es) > 0
	for j, e := range es {
		if e.Op != expr.OpColumn || e.Col != es[0].Col+j {
			p.span = false
		}
	}
	if p.span {
		p.first = es[0].Col
	}
	return p, nil
}

func (p *projectOp) Open(_ context.Context, oc *OpContext) error {
	p.errs = oc.Errors
	return nil
}

func (p *projectOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	n, w := b.Len(), p.exprs.Len()
	if cap(p.arena) < n*w {
		p.arena = make([]any, n*w)
	}
	arena := p.arena[:n*w]
	copied := false // whether a row was computed into arena
	var olds []any
	if p.withOld {
		if cap(p.oldArena) < n*w {
			p.oldArena = make([]any, n*w)
		}
		olds = p.oldArena[:n*w]
	}
	p.out.Reset()
	for i := 0; i < n; i++ {
		in := b.Row(i)
		null := b.Kind(i).Base() == NullValue
		kind := b.Kind(i)
		if p.rekey {
			kind = kind.Base()
		}
		var row []any
		if p.span && !null && p.first+w <= len(in) {
			// The input row lives until OnBatch returns, as the
			// output batch does.
			row = in[p.first : p.first+w : p.first+w]
		} else {
			row = arena[i*w : (i+1)*w : (i+1)*w]
			copied = true
			p.compute(in, row, null, true)
		}
		if p.withOld && b.Kind(i)&OldKnown != 0 {
			var prev []any
			if old, _ := b.Old(i); old != nil {
				// The old row's errors were logged when it was new.
				prev = olds[i*w : (i+1)*w : (i+1)*w]
				p.compute(old, prev, false, false)
			}
			p.out.AppendChange(row, prev, b.Time(i), kind)
		} else {
			p.out.Append(row, b.Time(i), kind)
		}
		p.out.SetHeaders(i, b.Headers(i))
	}
	err := out.Emit(ctx, &p.out)
	if copied {
		clear(arena)
	}
	clear(olds)
	return err
}

// compute computes the output row of in into row: for a NullValue row
// (null), only the expressions that read its key. log logs the errors.
func (p *projectOp) compute(in, row []any, null, log bool) {
	p.exprs.Row()
	for j := range p.exprs.Len() {
		if null && !p.keyOnly[j] {
			row[j] = nil
			continue
		}
		// A failing sub-expression yields null within the value and is
		// logged; the row goes on, as in ksqlDB.
		v, err := p.exprs.Eval(j, in)
		if err != nil && log {
			p.errs.RowError("error computing "+p.texts[j]+": "+err.Error(), in)
		}
		row[j] = v
	}
}

func (p *projectOp) OnCommit(context.Context, Emitter) error { return nil }
func (p *projectOp) Close(context.Context) error             { return nil }

var _ Operator = (*projectOp)(nil)
