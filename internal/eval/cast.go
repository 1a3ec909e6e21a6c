package eval

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
)

// ConvFunc converts one non-null value.
type ConvFunc func(v any) (any, error)

// CastFunc returns the conversion CAST(x AS to) applies to a non-null value
// of type from, or an error when ksqlDB does not support that cast. A nil
// from (untyped NULL) casts to anything.
func CastFunc(from, to *types.Type) (ConvFunc, error) {
	if from == nil || from.Equal(to) {
		return func(v any) (any, error) { return v, nil }, nil
	}
	unsupported := fmt.Errorf("Cast of %s to %s is not supported", from, to)
	switch to.Kind {
	case types.String:
		if from.Kind == types.Bytes {
			return nil, unsupported
		}
		return func(v any) (any, error) { return types.CastToString(v, from), nil }, nil
	case types.Boolean:
		if from.Kind == types.String {
			return func(v any) (any, error) { return parseBool(v.(string)) }, nil
		}
	case types.Int, types.Bigint, types.Double, types.Decimal:
		if from.IsNumeric() || from.Kind == types.String {
			return numericCast(from, to), nil
		}
	case types.Timestamp:
		switch from.Kind {
		case types.String:
			return func(v any) (any, error) {
				ts, err := types.ParseTimestamp(v.(string))
				if err != nil {
					return nil, fmt.Errorf("invalid input syntax for type TIMESTAMP: %q", v)
				}
				return ts, nil
			}, nil
		case types.Date:
			return func(v any) (any, error) { return types.TimestampValue(int64(v.(types.DateValue)) * 86400000), nil }, nil
		}
	case types.Date:
		switch from.Kind {
		case types.String:
			return func(v any) (any, error) {
				d, err := types.ParseDate(v.(string))
				if err != nil {
					return nil, fmt.Errorf("invalid input syntax for type DATE: %q", v)
				}
				return d, nil
			}, nil
		case types.Timestamp:
			return func(v any) (any, error) {
				ms := int64(v.(types.TimestampValue))
				return types.DateValue(floorDiv(ms, 86400000)), nil
			}, nil
		}
	case types.Time:
		switch from.Kind {
		case types.String:
			return func(v any) (any, error) {
				t, err := types.ParseTime(v.(string))
				if err != nil {
					return nil, fmt.Errorf("invalid input syntax for type TIME: %q", v)
				}
				return t, nil
			}, nil
		case types.Timestamp:
			return func(v any) (any, error) {
				ms := int64(v.(types.TimestampValue))
				return types.TimeValue(ms - floorDiv(ms, 86400000)*86400000), nil
			}, nil
		}
	case types.Array:
		if from.Kind == types.Array {
			ec, err := CastFunc(from.Elem, to.Elem)
			if err != nil {
				return nil, unsupported
			}
			return func(v any) (any, error) {
				in := v.([]any)
				out := make([]any, len(in))
				for i, e := range in {
					if e == nil {
						continue
					}
					c, err := ec(e)
					if err != nil {
						return nil, err
					}
					out[i] = c
				}
				return out, nil
			}, nil
		}
	case types.Map:
		if from.Kind == types.Map {
			kc, err := CastFunc(from.Key, to.Key)
			if err != nil {
				return nil, unsupported
			}
			vc, err := CastFunc(from.Elem, to.Elem)
			if err != nil {
				return nil, unsupported
			}
			return func(v any) (any, error) {
				in := v.(*types.MapValue)
				out := &types.MapValue{Keys: make([]any, len(in.Keys)), Values: make([]any, len(in.Values))}
				for i := range in.Keys {
					if in.Keys[i] != nil {
						k, err := kc(in.Keys[i])
						if err != nil {
							return nil, err
						}
						out.Keys[i] = k
					}
					if in.Values[i] != nil {
						x, err := vc(in.Values[i])
						if err != nil {
							return nil, err
						}
						out.Values[i] = x
					}
				}
				return out, nil
			}, nil
		}
	case types.Struct:
		if from.Kind == types.Struct {
			src := make([]int, len(to.Fields))
			convs := make([]ConvFunc, len(to.Fields))
			for i, f := range to.Fields {
				src[i] = -1
				for j, g := range from.Fields {
					if g.Name == f.Name {
						c, err := CastFunc(g.Type, f.Type)
						if err != nil {
							return nil, unsupported
						}
						src[i], convs[i] = j, c
						break
					}
				}
			}
			return func(v any) (any, error) {
				in := v.(types.StructValue)
				out := make(types.StructValue, len(src))
				for i, j := range src {
					if j < 0 || j >= len(in) || in[j] == nil {
						continue
					}
					c, err := convs[i](in[j])
					if err != nil {
						return nil, err
					}
					out[i] = c
				}
				return out, nil
			}, nil
		}
	}
	return nil, unsupported
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func parseBool(s string) (any, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "t", "yes", "y":
		return true, nil
	case "false", "f", "no", "n":
		return false, nil
	}
	return nil, fmt.Errorf("invalid input syntax for type BOOLEAN: %q", s)
}

func syntaxErr(t *types.Type, s string) error {
	return fmt.Errorf("invalid input syntax for type %s: %q", KindName(t), s)
}

