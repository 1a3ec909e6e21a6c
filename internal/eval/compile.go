package eval

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// Evaluator evaluates a compiled expression over rows laid out as the scope
// it was bound against. Eval is safe for concurrent use and does not retain
// row.
//
// Errors are local, as in ksqlDB: a node that fails on a row (division by
// zero, a failed CAST, a function error) evaluates to null and the
// expression goes on around it, so IFNULL(CAST('x' AS INT), 0) is 0. Eval
// therefore always returns the ksqlDB result of the whole expression, with
// null in place of every failed sub-expression; a non-nil error reports the
// first failure on the row, for the processing log. Callers use the value
// whether or not err is nil and log err when it is not.
type Evaluator interface {
	Eval(row []any) (any, error)
}

// ArgFunc evaluates one argument of a call over a row, with the contract of
// Evaluator.Eval: the value is the argument's ksqlDB result (null where it
// failed) and err the first failure met while computing it.
type ArgFunc func(row []any) (any, error)

type evaluator struct{ fn ArgFunc }

func (e evaluator) Eval(row []any) (any, error) { return e.fn(row) }

// Truthy reports whether v is the boolean true; WHERE and HAVING keep a row
// only when their condition is Truthy, so null counts as false.
func Truthy(v any) bool {
	b, ok := v.(bool)
	return ok && b
}

// ErrDivideByZero is returned by integer and decimal division or modulo by
// zero.
var ErrDivideByZero = errors.New("division by zero")

// nullOperandError is the failure of arithmetic on a null operand inside a
// lambda body. ksqlDB evaluates lambda bodies without null checks, so such
// an operation fails the whole higher-order call rather than yielding null.
type nullOperandError struct {
	e *expr.Expr
	n int // the operands of e's chain the failed node has; 0 for all
}

func (e *nullOperandError) Error() string {
	x := e.e
	if e.n > 0 && e.n < len(x.Args) {
		x = &expr.Expr{Op: x.Op, Type: x.Type, Args: x.Args[:e.n]}
	}
	return "null operand in " + x.String() + " inside a lambda"
}

func isAbort(err error) bool {
	_, ok := err.(*nullOperandError)
	return ok
}

// keep records e in *dst unless an earlier failure is already recorded; a
// lambda null-operand failure replaces an ordinary one, since it decides
// the result of the enclosing higher-order call.
func keep(dst *error, e error) {
	if e != nil && (*dst == nil || isAbort(e) && !isAbort(*dst)) {
		*dst = e
	}
}

// Compile turns a bound expression into an Evaluator. It fails only on a
// malformed tree (for example one decoded from a corrupt plan).
func Compile(e *expr.Expr) (Evaluator, error) {
	fn, err := (&compiler{}).compile(e)
	if err != nil {
		return nil, err
	}
	return evaluator{fn}, nil
}

// compiler holds the context of the node being compiled: depth is the
// number of lambda parameter slots appended to the row there (0 outside
// lambda bodies).
type compiler struct {
	depth int
	// share, when set, computes the subexpressions that occur more than
	// once once per row (CompileShared).
	share *sharing
}

