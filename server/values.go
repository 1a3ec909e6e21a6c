package server

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/sluice-sql/sluice/internal/types"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// encodeRow converts a push query row to its wire form. cols give the
// types that name struct fields and mark decimals.
func encodeRow(row []any, cols []types.Column) *sluicev1.Row {
	out := &sluicev1.Row{Values: make([]*sluicev1.Value, len(row))}
	for i, v := range row {
		var t *types.Type
		if i < len(cols) {
			t = cols[i].Type
		}
		out.Values[i] = encodeValue(v, t)
	}
	return out
}

// encodeValue converts one value, laid out as package types documents, to
// its wire form. t may be nil when the type is unknown.
func encodeValue(v any, t *types.Type) *sluicev1.Value {
	switch x := v.(type) {
	case nil:
		return &sluicev1.Value{Kind: &sluicev1.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}
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
	case string:
		return &sluicev1.Value{Kind: &sluicev1.Value_StringValue{StringValue: x}}
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
			a.Elements[i] = encodeValue(e, elem)
		}
		return &sluicev1.Value{Kind: &sluicev1.Value_ArrayValue{ArrayValue: a}}
	case *types.MapValue:
		if x == nil {
			return encodeValue(nil, t)
		}
		var kt, vt *types.Type
		if t != nil {
			kt, vt = t.Key, t.Elem
		}
		m := &sluicev1.MapValue{Entries: make([]*sluicev1.MapEntry, len(x.Keys))}
		for i, k := range x.Keys {
			var val any
			if i < len(x.Values) {
				val = x.Values[i]
			}
			m.Entries[i] = &sluicev1.MapEntry{Key: encodeValue(k, kt), Value: encodeValue(val, vt)}
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
			s.Fields[i] = &sluicev1.StructField{Name: name, Value: encodeValue(f, ft)}
		}
		return &sluicev1.Value{Kind: &sluicev1.Value_StructValue{StructValue: s}}
	}
	// DECIMAL values (and any other type) travel as their text form.
	if t != nil && t.Kind == types.Decimal {
		return &sluicev1.Value{Kind: &sluicev1.Value_DecimalValue{DecimalValue: fmt.Sprint(v)}}
	}
	return &sluicev1.Value{Kind: &sluicev1.Value_StringValue{StringValue: fmt.Sprint(v)}}
}

func intValue(i int64) *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_IntValue{IntValue: i}}
}
