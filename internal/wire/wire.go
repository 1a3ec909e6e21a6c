package wire

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/sluice-sql/sluice/internal/types"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// EncodeRow converts a row to its wire form. cols give the types that name
// struct fields and mark decimals; a value without a column is encoded by
// its Go representation alone.
func EncodeRow(row []any, cols []types.Column) *sluicev1.Row {
	out := &sluicev1.Row{Values: make([]*sluicev1.Value, len(row))}
	for i, v := range row {
		var t *types.Type
		if i < len(cols) {
			t = cols[i].Type
		}
		out.Values[i] = EncodeValue(v, t)
	}
	return out
}

// EncodeValue converts v, a value of type t laid out as package types
// documents, to its wire form. t may be nil when the type is unknown: then
// struct fields travel without names. A nil slice, struct or map is empty,
// as types.FormatValue shows it; only a nil v is NULL. A STRING that is not
// valid UTF-8 travels as ValidUTF8 makes it. A value of an unexpected Go type
// travels as its text (fmt.Sprint), as a decimal_value when t is DECIMAL
// and as a string_value otherwise.
func EncodeValue(v any, t *types.Type) *sluicev1.Value {
	switch x := v.(type) {
	case nil:
		return nullValue()
	case bool:
		return &sluicev1.Value{Kind: &sluicev1.Value_BoolValue{BoolValue: x}}
	case int32:
		return intValue(int64(x))
	case int64:
		return intValue(x)
	case int:
		return intValue(int64(x))
	case float64:
		return &sluicev1.Value{Kind: &sluicev1.Value_DoubleValue{DoubleValue: x}}
	case float32:
		return &sluicev1.Value{Kind: &sluicev1.Value_DoubleValue{DoubleValue: float64(x)}}
	case types.Dec:
		return &sluicev1.Value{Kind: &sluicev1.Value_DecimalValue{DecimalValue: x.String()}}
	case string:
		return &sluicev1.Value{Kind: &sluicev1.Value_StringValue{StringValue: ValidUTF8(x)}}
	case []byte:
		return &sluicev1.Value{Kind: &sluicev1.Value_BytesValue{BytesValue: x}}
	case types.TimestampValue:
		return &sluicev1.Value{Kind: &sluicev1.Value_TimestampMillis{TimestampMillis: int64(x)}}
	case types.DateValue:
		return &sluicev1.Value{Kind: &sluicev1.Value_DateDays{DateDays: int32(x)}}
	case types.TimeValue:
		return &sluicev1.Value{Kind: &sluicev1.Value_TimeMillis{TimeMillis: int32(x)}}
	case []any:
		var elem *types.Type
		if t != nil {
			elem = t.Elem
		}
		a := &sluicev1.ArrayValue{Elements: make([]*sluicev1.Value, len(x))}
		for i, e := range x {
			a.Elements[i] = EncodeValue(e, elem)
		}
		return &sluicev1.Value{Kind: &sluicev1.Value_ArrayValue{ArrayValue: a}}
	case *types.MapValue:
		var keys, vals []any
		if x != nil {
			keys, vals = x.Keys, x.Values
		}
		var kt, vt *types.Type
		if t != nil {
			kt, vt = t.Key, t.Elem
		}
		m := &sluicev1.MapValue{Entries: make([]*sluicev1.MapEntry, len(keys))}
		for i, k := range keys {
			var val any
			if i < len(vals) {
				val = vals[i]
			}
			m.Entries[i] = &sluicev1.MapEntry{Key: EncodeValue(k, kt), Value: EncodeValue(val, vt)}
		}
		return &sluicev1.Value{Kind: &sluicev1.Value_MapValue{MapValue: m}}
	case types.StructValue:
		s := &sluicev1.StructValue{Fields: make([]*sluicev1.StructField, len(x))}
		for i, f := range x {
			var name string
			var ft *types.Type
			if t != nil && i < len(t.Fields) {
				name, ft = t.Fields[i].Name, t.Fields[i].Type
			}
			s.Fields[i] = &sluicev1.StructField{Name: name, Value: EncodeValue(f, ft)}
		}
		return &sluicev1.Value{Kind: &sluicev1.Value_StructValue{StructValue: s}}
	}
	if t != nil && t.Kind == types.Decimal {
		return &sluicev1.Value{Kind: &sluicev1.Value_DecimalValue{DecimalValue: fmt.Sprint(v)}}
	}
	return &sluicev1.Value{Kind: &sluicev1.Value_StringValue{StringValue: ValidUTF8(fmt.Sprint(v))}}
}

// ValidUTF8 returns s with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as a UTF-8 decoder reading it would do. The
// strings of a protobuf message must be valid UTF-8: a message holding
// another string cannot be sent.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}

func nullValue() *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}
}

func intValue(i int64) *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_IntValue{IntValue: i}}
}