func (c *compiler) compileArgs(es []*expr.Expr) ([]ArgFunc, error) {
	out := make([]ArgFunc, len(es))
	for i, e := range es {
		f, err := c.compile(e)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

func arity(e *expr.Expr, n int) error {
	if len(e.Args) != n {
		return fmt.Errorf("expr: %s node has %d arguments, want %d", e.Op, len(e.Args), n)
	}
	return nil
}

func (c *compiler) compile(e *expr.Expr) (ArgFunc, error) {
	if e == nil {
		return nil, errors.New("expr: nil node")
	}
	if c.share != nil && c.depth == 0 {
		if fn, ok, err := c.share.compile(c, e); ok {
			return fn, err
		}
	}
	return c.compileNode(e)
}

func (c *compiler) compileNode(e *expr.Expr) (ArgFunc, error) {
	switch e.Op {
	case expr.OpColumn:
		i := e.Col
		if i < 0 {
			return nil, fmt.Errorf("expr: negative column index %d", i)
		}
		back := c.depth
		return func(row []any) (any, error) {
			if i >= len(row)-back {
				return nil, fmt.Errorf("row has %d columns; column %d expected", len(row)-back, i)
			}
			return row[i], nil
		}, nil
	case expr.OpLiteral:
		v := e.Value
		return func([]any) (any, error) { return v, nil }, nil
	case expr.OpLambdaVar:
		s := e.Col
		if s < 0 || s >= c.depth {
			return nil, fmt.Errorf("expr: lambda variable %s in slot %d outside its lambda", e.Name, s)
		}
		back := c.depth - s
		return func(row []any) (any, error) {
			i := len(row) - back
			if i < 0 {
				return nil, fmt.Errorf("row too short for lambda variable in slot %d", s)
			}
			return row[i], nil
		}, nil
	case expr.OpLambda:
		return nil, fmt.Errorf("expr: lambda %s outside a higher-order function call", e)
	case expr.OpNot:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			v, err := x(row)
			if v == nil {
				return nil, err
			}
			return !v.(bool), err
		}, nil
	case expr.OpNeg:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		return c.compileNeg(e)
	case expr.OpAdd, expr.OpMul:
		if len(e.Args) > 2 {
			if e.Type != nil && e.Type.Kind == types.String {
				return c.compileStringPlusChain(e)
			}
			return c.compileArithChain(e)
		}
		fallthrough
	case expr.OpSub, expr.OpDiv, expr.OpMod:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		if e.Type != nil && e.Type.Kind == types.String {
			return c.compileStringPlus(e)
		}
		return c.compileArith(e)
	case expr.OpConcat:
		if len(e.Args) > 2 {
			return c.compileConcatChain(e)
		}
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		return c.compileConcat(e)
	case expr.OpEq, expr.OpNe, expr.OpLt, expr.OpLe, expr.OpGt, expr.OpGe:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		return c.compileCompare(e)
	case expr.OpAnd, expr.OpOr:
		if len(e.Args) > 2 {
			return c.compileLogicChain(e)
		}
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		return c.compileLogic(e)
	case expr.OpIsNull, expr.OpIsNotNull:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		want := e.Op == expr.OpIsNull
		return func(row []any) (any, error) {
			v, err := x(row)
			return (v == nil) == want, err
		}, nil
	case expr.OpIsDistinct, expr.OpIsNotDistinct:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		args, err := c.compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		eq := equalFunc(e.Args[0].Type, e.Args[1].Type)
		distinct := e.Op == expr.OpIsDistinct
		return func(row []any) (any, error) {
			a, err := args[0](row)
			b, e2 := args[1](row)
			keep(&err, e2)
			same := a == nil && b == nil || a != nil && b != nil && eq(a, b)
			return same != distinct, err
		}, nil
	case expr.OpIn, expr.OpNotIn:
		if len(e.Args) < 2 {
			return nil, fmt.Errorf("expr: IN node needs at least 2 arguments")
		}
		args, err := c.compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		eqs := make([]func(a, b any) bool, len(args))
		for i := 1; i < len(args); i++ {
			eqs[i] = equalFunc(e.Args[0].Type, e.Args[i].Type)
		}
		not := e.Op == expr.OpNotIn
		return func(row []any) (any, error) {
			x, err := args[0](row)
			found := false
			if x != nil {
				for i := 1; i < len(args); i++ {
					v, e2 := args[i](row)
					keep(&err, e2)
					if v != nil && eqs[i](x, v) {
						found = true
						break
					}
				}
			}
			return found != not, err
		}, nil
	case expr.OpBetween, expr.OpNotBetween:
		if err := arity(e, 3); err != nil {
			return nil, err
		}
		return c.compileBetween(e)
	case expr.OpLike, expr.OpNotLike:
		if len(e.Args) != 2 && len(e.Args) != 3 {
			return nil, fmt.Errorf("expr: LIKE node has %d arguments", len(e.Args))
		}
		return c.compileLike(e)
	case expr.OpCase:
		return c.compileCase(e)
	case expr.OpCast:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		if e.Type == nil || e.Type.Kind == types.Unknown {
			return nil, fmt.Errorf("expr: CAST to unresolved type %s", e.Type)
		}
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		conv, err := CastFunc(e.Args[0].Type, e.Type)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			v, err := x(row)
			if v == nil {
				return nil, err
			}
			r, e2 := conv(v)
			if e2 != nil {
				keep(&err, e2)
				return nil, err
			}
			return r, err
		}, nil
	case expr.OpCall:
		return c.compileCall(e)
	case expr.OpField:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		st := e.Args[0].Type
		idx := -1
		if st != nil {
			for i, f := range st.Fields {
				if f.Name == e.Name {
					idx = i
				}
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("expr: field %q not in %s", e.Name, st)
		}
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			v, err := x(row)
			if v == nil {
				return nil, err
			}
			s := v.(types.StructValue)
			if idx >= len(s) {
				return nil, err
			}
			return s[idx], err
		}, nil
	case expr.OpIndex:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		if split := e.Args[0]; split.Op == expr.OpCall && split.Func == "SPLIT" && len(split.Args) == 2 &&
			split.Args[0].Type != nil && split.Args[0].Type.Kind == types.String {
			return c.compileSplitIndex(split.Args[0], split.Args[1], e.Args[1])
		}
		args, err := c.compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			cv, err := args[0](row)
			if cv == nil {
				return nil, err
			}
			k, e2 := args[1](row)
			keep(&err, e2)
			if k == nil {
				return nil, err
			}
			switch x := cv.(type) {
			case []any:
				return element(x, toInt64(k)), err
			case *types.MapValue:
				v, _ := x.Get(k)
				return v, err
			}
			keep(&err, fmt.Errorf("cannot subscript %T", cv))
			return nil, err
		}, nil
	case expr.OpArray:
		args, err := c.compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			var err error
			out := make([]any, len(args))
			for i, a := range args {
				v, e2 := a(row)
				keep(&err, e2)
				out[i] = v
			}
			return out, err
		}, nil
	case expr.OpMap:
		if len(e.Args)%2 != 0 {
			return nil, fmt.Errorf("expr: MAP node has an odd number of arguments")
		}
		args, err := c.compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			var err error
			m := &types.MapValue{}
			for i := 0; i < len(args); i += 2 {
				k, e2 := args[i](row)
				keep(&err, e2)
				v, e2 := args[i+1](row)
				keep(&err, e2)
				if j := m.Index(k); j >= 0 {
					m.Values[j] = v
					continue
				}
				m.Keys = append(m.Keys, k)
				m.Values = append(m.Values, v)
			}
			return m, err
		}, nil
	case expr.OpStruct:
		if len(e.Names) != len(e.Args) {
			return nil, fmt.Errorf("expr: STRUCT node has %d names and %d arguments", len(e.Names), len(e.Args))
		}
		args, err := c.compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			var err error
			out := make(types.StructValue, len(args))
			for i, a := range args {
				v, e2 := a(row)
				keep(&err, e2)
				out[i] = v
			}
			return out, err
		}, nil
	}
	return nil, fmt.Errorf("expr: cannot compile %s node", e.Op)
}

