package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// maxSeriesLen bounds the arrays GENERATE_SERIES builds, so that one row
// cannot exhaust memory.
const maxSeriesLen = 10_000_000

func isKind(t *types.Type, k types.Kind) bool { return t != nil && t.Kind == k }

// isOrdered reports whether values of t have a natural order, as the
// Comparable Java types behind ARRAY_MAX, ARRAY_MIN and ARRAY_SORT do.
func isOrdered(t *types.Type) bool {
	switch t.Kind {
	case types.Boolean, types.Int, types.Bigint, types.Double, types.Decimal, types.String,
		types.Bytes, types.Date, types.Time, types.Timestamp:
		return true
	}
	return false
}

// isPrimitive reports whether ARRAY_JOIN can render elements of t.
func isPrimitive(t *types.Type) bool {
	switch t.Kind {
	case types.Boolean, types.Int, types.Bigint, types.Double, types.Decimal, types.String:
		return true
	}
	return false
}

// elementFits reports whether a value of type v can be looked up in an
// array of elem: it converts implicitly, or both are numbers compared by
// value.
func elementFits(v, elem *types.Type) bool {
	return v == nil || ImplicitCast(v, elem) || (v.IsNumeric() && elem.IsNumeric())
}

// coerceElement converts the looked-up value (argument 1) to the array's
// element type when that is an implicit conversion other than numeric
// widening, which comparison handles by value.
func coerceElement(ts []*types.Type, i int, _ *types.Type) *types.Type {
	if i != 1 || ts[1] == nil || !isKind(ts[0], types.Array) {
		return nil
	}
	if ts[1].IsNumeric() && ts[0].Elem.IsNumeric() {
		return nil
	}
	return ts[0].Elem
}

func toRet(_ []*types.Type, _ int, ret *types.Type) *types.Type { return ret }

// hashKey returns a map key standing for v under types.Equal, for the
// scalar values that have one.
func hashKey(v any) (any, bool) {
	switch x := v.(type) {
	case int32, int64, string, bool, types.TimestampValue, types.DateValue, types.TimeValue:
		return v, true
	case float64:
		if math.IsNaN(x) {
			return nanKey{}, true
		}
		if x == 0 {
			return 0.0, true
		}
		return x, true
	}
	return nil, false
}

type nanKey struct{}

// valueSet is an insertion-ordered set of values under types.Equal (null
// included), indexed by a map once it grows past a few scalar elements.
type valueSet struct {
	vals    []any
	keys    map[any]struct{}
	hasNull bool
	noIndex bool
}

const setIndexMin = 16

func (s *valueSet) contains(v any) bool {
	if v == nil {
		return s.hasNull
	}
	if s.keys != nil {
		if k, ok := hashKey(v); ok {
			_, found := s.keys[k]
			return found
		}
	}
	for _, x := range s.vals {
		if x != nil && types.Equal(x, v) {
			return true
		}
	}
	return false
}

// add inserts v and reports whether it was not there yet.
func (s *valueSet) add(v any) bool {
	if s.contains(v) {
		return false
	}
	s.vals = append(s.vals, v)
	if v == nil {
		s.hasNull = true
		return true
	}
	switch {
	case s.keys != nil:
		k, ok := hashKey(v)
		if !ok {
			s.keys, s.noIndex = nil, true
			return true
		}
		s.keys[k] = struct{}{}
	case !s.noIndex && len(s.vals) >= setIndexMin:
		keys := make(map[any]struct{}, 2*len(s.vals))
		for _, x := range s.vals {
			if x == nil {
				continue
			}
			k, ok := hashKey(x)
			if !ok {
				s.noIndex = true
				return true
			}
			keys[k] = struct{}{}
		}
		s.keys = keys
	}
	return true
}

func newValueSet(n int) *valueSet { return &valueSet{vals: make([]any, 0, n)} }

// arrayArgs checks a call taking n arrays of one element type (after
// widening) and returns that array type.
func arrayArgs(name string, ts []*types.Type, n int) (*types.Type, error) {
	alt := strings.ToLower(name) + "(" + strings.TrimSuffix(strings.Repeat("ARRAY<T>, ", n), ", ") + ")"
	if len(ts) != n {
		return nil, rejectArgs(name, ts, alt)
	}
	for _, t := range ts {
		if t != nil && t.Kind != types.Array {
			return nil, rejectArgs(name, ts, alt)
		}
	}
	t, err := expr.CommonType(ts)
	if err != nil {
		return nil, rejectArgs(name, ts, alt)
	}
	if t == nil {
		return nil, fmt.Errorf("cannot infer the array type of %s%s; cast an argument", strings.ToLower(name), typeList(ts))
	}
	return t, nil
}

