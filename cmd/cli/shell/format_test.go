package shell

import (
	"math"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

func str(s string) *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_StringValue{StringValue: s}}
}

func num(i int64) *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_IntValue{IntValue: i}}
}

func dbl(f float64) *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_DoubleValue{DoubleValue: f}}
}

func TestFormatValue(t *testing.T) {
	null := &sluicev1.Value{Kind: &sluicev1.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}
	for _, tc := range []struct {
		v    *sluicev1.Value
		want string
	}{
		{null, "null"},
		{&sluicev1.Value{Kind: &sluicev1.Value_BoolValue{BoolValue: true}}, "true"},
		{num(-42), "-42"},
		{dbl(1), "1.0"},
		{dbl(0.25), "0.25"},
		{dbl(1.5e10), "1.5E10"},
		{dbl(1e-5), "1.0E-5"},
		{dbl(math.NaN()), "NaN"},
		{&sluicev1.Value{Kind: &sluicev1.Value_DecimalValue{DecimalValue: "12.50"}}, "12.50"},
		{str(`say "hi"`), `say "hi"`},
		{&sluicev1.Value{Kind: &sluicev1.Value_BytesValue{BytesValue: []byte("hi")}}, "aGk="},
		{&sluicev1.Value{Kind: &sluicev1.Value_TimestampMillis{TimestampMillis: 1700000000123}}, "2023-11-14T22:13:20.123"},
		{&sluicev1.Value{Kind: &sluicev1.Value_DateDays{DateDays: 19000}}, "2022-01-08"},
		{&sluicev1.Value{Kind: &sluicev1.Value_TimeMillis{TimeMillis: 3723000}}, "01:02:03"},
		{&sluicev1.Value{Kind: &sluicev1.Value_ArrayValue{ArrayValue: &sluicev1.ArrayValue{
			Elements: []*sluicev1.Value{num(1), null, str("x")}}}}, `[1,null,"x"]`},
		{&sluicev1.Value{Kind: &sluicev1.Value_MapValue{MapValue: &sluicev1.MapValue{Entries: []*sluicev1.MapEntry{
			{Key: str("a"), Value: dbl(2)}, {Key: num(3), Value: str("c")}}}}}, `{"a":2.0,"3":"c"}`},
		{&sluicev1.Value{Kind: &sluicev1.Value_StructValue{StructValue: &sluicev1.StructValue{Fields: []*sluicev1.StructField{
			{Name: "A", Value: num(1)}, {Name: "B", Value: &sluicev1.Value{Kind: &sluicev1.Value_DateDays{DateDays: 0}}}}}}},
			`{"A":1,"B":"1970-01-01"}`},
	} {
		if got := formatValue(tc.v); got != tc.want {
			t.Errorf("formatValue(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
