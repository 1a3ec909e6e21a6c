package expr

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

// Evaluator evaluates a compiled expression over rows laid out as the scope
// it was bound against. Eval is safe for concurrent use and does not retain
// row. An error means the expression failed on this row (division by zero,
// a failed CAST, a function error); ksqlDB then uses null for the
// expression and writes the error to the processing log.
type Evaluator interface {
	Eval(row []any) (any, error)
}

// ArgFunc evaluates one argument of a call over a row.
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

// Compile turns a bound expression into an Evaluator. It fails only on a
// malformed tree (for example one decoded from a corrupt plan).
func Compile(e *Expr) (Evaluator, error) {
	fn, err := compile(e)
	if err != nil {
		return nil, err
	}
	return evaluator{fn}, nil
}

func compileArgs(es []*Expr) ([]ArgFunc, error) {
	out := make([]ArgFunc, len(es))
	for i, e := range es {
		f, err := compile(e)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

func arity(e *Expr, n int) error {
	if len(e.Args) != n {
		return fmt.Errorf("expr: %s node has %d arguments, want %d", e.Op, len(e.Args), n)
	}
	return nil
}

func compile(e *Expr) (ArgFunc, error) {
	if e == nil {
		return nil, errors.New("expr: nil node")
	}
	switch e.Op {
	case OpColumn:
		i := e.Col
		if i < 0 {
			return nil, fmt.Errorf("expr: negative column index %d", i)
		}
		return func(row []any) (any, error) {
			if i >= len(row) {
				return nil, fmt.Errorf("row has %d columns; column %d expected", len(row), i)
			}
			return row[i], nil
		}, nil
	case OpLiteral:
		v := e.Value
		return func([]any) (any, error) { return v, nil }, nil
	case OpNot:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		x, err := compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			v, err := x(row)
			if v == nil || err != nil {
				return nil, err
			}
			return !v.(bool), nil
		}, nil
	case OpNeg:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		return compileNeg(e)
	case OpAdd, OpSub, OpMul, OpDiv, OpMod:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		return compileArith(e)
	case OpConcat:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		return compileConcat(e)
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		return compileCompare(e)
	case OpAnd, OpOr:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		return compileLogic(e)
	case OpIsNull, OpIsNotNull:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		x, err := compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		want := e.Op == OpIsNull
		return func(row []any) (any, error) {
			v, err := x(row)
			if err != nil {
				return nil, err
			}
			return (v == nil) == want, nil
		}, nil
	case OpIsDistinct, OpIsNotDistinct:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		args, err := compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		distinct := e.Op == OpIsDistinct
		return func(row []any) (any, error) {
			a, err := args[0](row)
			if err != nil {
				return nil, err
			}
			b, err := args[1](row)
			if err != nil {
				return nil, err
			}
			return !types.Equal(a, b) == distinct, nil
		}, nil
	case OpIn, OpNotIn:
		if len(e.Args) < 2 {
			return nil, fmt.Errorf("expr: IN node needs at least 2 arguments")
		}
		args, err := compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		not := e.Op == OpNotIn
		return func(row []any) (any, error) {
			x, err := args[0](row)
			if err != nil {
				return nil, err
			}
			found := false
			if x != nil {
				for _, a := range args[1:] {
					v, err := a(row)
					if err != nil {
						return nil, err
					}
					if v != nil && types.Equal(x, v) {
						found = true
						break
					}
				}
			}
			return found != not, nil
		}, nil
	case OpBetween, OpNotBetween:
		if err := arity(e, 3); err != nil {
			return nil, err
		}
		return compileBetween(e)
	case OpLike, OpNotLike:
		if len(e.Args) != 2 && len(e.Args) != 3 {
			return nil, fmt.Errorf("expr: LIKE node has %d arguments", len(e.Args))
		}
		return compileLike(e)
	case OpCase:
		return compileCase(e)
	case OpCast:
		if err := arity(e, 1); err != nil {
			return nil, err
		}
		x, err := compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		c, err := castFunc(e.Args[0].Type, e.Type)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			v, err := x(row)
			if v == nil || err != nil {
				return nil, err
			}
			return c(v)
		}, nil
	case OpCall:
		f, ok := LookupFunc(e.Func)
		if !ok {
			return nil, fmt.Errorf("expr: unknown function %q", e.Func)
		}
		args, err := compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		ts := make([]*types.Type, len(e.Args))
		for i, a := range e.Args {
			ts[i] = a.Type
		}
		impl, err := f.Build(ts, e.Type)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) { return impl(row, args) }, nil
	case OpField:
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
		x, err := compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			v, err := x(row)
			if v == nil || err != nil {
				return nil, err
			}
			s := v.(types.StructValue)
			if idx >= len(s) {
				return nil, nil
			}
			return s[idx], nil
		}, nil
	case OpIndex:
		if err := arity(e, 2); err != nil {
			return nil, err
		}
		args, err := compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			c, err := args[0](row)
			if c == nil || err != nil {
				return nil, err
			}
			k, err := args[1](row)
			if k == nil || err != nil {
				return nil, err
			}
			switch x := c.(type) {
			case []any:
				i := toInt64(k)
				if i < 0 {
					i += int64(len(x)) + 1
				}
				if i < 1 || i > int64(len(x)) {
					return nil, nil
				}
				return x[i-1], nil
			case *types.MapValue:
				v, _ := x.Get(k)
				return v, nil
			}
			return nil, fmt.Errorf("cannot subscript %T", c)
		}, nil
	case OpArray:
		args, err := compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			out := make([]any, len(args))
			for i, a := range args {
				v, err := a(row)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}, nil
	case OpMap:
		if len(e.Args)%2 != 0 {
			return nil, fmt.Errorf("expr: MAP node has an odd number of arguments")
		}
		args, err := compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			m := &types.MapValue{}
			for i := 0; i < len(args); i += 2 {
				k, err := args[i](row)
				if err != nil {
					return nil, err
				}
				v, err := args[i+1](row)
				if err != nil {
					return nil, err
				}
				if j := m.Index(k); j >= 0 {
					m.Values[j] = v
					continue
				}
				m.Keys = append(m.Keys, k)
				m.Values = append(m.Values, v)
			}
			return m, nil
		}, nil
	case OpStruct:
		if len(e.Names) != len(e.Args) {
			return nil, fmt.Errorf("expr: STRUCT node has %d names and %d arguments", len(e.Names), len(e.Args))
		}
		args, err := compileArgs(e.Args)
		if err != nil {
			return nil, err
		}
		return func(row []any) (any, error) {
			out := make(types.StructValue, len(args))
			for i, a := range args {
				v, err := a(row)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}, nil
	}
	return nil, fmt.Errorf("expr: cannot compile %s node", e.Op)
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

