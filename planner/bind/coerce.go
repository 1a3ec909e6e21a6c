package bind

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// coercionError reports that two types of a user-supplied list have no
// common type. Constructors catch it to report the failure for the whole
// constructor instead of for its element.
type coercionError struct{ msg string }

func (e *coercionError) Error() string { return e.msg }

func coercionFailure(e *expr.Expr, source, target *types.Type) *coercionError {
	return &coercionError{msg: fmt.Sprintf("operator does not exist: %s = %s (%s)\nHint: You might need to add explicit type casts.", target, source, e)}
}

func invalidSyntax(value string, target *types.Type) error {
	return fmt.Errorf("invalid input syntax for type %s: %q.", eval.KindName(target), value)
}

// coerceList converts the user-supplied expressions es (the value and list
// of an IN predicate, the elements of an ARRAY constructor, the keys or the
// values of a MAP constructor) to their common type, as ksqlDB does: the
// common type is resolved left to right, numeric types widen, STRING
// literals are parsed as the numeric or BOOLEAN type they meet, other
// literals may become STRING, STRUCT types merge their fields, and
// constructors are resolved element by element. Literals are converted in
// place; other expressions are wrapped in a CAST. The result is nil when
// every element is an untyped NULL.
func coerceList(pos ast.Pos, es []*expr.Expr) (*types.Type, error) {
	var common *types.Type
	for _, e := range es {
		t, err := resolveCommon(e, common)
		if err != nil {
			return nil, errorf(pos, "%v", err)
		}
		common = t
	}
	if common == nil {
		return nil, nil
	}
	for i, e := range es {
		c, err := convertCommon(e, common)
		if err != nil {
			return nil, errorf(pos, "%v", err)
		}
		es[i] = c
	}
	return common, nil
}

func resolveCommon(e *expr.Expr, target *types.Type) (*types.Type, error) {
	if target == nil {
		return e.Type, nil
	}
	if e.Type == nil || e.Op == expr.OpLiteral && e.Value == nil {
		return target, nil
	}
	switch e.Op {
	case expr.OpArray:
		if target.Kind != types.Array {
			return nil, coercionFailure(e, e.Type, target)
		}
		et, err := resolveElems(target.Elem, e.Args)
		if err != nil {
			return nil, wrapCoercion(err, e, target)
		}
		return types.ArrayOf(et), nil
	case expr.OpMap:
		if target.Kind != types.Map {
			return nil, coercionFailure(e, e.Type, target)
		}
		keys, vals := mapArgs(e)
		kt, err := resolveElems(target.Key, keys)
		if err != nil {
			return nil, wrapCoercion(err, e, target)
		}
		vt, err := resolveElems(target.Elem, vals)
		if err != nil {
			return nil, wrapCoercion(err, e, target)
		}
		return types.MapOf(kt, vt), nil
	case expr.OpStruct:
		if target.Kind != types.Struct {
			return nil, coercionFailure(e, e.Type, target)
		}
		t, err := resolveStruct(e, target)
		if err != nil {
			return nil, wrapCoercion(err, e, target)
		}
		return t, nil
	}
	if s, ok := e.Value.(string); ok && e.Op == expr.OpLiteral && e.Type.Kind == types.String {
		if target.IsNumeric() {
			return numericFromString(s, target)
		}
		if target.Kind == types.Boolean {
			if _, ok := parseBoolLax(s); !ok {
				return nil, invalidSyntax(s, target)
			}
			return target, nil
		}
	}
	lax := e.Op == expr.OpLiteral
	if t, ok := canCoerce(e.Type, target, lax); ok {
		return t, nil
	}
	if t, ok := canCoerce(target, e.Type, lax); ok {
		return t, nil
	}
	return nil, coercionFailure(e, e.Type, target)
}

func wrapCoercion(err error, e *expr.Expr, target *types.Type) error {
	var ce *coercionError
	if errors.As(err, &ce) {
		return coercionFailure(e, e.Type, target)
	}
	return err
}

func mapArgs(e *expr.Expr) (keys, vals []*expr.Expr) {
	for i := 0; i+1 < len(e.Args); i += 2 {
		keys = append(keys, e.Args[i])
		vals = append(vals, e.Args[i+1])
	}
	return keys, vals
}

// resolveElems resolves the common type of the elements es of a
// constructor compared with elements of type target.
func resolveElems(target *types.Type, es []*expr.Expr) (*types.Type, error) {
	common := target
	for _, e := range es {
		t, err := resolveCommon(e, common)
		if err != nil {
			return nil, err
		}
		common = t
	}
	return common, nil
}