// arrayArg checks a call whose first argument is an array and returns its
// type; elemOK, when set, restricts the element type.
func arrayArg(name string, ts []*types.Type, elemOK func(*types.Type) bool, alts ...string) (*types.Type, error) {
	if len(ts) == 0 || !isKind(ts[0], types.Array) || (elemOK != nil && !elemOK(ts[0].Elem)) {
		return nil, rejectArgs(name, ts, alts...)
	}
	return ts[0], nil
}

func mapArg(name string, ts []*types.Type, alts ...string) (*types.Type, error) {
	if len(ts) == 0 || !isKind(ts[0], types.Map) {
		return nil, rejectArgs(name, ts, alts...)
	}
	return ts[0], nil
}

// setOp builds ARRAY_EXCEPT, ARRAY_INTERSECT and ARRAY_UNION: null when
// either array is null, else the distinct elements chosen by keep, in
// order of first appearance.
func setOp(name, desc string, build func(a, b []any) []any) *Func {
	return &Func{
		Name: name, Description: desc,
		Check:  func(ts []*types.Type) (*types.Type, error) { return arrayArgs(name, ts, 2) },
		Coerce: toRet,
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict(func(a []any) (any, error) { return build(a[0].([]any), a[1].([]any)), nil }), nil
		},
	}
}

func lookupSet(b []any) *valueSet {
	s := newValueSet(len(b))
	for _, x := range b {
		s.add(x)
	}
	return s
}

// joinElement renders an ARRAY_JOIN element as Java's toString does.
func joinElement(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		sb.WriteString("null")
	case string:
		sb.WriteString(x)
	case float64:
		var buf [32]byte
		sb.Write(types.AppendDouble(buf[:0], x))
	default:
		sb.WriteString(types.FormatValue(v, nil))
	}
}

// extremeElement builds ARRAY_MAX (want 1) and ARRAY_MIN (want -1): the
// extreme non-null element, null for an empty or all-null array.
func extremeElement(name, desc string, want int) *Func {
	alt := strings.ToLower(name) + "(ARRAY<T>) where T is BOOLEAN, a number, STRING, BYTES, DATE, TIME or TIMESTAMP"
	return &Func{
		Name: name, Description: desc,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 {
				return nil, rejectArgs(name, ts, alt)
			}
			t, err := arrayArg(name, ts, isOrdered, alt)
			if err != nil {
				return nil, err
			}
			return t.Elem, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) {
				var best any
				for _, x := range a.([]any) {
					if x == nil {
						continue
					}
					if best == nil {
						best = x
						continue
					}
					c, err := types.Compare(x, best)
					if err != nil {
						return nil, err
					}
					if c == want {
						best = x
					}
				}
				return best, nil
			}), nil
		},
	}
}

var errZeroStep = errors.New("GENERATE_SERIES step cannot be zero")

// series returns start, start+step, ... up to end inclusive.
func series(start, end, step int64, asInt bool) (any, error) {
	if step == 0 {
		return nil, errZeroStep
	}
	diff := end - start
	if (diff > 0 && step < 0) || (diff < 0 && step > 0) {
		return nil, errors.New("GENERATE_SERIES step has wrong sign")
	}
	n := diff/step + 1
	if n > maxSeriesLen {
		return nil, fmt.Errorf("GENERATE_SERIES would build %d elements; the limit is %d", n, maxSeriesLen)
	}
	out := make([]any, n)
	v := start
	for i := range out {
		if asInt {
			out[i] = int32(v)
		} else {
			out[i] = v
		}
		v += step
	}
	return out, nil
}

