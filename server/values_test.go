package server

import (
	"testing"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/sluice-sql/sluice/internal/types"
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
		{decimalText("1.50"), types.DecimalOf(4, 2), `decimal_value:"1.50"`},
		{[]any{int32(1), nil}, types.ArrayOf(types.IntType), `array_value:{elements:{int_value:1} elements:{null_value:NULL_VALUE}}`},
		{&types.MapValue{Keys: []any{"k"}, Values: []any{int64(2)}}, types.MapOf(types.StringType, types.BigintType),
			`map_value:{entries:{key:{string_value:"k"} value:{int_value:2}}}`},
		{types.StructValue{"x"}, types.StructOf(types.Field{Name: "F", Type: types.StringType}),
			`struct_value:{fields:{name:"F" value:{string_value:"x"}}}`},
		{types.StructValue{"x"}, nil, `struct_value:{fields:{value:{string_value:"x"}}}`},
	} {
		got := prototext.MarshalOptions{}.Format(encodeValue(tc.v, tc.t))
		if normalize(got) != normalize(tc.want) {
			t.Errorf("encodeValue(%#v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

// normalize removes the spaces prototext adds at random.
func normalize(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r != ' ' {
			out = append(out, r)
		}
	}
	return string(out)
}