func compileNeg(e *Expr) (ArgFunc, error) {
	x, err := compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	return func(row []any) (any, error) {
		v, err := x(row)
		if v == nil || err != nil {
			return nil, err
		}
		switch n := v.(type) {
		case int32:
			return -n, nil
		case int64:
			return -n, nil
		case float64:
			return -n, nil
		case types.Dec:
			return n.Neg(), nil
		}
		return nil, fmt.Errorf("cannot negate %T", v)
	}, nil
}

func binaryArgs(e *Expr) (ArgFunc, ArgFunc, error) {
	l, err := compile(e.Args[0])
	if err != nil {
		return nil, nil, err
	}
	r, err := compile(e.Args[1])
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

// eval2 evaluates both operands; done is true when the result is already
// decided (an error, or null because an operand is null).
func eval2(l, r ArgFunc, row []any) (a, b any, done bool, err error) {
	if a, err = l(row); a == nil || err != nil {
		return nil, nil, true, err
	}
	if b, err = r(row); b == nil || err != nil {
		return nil, nil, true, err
	}
	return a, b, false, nil
}

func compileArith(e *Expr) (ArgFunc, error) {
	l, r, err := binaryArgs(e)
	if err != nil {
		return nil, err
	}
	if e.Type == nil {
		return nil, fmt.Errorf("expr: untyped %s node", e.Op)
	}
	op := e.Op
	switch e.Type.Kind {
	case types.Int:
		return func(row []any) (any, error) {
			a, b, done, err := eval2(l, r, row)
			if done {
				return nil, err
			}
			x, y := a.(int32), b.(int32)
			switch op {
			case OpAdd:
				return x + y, nil
			case OpSub:
				return x - y, nil
			case OpMul:
				return x * y, nil
			case OpDiv:
				if y == 0 {
					return nil, ErrDivideByZero
				}
				return x / y, nil
			}
			if y == 0 {
				return nil, ErrDivideByZero
			}
			return x % y, nil
		}, nil
	case types.Bigint:
		return func(row []any) (any, error) {
			a, b, done, err := eval2(l, r, row)
			if done {
				return nil, err
			}
			x, y := toInt64(a), toInt64(b)
			switch op {
			case OpAdd:
				return x + y, nil
			case OpSub:
				return x - y, nil
			case OpMul:
				return x * y, nil
			case OpDiv:
				if y == 0 {
					return nil, ErrDivideByZero
				}
				return x / y, nil
			}
			if y == 0 {
				return nil, ErrDivideByZero
			}
			return x % y, nil
		}, nil
	case types.Double:
		return func(row []any) (any, error) {
			a, b, done, err := eval2(l, r, row)
			if done {
				return nil, err
			}
			x, y := toFloat(a), toFloat(b)
			switch op {
			case OpAdd:
				return x + y, nil
			case OpSub:
				return x - y, nil
			case OpMul:
				return x * y, nil
			case OpDiv:
				return x / y, nil
			}
			return math.Mod(x, y), nil
		}, nil
	case types.Decimal:
		rt := e.Type
		return func(row []any) (any, error) {
			a, b, done, err := eval2(l, r, row)
			if done {
				return nil, err
			}
			x, y := toDec(a), toDec(b)
			var d types.Dec
			switch op {
			case OpAdd:
				d = x.Add(y)
			case OpSub:
				d = x.Sub(y)
			case OpMul:
				d = x.Mul(y)
			case OpDiv:
				if d, err = x.Quo(y, rt.Scale); err != nil {
					return nil, ErrDivideByZero
				}
			default:
				if d, err = x.Rem(y); err != nil {
					return nil, ErrDivideByZero
				}
			}
			return d.Rescale(rt.Scale), nil
		}, nil
	}
	return nil, fmt.Errorf("expr: %s of type %s", e.Op, e.Type)
}

func compileConcat(e *Expr) (ArgFunc, error) {
	l, r, err := binaryArgs(e)
	if err != nil {
		return nil, err
	}
	return func(row []any) (any, error) {
		a, b, done, err := eval2(l, r, row)
		if done {
			return nil, err
		}
		switch x := a.(type) {
		case string:
			return x + b.(string), nil
		case []byte:
			out := make([]byte, 0, len(x)+len(b.([]byte)))
			return append(append(out, x...), b.([]byte)...), nil
		}
		return nil, fmt.Errorf("cannot concatenate %T", a)
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
	case l.Kind == types.Double && r.Kind == types.Double:
		return func(a, b any) int {
			c, _ := types.Compare(a, b)
			return c
		}
	}
	return func(a, b any) int {
		c, _ := types.Compare(a, b)
		return c
	}
}

func compileCompare(e *Expr) (ArgFunc, error) {
	l, r, err := binaryArgs(e)
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
		ne := op == OpNe
		return func(row []any) (any, error) {
			a, b, done, err := eval2(l, r, row)
			if done {
				return false, err
			}
			return types.Equal(a, b) != ne, nil
		}, nil
	}
	cmp := cmpFunc(lt, rt)
	return func(row []any) (any, error) {
		a, b, done, err := eval2(l, r, row)
		if done {
			// ksqlDB: a comparison with a null operand is false.
			if err != nil {
				return nil, err
			}
			return false, nil
		}
		c := cmp(a, b)
		switch op {
		case OpEq:
			return c == 0, nil
		case OpNe:
			return c != 0, nil
		case OpLt:
			return c < 0, nil
		case OpLe:
			return c <= 0, nil
		case OpGt:
			return c > 0, nil
		}
		return c >= 0, nil
	}, nil
}