// resolveStruct merges the fields of the STRUCT constructor e into those
// of target: target's fields first, then the constructor's other fields.
func resolveStruct(e *expr.Expr, target *types.Type) (*types.Type, error) {
	fields := append([]types.Field(nil), target.Fields...)
	for i, a := range e.Args {
		found := false
		for j, f := range fields {
			if f.Name == e.Names[i] {
				t, err := resolveCommon(a, f.Type)
				if err != nil {
					return nil, err
				}
				fields[j].Type = t
				found = true
				break
			}
		}
		if !found {
			fields = append(fields, types.Field{Name: e.Names[i], Type: a.Type})
		}
	}
	return types.StructOf(fields...), nil
}

// numericFromString resolves the common type of the numeric type target
// and the number in the STRING literal s.
func numericFromString(s string, target *types.Type) (*types.Type, error) {
	src, ok := stringNumericType(s)
	if !ok {
		return nil, invalidSyntax(s, target)
	}
	switch {
	case target.Kind == types.Double:
		return types.DoubleType, nil
	case src.Kind == types.Decimal || target.Kind == types.Decimal:
		return widenDecimal(src, target), nil
	case src.Kind == types.Int || target.Kind == types.Bigint:
		return target, nil
	}
	return src, nil
}

// stringNumericType returns the type of the number written in s: INTEGER
// or BIGINT for integers in range, else the DECIMAL holding it.
func stringNumericType(s string) (*types.Type, bool) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, false
	}
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant = t[:i]
		e := t[i+1:]
		e = strings.TrimPrefix(e, "+")
		n, ok := new(big.Int).SetString(e, 10)
		if !ok || !n.IsInt64() || n.Int64() > math.MaxInt32 || n.Int64() < math.MinInt32 {
			return nil, false
		}
		exp = int(n.Int64())
	}
	neg := false
	switch {
	case strings.HasPrefix(mant, "-"):
		neg, mant = true, mant[1:]
	case strings.HasPrefix(mant, "+"):
		mant = mant[1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if intPart == "" && frac == "" {
		return nil, false
	}
	digits := intPart + frac
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	scale := len(frac) - exp
	unscaled, _ := new(big.Int).SetString(digits, 10)
	if neg {
		unscaled.Neg(unscaled)
	}
	if !strings.ContainsAny(s, ".eE") && scale == 0 {
		if unscaled.IsInt64() {
			n := unscaled.Int64()
			if n > math.MinInt32 && n < math.MaxInt32 {
				return types.IntType, true
			}
			if n > math.MinInt64 && n < math.MaxInt64 {
				return types.BigintType, true
			}
		}
	}
	if scale < 0 {
		unscaled.Mul(unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
		scale = 0
	}
	prec := len(new(big.Int).Abs(unscaled).String())
	if unscaled.Sign() == 0 {
		prec = 1
	}
	one := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	if new(big.Int).Abs(unscaled).Cmp(one) < 0 {
		return types.DecimalOf(scale+1, scale), true
	}
	return types.DecimalOf(prec, scale), true
}

// widenDecimal returns the DECIMAL type holding values of both a and b,
// INTEGER and BIGINT counting as DECIMAL(10, 0) and DECIMAL(19, 0).
func widenDecimal(a, b *types.Type) *types.Type {
	x, y := expr.AsDecimal(a), expr.AsDecimal(b)
	s := max(x.Scale, y.Scale)
	return types.DecimalOf(max(x.Precision-x.Scale, y.Precision-y.Scale)+s, s)
}

// canCoerce reports whether values of type from can be coerced to type
// to, and the type that holds both: numeric widening, STRING to the
// temporal types and BYTES, and element-wise for ARRAY, MAP and STRUCT.
// lax, used for literals, also allows STRING to and from BOOLEAN and the
// numeric types, and the temporal types to STRING.
func canCoerce(from, to *types.Type, lax bool) (*types.Type, bool) {
	switch from.Kind {
	case types.Array:
		if to.Kind != types.Array {
			return nil, false
		}
		e, ok := canCoerce(from.Elem, to.Elem, lax)
		if !ok {
			return nil, false
		}
		return types.ArrayOf(e), true
	case types.Map:
		if to.Kind != types.Map {
			return nil, false
		}
		k, ok := canCoerce(from.Key, to.Key, lax)
		if !ok {
			return nil, false
		}
		v, ok := canCoerce(from.Elem, to.Elem, lax)
		if !ok {
			return nil, false
		}
		return types.MapOf(k, v), true
	case types.Struct:
		if to.Kind != types.Struct {
			return nil, false
		}
		fields := append([]types.Field(nil), to.Fields...)
		for _, f := range from.Fields {
			found := false
			for j, g := range fields {
				if g.Name == f.Name {
					t, ok := canCoerce(f.Type, g.Type, lax)
					if !ok {
						return nil, false
					}
					fields[j].Type = t
					found = true
					break
				}
			}
			if !found {
				fields = append(fields, f)
			}
		}
		return types.StructOf(fields...), true
	}
	numeric := from.Kind == types.Int || from.Kind == types.Bigint || from.Kind == types.Decimal
	switch {
	case from.Kind == to.Kind && from.Kind != types.Decimal:
		return to, true
	case to.Kind == types.Bigint && from.Kind == types.Int:
		return to, true
	case to.Kind == types.Decimal && numeric:
		return widenDecimal(from, to), true
	case to.Kind == types.Double && numeric:
		return to, true
	}
	if from.Kind == types.String {
		switch to.Kind {
		case types.Timestamp, types.Time, types.Date, types.Bytes:
			return to, true
		}
	}
	if lax {
		switch {
		case to.Kind == types.String:
			switch from.Kind {
			case types.Boolean, types.Int, types.Bigint, types.Decimal, types.Double, types.Timestamp, types.Time, types.Date:
				return to, true
			}
		case from.Kind == types.String:
			switch to.Kind {
			case types.Boolean, types.Int, types.Bigint, types.Decimal, types.Double:
				return to, true
			}
		}
	}
	return nil, false
}

// convertCommon converts e, whose type was resolved into t, to t: NULL
// literals take the type, literals are converted, constructors are
// converted element by element and other expressions are wrapped in a
// CAST.
func convertCommon(e *expr.Expr, t *types.Type) (*expr.Expr, error) {
	if e.Type == nil {
		return retype(e, t), nil
	}
	if e.Type.Equal(t) {
		return e, nil
	}
	switch {
	case e.Op == expr.OpLiteral:
		if e.Value == nil {
			return expr.Literal(nil, t), nil
		}
		v, err := coerceLiteral(e.Value, e.Type, t)
		if err != nil {
			return nil, err
		}
		return expr.Literal(v, t), nil
	case e.Op == expr.OpArray && t.Kind == types.Array:
		args := make([]*expr.Expr, len(e.Args))
		for i, a := range e.Args {
			x, err := convertCommon(a, t.Elem)
			if err != nil {
				return nil, err
			}
			args[i] = x
		}
		return &expr.Expr{Op: expr.OpArray, Type: t, Args: args}, nil
	case e.Op == expr.OpMap && t.Kind == types.Map:
		args := make([]*expr.Expr, len(e.Args))
		for i, a := range e.Args {
			want := t.Key
			if i%2 == 1 {
				want = t.Elem
			}
			x, err := convertCommon(a, want)
			if err != nil {
				return nil, err
			}
			args[i] = x
		}
		return &expr.Expr{Op: expr.OpMap, Type: t, Args: args}, nil
	case e.Op == expr.OpStruct && t.Kind == types.Struct:
		args := make([]*expr.Expr, len(t.Fields))
		names := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			names[i] = f.Name
			args[i] = expr.Literal(nil, f.Type)
			for j, n := range e.Names {
				if n == f.Name {
					x, err := convertCommon(e.Args[j], f.Type)
					if err != nil {
						return nil, err
					}
					args[i] = x
					break
				}
			}
		}
		return &expr.Expr{Op: expr.OpStruct, Type: t, Args: args, Names: names}, nil
	}
	if _, err := eval.CastFunc(e.Type, t); err != nil {
		return nil, err
	}
	return &expr.Expr{Op: expr.OpCast, Type: t, Args: []*expr.Expr{e}}, nil
}

// coerceLiteral converts the literal value v of type from to type to as
// ksqlDB's lax coercion of literals does.
func coerceLiteral(v any, from, to *types.Type) (any, error) {
	if s, ok := v.(string); ok && to.Kind == types.Boolean {
		b, ok := parseBoolLax(s)
		if !ok {
			return nil, invalidSyntax(s, to)
		}
		return b, nil
	}
	if d, ok := v.(types.Dec); ok && to.Kind == types.String {
		return d.String(), nil
	}
	c, err := eval.CastFunc(from, to)
	if err != nil {
		return nil, err
	}
	out, err := c(v)
	if err != nil {
		if s, ok := v.(string); ok {
			return nil, invalidSyntax(s, to)
		}
		return nil, err
	}
	return out, nil
}

// parseBoolLax parses s, trimmed, as ksqlDB does for literals: any
// case-insensitive prefix of "true" or "yes" is true, of "false" or "no"
// false.
func parseBoolLax(s string) (bool, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return false, false
	}
	if strings.HasPrefix("true", s) || strings.HasPrefix("yes", s) {
		return true, true
	}
	if strings.HasPrefix("false", s) || strings.HasPrefix("no", s) {
		return false, true
	}
	return false, false
}