func (c *compiler) compileCall(e *expr.Expr) (ArgFunc, error) {
	f, ok := LookupFunc(e.Func)
	if !ok {
		return nil, fmt.Errorf("expr: unknown function %q", e.Func)
	}
	ts := make([]*types.Type, len(e.Args))
	args := make([]ArgFunc, len(e.Args))
	var lambdas []*Lambda
	for i, a := range e.Args {
		ts[i] = a.Type
		if a.Op != expr.OpLambda {
			fn, err := c.compile(a)
			if err != nil {
				return nil, err
			}
			args[i] = fn
			continue
		}
		if f.BuildHigher == nil {
			return nil, fmt.Errorf("expr: function %s does not take lambda arguments", f.Name)
		}
		if lambdas == nil {
			lambdas = make([]*Lambda, len(e.Args))
		}
		l, err := c.compileLambda(a)
		if err != nil {
			return nil, err
		}
		lambdas[i] = l
	}
	var impl Impl
	var err error
	if f.BuildHigher != nil {
		if lambdas == nil {
			lambdas = make([]*Lambda, len(e.Args))
		}
		impl, err = f.BuildHigher(ts, e.Type, lambdas)
	} else {
		impl, err = f.Build(ts, e.Type)
	}
	if err != nil {
		return nil, err
	}
	return func(row []any) (any, error) { return impl(row, args) }, nil
}

func (c *compiler) compileLambda(e *expr.Expr) (*Lambda, error) {
	if err := arity(e, 1); err != nil {
		return nil, err
	}
	if e.Col != c.depth {
		return nil, fmt.Errorf("expr: lambda %s has its first slot at %d, want %d", e, e.Col, c.depth)
	}
	if len(e.Names) == 0 {
		return nil, fmt.Errorf("expr: lambda without parameters")
	}
	inner := &compiler{depth: c.depth + len(e.Names)}
	body, err := inner.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	return &Lambda{Params: len(e.Names), body: body}, nil
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	case types.Dec:
		return x.Float64()
	}
	return 0
}

