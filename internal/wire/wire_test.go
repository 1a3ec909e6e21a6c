package wire

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sql/sluice/internal/types"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

type decimalText string

func (d decimalText) String() string { return string(d) }

func TestEncodeValue(t *testing.T) {
	for _, tc := range []struct {
		v    any
		t    *types.Type
		want string
	}{
		{nil, types.IntType, `null_value:NULL_VALUE`},
		{true, types.BooleanType, `bool_value:true`},
		{int32(7), types.IntType, `int_value:7`},
		{int64(-7), types.BigintType, `int_value:-7`},
		{1.5, types.DoubleType, `double_value:1.5`},
		{"hi", types.StringType, `string_value:"hi"`},
		{[]byte{1}, types.BytesType, `bytes_value:"\x01"`},
		{types.TimestampValue(1000), types.TimestampType, `timestamp_millis:1000`},
		{types.DateValue(3), types.DateType, `date_days:3`},
		{types.TimeValue(4), types.TimeType, `time_millis:4`},
		{types.NewDec(150, 2), types.DecimalOf(4, 2), `decimal_value:"1.50"`},
		{types.NewDec(-5, 2), nil, `decimal_value:"-0.05"`},
		{decimalText("1.50"), types.DecimalOf(4, 2), `decimal_value:"1.50"`},
		{decimalText("x"), nil, `string_value:"x"`},
		{[]any{int32(1), nil}, types.ArrayOf(types.IntType), `array_value:{elements:{int_value:1} elements:{null_value:NULL_VALUE}}`},
		{&types.MapValue{Keys: []any{"k"}, Values: []any{int64(2)}}, types.MapOf(types.StringType, types.BigintType),
			`map_value:{entries:{key:{string_value:"k"} value:{int_value:2}}}`},
		{(*types.MapValue)(nil), types.MapOf(types.StringType, types.BigintType), `map_value:{}`},
		{types.StructValue{"x"}, types.StructOf(types.Field{Name: "F", Type: types.StringType}),
			`struct_value:{fields:{name:"F" value:{string_value:"x"}}}`},
		{types.StructValue{"x"}, nil, `struct_value:{fields:{value:{string_value:"x"}}}`},
	} {
		got := prototext.MarshalOptions{}.Format(EncodeValue(tc.v, tc.t))
		if normalize(got) != normalize(tc.want) {
			t.Errorf("EncodeValue(%#v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

func TestEncodeRow(t *testing.T) {
	cols := []types.Column{{Name: "S", Type: types.StructOf(types.Field{Name: "A", Type: types.IntType})}}
	got := prototext.MarshalOptions{}.Format(EncodeRow([]any{types.StructValue{int32(1)}, "extra"}, cols))
	want := `values:{struct_value:{fields:{name:"A" value:{int_value:1}}}} values:{string_value:"extra"}`
	if normalize(got) != normalize(want) {
		t.Errorf("EncodeRow = %s, want %s", got, want)
	}
}

// normalize removes the spaces prototext adds at random.
func normalize(s string) string {
	return strings.ReplaceAll(s, " ", "")
}

func TestRoundTrip(t *testing.T) {
	point := types.StructOf(types.Field{Name: "X", Type: types.IntType}, types.Field{Name: "LABEL", Type: types.StringType})
	nested := types.StructOf(
		types.Field{Name: "ID", Type: types.BigintType},
		types.Field{Name: "TAGS", Type: types.ArrayOf(types.StringType)},
		types.Field{Name: "POS", Type: point},
		types.Field{Name: "PRICES", Type: types.MapOf(types.StringType, types.DecimalOf(6, 2))},
	)
	for _, tc := range []struct {
		name  string
		v     any
		t     *types.Type
		wantV any         // the decoded value
		wantT *types.Type // the decoded type
	}{
		{"null", nil, types.StringType, nil, nil},
		{"null untyped", nil, nil, nil, nil},
		{"boolean", false, types.BooleanType, false, types.BooleanType},
		{"integer", int32(-3), types.IntType, int64(-3), types.BigintType},
		{"integer max", int32(math.MaxInt32), types.IntType, int64(math.MaxInt32), types.BigintType},
		{"bigint", int64(math.MinInt64), types.BigintType, int64(math.MinInt64), types.BigintType},
		{"double", 0.25, types.DoubleType, 0.25, types.DoubleType},
		{"double big", 1.5e10, types.DoubleType, 1.5e10, types.DoubleType},
		{"double NaN", math.NaN(), types.DoubleType, math.NaN(), types.DoubleType},
		{"double -Inf", math.Inf(-1), types.DoubleType, math.Inf(-1), types.DoubleType},
		{"double -0", math.Copysign(0, -1), types.DoubleType, math.Copysign(0, -1), types.DoubleType},
		{"decimal", types.NewDec(1250, 2), types.DecimalOf(10, 2), types.NewDec(1250, 2), types.DecimalOf(4, 2)},
		{"decimal small", types.NewDec(-5, 3), types.DecimalOf(4, 3), types.NewDec(-5, 3), types.DecimalOf(3, 3)},
		{"decimal zero", types.NewDec(0, 0), types.DecimalOf(1, 0), types.NewDec(0, 0), types.DecimalOf(1, 0)},
		{"string", "say \"hi\"\n", types.StringType, "say \"hi\"\n", types.StringType},
		{"string empty", "", types.StringType, "", types.StringType},
		{"bytes", []byte("hi"), types.BytesType, []byte("hi"), types.BytesType},
		{"bytes empty", []byte{}, types.BytesType, []byte{}, types.BytesType},
		{"timestamp", types.TimestampValue(1_700_000_000_123), types.TimestampType, types.TimestampValue(1_700_000_000_123), types.TimestampType},
		{"timestamp before 1970", types.TimestampValue(-1), types.TimestampType, types.TimestampValue(-1), types.TimestampType},
		{"date", types.DateValue(19000), types.DateType, types.DateValue(19000), types.DateType},
		{"time", types.TimeValue(3_723_004), types.TimeType, types.TimeValue(3_723_004), types.TimeType},
		{"array", []any{int32(1), nil, int32(2)}, types.ArrayOf(types.IntType),
			[]any{int64(1), nil, int64(2)}, types.ArrayOf(types.BigintType)},
		{"array empty", []any{}, types.ArrayOf(types.StringType), []any{}, types.ArrayOf(nil)},
		{"array of nulls", []any{nil}, types.ArrayOf(types.StringType), []any{nil}, types.ArrayOf(nil)},
		{"array of arrays", []any{[]any{"a"}, []any{}, nil}, types.ArrayOf(types.ArrayOf(types.StringType)),
			[]any{[]any{"a"}, []any{}, nil}, types.ArrayOf(types.ArrayOf(types.StringType))},
		{"map", &types.MapValue{Keys: []any{"a", "b"}, Values: []any{2.0, nil}}, types.MapOf(types.StringType, types.DoubleType),
			&types.MapValue{Keys: []any{"a", "b"}, Values: []any{2.0, nil}}, types.MapOf(types.StringType, types.DoubleType)},
		{"map int keys", &types.MapValue{Keys: []any{int32(3)}, Values: []any{"c"}}, types.MapOf(types.IntType, types.StringType),
			&types.MapValue{Keys: []any{int64(3)}, Values: []any{"c"}}, types.MapOf(types.BigintType, types.StringType)},
		{"map empty", &types.MapValue{}, types.MapOf(types.StringType, types.StringType),
			&types.MapValue{Keys: []any{}, Values: []any{}}, types.MapOf(nil, nil)},
		{"struct", types.StructValue{int32(1), "one"}, point,
			types.StructValue{int64(1), "one"}, types.StructOf(types.Field{Name: "X", Type: types.BigintType}, types.Field{Name: "LABEL", Type: types.StringType})},
		{"struct with null field", types.StructValue{nil, "one"}, point,
			types.StructValue{nil, "one"}, types.StructOf(types.Field{Name: "X"}, types.Field{Name: "LABEL", Type: types.StringType})},
		{"struct untyped", types.StructValue{true, nil}, nil,
			types.StructValue{true, nil}, types.StructOf(types.Field{Name: "F0", Type: types.BooleanType}, types.Field{Name: "F1"})},
		{"nested",
			types.StructValue{
				int64(7),
				[]any{"a", nil},
				types.StructValue{int32(-1), nil},
				&types.MapValue{Keys: []any{"tea", "cake"}, Values: []any{types.NewDec(350, 2), nil}},
			},
			nested,
			types.StructValue{
				int64(7),
				[]any{"a", nil},
				types.StructValue{int64(-1), nil},
				&types.MapValue{Keys: []any{"tea", "cake"}, Values: []any{types.NewDec(350, 2), nil}},
			},
			types.StructOf(
				types.Field{Name: "ID", Type: types.BigintType},
				types.Field{Name: "TAGS", Type: types.ArrayOf(types.StringType)},
				types.Field{Name: "POS", Type: types.StructOf(types.Field{Name: "X", Type: types.BigintType}, types.Field{Name: "LABEL"})},
				types.Field{Name: "PRICES", Type: types.MapOf(types.StringType, types.DecimalOf(3, 2))},
			)},
		{"array of structs, types merged",
			[]any{nil, types.StructValue{nil, "p"}, types.StructValue{int32(2), nil}},
			types.ArrayOf(point),
			[]any{nil, types.StructValue{nil, "p"}, types.StructValue{int64(2), nil}},
			types.ArrayOf(types.StructOf(types.Field{Name: "X", Type: types.BigintType}, types.Field{Name: "LABEL", Type: types.StringType}))},
		{"map of arrays of maps",
			&types.MapValue{Keys: []any{"m"}, Values: []any{[]any{&types.MapValue{Keys: []any{"k"}, Values: []any{types.DateValue(1)}}, nil}}},
			types.MapOf(types.StringType, types.ArrayOf(types.MapOf(types.StringType, types.DateType))),
			&types.MapValue{Keys: []any{"m"}, Values: []any{[]any{&types.MapValue{Keys: []any{"k"}, Values: []any{types.DateValue(1)}}, nil}}},
			types.MapOf(types.StringType, types.ArrayOf(types.MapOf(types.StringType, types.DateType)))},
		{"decimals merged", []any{types.NewDec(15, 1), types.NewDec(10025, 2)}, types.ArrayOf(types.DecimalOf(5, 2)),
			[]any{types.NewDec(15, 1), types.NewDec(10025, 2)}, types.ArrayOf(types.DecimalOf(5, 2))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Through the wire: marshalled and unmarshalled as gRPC does.
			b, err := proto.Marshal(EncodeValue(tc.v, tc.t))
			if err != nil {
				t.Fatal(err)
			}
			var pv sluicev1.Value
			if err := proto.Unmarshal(b, &pv); err != nil {
				t.Fatal(err)
			}
			gotV, gotT := DecodeValue(&pv)
			if !sameValue(gotV, tc.wantV) {
				t.Errorf("value = %s, want %s", show(gotV), show(tc.wantV))
			}
			if !gotT.Equal(tc.wantT) {
				t.Errorf("type = %s, want %s", typeString(gotT), typeString(tc.wantT))
			}
			if got, want := types.FormatValue(gotV, gotT), types.FormatValue(tc.v, tc.t); got != want {
				t.Errorf("formatted = %q, want %q as the engine formats it", got, want)
			}
		})
	}
}

func TestDecodeOddValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     *sluicev1.Value
		wantV any
		wantT *types.Type
	}{
		{"nil", nil, nil, nil},
		{"no kind", &sluicev1.Value{}, nil, nil},
		{"bad decimal", &sluicev1.Value{Kind: &sluicev1.Value_DecimalValue{DecimalValue: "1.2.3"}}, "1.2.3", types.StringType},
		{"nil bytes", &sluicev1.Value{Kind: &sluicev1.Value_BytesValue{}}, []byte{}, types.BytesType},
		{"nil array", &sluicev1.Value{Kind: &sluicev1.Value_ArrayValue{}}, []any{}, types.ArrayOf(nil)},
		{"nil map entry", &sluicev1.Value{Kind: &sluicev1.Value_MapValue{MapValue: &sluicev1.MapValue{Entries: []*sluicev1.MapEntry{{}}}}},
			&types.MapValue{Keys: []any{nil}, Values: []any{nil}}, types.MapOf(nil, nil)},
	} {
		gotV, gotT := DecodeValue(tc.v)
		if !sameValue(gotV, tc.wantV) || !gotT.Equal(tc.wantT) {
			t.Errorf("%s: DecodeValue = %s, %s; want %s, %s", tc.name, show(gotV), typeString(gotT), show(tc.wantV), typeString(tc.wantT))
		}
	}
}

// TestFormatDecoded checks what a client shows for decoded values: ksqlDB
// CLI's notation.
func TestFormatDecoded(t *testing.T) {
	str := func(s string) *sluicev1.Value { return EncodeValue(s, nil) }
	num := func(i int64) *sluicev1.Value { return EncodeValue(i, nil) }
	for _, tc := range []struct {
		v    *sluicev1.Value
		want string
	}{
		{EncodeValue(nil, nil), "null"},
		{EncodeValue(1.0, nil), "1.0"},
		{EncodeValue(1e-5, nil), "1.0E-5"},
		{EncodeValue(types.NewDec(1250, 2), nil), "12.50"},
		{EncodeValue(types.TimestampValue(1_700_000_000_123), nil), "2023-11-14T22:13:20.123"},
		{&sluicev1.Value{Kind: &sluicev1.Value_ArrayValue{ArrayValue: &sluicev1.ArrayValue{
			Elements: []*sluicev1.Value{num(1), EncodeValue(nil, nil), str("x")}}}}, "[1, null, x]"},
		{&sluicev1.Value{Kind: &sluicev1.Value_MapValue{MapValue: &sluicev1.MapValue{Entries: []*sluicev1.MapEntry{
			{Key: str("a"), Value: EncodeValue(2.0, nil)}, {Key: num(3), Value: str("c")}}}}}, "{a=2.0, 3=c}"},
		{&sluicev1.Value{Kind: &sluicev1.Value_StructValue{StructValue: &sluicev1.StructValue{Fields: []*sluicev1.StructField{
			{Name: "A", Value: num(1)}, {Name: "B", Value: EncodeValue(types.DateValue(0), nil)}, {Value: str("x")}}}}},
			"{A=1, B=1970-01-01, F2=x}"},
	} {
		if got := types.FormatValue(DecodeValue(tc.v)); got != tc.want {
			t.Errorf("FormatValue(DecodeValue(%v)) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// sameValue reports whether a and b are the same value in the same Go
// representation.
func sameValue(a, b any) bool {
	if fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		return false
	}
	switch x := a.(type) {
	case nil:
		return true
	case float64:
		y := b.(float64)
		return x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y)
	case types.Dec:
		y := b.(types.Dec)
		return x.Scale == y.Scale && x.String() == y.String()
	case []byte:
		y := b.([]byte)
		return (x == nil) == (y == nil) && bytes.Equal(x, y)
	case []any:
		return sameValues(x, b.([]any))
	case types.StructValue:
		return sameValues(x, b.(types.StructValue))
	case *types.MapValue:
		y := b.(*types.MapValue)
		return sameValues(x.Keys, y.Keys) && sameValues(x.Values, y.Values)
	}
	return a == b
}

func sameValues(a, b []any) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if !sameValue(a[i], b[i]) {
			return false
		}
	}
	return true
}

func show(v any) string {
	switch x := v.(type) {
	case types.Dec:
		return "Dec(" + x.String() + ")"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = show(e)
		}
		return fmt.Sprintf("[]any{%s}", strings.Join(parts, ", "))
	case types.StructValue:
		return "Struct" + show([]any(x))
	case *types.MapValue:
		return "Map{" + show(x.Keys) + " " + show(x.Values) + "}"
	}
	return fmt.Sprintf("%T(%#v)", v, v)
}

// typeString spells t, with ? for the parts left unknown.
func typeString(t *types.Type) string {
	if t == nil {
		return "?"
	}
	switch t.Kind {
	case types.Array:
		return "ARRAY<" + typeString(t.Elem) + ">"
	case types.Map:
		return "MAP<" + typeString(t.Key) + ", " + typeString(t.Elem) + ">"
	case types.Struct:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + " " + typeString(f.Type)
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">"
	}
	return t.String()
}

func TestValidUTF8(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"héllo", "héllo"},
		{"a\xffb", "a\uFFFDb"},
		{"\xfe\xff", "\uFFFD\uFFFD"},
		{"\xe2\x82", "\uFFFD\uFFFD"}, // a cut sequence: one U+FFFD per byte
	} {
		if got := ValidUTF8(tc.in); got != tc.want {
			t.Errorf("ValidUTF8(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// A STRING read from Kafka may hold any bytes; its wire form must still
	// marshal.
	v := EncodeValue(types.StructValue{"a\xff", []any{"\xfe"}}, nil)
	if _, err := proto.Marshal(v); err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if got := types.FormatValue(DecodeValue(v)); got != "{F0=a\uFFFD, F1=[\uFFFD]}" {
		t.Errorf("decoded = %q", got)
	}
}
