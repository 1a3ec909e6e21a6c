package exec

import (
	"math"
	"reflect"
	"testing"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/types"
)

// TestInternalCodecDecodeArena checks that the one-pass decoding of
// repartition records reads what Decode reads, values and errors alike.
func TestInternalCodecDecodeArena(t *testing.T) {
	c := newInternalCodec([]types.Column{
		{Name: "B", Type: types.BooleanType}, {Name: "I", Type: types.IntType},
		{Name: "L", Type: types.BigintType}, {Name: "D", Type: types.DoubleType},
		{Name: "S", Type: types.StringType}, {Name: "T", Type: types.TimestampType},
		{Name: "DEC", Type: types.DecimalOf(10, 2)}, {Name: "A", Type: types.ArrayOf(types.StringType)},
		{Name: "M", Type: types.MapOf(types.StringType, types.BigintType)},
	})
	rows := [][]any{
		{true, int32(-7), int64(1) << 60, 2.5, "plain", types.TimestampValue(1_436_918_400_000), types.NewDec(12345, 2),
			[]any{"a", nil, "c,]"}, &types.MapValue{Keys: []any{"k"}, Values: []any{int64(300)}}},
		{nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{false, int32(math.MaxInt32), int64(math.MinInt64), math.Inf(-1), "esc\"aped\n<é>", types.TimestampValue(0), types.NewDec(-1, 2),
			[]any{}, &types.MapValue{Keys: []any{}, Values: []any{}}},
		{false, int32(0), int64(255), 1e-300, "", types.TimestampValue(-5), types.NewDec(0, 2), nil, nil},
		{true, int32(1), int64(2), 3.0, "https://x/?a=1&b=<2>\t\b\f\u2028\x01/\\ \U0001F600 é", types.TimestampValue(1), types.NewDec(1, 2), nil, nil},
	}
	for i, row := range rows {
		b, err := c.Encode(nil, row)
		if err != nil {
			t.Fatal(err)
		}
		// The third row's -Infinity is for Decode.
		if i != 2 && !c.scanRow(nil, b, make([]any, len(row))) {
			t.Errorf("%s: not read in one pass", b)
		}
		want, got := make([]any, len(row)), make([]any, len(row))
		if err := c.Decode(b, want); err != nil {
			t.Fatalf("Decode %s: %v", b, err)
		}
		var a format.Arena
		if err := c.DecodeArena(&a, b, got); err != nil {
			t.Fatalf("DecodeArena %s: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeArena %s:\n got %#v\nwant %#v", b, got, want)
		}
	}
	for _, bad := range []string{
		`[true]`, `[true,1,2,3.5,"s",1,"1.00",[],{"keys":[],"values":[]}] x`, `[1,1,2,3.5,"s",1,"1.00",[],null]`,
		`[true,2147483648,2,3.5,"s",1,"1.00",[],null]`, `[true,1,2.0,3.5,"s",1,"1.00",[],null]`, `[true,01,2,3.5,"s",1,"1.00",[],null]`,
		`[true,1,2,.5,"s",1,"1.00",[],null]`, `[true,1,2,3.5,"s\x01",1,"1.00",[],null]`, "[true,1,2,3.5,\"\xff\",1,\"1.00\",[],null]",
	} {
		want, got := make([]any, 9), make([]any, 9)
		werr := c.Decode([]byte(bad), want)
		gerr := c.DecodeArena(nil, []byte(bad), got)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) || (werr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: DecodeArena %v %#v, Decode %v %#v", bad, gerr, got, werr, want)
		}
	}
}