func toDec(v any) types.Dec {
	switch x := v.(type) {
	case int32:
		return types.DecFromInt64(int64(x))
	case int64:
		return types.DecFromInt64(x)
	case types.Dec:
		return x
	case float64:
		d, _ := types.DecFromFloat64(x)
		return d
	}
	return types.Dec{}
}

// nullOperand returns the failure of an arithmetic node on a null operand:
// nil outside lambda bodies, where the result is simply null.
func (c *compiler) nullOperand(e *expr.Expr) error {
	if c.depth == 0 {
		return nil
	}
	return &nullOperandError{e: e}
}

func (c *compiler) compileNeg(e *expr.Expr) (ArgFunc, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	npe := c.nullOperand(e)
	return func(row []any) (any, error) {
		v, err := x(row)
		if v == nil {
			keep(&err, npe)
			return nil, err
		}
		switch n := v.(type) {
		case int32:
			return -n, err
		case int64:
			return -n, err
		case float64:
			return -n, err
		case types.Dec:
			return n.Neg(), err
		}
		keep(&err, fmt.Errorf("cannot negate %T", v))
		return nil, err
	}, nil
}

func (c *compiler) binaryArgs(e *expr.Expr) (ArgFunc, ArgFunc, error) {
	l, err := c.compile(e.Args[0])
	if err != nil {
		return nil, nil, err
	}
	r, err := c.compile(e.Args[1])
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

// eval2 evaluates both operands, skipping the right one when the left is
// null; err is the first failure of either.
func eval2(l, r ArgFunc, row []any) (a, b any, err error) {
	if a, err = l(row); a == nil {
		return nil, nil, err
	}
	b, e2 := r(row)
	keep(&err, e2)
	return a, b, err
}

func (c *compiler) compileArith(e *expr.Expr) (ArgFunc, error) {
	l, r, err := c.binaryArgs(e)
	if err != nil {
		return nil, err
	}
	if e.Type == nil {
		return nil, fmt.Errorf("expr: untyped %s node", e.Op)
	}
	npe := c.nullOperand(e)
	op := e.Op
	switch e.Type.Kind {
	case types.Int:
		return intArith(op, l, r, npe, func(v any) int32 { return v.(int32) }), nil
	case types.Bigint:
		return intArith(op, l, r, npe, toInt64), nil
	case types.Double:
		return func(row []any) (any, error) {
			a, b, err := eval2(l, r, row)
			if a == nil || b == nil {
				keep(&err, npe)
				return nil, err
			}
			x, y := toFloat(a), toFloat(b)
			switch op {
			case expr.OpAdd:
				return x + y, err
			case expr.OpSub:
				return x - y, err
			case expr.OpMul:
				return x * y, err
			case expr.OpDiv:
				return x / y, err
			}
			return math.Mod(x, y), err
		}, nil
	case types.Decimal:
		rt := e.Type
		return func(row []any) (any, error) {
			a, b, err := eval2(l, r, row)
			if a == nil || b == nil {
				keep(&err, npe)
				return nil, err
			}
			x, y := toDec(a), toDec(b)
			var d types.Dec
			var e2 error
			switch op {
			case expr.OpAdd:
				d = x.Add(y)
			case expr.OpSub:
				d = x.Sub(y)
			case expr.OpMul:
				d = x.Mul(y)
			case expr.OpDiv:
				d, e2 = x.Quo(y, rt.Scale)
			default:
				d, e2 = x.Rem(y)
			}
			if e2 != nil {
				keep(&err, ErrDivideByZero)
				return nil, err
			}
			return d.Rescale(rt.Scale), err
		}, nil
	}
	return nil, fmt.Errorf("expr: %s of type %s", e.Op, e.Type)
}

// compileStringPlus compiles + on strings, which ksqlDB runs as Java string
// concatenation: a null operand is written as the text null.
func (c *compiler) compileStringPlus(e *expr.Expr) (ArgFunc, error) {
	if e.Op != expr.OpAdd {
		return nil, fmt.Errorf("expr: %s of type %s", e.Op, e.Type)
	}
	l, r, err := c.binaryArgs(e)
	if err != nil {
		return nil, err
	}
	str := func(v any) string {
		if v == nil {
			return "null"
		}
		return v.(string)
	}
	return func(row []any) (any, error) {
		a, err := l(row)
		b, e2 := r(row)
		keep(&err, e2)
		return str(a) + str(b), err
	}, nil
}

// compileConcat compiles ||, which ksqlDB runs as CONCAT: null operands are
// skipped.
func (c *compiler) compileConcat(e *expr.Expr) (ArgFunc, error) {
	l, r, err := c.binaryArgs(e)
	if err != nil {
		return nil, err
	}
	if e.Type != nil && e.Type.Kind == types.Bytes {
		return func(row []any) (any, error) {
			a, err := l(row)
			b, e2 := r(row)
			keep(&err, e2)
			x, _ := a.([]byte)
			y, _ := b.([]byte)
			out := make([]byte, 0, len(x)+len(y))
			return append(append(out, x...), y...), err
		}, nil
	}
	return func(row []any) (any, error) {
		a, err := l(row)
		b, e2 := r(row)
		keep(&err, e2)
		x, _ := a.(string)
		y, _ := b.(string)
		return x + y, err
	}, nil
}

// cmpFunc returns a comparison for non-null values of types l and r,
// specialised at compile time for the common cases.
func cmpFunc(l, r *types.Type) func(a, b any) int {
	switch {
	case l.Kind == types.String && r.Kind == types.String:
		return func(a, b any) int { return strings.Compare(a.(string), b.(string)) }
	case (l.Kind == types.Int || l.Kind == types.Bigint) && (r.Kind == types.Int || r.Kind == types.Bigint):
		return func(a, b any) int {
			x, y := toInt64(a), toInt64(b)
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	return func(a, b any) int {
		c, _ := types.Compare(a, b)
		return c
	}
}

// equalFunc returns the equality of non-null values of types l and r as =
// and IN test it: numbers by value, arrays element by element, maps by
// their entries and structs field by field matched by name, a field missing
// from one side counting as null. Nulls inside compound values are equal
// to each other.
func equalFunc(l, r *types.Type) func(a, b any) bool {
	if l == nil || r == nil {
		return types.Equal
	}
	switch {
	case l.Kind == types.Struct && r.Kind == types.Struct:
		type pair struct {
			l, r int
			eq   func(a, b any) bool
		}
		var pairs []pair
		for i, f := range l.Fields {
			p := pair{l: i, r: -1, eq: types.Equal}
			for j, g := range r.Fields {
				if g.Name == f.Name {
					p.r, p.eq = j, equalFunc(f.Type, g.Type)
					break
				}
			}
			pairs = append(pairs, p)
		}
		for j, g := range r.Fields {
			found := false
			for _, f := range l.Fields {
				if f.Name == g.Name {
					found = true
					break
				}
			}
			if !found {
				pairs = append(pairs, pair{l: -1, r: j, eq: types.Equal})
			}
		}
		field := func(s types.StructValue, i int) any {
			if i < 0 || i >= len(s) {
				return nil
			}
			return s[i]
		}
		return func(a, b any) bool {
			x, y := a.(types.StructValue), b.(types.StructValue)
			for _, p := range pairs {
				u, v := field(x, p.l), field(y, p.r)
				if u == nil || v == nil {
					if u != nil || v != nil {
						return false
					}
					continue
				}
				if !p.eq(u, v) {
					return false
				}
			}
			return true
		}
	case l.Kind == types.Array && r.Kind == types.Array:
		eq := equalFunc(l.Elem, r.Elem)
		return func(a, b any) bool {
			x, y := a.([]any), b.([]any)
			if len(x) != len(y) {
				return false
			}
			for i := range x {
				if x[i] == nil || y[i] == nil {
					if x[i] != nil || y[i] != nil {
						return false
					}
					continue
				}
				if !eq(x[i], y[i]) {
					return false
				}
			}
			return true
		}
	case l.Kind == types.Map && r.Kind == types.Map:
		eq := equalFunc(l.Elem, r.Elem)
		return func(a, b any) bool {
			x, y := a.(*types.MapValue), b.(*types.MapValue)
			if len(x.Keys) != len(y.Keys) {
				return false
			}
			for i, k := range x.Keys {
				j := y.Index(k)
				if j < 0 {
					return false
				}
				u, v := x.Values[i], y.Values[j]
				if u == nil || v == nil {
					if u != nil || v != nil {
						return false
					}
					continue
				}
				if !eq(u, v) {
					return false
				}
			}
			return true
		}
	}
	return types.Equal
}

func (c *compiler) compileCompare(e *expr.Expr) (ArgFunc, error) {
	l, r, err := c.binaryArgs(e)
	if err != nil {
		return nil, err
	}
	lt, rt := e.Args[0].Type, e.Args[1].Type
	if lt == nil || rt == nil {
		return nil, fmt.Errorf("expr: untyped comparison operand")
	}
	op := e.Op
	switch lt.Kind {
	case types.Array, types.Map, types.Struct:
		ne := op == expr.OpNe
		eq := equalFunc(lt, rt)
		return func(row []any) (any, error) {
			a, b, err := eval2(l, r, row)
			if a == nil || b == nil {
				return false, err
			}
			return eq(a, b) != ne, err
		}, nil
	}
	cmp := cmpFunc(lt, rt)
	return func(row []any) (any, error) {
		a, b, err := eval2(l, r, row)
		if a == nil || b == nil {
			// ksqlDB: a comparison with a null operand is false.
			return false, err
		}
		c := cmp(a, b)
		switch op {
		case expr.OpEq:
			return c == 0, err
		case expr.OpNe:
			return c != 0, err
		case expr.OpLt:
			return c < 0, err
		case expr.OpLe:
			return c <= 0, err
		case expr.OpGt:
			return c > 0, err
		}
		return c >= 0, err
	}, nil
}

func (c *compiler) compileLogic(e *expr.Expr) (ArgFunc, error) {
	l, r, err := c.binaryArgs(e)
	if err != nil {
		return nil, err
	}
	if e.Op == expr.OpAnd {
		return func(row []any) (any, error) {
			a, err := l(row)
			if a == false {
				return false, err
			}
			b, e2 := r(row)
			keep(&err, e2)
			if b == false {
				return false, err
			}
			if a == nil || b == nil {
				return nil, err
			}
			return true, err
		}, nil
	}
	return func(row []any) (any, error) {
		a, err := l(row)
		if a == true {
			return true, err
		}
		b, e2 := r(row)
		keep(&err, e2)
		if b == true {
			return true, err
		}
		if a == nil || b == nil {
			return nil, err
		}
		return false, err
	}, nil
}

func (c *compiler) compileBetween(e *expr.Expr) (ArgFunc, error) {
	args, err := c.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	x, lo, hi := e.Args[0].Type, e.Args[1].Type, e.Args[2].Type
	if x == nil || lo == nil || hi == nil {
		return nil, fmt.Errorf("expr: untyped BETWEEN operand")
	}
	c1, c2 := cmpFunc(x, lo), cmpFunc(x, hi)
	not := e.Op == expr.OpNotBetween
	return func(row []any) (any, error) {
		v, err := args[0](row)
		a, e2 := args[1](row)
		keep(&err, e2)
		b, e2 := args[2](row)
		keep(&err, e2)
		in := v != nil && a != nil && b != nil && c1(v, a) >= 0 && c2(v, b) <= 0
		return in != not, err
	}, nil
}

func (c *compiler) compileCase(e *expr.Expr) (ArgFunc, error) {
	args, err := c.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	n := len(args)
	var elseFn ArgFunc
	if e.Else {
		if n == 0 {
			return nil, fmt.Errorf("expr: CASE without arguments")
		}
		n--
		elseFn = args[n]
	}
	if n%2 != 0 {
		return nil, fmt.Errorf("expr: CASE has an odd number of WHEN/THEN arguments")
	}
	return func(row []any) (any, error) {
		var err error
		for i := 0; i < n; i += 2 {
			cond, e2 := args[i](row)
			keep(&err, e2)
			if cond == true {
				v, e2 := args[i+1](row)
				keep(&err, e2)
				return v, err
			}
		}
		if elseFn != nil {
			v, e2 := elseFn(row)
			keep(&err, e2)
			return v, err
		}
		return nil, err
	}, nil
}

func (c *compiler) compileLike(e *expr.Expr) (ArgFunc, error) {
	args, err := c.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	esc := rune(-1)
	if len(e.Args) == 3 {
		s, _ := e.Args[2].Value.(string)
		esc, _ = utf8.DecodeRuneInString(s)
	}
	not := e.Op == expr.OpNotLike
	var fixed []likeToken
	if p := e.Args[1]; p.Op == expr.OpLiteral && p.Value != nil {
		fixed = parseLike(p.Value.(string), esc)
	}
	return func(row []any) (any, error) {
		v, err := args[0](row)
		if v == nil {
			return nil, err
		}
		toks := fixed
		if toks == nil {
			p, e2 := args[1](row)
			keep(&err, e2)
			if p == nil {
				return nil, err
			}
			toks = parseLike(p.(string), esc)
		}
		return likeMatch(toks, v.(string)) != not, err
	}, nil
}

type likeToken struct {
	kind byte // 'c' literal rune, '_' any rune, '%' any sequence
	r    rune
}

func parseLike(p string, esc rune) []likeToken {
	toks := make([]likeToken, 0, len(p))
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == esc && i+1 < len(rs):
			i++
			toks = append(toks, likeToken{'c', rs[i]})
		case c == '%':
			if len(toks) == 0 || toks[len(toks)-1].kind != '%' {
				toks = append(toks, likeToken{kind: '%'})
			}
		case c == '_':
			toks = append(toks, likeToken{kind: '_'})
		default:
			toks = append(toks, likeToken{'c', c})
		}
	}
	return toks
}

// likeMatch matches s against the tokens with the usual greedy wildcard
// algorithm, backtracking to the last % only.
func likeMatch(toks []likeToken, s string) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		r, size := utf8.DecodeRuneInString(s[si:])
		if ti < len(toks) {
			t := toks[ti]
			switch {
			case t.kind == '%':
				starT, starS = ti, si
				ti++
				continue
			case t.kind == '_' || t.r == r:
				ti++
				si += size
				continue
			}
		}
		if starT < 0 {
			return false
		}
		_, sz := utf8.DecodeRuneInString(s[starS:])
		starS += sz
		si = starS
		ti = starT + 1
	}
	for ti < len(toks) && toks[ti].kind == '%' {
		ti++
	}
	return ti == len(toks)
}

