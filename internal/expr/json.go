package expr

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

type exprJSON struct {
	Op        Op              `json:"op"`
	Type      *types.Type     `json:"type,omitempty"`
	Col       int             `json:"col,omitempty"`
	Qualifier string          `json:"qualifier,omitempty"`
	Name      string          `json:"name,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	Func      string          `json:"func,omitempty"`
	Args      []*Expr         `json:"args,omitempty"`
	Names     []string        `json:"names,omitempty"`
	Else      bool            `json:"else,omitempty"`
}

// MarshalJSON writes e as a JSON object; literal values are written
// according to their type (see MarshalValue).
func (e *Expr) MarshalJSON() ([]byte, error) {
	j := exprJSON{
		Op: e.Op, Type: e.Type, Col: e.Col, Qualifier: e.Qualifier, Name: e.Name,
		Func: e.Func, Args: e.Args, Names: e.Names, Else: e.Else,
	}
	if e.Op == OpLiteral && e.Value != nil {
		v, err := MarshalValue(e.Value, e.Type)
		if err != nil {
			return nil, err
		}
		j.Value = v
	}
	return json.Marshal(&j)
}

// UnmarshalJSON reads an expression written by MarshalJSON.
func (e *Expr) UnmarshalJSON(b []byte) error {
	var j exprJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Expr{
		Op: j.Op, Type: j.Type, Col: j.Col, Qualifier: j.Qualifier, Name: j.Name,
		Func: j.Func, Args: j.Args, Names: j.Names, Else: j.Else,
	}
	if e.Op == OpLiteral && len(j.Value) > 0 && string(j.Value) != "null" {
		v, err := UnmarshalValue(j.Value, e.Type)
		if err != nil {
			return err
		}
		e.Value = v
	}
	return nil
}

// MarshalValue writes v, a value of type t, as JSON that UnmarshalValue
// reads back exactly: numbers as JSON numbers (DOUBLE NaN and infinities as
// strings), DECIMAL as a string keeping its scale, BYTES as base64,
// TIMESTAMP/DATE/TIME as numbers, ARRAY and STRUCT as arrays, MAP as
// {"keys": [...], "values": [...]}.
func MarshalValue(v any, t *types.Type) ([]byte, error) {
	return appendValue(nil, v, t)
}

// AppendValue appends MarshalValue's encoding of v to dst.
func AppendValue(dst []byte, v any, t *types.Type) ([]byte, error) {
	return appendValue(dst, v, t)
}

// AppendRow appends row, the values of the fields of struct type t, to
// dst as MarshalValue writes a STRUCT of them.
func AppendRow(dst []byte, row []any, t *types.Type) ([]byte, error) {
	dst = append(dst, '[')
	for i, v := range row {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ft *types.Type
		if t != nil && i < len(t.Fields) {
			ft = t.Fields[i].Type
		}
		var err error
		if dst, err = appendValue(dst, v, ft); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

func appendValue(dst []byte, v any, t *types.Type) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.AppendQuote(dst, types.FormatDouble(x)), nil
		}
		return strconv.AppendFloat(dst, x, 'g', -1, 64), nil
	case types.Dec:
		return strconv.AppendQuote(dst, x.String()), nil
	case string:
		return appendString(dst, x)
	case []byte:
		return strconv.AppendQuote(dst, base64.StdEncoding.EncodeToString(x)), nil
	case types.TimestampValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case types.DateValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case types.TimeValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case []any:
		var et *types.Type
		if t != nil {
			et = t.Elem
		}
		return appendList(dst, x, func(int) *types.Type { return et })
	case types.StructValue:
		return appendList(dst, x, func(i int) *types.Type {
			if t != nil && i < len(t.Fields) {
				return t.Fields[i].Type
			}
			return nil
		})
	case *types.MapValue:
		var kt, vt *types.Type
		if t != nil {
			kt, vt = t.Key, t.Elem
		}
		dst = append(dst, `{"keys":`...)
		var err error
		if dst, err = appendList(dst, x.Keys, func(int) *types.Type { return kt }); err != nil {
			return nil, err
		}
		dst = append(dst, `,"values":`...)
		if dst, err = appendList(dst, x.Values, func(int) *types.Type { return vt }); err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("expr: cannot marshal value of Go type %T", v)
}

// appendString appends s quoted as json.Marshal quotes it (HTML
// characters, U+2028, U+2029 and invalid UTF-8 escaped), without its
// allocations; strings with control characters go to json.Marshal.
func appendString(dst []byte, s string) ([]byte, error) {
	const hex = "0123456789abcdef"
	base := len(dst)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c < 0x20:
				b, err := json.Marshal(s)
				return append(dst[:base], b...), err
			case c == '"' || c == '\\':
				dst = append(append(dst, s[start:i]...), '\\', c)
			case c == '<' || c == '>' || c == '&':
				dst = append(append(dst, s[start:i]...), '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				i++
				continue
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"'), nil
}

func appendList(dst []byte, vs []any, elem func(int) *types.Type) ([]byte, error) {
	dst = append(dst, '[')
	for i, e := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendValue(dst, e, elem(i)); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// UnmarshalValue reads a value of type t written by MarshalValue.
func UnmarshalValue(b []byte, t *types.Type) (any, error) {
	if string(b) == "null" {
		return nil, nil
	}
	if t == nil {
		return nil, fmt.Errorf("expr: cannot unmarshal a non-null value without a type")
	}
	switch t.Kind {
	case types.Boolean:
		var v bool
		err := json.Unmarshal(b, &v)
		return v, err
	case types.Int:
		var v int32
		err := json.Unmarshal(b, &v)
		return v, err
	case types.Bigint:
		var v int64
		err := json.Unmarshal(b, &v)
		return v, err
	case types.Double:
		if len(b) > 0 && b[0] == '"' {
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, err
			}
			switch s {
			case "NaN":
				return math.NaN(), nil
			case "Infinity":
				return math.Inf(1), nil
			case "-Infinity":
				return math.Inf(-1), nil
			}
			return nil, fmt.Errorf("expr: bad DOUBLE %q", s)
		}
		var v float64
		err := json.Unmarshal(b, &v)
		return v, err
	case types.Decimal:
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return types.ParseDec(s)
	case types.String:
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	case types.Bytes:
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(s)
	case types.Timestamp:
		var v int64
		err := json.Unmarshal(b, &v)
		return types.TimestampValue(v), err
	case types.Date:
		var v int32
		err := json.Unmarshal(b, &v)
		return types.DateValue(v), err
	case types.Time:
		var v int32
		err := json.Unmarshal(b, &v)
		return types.TimeValue(v), err
	case types.Array:
		var raws []json.RawMessage
		if err := json.Unmarshal(b, &raws); err != nil {
			return nil, err
		}
		out := make([]any, len(raws))
		for i, r := range raws {
			v, err := UnmarshalValue(r, t.Elem)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case types.Struct:
		var raws []json.RawMessage
		if err := json.Unmarshal(b, &raws); err != nil {
			return nil, err
		}
		if len(raws) != len(t.Fields) {
			return nil, fmt.Errorf("expr: struct value has %d fields, type %s has %d", len(raws), t, len(t.Fields))
		}
		out := make(types.StructValue, len(raws))
		for i, r := range raws {
			v, err := UnmarshalValue(r, t.Fields[i].Type)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case types.Map:
		var m struct {
			Keys   []json.RawMessage `json:"keys"`
			Values []json.RawMessage `json:"values"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		if len(m.Keys) != len(m.Values) {
			return nil, fmt.Errorf("expr: map value has %d keys and %d values", len(m.Keys), len(m.Values))
		}
		out := &types.MapValue{Keys: make([]any, len(m.Keys)), Values: make([]any, len(m.Values))}
		for i := range m.Keys {
			k, err := UnmarshalValue(m.Keys[i], t.Key)
			if err != nil {
				return nil, err
			}
			v, err := UnmarshalValue(m.Values[i], t.Elem)
			if err != nil {
				return nil, err
			}
			out.Keys[i], out.Values[i] = k, v
		}
		return out, nil
	}
	return nil, fmt.Errorf("expr: cannot unmarshal a value of type %s", t)
}
