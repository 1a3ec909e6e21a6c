package format

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

// generalOnly returns a copy of c that reads every record with the
// general reader.
func generalOnly(c Codec) Codec {
	jc, ok := c.(*jsonCodec)
	if !ok {
		return c
	}
	g := *jc
	g.fast = nil
	return &g
}

// decodeBoth decodes in with c by both readers and fails when they
// disagree; it returns the row and the error.
func decodeBoth(t testing.TB, c Codec, in []byte, ncols int) ([]any, error) {
	t.Helper()
	var a, b Arena
	fast, gen := make([]any, ncols), make([]any, ncols)
	for i := range fast {
		// Decode must overwrite what a slot held.
		fast[i] = "stale"
	}
	errF := DecodeIn(c, &a, in, fast)
	errG := DecodeIn(generalOnly(c), &b, in, gen)
	if fmt.Sprint(errF) != fmt.Sprint(errG) {
		t.Fatalf("%q: the compiled reader says %v, the general one %v", in, errF, errG)
	}
	if errF == nil {
		if f, g := canon(fast), canon(gen); f != g {
			t.Fatalf("%q: the compiled reader reads\n%s\nthe general one\n%s", in, f, g)
		}
	}
	decodePruned(t, c, in, fast, errF)
	return fast, errF
}

// decodePruned decodes in with c pruned to every other column, and to
// none, by both readers, and fails unless each refuses in as c does
// (want and wantErr) or reads the same values of the columns it keeps and
// null for the others.
func decodePruned(t testing.TB, c Codec, in []byte, want []any, wantErr error) {
	t.Helper()
	n := len(want)
	for _, keep := range []func(int) bool{
		func(i int) bool { return i%2 == 1 },
		func(int) bool { return false },
	} {
		read := make([]bool, n)
		for i := range read {
			read[i] = keep(i)
		}
		p := Prune(c, read)
		for _, pc := range []Codec{p, generalOnly(p)} {
			var a Arena
			got := make([]any, n)
			for i := range got {
				got[i] = "stale"
			}
			err := DecodeIn(pc, &a, in, got)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%q pruned to %v: %v, not %v", in, read, err, wantErr)
			}
			if err != nil {
				continue
			}
			for i := range got {
				w := want[i]
				if jc, ok := c.(*jsonCodec); ok && !jc.bare && !read[i] {
					w = nil
				}
				if canon(got[i]) != canon(w) {
					t.Fatalf("%q pruned to %v: column %d reads %s, not %s", in, read, i, canon(got[i]), canon(w))
				}
			}
		}
	}
}

// canon prints a row or value with its Go types, maps and structs by
// content.
func canon(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canon(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case types.StructValue:
		return "struct" + canon([]any(x))
	case *types.MapValue:
		if x == nil {
			return "map(nil)"
		}
		return "map{" + canon(x.Keys) + ":" + canon(x.Values) + "}"
	case types.Dec:
		return "dec(" + x.String() + ")"
	}
	return fmt.Sprintf("%T(%#v)", v, v)
}

func TestJSONInvalidUTF8(t *testing.T) {
	cols := []types.Column{{Name: "ID", Type: types.BigintType}, {Name: "NAME", Type: types.StringType}, {Name: "M", Type: types.MapOf(types.StringType, types.StringType)}}
	c, err := NewValueCodec("JSON", cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		"{\"ID\":1,\"NAME\":\"a\xffb\"}",             // a byte no UTF-8 sequence starts with
		"{\"ID\":1,\"NAME\":\"\xc3\"}",               // a sequence cut short
		"{\"ID\":1,\"NAME\":\"x\\n\xe2\x82\"}",       // after an escape
		"{\"ID\":1,\"NAME\":\"\xed\xa0\x80\"}",       // an encoded surrogate
		"{\"ID\":1,\"NAME\":\"\xc0\xaf\"}",           // an overlong encoding
		"{\"ID\":1,\"N\xffAME\":\"x\"}",              // a member name
		"{\"ID\":1,\"other\":[\"\xff\"],\"NAME\":1}", // a member no column reads
		"{\"M\":{\"k\xff\":\"v\"}}",                  // a map key
	} {
		_, err := decodeBoth(t, c, []byte(in), len(cols))
		if err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
			t.Errorf("Decode(%q) = %v, want an invalid UTF-8 error", in, err)
		}
	}
	row, err := decodeBoth(t, c, []byte(`{"ID":1,"NAME":"héllo \u00e9 €𝄞"}`), len(cols))
	if err != nil || row[1] != "héllo é €𝄞" {
		t.Errorf("valid UTF-8 read as %q, %v", row[1], err)
	}
}