// intArith is integer arithmetic over INTEGER or BIGINT operands (conv
// reads an operand): Java's wrapping semantics, null for a null operand and
// for division or modulo by zero.
func intArith[T int32 | int64](op expr.Op, l, r ArgFunc, npe error, conv func(any) T) ArgFunc {
	return func(row []any) (any, error) {
		a, b, err := eval2(l, r, row)
		if a == nil || b == nil {
			keep(&err, npe)
			return nil, err
		}
		x, y := conv(a), conv(b)
		switch op {
		case expr.OpAdd:
			return x + y, err
		case expr.OpSub:
			return x - y, err
		case expr.OpMul:
			return x * y, err
		}
		if y == 0 {
			keep(&err, ErrDivideByZero)
			return nil, err
		}
		if op == expr.OpDiv {
			return x / y, err
		}
		return x % y, err
	}
}

// compileSplitIndex compiles SPLIT(s, sep)[i] of strings: the i-th piece
// found in place, without the array of every piece.
func (c *compiler) compileSplitIndex(str, sep, index *expr.Expr) (func([]any) (any, error), error) {
	args, err := c.compileArgs([]*expr.Expr{str, sep, index})
	if err != nil {
		return nil, err
	}
	return func(row []any) (any, error) {
		sv, err := args[0](row)
		dv, e2 := args[1](row)
		keep(&err, e2)
		if sv == nil || dv == nil {
			return nil, err
		}
		k, e3 := args[2](row)
		keep(&err, e3)
		if k == nil {
			return nil, err
		}
		s, d := sv.(string), dv.(string)
		if d == "" {
			return element(splitString(s, d), toInt64(k)), err
		}
		p, ok := splitPiece(s, d, toInt64(k))
		if !ok {
			return nil, err
		}
		return p, err
	}, nil
}

// splitPiece is strings.Split(s, sep)[i-1] for a non-empty sep, i
// counted from the end when negative (-1 the last piece); false when
// there is no such piece.
func splitPiece(s, sep string, i int64) (string, bool) {
	if i < 0 {
		i += int64(strings.Count(s, sep)) + 2
	}
	if i < 1 {
		return "", false
	}
	for ; i > 1; i-- {
		j := strings.Index(s, sep)
		if j < 0 {
			return "", false
		}
		s = s[j+len(sep):]
	}
	if j := strings.Index(s, sep); j >= 0 {
		s = s[:j]
	}
	return s, true
}

// element is a[i] of SQL: 1-based, negative counting from the end, null
// out of range.
func element(a []any, i int64) any {
	if i < 0 {
		i += int64(len(a)) + 1
	}
	if i < 1 || i > int64(len(a)) {
		return nil
	}
	return a[i-1]
}
