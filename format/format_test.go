package format

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

func dec(s string) types.Dec {
	d, err := types.ParseDec(s)
	if err != nil {
		panic(err)
	}
	return d
}

var allCols = []types.Column{
	{Name: "B", Type: types.BooleanType},
	{Name: "I", Type: types.IntType},
	{Name: "L", Type: types.BigintType},
	{Name: "D", Type: types.DoubleType},
	{Name: "M", Type: types.DecimalOf(6, 4)},
	{Name: "S", Type: types.StringType},
	{Name: "Y", Type: types.BytesType},
	{Name: "TS", Type: types.TimestampType},
	{Name: "DT", Type: types.DateType},
	{Name: "TM", Type: types.TimeType},
	{Name: "A", Type: types.ArrayOf(types.StringType)},
	{Name: "MP", Type: types.MapOf(types.StringType, types.IntType)},
	{Name: "ST", Type: types.StructOf(types.Field{Name: "F", Type: types.DoubleType}, types.Field{Name: "g", Type: types.IntType})},
	{Name: "lower", Type: types.StringType},
}

func TestJSONDecode(t *testing.T) {
	c, err := NewValueCodec("json", allCols, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want map[string]any
	}{
		{`{"B":true,"I":1,"L":10827272222,"D":1.5,"M":12.365,"S":"x\"\u00e9","Y":"AQI=","TS":1000,"DT":3,"TM":60000,"A":["a",null],"MP":{"a":1,"b":null},"ST":{"f":4.5,"G":2},"lower":"q"}`,
			map[string]any{"B": true, "I": int32(1), "L": int64(10827272222), "D": 1.5, "M": dec("12.3650"), "S": "x\"é", "Y": []byte{1, 2},
				"TS": types.TimestampValue(1000), "DT": types.DateValue(3), "TM": types.TimeValue(60000), "A": []any{"a", nil},
				"MP": &types.MapValue{Keys: []any{"a", "b"}, Values: []any{int32(1), nil}}, "ST": types.StructValue{4.5, int32(2)}, "lower": "q"}},
		{`{"b":"TRUE","i":"12","l":2.9,"d":"2","m":"1.5","s":12.50,"a":[1,true],"unknown":{"x":[1,2]}}`,
			map[string]any{"B": true, "I": int32(12), "L": int64(2), "D": 2.0, "M": dec("1.5000"), "S": "12.50", "A": []any{"1", "true"}}},
		{`{"S":{"a": [1, 2]}}`, map[string]any{"S": `{"a":[1,2]}`}},
		{` {} `, map[string]any{}},
		{`null`, map[string]any{}},
		{`{"LOWER":"exact wins?","lower":"yes"}`, map[string]any{"lower": "yes"}},
	}
	for _, tt := range tests {
		dst := make([]any, len(allCols))
		if err := c.Decode([]byte(tt.in), dst); err != nil {
			t.Errorf("Decode(%s): %v", tt.in, err)
			continue
		}
		for i, col := range allCols {
			want := tt.want[col.Name]
			if x, ok := want.(types.Dec); ok {
				if y, ok := dst[i].(types.Dec); !ok || x.String() != y.String() {
					t.Errorf("Decode(%s) %s = %v, want %v", tt.in, col.Name, dst[i], want)
				}
				continue
			}
			if !reflect.DeepEqual(dst[i], want) {
				t.Errorf("Decode(%s) %s = %#v, want %#v", tt.in, col.Name, dst[i], want)
			}
		}
	}
}

func TestJSONDecodeErrors(t *testing.T) {
	c, _ := NewValueCodec("JSON", allCols, nil)
	for _, in := range []string{
		`{"I":1`, `{"I":}`, `[1]`, `{"I":"abc"}`, `{"B":3}`, `{"M":12345.6}`, `{"Y":"***"}`, `{"A":{}}`, `{"S":"x"} x`, `{"S":"\q"}`, `"x"`,
	} {
		dst := make([]any, len(allCols))
		if err := c.Decode([]byte(in), dst); err == nil {
			t.Errorf("Decode(%s) = %v, want an error", in, dst)
		}
	}
}