// TestJSONReaders reads records of every shape with both readers, which
// must agree.
func TestJSONReaders(t *testing.T) {
	c, err := NewValueCodec("JSON", allCols, nil)
	if err != nil {
		t.Fatal(err)
	}
	bid, err := NewValueCodec("JSON", bidCols, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		string(bidRecord),
		`{"auction":1,"bidder":-2,"price":null,"channel":"x\"y","url":"","dateTime":1e3,"extra":12}`,
		`{"EXTRA":"e","AUCTION":"12","unknown":{"a":[1,{"b":null}]},"Bidder":123456789012345678}`,
		`{"auction":1234567890123456789,"bidder":-1234567890123456789,"price":99999999999999999999}`,
		`{"auction":01,"bidder":-0,"price":1.5,"dateTime":-}`,
		` { "auction" : 1 , "channel" : "a" } `,
		`{"auction":1,"auction":2}`,
		`{"auction":1,}`, `{,}`, `{}`, `{ }`, `null`, ``, `{"auction":1} x`, `{"auction":1`, `{"auction"`,
		`{"auction":1 "bidder":2}`, `{"auction":tru}`, `{"channel":"abc`, `{"channel":"a` + "\n" + `b"}`,
		`{"channel":"é"}`, `{"chännel":"é"}`, `{"url":"https://x/y?z=1&w=2"}`, `[]`, `"x"`, `1`,
	} {
		decodeBoth(t, bid, []byte(in), len(bidCols))
	}
	for _, in := range []string{
		`{"B":true,"I":1,"L":10827272222,"D":1.5,"M":12.365,"S":"x\"\u00e9","Y":"AQI=","TS":1000,"DT":3,"TM":60000,"A":["a",null],"MP":{"a":1,"b":null},"ST":{"f":4.5,"G":2},"lower":"q"}`,
		`{"b":"TRUE","i":"12","l":2.9,"d":"2","m":"1.5","s":12.50,"a":[1,true],"unknown":{"x":[1,2]}}`,
		`{"I":2147483648,"L":"12","S":{"a": [1, 2]},"D":1e400,"lower":true}`,
		`{"LOWER":"exact wins?","lower":"yes"}`, `{"I":1.5}`, `{"I":"x"}`, `{"B":3}`, `{"M":12345.6}`,
	} {
		decodeBoth(t, c, []byte(in), len(allCols))
	}
}

// TestJSONFastNames checks the names the compiled reader matches: letters
// in any case, other bytes as they are.
func TestJSONFastNames(t *testing.T) {
	cols := []types.Column{{Name: "A_1", Type: types.BigintType}, {Name: "a@b[", Type: types.BigintType}, {Name: "LONG_NAME_OVER_8", Type: types.BigintType}}
	c, err := NewValueCodec("JSON", cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.(*jsonCodec).fast == nil {
		t.Fatal("no compiled reader")
	}
	for in, want := range map[string]string{
		`{"a_1":1,"A@B[":2,"long_name_over_8":3}`:              "[1 2 3]",
		`{"a\u005f1":1,"a@b{":2,"LONG_NAME_OVER_8":3}`:         "[1 <nil> 3]",
		`{"A_1":1,"a` + "\x60" + `b[":2,"long_name_over_9":3}`: "[1 <nil> <nil>]",
		`{"A" :1,"a@b[" : 2,"LONG_NAME_OVER_":3}`:              "[<nil> 2 <nil>]",
	} {
		row, err := decodeBoth(t, c, []byte(in), len(cols))
		if err != nil || fmt.Sprint(row) != want {
			t.Errorf("Decode(%s) = %v, %v; want %s", in, row, err, want)
		}
	}
	// Names that fold alike, or that are not plain ASCII, leave every
	// record to the general reader.
	for _, cols := range [][]types.Column{
		{{Name: "a", Type: types.BigintType}, {Name: "A", Type: types.BigintType}},
		{{Name: "é", Type: types.BigintType}},
		{{Name: `a"b`, Type: types.BigintType}},
	} {
		c, err := NewValueCodec("JSON", cols, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.(*jsonCodec).fast != nil {
			t.Errorf("%v: compiled reader", cols)
		}
	}
}

func TestPlainPrefix(t *testing.T) {
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi", "abcdefg\"", "abcdefgh\\", "\x1f", "abc\x7fdef\x80", "0123456789abcdef\xff", "é"} {
		want := len(s)
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				want = i
				break
			}
		}
		if got := plainPrefix([]byte(s)); got != want {
			t.Errorf("plainPrefix(%q) = %d, want %d", s, got, want)
		}
	}
}
