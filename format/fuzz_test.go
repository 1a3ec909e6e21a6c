package format

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

// The fuzz targets are seeded at run time with the record keys and values
// of the shared QTT corpus (../../shared/qtt, relative to this package)
// when it is there; `make fuzz` runs each for FUZZTIME.

// qttDir is where the shared corpus lives, relative to this package.
var qttDir = filepath.Join("..", "..", "shared", "qtt")

// qttRecords returns the keys and values of the corpus's input and output
// records: as JSON text, and as the text itself for those that are
// strings (what DELIMITED and KAFKA records are written as).
func qttRecords(tb testing.TB) (asJSON, asText [][]byte) {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(qttDir, "*.json"))
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var file struct {
			Tests []struct {
				Inputs, Outputs []struct {
					Key, Value json.RawMessage
				}
			}
		}
		if json.Unmarshal(withoutComments(b), &file) != nil {
			continue
		}
		for _, tc := range file.Tests {
			for _, r := range append(tc.Inputs, tc.Outputs...) {
				for _, v := range []json.RawMessage{r.Key, r.Value} {
					if len(v) == 0 || seen[string(v)] {
						continue
					}
					seen[string(v)] = true
					asJSON = append(asJSON, v)
					var s string
					if json.Unmarshal(v, &s) == nil {
						asText = append(asText, []byte(s))
					}
				}
			}
		}
	}
	return asJSON, asText
}

// withoutComments drops the // and /* */ comments some corpus files hold
// outside strings.
func withoutComments(b []byte) []byte {
	var out []byte
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr:
			if c == '\\' && i+1 < len(b) {
				out = append(out, c)
				i++ // the escaped byte is appended below
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case bytes.HasPrefix(b[i:], []byte("//")):
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case bytes.HasPrefix(b[i:], []byte("/*")):
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				return out
			}
			i += j + 3
			continue
		}
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

// fuzzSchemas are the value schemas the JSON fuzz target reads with:
// the bid (the compiled reader's case), every type, names common in the
// corpus, and an unwrapped single value.
var fuzzSchemas = []struct {
	cols  []types.Column
	props map[string]string
}{
	{bidCols, nil},
	{allCols, nil},
	{[]types.Column{
		{Name: "ID", Type: types.BigintType},
		{Name: "NAME", Type: types.StringType},
		{Name: "VALUE", Type: types.DoubleType},
		{Name: "A", Type: types.ArrayOf(types.IntType)},
		{Name: "B", Type: types.StructOf(types.Field{Name: "C", Type: types.StringType}, types.Field{Name: "D", Type: types.BigintType})},
		{Name: "F1", Type: types.StringType},
		{Name: "F2", Type: types.MapOf(types.StringType, types.BigintType)},
		{Name: "V", Type: types.DecimalOf(10, 2)},
	}, nil},
	{[]types.Column{{Name: "V", Type: types.StringType}}, map[string]string{WrapSingleValue: "false"}},
}

// roundTrip checks that row, which c decoded, encodes to bytes that c
// decodes to a row encoding the same.
func roundTrip(t *testing.T, c Codec, in []byte, row []any, decode func([]byte) ([]any, error)) {
	t.Helper()
	enc, err := c.Encode(nil, row)
	if err != nil {
		t.Fatalf("%q: decoded row %s does not encode: %v", in, canon(row), err)
	}
	back, err := decode(enc)
	if err != nil {
		t.Fatalf("%q: encoded as %q, which does not decode: %v", in, enc, err)
	}
	again, err := c.Encode(nil, back)
	if err != nil || !bytes.Equal(enc, again) {
		t.Fatalf("%q: encoded as %q, read back as %s, encoded again as %q (%v)", in, enc, canon(back), again, err)
	}
}

