package engine

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/types"
)

// fromJSON converts a value decoded from JSON (encoding/json with
// UseNumber: nil, bool, json.Number, string, []any, map[string]any) to a
// value of type t, as ksqlDB reads a row inserted as JSON: numbers and
// strings are assigned as INSERT VALUES assigns constants (integers widen,
// decimals fit the column's scale, strings are read as TIMESTAMP, DATE or
// TIME), objects are structs or maps as the column says, and BYTES are
// base64. An api.InsertRow value without a type is one.
func fromJSON(v any, t *types.Type) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return eval.Coerce(x, types.BooleanType, t)
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			// Typed as SQL types an integer literal, so that it fits an
			// INTEGER column.
			if i == int64(int32(i)) {
				return eval.Coerce(int32(i), types.IntType, t)
			}
			return eval.Coerce(i, types.BigintType, t)
		}
		if t.Kind == types.Decimal {
			d, err := types.ParseDec(x.String())
			if err != nil {
				return nil, err
			}
			return eval.Coerce(d, types.DecimalOf(max(d.Precision(), d.Scale), d.Scale), t)
		}
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return eval.Coerce(f, types.DoubleType, t)
	case string:
		if t.Kind == types.Bytes {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("BYTES are given in base64: %v", err)
			}
			return b, nil
		}
		return eval.Coerce(x, types.StringType, t)
	case []any:
		if t.Kind != types.Array {
			return nil, fmt.Errorf("a JSON array cannot be a %s", t)
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := fromJSON(e, t.Elem)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		switch t.Kind {
		case types.Struct:
			out := make(types.StructValue, len(t.Fields))
			for k, e := range x {
				i := slices.IndexFunc(t.Fields, func(f types.Field) bool { return strings.EqualFold(f.Name, k) })
				if i < 0 {
					return nil, fmt.Errorf("%s has no field %s", t, k)
				}
				c, err := fromJSON(e, t.Fields[i].Type)
				if err != nil {
					return nil, err
				}
				out[i] = c
			}
			return out, nil
		case types.Map:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			m := &types.MapValue{Keys: make([]any, len(keys)), Values: make([]any, len(keys))}
			for i, k := range keys {
				kv, err := eval.Coerce(k, types.StringType, t.Key)
				if err != nil {
					return nil, err
				}
				ev, err := fromJSON(x[k], t.Elem)
				if err != nil {
					return nil, err
				}
				m.Keys[i], m.Values[i] = kv, ev
			}
			return m, nil
		}
		return nil, fmt.Errorf("a JSON object cannot be a %s", t)
	}
	return nil, fmt.Errorf("unexpected JSON value %v", v)
}

// assignValue converts v, of type t, to the column type to; a nil t marks
// a value decoded from JSON (see fromJSON). A struct is assigned field by
// field of the column's type, as ksqlDB's INSERT VALUES does: a field the
// value lacks is null, and one the column's type lacks is dropped (so that
// a row fits a registered schema that names fewer fields).
func assignValue(v any, t, to *types.Type) (any, error) {
	if t == nil && v != nil {
		return fromJSON(v, to)
	}
	if v != nil && t != nil && to != nil {
		switch {
		case t.Kind == types.Struct && to.Kind == types.Struct:
			sv, ok := v.(types.StructValue)
			if !ok {
				break
			}
			out := make(types.StructValue, len(to.Fields))
			for i, f := range to.Fields {
				j := slices.IndexFunc(t.Fields, func(g types.Field) bool { return g.Name == f.Name })
				if j < 0 || j >= len(sv) {
					continue
				}
				c, err := assignValue(sv[j], t.Fields[j].Type, f.Type)
				if err != nil {
					return nil, fmt.Errorf("field %s: %w", f.Name, err)
				}
				out[i] = c
			}
			return out, nil
		case t.Kind == types.Array && to.Kind == types.Array && hasStruct(to.Elem):
			arr, ok := v.([]any)
			if !ok {
				break
			}
			out := make([]any, len(arr))
			for i, e := range arr {
				c, err := assignValue(e, t.Elem, to.Elem)
				if err != nil {
					return nil, err
				}
				out[i] = c
			}
			return out, nil
		case t.Kind == types.Map && to.Kind == types.Map && hasStruct(to.Elem):
			m, ok := v.(*types.MapValue)
			if !ok {
				break
			}
			out := &types.MapValue{Keys: make([]any, len(m.Keys)), Values: make([]any, len(m.Values))}
			for i := range m.Keys {
				k, err := eval.Coerce(m.Keys[i], t.Key, to.Key)
				if err != nil {
					return nil, err
				}
				e, err := assignValue(m.Values[i], t.Elem, to.Elem)
				if err != nil {
					return nil, err
				}
				out.Keys[i], out.Values[i] = k, e
			}
			return out, nil
		}
	}
	return eval.Coerce(v, t, to)
}

// hasStruct reports whether t is or holds a STRUCT.
func hasStruct(t *types.Type) bool {
	switch {
	case t == nil:
		return false
	case t.Kind == types.Struct:
		return true
	case t.Kind == types.Array, t.Kind == types.Map:
		return hasStruct(t.Elem)
	}
	return false
}