func init() {
	Register(&Func{
		Name: "ARRAY_LENGTH", Description: "Returns the number of elements of an array.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 || (ts[0] != nil && ts[0].Kind != types.Array) {
				return nil, rejectArgs("ARRAY_LENGTH", ts, "array_length(ARRAY<T>)")
			}
			return types.IntType, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) { return int32(len(a.([]any))), nil }), nil
		},
	})
	Register(&Func{
		Name: "ARRAY_CONTAINS", Description: "ARRAY_CONTAINS(array, value): whether the array holds the value (false for a null array).",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 2 || !isKind(ts[0], types.Array) || !elementFits(ts[1], ts[0].Elem) {
				return nil, rejectArgs("ARRAY_CONTAINS", ts, "array_contains(ARRAY<T>, T)")
			}
			return types.BooleanType, nil
		},
		Coerce: coerceElement,
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				arr, err := args[0](row)
				v, e := args[1](row)
				keep(&err, e)
				if arr == nil {
					return false, err
				}
				for _, x := range arr.([]any) {
					if types.Equal(x, v) {
						return true, err
					}
				}
				return false, err
			}, nil
		},
	})
	Register(&Func{
		Name: "ARRAY_REMOVE", Description: "ARRAY_REMOVE(array, value): the array without the elements equal to value (nulls when value is null).",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 2 || !isKind(ts[0], types.Array) || !elementFits(ts[1], ts[0].Elem) {
				return nil, rejectArgs("ARRAY_REMOVE", ts, "array_remove(ARRAY<T>, T)")
			}
			return ts[0], nil
		},
		Coerce: coerceElement,
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				arr, err := args[0](row)
				v, e := args[1](row)
				keep(&err, e)
				if arr == nil {
					return nil, err
				}
				in := arr.([]any)
				out := make([]any, 0, len(in))
				for _, x := range in {
					if !types.Equal(x, v) {
						out = append(out, x)
					}
				}
				return out, err
			}, nil
		},
	})
	Register(&Func{
		Name: "ARRAY_DISTINCT", Description: "Returns the distinct elements of an array, in order of first appearance.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 {
				return nil, rejectArgs("ARRAY_DISTINCT", ts, "array_distinct(ARRAY<T>)")
			}
			return arrayArg("ARRAY_DISTINCT", ts, nil, "array_distinct(ARRAY<T>)")
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) { return lookupSet(a.([]any)).vals, nil }), nil
		},
	})
	Register(setOp("ARRAY_EXCEPT", "ARRAY_EXCEPT(a, b): the distinct elements of a that are not in b.", func(a, b []any) []any {
		excl := lookupSet(b)
		out := newValueSet(len(a))
		for _, x := range a {
			if !excl.contains(x) {
				out.add(x)
			}
		}
		return out.vals
	}))
	Register(setOp("ARRAY_INTERSECT", "ARRAY_INTERSECT(a, b): the distinct elements of a that are also in b.", func(a, b []any) []any {
		in := lookupSet(b)
		out := newValueSet(min(len(a), len(b)))
		for _, x := range a {
			if in.contains(x) {
				out.add(x)
			}
		}
		return out.vals
	}))
	Register(setOp("ARRAY_UNION", "ARRAY_UNION(a, b): the distinct elements of a then b.", func(a, b []any) []any {
		out := newValueSet(len(a) + len(b))
		for _, x := range a {
			out.add(x)
		}
		for _, x := range b {
			out.add(x)
		}
		return out.vals
	}))
	Register(&Func{
		Name: "ARRAY_CONCAT", Description: "ARRAY_CONCAT(a, b): the elements of a then b; a null array counts as empty, null when both are.",
		Check:  func(ts []*types.Type) (*types.Type, error) { return arrayArgs("ARRAY_CONCAT", ts, 2) },
		Coerce: toRet,
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				a, err := args[0](row)
				b, e := args[1](row)
				keep(&err, e)
				if a == nil && b == nil {
					return nil, err
				}
				x, _ := a.([]any)
				y, _ := b.([]any)
				out := make([]any, 0, len(x)+len(y))
				return append(append(out, x...), y...), err
			}, nil
		},
	})
	joinAlts := []string{"array_join(ARRAY<T>)", "array_join(ARRAY<T>, STRING delimiter)"}
	Register(&Func{
		Name:        "ARRAY_JOIN",
		Description: "ARRAY_JOIN(array[, delimiter]): the elements as text joined by delimiter (default ','), null elements as null.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) < 1 || len(ts) > 2 || (len(ts) == 2 && ts[1] != nil && ts[1].Kind != types.String) {
				return nil, rejectArgs("ARRAY_JOIN", ts, joinAlts...)
			}
			if _, err := arrayArg("ARRAY_JOIN", ts, isPrimitive, joinAlts...); err != nil {
				return nil, err
			}
			return types.StringType, nil
		},
		Build: func(ts []*types.Type, _ *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				arr, err := args[0](row)
				sep := ","
				if len(args) == 2 {
					d, e := args[1](row)
					keep(&err, e)
					sep, _ = d.(string)
				}
				if arr == nil {
					return nil, err
				}
				var sb strings.Builder
				for i, x := range arr.([]any) {
					if i > 0 {
						sb.WriteString(sep)
					}
					joinElement(&sb, x)
				}
				return sb.String(), err
			}, nil
		},
	})
	Register(extremeElement("ARRAY_MAX", "Returns the largest non-null element of an array.", 1))
	Register(extremeElement("ARRAY_MIN", "Returns the smallest non-null element of an array.", -1))
	sortAlts := []string{"array_sort(ARRAY<T>)", "array_sort(ARRAY<T>, STRING direction)"}
	Register(&Func{
		Name:        "ARRAY_SORT",
		Description: "ARRAY_SORT(array[, 'ASC'|'DESC']): the elements sorted, nulls last; null for another direction.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) < 1 || len(ts) > 2 || (len(ts) == 2 && ts[1] != nil && ts[1].Kind != types.String) {
				return nil, rejectArgs("ARRAY_SORT", ts, sortAlts...)
			}
			return arrayArg("ARRAY_SORT", ts, isOrdered, sortAlts...)
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict(func(a []any) (any, error) {
				desc := false
				if len(a) == 2 {
					switch strings.ToUpper(a[1].(string)) {
					case "ASC", "ASCENDING":
					case "DESC", "DESCENDING":
						desc = true
					default:
						return nil, nil
					}
				}
				out := slices.Clone(a[0].([]any))
				slices.SortStableFunc(out, func(x, y any) int {
					switch {
					case x == nil && y == nil:
						return 0
					case x == nil:
						return 1
					case y == nil:
						return -1
					}
					c, _ := types.Compare(x, y)
					if desc {
						return -c
					}
					return c
				})
				if out == nil {
					out = []any{}
				}
				return out, nil
			}), nil
		},
	})
	Register(&Func{
		Name: "AS_MAP", Description: "AS_MAP(keys, values): a map pairing each key with the value at the same position (null past the end of values).",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 2 || !isKind(ts[0], types.Array) || !isKind(ts[1], types.Array) {
				return nil, rejectArgs("AS_MAP", ts, "as_map(ARRAY<STRING> keys, ARRAY<T> values)")
			}
			return types.MapOf(ts[0].Elem, ts[1].Elem), nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict(func(a []any) (any, error) {
				ks, vs := a[0].([]any), a[1].([]any)
				m := &types.MapValue{Keys: make([]any, 0, len(ks)), Values: make([]any, 0, len(ks))}
				for i, k := range ks {
					var v any
					if i < len(vs) {
						v = vs[i]
					}
					if j := m.Index(k); j >= 0 {
						m.Values[j] = v
						continue
					}
					m.Keys = append(m.Keys, k)
					m.Values = append(m.Values, v)
				}
				return m, nil
			}), nil
		},
	})
	Register(&Func{
		Name: "ENTRIES", Description: "ENTRIES(map, sorted): the map's entries as an array of STRUCT<K, V>, sorted by key when sorted is true.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 2 || !isKind(ts[0], types.Map) || (ts[1] != nil && ts[1].Kind != types.Boolean) {
				return nil, rejectArgs("ENTRIES", ts, "entries(MAP<STRING, T>, BOOLEAN sorted)")
			}
			return types.ArrayOf(types.StructOf(
				types.Field{Name: "K", Type: ts[0].Key},
				types.Field{Name: "V", Type: ts[0].Elem})), nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict(func(a []any) (any, error) {
				m := a[0].(*types.MapValue)
				out := make([]any, len(m.Keys))
				for i, k := range m.Keys {
					out[i] = types.StructValue{k, m.Values[i]}
				}
				if a[1].(bool) {
					slices.SortStableFunc(out, func(x, y any) int {
						kx, ky := x.(types.StructValue)[0], y.(types.StructValue)[0]
						switch {
						case kx == nil && ky == nil:
							return 0
						case kx == nil:
							return -1
						case ky == nil:
							return 1
						}
						c, _ := types.Compare(kx, ky)
						return c
					})
				}
				return out, nil
			}), nil
		},
	})
	seriesAlts := []string{
		"generate_series(INTEGER start, INTEGER end)", "generate_series(INTEGER start, INTEGER end, INTEGER step)",
		"generate_series(BIGINT start, BIGINT end)", "generate_series(BIGINT start, BIGINT end, INTEGER step)",
	}
	Register(&Func{
		Name:        "GENERATE_SERIES",
		Description: "GENERATE_SERIES(start, end[, step]): the array start, start+step, ... up to end inclusive (step defaults to 1 or -1).",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) < 2 || len(ts) > 3 {
				return nil, rejectArgs("GENERATE_SERIES", ts, seriesAlts...)
			}
			for _, t := range ts {
				if !isIntKind(t) {
					return nil, rejectArgs("GENERATE_SERIES", ts, seriesAlts...)
				}
			}
			if isKind(ts[0], types.Bigint) || isKind(ts[1], types.Bigint) {
				return types.ArrayOf(types.BigintType), nil
			}
			return types.ArrayOf(types.IntType), nil
		},
		Build: func(_ []*types.Type, ret *types.Type) (Impl, error) {
			asInt := ret.Elem.Kind == types.Int
			return Strict(func(a []any) (any, error) {
				start, end := toInt64(a[0]), toInt64(a[1])
				step := int64(1)
				if len(a) == 3 {
					step = toInt64(a[2])
				} else if end < start {
					step = -1
				}
				return series(start, end, step, asInt)
			}), nil
		},
	})
	Register(&Func{
		Name: "MAP_KEYS", Description: "Returns the keys of a map as an array.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 {
				return nil, rejectArgs("MAP_KEYS", ts, "map_keys(MAP<K, V>)")
			}
			t, err := mapArg("MAP_KEYS", ts, "map_keys(MAP<K, V>)")
			if err != nil {
				return nil, err
			}
			return types.ArrayOf(t.Key), nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) { return slices.Clone(a.(*types.MapValue).Keys), nil }), nil
		},
	})
	Register(&Func{
		Name: "MAP_VALUES", Description: "Returns the values of a map as an array.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 {
				return nil, rejectArgs("MAP_VALUES", ts, "map_values(MAP<K, V>)")
			}
			t, err := mapArg("MAP_VALUES", ts, "map_values(MAP<K, V>)")
			if err != nil {
				return nil, err
			}
			return types.ArrayOf(t.Elem), nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) { return slices.Clone(a.(*types.MapValue).Values), nil }), nil
		},
	})
	Register(&Func{
		Name: "MAP_UNION", Description: "MAP_UNION(a, b): the entries of both maps, b's value winning for a key in both; a null map counts as empty, null when both are.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			alt := "map_union(MAP<K, V>, MAP<K, V>)"
			if len(ts) != 2 {
				return nil, rejectArgs("MAP_UNION", ts, alt)
			}
			for _, t := range ts {
				if t != nil && t.Kind != types.Map {
					return nil, rejectArgs("MAP_UNION", ts, alt)
				}
			}
			t, err := expr.CommonType(ts)
			if err != nil {
				return nil, rejectArgs("MAP_UNION", ts, alt)
			}
			if t == nil {
				return nil, fmt.Errorf("cannot infer the map type of map_union%s; cast an argument", typeList(ts))
			}
			return t, nil
		},
		Coerce: toRet,
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				a, err := args[0](row)
				b, e := args[1](row)
				keep(&err, e)
				if a == nil && b == nil {
					return nil, err
				}
				x, _ := a.(*types.MapValue)
				y, _ := b.(*types.MapValue)
				n := 0
				if x != nil {
					n += len(x.Keys)
				}
				if y != nil {
					n += len(y.Keys)
				}
				out := &types.MapValue{Keys: make([]any, 0, n), Values: make([]any, 0, n)}
				for _, m := range []*types.MapValue{x, y} {
					if m == nil {
						continue
					}
					for i, k := range m.Keys {
						if j := out.Index(k); j >= 0 {
							out.Values[j] = m.Values[i]
							continue
						}
						out.Keys = append(out.Keys, k)
						out.Values = append(out.Values, m.Values[i])
					}
				}
				return out, err
			}, nil
		},
	})
}

func init() {
	Register(&Func{
		Name: "SLICE", Description: "SLICE(array, from, to): the elements of array from position from to position to, both included, counting from 1; a null bound is the array's start or end; null when the positions are outside the array.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			const alt = "slice(ARRAY<T> in, INT from, INT to)"
			if len(ts) != 3 || !isKind(ts[0], types.Array) && ts[0] != nil {
				return nil, rejectArgs("SLICE", ts, alt)
			}
			for _, t := range ts[1:] {
				if t != nil && t.Kind != types.Int {
					return nil, rejectArgs("SLICE", ts, alt)
				}
			}
			if ts[0] == nil {
				return types.ArrayOf(types.StringType), nil
			}
			return ts[0], nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				arr, err := args[0](row)
				from, e := args[1](row)
				keep(&err, e)
				to, e := args[2](row)
				keep(&err, e)
				if arr == nil {
					return nil, err
				}
				in := arr.([]any)
				start, end := 0, len(in)
				if from != nil {
					start = int(from.(int32)) - 1
				}
				if to != nil {
					end = int(to.(int32))
				}
				if start < 0 || end > len(in) || start > end {
					return nil, err
				}
				return append([]any(nil), in[start:end]...), err
			}, nil
		},
	})
}
