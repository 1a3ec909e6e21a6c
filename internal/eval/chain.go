package eval

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// A chain is an OpAnd, OpOr, OpAdd, OpMul or OpConcat node with more than
// two arguments: a long sum, a long list of ORs. It means the left-nested
// binary tree ((Args[0] op Args[1]) op Args[2]) ...: each operator is
// typed from the result type of the ones before it (expr.ArithType folded
// from the left, so INTEGER + INTEGER + BIGINT adds two INTEGERs with
// INTEGER overflow, then widens), nulls and errors go through as in the nested
// form, and evaluation loops over the arguments instead of recursing, so
// a chain of 50,000 terms costs no stack.

// chainTypes returns the result type of each operator of the arithmetic
// chain e: types[i] is that of Args[0] op ... op Args[i+1]. The last is
// e.Type, which it checks.
func chainTypes(e *expr.Expr) ([]*types.Type, error) {
	ts := make([]*types.Type, len(e.Args)-1)
	t := e.Args[0].Type
	for i, a := range e.Args[1:] {
		if t == nil || a.Type == nil || !t.IsNumeric() || !a.Type.IsNumeric() {
			return nil, fmt.Errorf("expr: %s chain operand %d of type %s after %s", e.Op, i+1, a.Type, t)
		}
		t = expr.ArithType(e.Op, t, a.Type)
		ts[i] = t
	}
	if e.Type == nil || !e.Type.Equal(t) {
		return nil, fmt.Errorf("expr: %s chain of type %s, want %s", e.Op, e.Type, t)
	}
	ts[len(ts)-1] = e.Type
	return ts, nil
}

// arithStep returns the operator op on two non-null operands, giving a
// result of type t, as compileArith computes it.
func arithStep(op expr.Op, t *types.Type) (func(a, b any) any, error) {
	switch t.Kind {
	case types.Int:
		if op == expr.OpAdd {
			return func(a, b any) any { return a.(int32) + b.(int32) }, nil
		}
		return func(a, b any) any { return a.(int32) * b.(int32) }, nil
	case types.Bigint:
		if op == expr.OpAdd {
			return func(a, b any) any { return toInt64(a) + toInt64(b) }, nil
		}
		return func(a, b any) any { return toInt64(a) * toInt64(b) }, nil
	case types.Double:
		if op == expr.OpAdd {
			return func(a, b any) any { return toFloat(a) + toFloat(b) }, nil
		}
		return func(a, b any) any { return toFloat(a) * toFloat(b) }, nil
	case types.Decimal:
		scale := t.Scale
		if op == expr.OpAdd {
			return func(a, b any) any { return toDec(a).Add(toDec(b)).Rescale(scale) }, nil
		}
		return func(a, b any) any { return toDec(a).Mul(toDec(b)).Rescale(scale) }, nil
	}
	return nil, fmt.Errorf("expr: %s of type %s", op, t)
}

// compileArithChain compiles a chain of + or * on numbers. A null operand
// makes the result null without evaluating the operands after it, as the
// nested form's operators skip their right operand after a null left one.
func (c *compiler) compileArithChain(e *expr.Expr) (ArgFunc, error) {
	if e.Op != expr.OpAdd && e.Op != expr.OpMul {
		return nil, fmt.Errorf("expr: %s chain", e.Op)
	}
	args, err := c.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	ts, err := chainTypes(e)
	if err != nil {
		return nil, err
	}
	steps := make([]func(a, b any) any, len(ts))
	for i, t := range ts {
		if steps[i], err = arithStep(e.Op, t); err != nil {
			return nil, err
		}
	}
	// npe(i) is the failure of operator i on a null operand.
	lambda := c.depth > 0
	npe := func(i int) error {
		if !lambda {
			return nil
		}
		return &nullOperandError{e: e, n: i + 2}
	}
	return func(row []any) (any, error) {
		acc, err := args[0](row)
		if acc == nil {
			keep(&err, npe(0))
			return nil, err
		}
		for i, step := range steps {
			v, e2 := args[i+1](row)
			keep(&err, e2)
			if v == nil {
				keep(&err, npe(i))
				return nil, err
			}
			acc = step(acc, v)
		}
		return acc, err
	}, nil
}

// compileStringPlusChain compiles a chain of + on strings: Java string
// concatenation, a null operand written as the text null.
func (c *compiler) compileStringPlusChain(e *expr.Expr) (ArgFunc, error) {
	if e.Op != expr.OpAdd {
		return nil, fmt.Errorf("expr: %s of type %s", e.Op, e.Type)
	}
	args, err := c.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	return func(row []any) (any, error) {
		var b strings.Builder
		var err error
		for _, a := range args {
			v, e2 := a(row)
			keep(&err, e2)
			if v == nil {
				b.WriteString("null")
			} else {
				b.WriteString(v.(string))
			}
		}
		return b.String(), err
	}, nil
}

// compileConcatChain compiles a chain of ||: null operands are skipped.
func (c *compiler) compileConcatChain(e *expr.Expr) (ArgFunc, error) {
	args, err := c.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	if e.Type != nil && e.Type.Kind == types.Bytes {
		return func(row []any) (any, error) {
			var err error
			out := []byte{}
			for _, a := range args {
				v, e2 := a(row)
				keep(&err, e2)
				x, _ := v.([]byte)
				out = append(out, x...)
			}
			return out, err
		}, nil
	}
	return func(row []any) (any, error) {
		var b strings.Builder
		var err error
		for _, a := range args {
			v, e2 := a(row)
			keep(&err, e2)
			x, _ := v.(string)
			b.WriteString(x)
		}
		return b.String(), err
	}, nil
}

// compileLogicChain compiles a chain of AND or OR with SQL's three-valued
// logic: it stops at the first operand that decides the result (false for
// AND, true for OR), as the nested form does.
func (c *compiler) compileLogicChain(e *expr.Expr) (ArgFunc, error) {
	args, err := c.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	decides := e.Op == expr.OpOr // the value that decides the result
	return func(row []any) (any, error) {
		acc, err := args[0](row)
		if acc == decides {
			return decides, err
		}
		for _, a := range args[1:] {
			v, e2 := a(row)
			keep(&err, e2)
			if v == decides {
				return decides, err
			}
			if v == nil {
				acc = nil
			}
		}
		if acc == nil {
			return nil, err
		}
		return !decides, err
	}, nil
}
