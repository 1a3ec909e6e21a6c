package eval

import (
	"encoding/json"

	"github.com/sluice-sql/sluice/internal/expr"
)

// Shared is expressions evaluated together over each row (a WHERE, the
// columns of a SELECT), compiled so that a subexpression occurring more
// than once among them, like TIMESTAMPTOSTRING(ts, 'HH') in each branch
// of a CASE, is computed once per row and its result reused. Row starts
// a row. Unlike an Evaluator, a Shared is not safe for concurrent use:
// each goroutine compiles its own.
//
// What is shared is deterministic: a call without arguments (RANDOM(),
// UUID(), UNIX_TIMESTAMP()) and what holds one, and what lies inside a
// lambda, are computed wherever they occur.
type Shared struct {
	fns []ArgFunc
	gen *uint64
}

// CompileShared compiles es into one Shared.
func CompileShared(es []*expr.Expr) (*Shared, error) {
	sh := &sharing{gen: new(uint64), seen: map[string]int{}, fns: map[string]ArgFunc{}}
	for _, e := range es {
		sh.count(e)
	}
	c := &compiler{share: sh}
	fns := make([]ArgFunc, len(es))
	for i, e := range es {
		fn, err := c.compile(e)
		if err != nil {
			return nil, err
		}
		fns[i] = fn
	}
	return &Shared{fns: fns, gen: sh.gen}, nil
}

// Len is the number of expressions.
func (s *Shared) Len() int { return len(s.fns) }

// Row forgets what the shared subexpressions computed for the previous
// row: call it before evaluating the expressions over another row.
func (s *Shared) Row() { *s.gen++ }

// Eval evaluates expression i over row, with the contract of
// Evaluator.Eval.
func (s *Shared) Eval(i int, row []any) (any, error) { return s.fns[i](row) }

// sharing is the state of CompileShared: how often each subexpression
// occurs (by its JSON form), and the compiled subexpressions that occur
// more than once, each computing at most once per row generation.
type sharing struct {
	gen  *uint64
	seen map[string]int
	fns  map[string]ArgFunc
}

// count counts the subexpressions of e that may be shared; it reports
// whether e itself may be.
func (sh *sharing) count(e *expr.Expr) bool {
	if e == nil {
		return false
	}
	ok := true
	switch e.Op {
	case expr.OpLambda, expr.OpLambdaVar:
		return false
	case expr.OpCall:
		ok = len(e.Args) > 0 && e.Func != "RANDOM" && e.Func != "UUID"
	}
	for _, a := range e.Args {
		if !sh.count(a) {
			ok = false
		}
	}
	if ok && worthSharing(e) {
		if k, err := json.Marshal(e); err == nil {
			sh.seen[string(k)]++
		}
	}
	return ok
}

// worthSharing says whether computing e costs more than looking up its
// result: not a column, a literal or a field of a column.
func worthSharing(e *expr.Expr) bool {
	switch e.Op {
	case expr.OpColumn, expr.OpLiteral:
		return false
	case expr.OpField:
		return len(e.Args) == 1 && worthSharing(e.Args[0])
	}
	return true
}

// compile returns the shared compiled form of e when e occurs more than
// once; ok is false for one to compile as usual.
func (sh *sharing) compile(c *compiler, e *expr.Expr) (ArgFunc, bool, error) {
	if !worthSharing(e) {
		return nil, false, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, false, nil
	}
	k := string(b)
	if sh.seen[k] < 2 {
		return nil, false, nil
	}
	if fn, ok := sh.fns[k]; ok {
		return fn, true, nil
	}
	inner, err := c.compileNode(e)
	if err != nil {
		return nil, true, err
	}
	gen := sh.gen
	var at uint64
	var v any
	var verr error
	fn := func(row []any) (any, error) {
		if at == *gen && at != 0 {
			return v, verr
		}
		v, verr = inner(row)
		at = *gen
		return v, verr
	}
	sh.fns[k] = fn
	return fn, true, nil
}
