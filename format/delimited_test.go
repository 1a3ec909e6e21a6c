package format

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

var delimCols = []types.Column{
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
}

func TestDelimitedRoundTrip(t *testing.T) {
	c, err := NewValueCodec("delimited", delimCols, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := []any{true, int32(-1), int64(10827272222), 1.5, dec("12.3650"), `a "b", c`, []byte{1, 2},
		types.TimestampValue(5), types.DateValue(-6), types.TimeValue(7)}
	got, err := c.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	want := `true,-1,10827272222,1.5,12.3650,"a ""b"", c",AQI=,5,-6,7`
	if string(got) != want {
		t.Fatalf("Encode =\n%s\nwant\n%s", got, want)
	}
	back := make([]any, len(delimCols))
	if err := c.Decode(got, back); err != nil {
		t.Fatal(err)
	}
	for i := range row {
		if x, ok := row[i].(types.Dec); ok {
			if y, ok := back[i].(types.Dec); !ok || x.Cmp(y) != 0 {
				t.Errorf("column %d = %v, want %v", i, back[i], row[i])
			}
			continue
		}
		if !reflect.DeepEqual(back[i], row[i]) {
			t.Errorf("column %d = %#v, want %#v", i, back[i], row[i])
		}
	}
}

func TestDelimitedQuoting(t *testing.T) {
	cols := []types.Column{{Name: "A", Type: types.StringType}, {Name: "B", Type: types.StringType}, {Name: "C", Type: types.StringType}}
	c, _ := NewValueCodec("DELIMITED", cols, nil)
	tests := []struct {
		row  []any
		want string
	}{
		{[]any{"a", "b", "c"}, "a,b,c"},
		{[]any{nil, nil, "x"}, ",,x"},
		{[]any{"", "", ""}, `"",,`},
		{[]any{"-1", "-1", "#x"}, `"-1",-1,"#x"`},
		{[]any{"!", " lead", "trail "}, `"!"," lead","trail "`},
		{[]any{"\t wit", "x\ny", `"q"`}, "\"\t wit\",\"x\ny\",\"\"\"q\"\"\""},
		{[]any{"é", "é", "$"}, `"é",é,$`},
	}
	for _, tt := range tests {
		got, err := c.Encode(nil, tt.row)
		if err != nil || string(got) != tt.want {
			t.Errorf("Encode(%q) = %s, %v; want %s", tt.row, got, err, tt.want)
		}
	}
	pipe, err := NewValueCodec("DELIMITED", cols, map[string]string{ValueDelimiter: "'|'"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := pipe.Encode(nil, []any{"a,b", "c|d", nil})
	if string(got) != `a,b|"c|d"|` {
		t.Errorf("pipe Encode = %s", got)
	}
}

func TestDelimitedDecode(t *testing.T) {
	cols := []types.Column{{Name: "K1", Type: types.StringType}, {Name: "K2", Type: types.StringType}}
	tests := []struct {
		props map[string]string
		in    string
		want  []any
	}{
		{nil, "foo,bar", []any{"foo", "bar"}},
		{nil, `"foo","bar"`, []any{"foo", "bar"}},
		{nil, `"a""b" ,x`, []any{`a"b`, "x"}},
		{nil, `a"b,c`, []any{`a"b`, "c"}},
		{nil, ",", []any{nil, nil}},
		{nil, `"",x`, []any{nil, "x"}},
		{nil, "a,b\r\nc,d", []any{"a", "b"}},
		{nil, "\n\na,b\n", []any{"a", "b"}},
		{nil, "\"x\ny\",z", []any{"x\ny", "z"}},
		{map[string]string{KeyDelimiter: ";"}, "foo,bar;baz", []any{"foo,bar", "baz"}},
		{map[string]string{KeyDelimiter: "TAB"}, "a\tb", []any{"a", "b"}},
		{map[string]string{KeyDelimiter: "SPACE"}, "a b", []any{"a", "b"}},
		{map[string]string{KeyDelimiter: "¦"}, "a¦b", []any{"a", "b"}},
	}
	for _, tt := range tests {
		c, err := NewKeyCodecProps("DELIMITED", cols, tt.props)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]any, 2)
		if err := c.Decode([]byte(tt.in), dst); err != nil || !reflect.DeepEqual(dst, tt.want) {
			t.Errorf("Decode(%q) = %q, %v; want %q", tt.in, dst, err, tt.want)
		}
	}
	c, _ := NewKeyCodec("DELIMITED", cols)
	if b, err := c.Encode(nil, []any{nil, nil}); string(b) != "," || err != nil {
		t.Errorf("null columns Encode = %q, %v", b, err)
	}
	single, _ := NewKeyCodec("DELIMITED", cols[:1])
	if b, err := single.Encode(nil, []any{nil}); b != nil || err != nil {
		t.Errorf("null key Encode = %q, %v", b, err)
	}
	if err := c.Decode(nil, make([]any, 2)); err != nil {
		t.Errorf("null key Decode: %v", err)
	}
}

func TestDelimitedTypes(t *testing.T) {
	one := func(typ *types.Type, in string) (any, error) {
		c, err := NewValueCodec("DELIMITED", []types.Column{{Name: "V", Type: typ}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]any, 1)
		err = c.Decode([]byte(in), dst)
		return dst[0], err
	}
	ok := []struct {
		t    *types.Type
		in   string
		want any
	}{
		{types.BooleanType, "TRUE", true},
		{types.BooleanType, "yes", false},
		{types.IntType, "+12", int32(12)},
		{types.IntType, "-2147483648", int32(math.MinInt32)},
		{types.BigintType, "-9223372036854775808", int64(math.MinInt64)},
		{types.DoubleType, " 1.5d ", 1.5},
		{types.DoubleType, "-Infinity", math.Inf(-1)},
		{types.DoubleType, "1e3", 1000.0},
		{types.BytesType, "IQ", []byte("!")},
		{types.StringType, `"a,b"`, "a,b"},
		{types.DecimalOf(33, 16), ".12", dec("0.1200000000000000")},
		{types.DecimalOf(6, 4), `"12.0"`, dec("12.0000")},
	}
	for _, tt := range ok {
		got, err := one(tt.t, tt.in)
		if d, isDec := tt.want.(types.Dec); isDec {
			if g, _ := got.(types.Dec); err != nil || g.String() != d.String() {
				t.Errorf("%s %q = %v, %v; want %v", tt.t, tt.in, got, err, d)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %q = %#v, %v; want %#v", tt.t, tt.in, got, err, tt.want)
		}
	}
	bad := []struct {
		t    *types.Type
		in   string
		want string
	}{
		{types.IntType, "2147483648", `column V: cannot parse "2147483648" as INTEGER`},
		{types.IntType, " 1", "cannot parse"},
		{types.BigintType, "1.5", "cannot parse"},
		{types.DoubleType, "inf", "cannot parse"},
		{types.DoubleType, "abc", "cannot parse"},
		{types.DecimalOf(4, 2), "123.4", "Numeric field overflow: A field with precision 4 and scale 2 must round to an absolute value less than 10^2. Got 123.4"},
		{types.DecimalOf(4, 2), "1.234", "Cannot fit decimal '1.234' into DECIMAL(4, 2) without rounding. (Requires 4,3)"},
		{types.BytesType, "***", "not base64"},
		{types.StringType, `"open`, "EOF reached before encapsulated token finished"},
		{types.StringType, `"a"b`, "between encapsulated token and delimiter"},
		{types.StringType, "", "No fields in record"},
		{types.StringType, "a,b", "Unexpected field count, csvFields:2 schemaFields:1"},
	}
	for _, tt := range bad {
		got, err := one(tt.t, tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %q = %v, %v; want error %q", tt.t, tt.in, got, err, tt.want)
		}
	}
}

func TestDelimitedFieldCount(t *testing.T) {
	c, _ := NewValueCodec("DELIMITED", delimCols[:3], nil)
	dst := make([]any, 3)
	err := c.Decode([]byte("x,1"), dst)
	if err == nil || err.Error() != "Unexpected field count, csvFields:2 schemaFields:3" {
		t.Errorf("Decode error = %v", err)
	}
	if err := c.Decode([]byte("maybe,x,1"), dst); err == nil || !strings.Contains(err.Error(), "column I:") {
		t.Errorf("Decode error = %v", err)
	}
}

func TestDelimitedSingleNull(t *testing.T) {
	c, _ := NewValueCodec("DELIMITED", delimCols[:1], nil)
	b, err := c.Encode(nil, []any{nil})
	if err != nil || b == nil || len(b) != 0 {
		t.Errorf("Encode(null) = %q, %v; want empty bytes", b, err)
	}
}

func TestDelimitedErrors(t *testing.T) {
	arr := []types.Column{{Name: "K", Type: types.ArrayOf(types.DoubleType)}}
	st := []types.Column{{Name: "FOO", Type: types.StructOf(types.Field{Name: "F1", Type: types.DoubleType})}}
	tests := []struct {
		err  error
		want string
	}{
		{second(NewKeyCodec("DELIMITED", arr)), "Key format does not support schema.\nformat: DELIMITED\nschema: Persistence{columns=[`K` ARRAY<DOUBLE> KEY], features=[]}\nreason: The 'DELIMITED' format does not support type 'ARRAY', column: `K`"},
		{second(NewValueCodec("DELIMITED", st, nil)), "The 'DELIMITED' format does not support type 'STRUCT', column: `FOO`; use JSON"},
		{second(NewValueCodec("DELIMITED", delimCols, map[string]string{ValueDelimiter: "<~>"})), "Configuration VALUE_DELIMITER is invalid: Invalid delimiter value: '<~>'. Delimiter must be a single character or TAB,SPACE\nExample valid value: ';'"},
		{second(NewValueCodec("DELIMITED", delimCols, map[string]string{ValueDelimiter: "''"})), "Configuration VALUE_DELIMITER is invalid: Delimiter cannot be empty, if you meant to have a tab or space for delimiter, please use the special values 'TAB' or 'SPACE'"},
		{second(NewValueCodec("DELIMITED", delimCols, map[string]string{ValueDelimiter: "\t"})), "Delimiter cannot be empty"},
		{second(NewValueCodec("DELIMITED", delimCols, map[string]string{ValueDelimiter: `"`})), "quote"},
		{second(NewValueCodec("JSON", delimCols, map[string]string{ValueDelimiter: "|"})), "JSON does not support the following configs: [delimiter]"},
		{second(NewValueCodec("DELIMITED", delimCols[:1], map[string]string{WrapSingleValue: "true"})), "Format 'DELIMITED' does not support 'WRAP_SINGLE_VALUE' set to 'true'."},
		{second(NewKeyCodec("NONE", []types.Column{{Name: "K", Type: types.StringType}})), "The 'NONE' format can only be used when no columns are defined. Got: [`K` STRING KEY]"},
		{second(NewValueCodec("KAFKA", delimCols[:2], nil)), "The 'KAFKA' format only supports a single field. Got: [`B` BOOLEAN, `I` INTEGER]"},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("error = %v, want %q", tt.err, tt.want)
		}
	}
	if _, err := NewValueCodec("DELIMITED", delimCols[:1], map[string]string{WrapSingleValue: "false"}); err != nil {
		t.Error(err)
	}
	if c, err := NewKeyCodec("NONE", nil); err != nil || c == nil {
		t.Errorf("NONE without key columns: %v", err)
	}
}

var benchDelimited = []byte(`1234567,"widget ""deluxe""",12.75,3,true`)

func BenchmarkDelimitedDecode(b *testing.B) {
	c, _ := NewValueCodec("DELIMITED", benchCols, nil)
	dst := make([]any, len(benchCols))
	b.ReportAllocs()
	b.SetBytes(int64(len(benchDelimited)))
	for b.Loop() {
		if err := c.Decode(benchDelimited, dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkDelimitedEncode(b *testing.B) {
	c, _ := NewValueCodec("DELIMITED", benchCols, nil)
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