func compileLogic(e *Expr) (ArgFunc, error) {
	l, r, err := binaryArgs(e)
	if err != nil {
		return nil, err
	}
	if e.Op == OpAnd {
		return func(row []any) (any, error) {
			a, err := l(row)
			if err != nil {
				return nil, err
			}
			if a == false {
				return false, nil
			}
			b, err := r(row)
			if err != nil {
				return nil, err
			}
			if b == false {
				return false, nil
			}
			if a == nil || b == nil {
				return nil, nil
			}
			return true, nil
		}, nil
	}
	return func(row []any) (any, error) {
		a, err := l(row)
		if err != nil {
			return nil, err
		}
		if a == true {
			return true, nil
		}
		b, err := r(row)
		if err != nil {
			return nil, err
		}
		if b == true {
			return true, nil
		}
		if a == nil || b == nil {
			return nil, nil
		}
		return false, nil
	}, nil
}

func compileBetween(e *Expr) (ArgFunc, error) {
	args, err := compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	x, lo, hi := e.Args[0].Type, e.Args[1].Type, e.Args[2].Type
	if x == nil || lo == nil || hi == nil {
		return nil, fmt.Errorf("expr: untyped BETWEEN operand")
	}
	c1, c2 := cmpFunc(x, lo), cmpFunc(x, hi)
	not := e.Op == OpNotBetween
	return func(row []any) (any, error) {
		v, err := args[0](row)
		if err != nil {
			return nil, err
		}
		a, err := args[1](row)
		if err != nil {
			return nil, err
		}
		b, err := args[2](row)
		if err != nil {
			return nil, err
		}
		in := v != nil && a != nil && b != nil && c1(v, a) >= 0 && c2(v, b) <= 0
		return in != not, nil
	}, nil
}

func compileCase(e *Expr) (ArgFunc, error) {
	args, err := compileArgs(e.Args)
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
		for i := 0; i < n; i += 2 {
			c, err := args[i](row)
			if err != nil {
				return nil, err
			}
			if c == true {
				return args[i+1](row)
			}
		}
		if elseFn != nil {
			return elseFn(row)
		}
		return nil, nil
	}, nil
}

func compileLike(e *Expr) (ArgFunc, error) {
	args, err := compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	esc := rune(-1)
	if len(e.Args) == 3 {
		s, _ := e.Args[2].Value.(string)
		esc, _ = utf8.DecodeRuneInString(s)
	}
	not := e.Op == OpNotLike
	var fixed []likeToken
	if p := e.Args[1]; p.Op == OpLiteral && p.Value != nil {
		fixed = parseLike(p.Value.(string), esc)
	}
	return func(row []any) (any, error) {
		v, err := args[0](row)
		if v == nil || err != nil {
			return nil, err
		}
		toks := fixed
		if toks == nil {
			p, err := args[1](row)
			if p == nil || err != nil {
				return nil, err
			}
			toks = parseLike(p.(string), esc)
		}
		return likeMatch(toks, v.(string)) != not, nil
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