// DecodeValue converts a wire value back to the engine's Go representation
// and returns it with the type it shows:
//
//	null_value        nil, nil type
//	bool_value        bool, BOOLEAN
//	int_value         int64, BIGINT
//	double_value      float64, DOUBLE
//	decimal_value     types.Dec, DECIMAL(p, s) with the value's digits and
//	                  scale (a malformed decimal stays a STRING)
//	string_value      string, STRING
//	bytes_value       []byte (never nil), BYTES
//	timestamp_millis  types.TimestampValue, TIMESTAMP
//	date_days         types.DateValue, DATE
//	time_millis       types.TimeValue, TIME
//	array_value       []any, ARRAY<elem>
//	map_value         *types.MapValue, MAP<key, value>
//	struct_value      types.StructValue, STRUCT<fields> named as sent
//
// The element, key, value and field types of a composite type are merged
// from all its members, so that a NULL member does not hide the type of
// the others; a part no member shows (the element of an empty array, a
// field that is always NULL) is nil, the type of NULL. A struct field sent
// without a name is named F0, F1 ... by position, as types.FormatValue
// names the fields of an untyped struct. A nil v, or one without a kind,
// is NULL.
//
// types.FormatValue(DecodeValue(EncodeValue(v, t))) equals
// types.FormatValue(v, t) for every value v of type t whose strings are
// valid UTF-8.
func DecodeValue(v *sluicev1.Value) (any, *types.Type) {
	switch k := v.GetKind().(type) {
	case *sluicev1.Value_BoolValue:
		return k.BoolValue, types.BooleanType
	case *sluicev1.Value_IntValue:
		return k.IntValue, types.BigintType
	case *sluicev1.Value_DoubleValue:
		return k.DoubleValue, types.DoubleType
	case *sluicev1.Value_DecimalValue:
		d, err := types.ParseDec(k.DecimalValue)
		if err != nil {
			return k.DecimalValue, types.StringType
		}
		return d, types.DecimalOf(max(d.Precision(), d.Scale), d.Scale)
	case *sluicev1.Value_StringValue:
		return k.StringValue, types.StringType
	case *sluicev1.Value_BytesValue:
		b := k.BytesValue
		if b == nil {
			b = []byte{}
		}
		return b, types.BytesType
	case *sluicev1.Value_TimestampMillis:
		return types.TimestampValue(k.TimestampMillis), types.TimestampType
	case *sluicev1.Value_DateDays:
		return types.DateValue(k.DateDays), types.DateType
	case *sluicev1.Value_TimeMillis:
		return types.TimeValue(k.TimeMillis), types.TimeType
	case *sluicev1.Value_ArrayValue:
		elems := k.ArrayValue.GetElements()
		out := make([]any, len(elems))
		var elem *types.Type
		for i, e := range elems {
			var et *types.Type
			out[i], et = DecodeValue(e)
			elem = merge(elem, et)
		}
		return out, types.ArrayOf(elem)
	case *sluicev1.Value_MapValue:
		entries := k.MapValue.GetEntries()
		m := &types.MapValue{Keys: make([]any, len(entries)), Values: make([]any, len(entries))}
		var kt, vt *types.Type
		for i, e := range entries {
			var t *types.Type
			m.Keys[i], t = DecodeValue(e.GetKey())
			kt = merge(kt, t)
			m.Values[i], t = DecodeValue(e.GetValue())
			vt = merge(vt, t)
		}
		return m, types.MapOf(kt, vt)
	case *sluicev1.Value_StructValue:
		fields := k.StructValue.GetFields()
		s := make(types.StructValue, len(fields))
		ft := make([]types.Field, len(fields))
		for i, f := range fields {
			s[i], ft[i].Type = DecodeValue(f.GetValue())
			ft[i].Name = f.GetName()
			if ft[i].Name == "" {
				ft[i].Name = "F" + strconv.Itoa(i)
			}
		}
		return s, types.StructOf(ft...)
	}
	return nil, nil
}

// merge combines two types shown by members of the same composite value:
// the parts one of them leaves unknown (nil) come from the other. Where
// both know a part, a takes precedence.
func merge(a, b *types.Type) *types.Type {
	switch {
	case a == nil:
		return b
	case b == nil || a.Kind != b.Kind:
		return a
	}
	switch a.Kind {
	case types.Decimal:
		if b.Precision-b.Scale > a.Precision-a.Scale || b.Scale > a.Scale {
			scale := max(a.Scale, b.Scale)
			return types.DecimalOf(max(a.Precision-a.Scale, b.Precision-b.Scale)+scale, scale)
		}
	case types.Array:
		if e := merge(a.Elem, b.Elem); e != a.Elem {
			return types.ArrayOf(e)
		}
	case types.Map:
		k, e := merge(a.Key, b.Key), merge(a.Elem, b.Elem)
		if k != a.Key || e != a.Elem {
			return types.MapOf(k, e)
		}
	case types.Struct:
		var fields []types.Field
		for i, f := range a.Fields {
			if i >= len(b.Fields) {
				break
			}
			if m := merge(f.Type, b.Fields[i].Type); m != f.Type {
				if fields == nil {
					fields = append([]types.Field(nil), a.Fields...)
				}
				fields[i].Type = m
			}
		}
		if len(b.Fields) > len(a.Fields) {
			if fields == nil {
				fields = append([]types.Field(nil), a.Fields...)
			}
			fields = append(fields, b.Fields[len(a.Fields):]...)
		}
		if fields != nil {
			return types.StructOf(fields...)
		}
	}
	return a
}