// FuzzJSONDecode reads arbitrary bytes as a JSON value of one of
// fuzzSchemas. Decoding must not panic, the compiled and the general
// reader must agree, and what is accepted must encode to JSON that reads
// back to the same encoding.
func FuzzJSONDecode(f *testing.F) {
	asJSON, _ := qttRecords(f)
	for i, v := range asJSON {
		// Each value with one schema, so that the baseline stays
		// short.
		f.Add(v, uint8(i%len(fuzzSchemas)))
	}
	f.Add(bidRecord, uint8(0))
	codecs := make([]Codec, len(fuzzSchemas))
	for i, s := range fuzzSchemas {
		c, err := NewValueCodec("JSON", s.cols, s.props)
		if err != nil {
			f.Fatal(err)
		}
		codecs[i] = c
	}
	f.Fuzz(func(t *testing.T, data []byte, schema uint8) {
		c := codecs[int(schema)%len(codecs)]
		n := len(fuzzSchemas[int(schema)%len(codecs)].cols)
		row, err := decodeBoth(t, c, data, n)
		if err != nil {
			return
		}
		roundTrip(t, c, data, row, func(b []byte) ([]any, error) { return decodeBoth(t, c, b, n) })
	})
}

// FuzzDelimitedDecode reads arbitrary bytes as a DELIMITED value of every
// type, or of strings only. Decoding must not panic and what is accepted
// must round trip.
func FuzzDelimitedDecode(f *testing.F) {
	_, asText := qttRecords(f)
	for _, v := range asText {
		f.Add(v, false)
		f.Add(v, true)
	}
	f.Add([]byte(`true,-1,10827272222,1.5,12.3650,"a ""b"", c",AQI=,5,-6,7`), false)
	strs := []types.Column{{Name: "A", Type: types.StringType}, {Name: "B", Type: types.StringType}, {Name: "C", Type: types.StringType}}
	typed, err := NewValueCodec("DELIMITED", delimCols, nil)
	if err != nil {
		f.Fatal(err)
	}
	text, err := NewValueCodec("DELIMITED", strs, map[string]string{ValueDelimiter: "'|'"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, strings bool) {
		c, n := typed, len(delimCols)
		if strings {
			c, n = text, len(strs)
		}
		decode := func(b []byte) ([]any, error) {
			row := make([]any, n)
			return row, c.Decode(b, row)
		}
		row, err := decode(data)
		if err != nil {
			return
		}
		roundTrip(t, c, data, row, decode)
	})
}

// FuzzKafkaDecode reads arbitrary bytes as a KAFKA key of each type the
// format has. Decoding must not panic and what is accepted must round
// trip.
func FuzzKafkaDecode(f *testing.F) {
	_, asText := qttRecords(f)
	kinds := []*types.Type{types.IntType, types.BigintType, types.DoubleType, types.StringType, types.BytesType}
	for _, v := range asText {
		for k := range kinds {
			f.Add(v, uint8(k))
		}
	}
	f.Add([]byte{0, 0, 0, 1}, uint8(0))
	codecs := make([]Codec, len(kinds))
	for i, k := range kinds {
		c, err := NewKeyCodec("KAFKA", []types.Column{{Name: "K", Type: k}})
		if err != nil {
			f.Fatal(err)
		}
		codecs[i] = c
	}
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		c := codecs[int(kind)%len(codecs)]
		decode := func(b []byte) ([]any, error) {
			row := make([]any, 1)
			return row, c.Decode(b, row)
		}
		row, err := decode(data)
		if err != nil {
			return
		}
		roundTrip(t, c, data, row, decode)
	})
}

// TestQTTRecordsSeed checks the seeds are found when the corpus is there.
func TestQTTRecordsSeed(t *testing.T) {
	if _, err := os.Stat(qttDir); err != nil {
		t.Skipf("QTT corpus not found in %s", qttDir)
	}
	asJSON, asText := qttRecords(t)
	if len(asJSON) < 100 || len(asText) < 10 {
		t.Fatalf("%d JSON and %d text seeds from %s", len(asJSON), len(asText), qttDir)
	}
	if !strings.Contains(string(bytes.Join(asJSON, nil)), "{") {
		t.Fatal("no object among the seeds")
	}
}