// KindName names t's kind as ksqlDB's messages do: DECIMAL without its
// precision and scale, any other type in full.
func KindName(t *types.Type) string {
	if t.Kind == types.Decimal {
		return "DECIMAL"
	}
	return t.String()
}

// numericCast converts numbers and numeric strings to a numeric type as
// Java's casts do: narrowing integers wrap, doubles truncate toward zero
// (saturating), decimals round half up and fail when out of precision.
func numericCast(from, to *types.Type) ConvFunc {
	switch to.Kind {
	case types.Int:
		return func(v any) (any, error) {
			switch x := v.(type) {
			case int32:
				return x, nil
			case int64:
				return int32(x), nil
			case float64:
				return int32(saturate(x, math.MinInt32, math.MaxInt32)), nil
			case types.Dec:
				return int32(x.Int64()), nil
			case string:
				n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 32)
				if err != nil {
					return nil, syntaxErr(to, x)
				}
				return int32(n), nil
			}
			return nil, fmt.Errorf("cannot cast %T to INTEGER", v)
		}
	case types.Bigint:
		return func(v any) (any, error) {
			switch x := v.(type) {
			case int32:
				return int64(x), nil
			case int64:
				return x, nil
			case float64:
				return int64(saturate(x, math.MinInt64, math.MaxInt64)), nil
			case types.Dec:
				return x.Int64(), nil
			case string:
				n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
				if err != nil {
					return nil, syntaxErr(to, x)
				}
				return n, nil
			}
			return nil, fmt.Errorf("cannot cast %T to BIGINT", v)
		}
	case types.Double:
		return func(v any) (any, error) {
			switch x := v.(type) {
			case int32:
				return float64(x), nil
			case int64:
				return float64(x), nil
			case float64:
				return x, nil
			case types.Dec:
				return x.Float64(), nil
			case string:
				f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
				if err != nil {
					return nil, syntaxErr(to, x)
				}
				return f, nil
			}
			return nil, fmt.Errorf("cannot cast %T to DOUBLE", v)
		}
	}
	// DECIMAL
	return func(v any) (any, error) {
		var d types.Dec
		switch x := v.(type) {
		case int32:
			d = types.DecFromInt64(int64(x))
		case int64:
			d = types.DecFromInt64(x)
		case float64:
			var err error
			if d, err = types.DecFromFloat64(x); err != nil {
				return nil, err
			}
		case types.Dec:
			d = x
		case string:
			var err error
			if d, err = types.ParseDec(x); err != nil {
				return nil, syntaxErr(to, x)
			}
		default:
			return nil, fmt.Errorf("cannot cast %T to DECIMAL", v)
		}
		return fitDec(d, to)
	}
}

func fitDec(d types.Dec, to *types.Type) (any, error) {
	r := d.Rescale(to.Scale)
	if r.Sign() != 0 && r.Precision() > to.Precision {
		return nil, fmt.Errorf("numeric field overflow: %s does not fit %s", d, to)
	}
	return r, nil
}

func saturate(f, lo, hi float64) float64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f <= lo:
		return lo
	case f >= hi:
		return hi
	}
	return math.Trunc(f)
}

// ImplicitCast reports whether a value of type from may be assigned to a
// column of type to without an explicit CAST: numeric widening (INTEGER to
// BIGINT, DECIMAL or DOUBLE; BIGINT to DECIMAL or DOUBLE; DECIMAL to DOUBLE
// or to another DECIMAL it fits), STRING to TIMESTAMP, DATE or TIME, and
// the same rules element by element for ARRAY, MAP and STRUCT.
func ImplicitCast(from, to *types.Type) bool {
	if from == nil || from.Equal(to) {
		return true
	}
	switch to.Kind {
	case types.Bigint:
		return from.Kind == types.Int
	case types.Decimal:
		return from.Kind == types.Int || from.Kind == types.Bigint || from.Kind == types.Decimal
	case types.Double:
		return from.Kind == types.Int || from.Kind == types.Bigint || from.Kind == types.Decimal
	case types.Timestamp, types.Date, types.Time:
		return from.Kind == types.String
	case types.Array:
		return from.Kind == types.Array && ImplicitCast(from.Elem, to.Elem)
	case types.Map:
		return from.Kind == types.Map && ImplicitCast(from.Key, to.Key) && ImplicitCast(from.Elem, to.Elem)
	case types.Struct:
		if from.Kind != types.Struct {
			return false
		}
		for _, g := range from.Fields {
			found := false
			for _, f := range to.Fields {
				if f.Name == g.Name {
					found = ImplicitCast(g.Type, f.Type)
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return false
}

// Coerce converts v, a value of type from, to type to for assignment
// (INSERT VALUES, sink columns): see ImplicitCast for the conversions allowed.
// A nil v stays nil. Narrowing and unrelated conversions are errors naming
// both types.
func Coerce(v any, from, to *types.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	if !ImplicitCast(from, to) {
		return nil, fmt.Errorf("cannot assign a value of type %s to type %s", from, to)
	}
	c, err := CastFunc(from, to)
	if err != nil {
		return nil, err
	}
	return c(v)
}