func TestJSONEncode(t *testing.T) {
	c, _ := NewValueCodec("JSON", allCols, nil)
	row := []any{true, int32(1), int64(-2), 1.0, dec("10.0000"), "a\"b\n\x01", []byte{1, 2},
		types.TimestampValue(5), types.DateValue(6), types.TimeValue(7), []any{"x", nil},
		&types.MapValue{Keys: []any{"k"}, Values: []any{int32(1)}}, types.StructValue{1e10, nil}, nil}
	got, err := c.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"B":true,"I":1,"L":-2,"D":1.0,"M":10.0000,"S":"a\"b\n\u0001","Y":"AQI=","TS":5,"DT":6,"TM":7,"A":["x",null],"MP":{"k":1},"ST":{"F":1.0E10,"g":null},"lower":null}`
	if string(got) != want {
		t.Errorf("Encode =\n%s\nwant\n%s", got, want)
	}
	back := make([]any, len(allCols))
	if err := c.Decode(got, back); err != nil {
		t.Fatal(err)
	}
	again, _ := c.Encode(nil, back)
	if string(again) != want {
		t.Errorf("round trip =\n%s", again)
	}
	nan, _ := c.Encode(nil, []any{nil, nil, nil, math.NaN(), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil})
	if !strings.Contains(string(nan), `"D":"NaN"`) {
		t.Errorf("NaN encoded as %s", nan)
	}
}

func TestJSONUnwrapped(t *testing.T) {
	cols := []types.Column{{Name: "V", Type: types.ArrayOf(types.DoubleType)}}
	c, err := NewValueCodec("JSON", cols, map[string]string{"WRAP_SINGLE_VALUE": "false"})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]any, 1)
	if err := c.Decode([]byte(`[10.1]`), dst); err != nil || !reflect.DeepEqual(dst[0], []any{10.1}) {
		t.Fatalf("Decode = %v, %v", dst, err)
	}
	b, _ := c.Encode(nil, []any{[]any{99.99}})
	if string(b) != `[99.99]` {
		t.Errorf("Encode = %s", b)
	}
	if b, _ := c.Encode(nil, []any{nil}); b != nil {
		t.Errorf("Encode(null) = %q, want nil", b)
	}
	if _, err := NewValueCodec("JSON", allCols, map[string]string{"WRAP_SINGLE_VALUE": "false"}); err == nil {
		t.Error("WRAP_SINGLE_VALUE=false accepted for several columns")
	}
	wrapped, _ := NewValueCodec("JSON", cols, map[string]string{"WRAP_SINGLE_VALUE": "true"})
	b, _ = wrapped.Encode(nil, []any{[]any{1.5}})
	if string(b) != `{"V":[1.5]}` {
		t.Errorf("wrapped Encode = %s", b)
	}
}

func TestJSONKey(t *testing.T) {
	one, _ := NewKeyCodec("JSON", []types.Column{{Name: "K", Type: types.BigintType}})
	dst := make([]any, 1)
	if err := one.Decode([]byte(`998877665544332211`), dst); err != nil || dst[0] != int64(998877665544332211) {
		t.Fatalf("Decode = %v, %v", dst, err)
	}
	two, _ := NewKeyCodec("JSON", []types.Column{{Name: "K", Type: types.StringType}, {Name: "K2", Type: types.IntType}})
	b, _ := two.Encode(nil, []any{"a", int32(2)})
	if string(b) != `{"K":"a","K2":2}` {
		t.Errorf("Encode = %s", b)
	}
}

func TestKafka(t *testing.T) {
	tests := []struct {
		t   *types.Type
		v   any
		enc []byte
	}{
		{types.IntType, int32(-2), []byte{0xff, 0xff, 0xff, 0xfe}},
		{types.BigintType, int64(1), []byte{0, 0, 0, 0, 0, 0, 0, 1}},
		{types.DoubleType, 1.0, []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}},
		{types.StringType, "héllo", []byte("héllo")},
		{types.StringType, "", []byte{}},
		{types.BytesType, []byte{0, 1}, []byte{0, 1}},
		{types.IntType, nil, nil},
	}
	for _, tt := range tests {
		cols := []types.Column{{Name: "K", Type: tt.t}}
		for _, c := range []func() (Codec, error){
			func() (Codec, error) { return NewKeyCodec("kafka", cols) },
			func() (Codec, error) { return NewValueCodec("KAFKA", cols, nil) },
		} {
			codec, err := c()
			if err != nil {
				t.Fatal(err)
			}
			b, err := codec.Encode(nil, []any{tt.v})
			if err != nil || !reflect.DeepEqual(b, tt.enc) {
				t.Errorf("Encode(%v) = %v, %v; want %v", tt.v, b, err, tt.enc)
			}
			dst := make([]any, 1)
			if err := codec.Decode(tt.enc, dst); err != nil || !reflect.DeepEqual(dst[0], tt.v) {
				t.Errorf("Decode(%v) = %#v, %v; want %#v", tt.enc, dst[0], err, tt.v)
			}
		}
	}
	ic, _ := NewKeyCodec("KAFKA", []types.Column{{Name: "K", Type: types.IntType}})
	if err := ic.Decode([]byte{1, 2}, make([]any, 1)); err == nil {
		t.Error("short INT accepted")
	}
}

func TestCodecErrors(t *testing.T) {
	one := []types.Column{{Name: "K", Type: types.IntType}}
	two := []types.Column{{Name: "K", Type: types.IntType}, {Name: "K2", Type: types.IntType}}
	tests := []struct {
		err  error
		want string
	}{
		{second(NewValueCodec("FOO", one, nil)), "Unknown format: FOO"},
		{second(NewKeyCodec("KAFKA", two)), "The 'KAFKA' format only supports a single field. Got: [`K` INTEGER KEY, `K2` INTEGER KEY]"},
		{second(NewKeyCodec("KAFKA", []types.Column{{Name: "K", Type: types.BooleanType}})), "The 'KAFKA' format does not support type 'BOOLEAN'"},
		{second(NewValueCodec("JSON", []types.Column{{Name: "M", Type: types.MapOf(types.IntType, types.IntType)}}, nil)), "JSON only supports MAP types with STRING keys"},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("error = %v, want %q", tt.err, tt.want)
		}
	}
	nk, err := NewKeyCodec("KAFKA", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := nk.Encode(nil, nil); b != nil || err != nil {
		t.Errorf("no-key Encode = %v, %v", b, err)
	}
}

func second(_ Codec, err error) error { return err }

var benchCols = []types.Column{
	{Name: "ID", Type: types.BigintType},
	{Name: "NAME", Type: types.StringType},
	{Name: "PRICE", Type: types.DoubleType},
	{Name: "QTY", Type: types.IntType},
	{Name: "ACTIVE", Type: types.BooleanType},
}

var benchRecord = []byte(`{"ID":1234567,"NAME":"widget \"deluxe\"","PRICE":12.75,"QTY":3,"ACTIVE":true}`)

func BenchmarkJSONDecode(b *testing.B) {
	c, _ := NewValueCodec("JSON", benchCols, nil)
	dst := make([]any, len(benchCols))
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRecord)))
	for b.Loop() {
		if err := c.Decode(benchRecord, dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkJSONEncode(b *testing.B) {
	c, _ := NewValueCodec("JSON", benchCols, nil)
	row := []any{int64(1234567), `widget "deluxe"`, 12.75, int32(3), true}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = c.Encode(buf[:0], row); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// bidCols and bidRecord are a Nexmark bid, as the engine benchmarks read
// it: lower-case members for upper-case columns.
var bidCols = []types.Column{
	{Name: "AUCTION", Type: types.BigintType},
	{Name: "BIDDER", Type: types.BigintType},
	{Name: "PRICE", Type: types.BigintType},
	{Name: "CHANNEL", Type: types.StringType},
	{Name: "URL", Type: types.StringType},
	{Name: "DATETIME", Type: types.BigintType},
	{Name: "EXTRA", Type: types.StringType},
}

var bidRecord = []byte(`{"auction":1031,"bidder":8919,"price":1403,"channel":"Baidu","url":"https://www.nexmark.com/Baidu/item.htm?query=1&channel_id=406","dateTime":1436918400406,"extra":"xxxxxxxxxxxxxxxx"}`)

func BenchmarkJSONDecodeBid(b *testing.B) {
	c, _ := NewValueCodec("JSON", bidCols, nil)
	dst := make([]any, len(bidCols))
	var a Arena
	b.ReportAllocs()
	b.SetBytes(int64(len(bidRecord)))
	for b.Loop() {
		if err := DecodeIn(c, &a, bidRecord, dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkJSONEncodeBid(b *testing.B) {
	c, _ := NewValueCodec("JSON", bidCols, nil)
	row := make([]any, len(bidCols))
	if err := c.Decode(bidRecord, row); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = c.Encode(buf[:0], row); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
