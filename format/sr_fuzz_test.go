package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/registry"
)

// srSeeds reads the input record values of the shared QTT corpus (at run
// time; nothing of it is kept in the repository) and returns codecs of
// format f over the columns each value's shape suggests, with the values
// encoded by them as seeds.
func srSeeds(f *testing.F, format string) []Codec {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "shared", "qtt", "*.json"))
	comments := regexp.MustCompile(`(?m)^\s*//.*$`)
	reg := registry.NewMemory()
	var codecs []Codec
	shapes := map[string]int{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var file struct {
			Tests []struct {
				Inputs []struct {
					Value json.RawMessage `json:"value"`
				} `json:"inputs"`
			} `json:"tests"`
		}
		if json.Unmarshal(comments.ReplaceAll(b, nil), &file) != nil {
			continue
		}
		for _, tc := range file.Tests {
			for _, in := range tc.Inputs {
				var obj map[string]any
				if json.Unmarshal(in.Value, &obj) != nil || len(obj) == 0 {
					continue
				}
				cols := shapeColumns(obj)
				key := types.StructOf(fieldsOf(cols)...).String()
				i, ok := shapes[key]
				if !ok {
					if len(codecs) >= 200 {
						continue
					}
					c, err := NewValueCodecSR(format, cols, nil, SR{Registry: reg, Topic: key})
					if err != nil {
						continue
					}
					i = len(codecs)
					shapes[key] = i
					codecs = append(codecs, c)
				}
				js, _ := NewValueCodec(JSON, cols, nil)
				row := make([]any, len(cols))
				if js.Decode(in.Value, row) != nil {
					continue
				}
				if enc, err := codecs[i].Encode(nil, row); err == nil {
					f.Add(uint8(i), enc)
				}
			}
		}
	}
	return codecs
}

func fieldsOf(cols []types.Column) []types.Field {
	fs := make([]types.Field, len(cols))
	for i, c := range cols {
		fs[i] = types.Field(c)
	}
	return fs
}

// shapeColumns returns columns for a JSON object, by name.
func shapeColumns(obj map[string]any) []types.Column {
	names := make([]string, 0, len(obj))
	for n := range obj {
		names = append(names, n)
	}
	sort.Strings(names)
	cols := make([]types.Column, 0, len(names))
	for _, n := range names {
		cols = append(cols, types.Column{Name: n, Type: shapeType(obj[n], 0)})
	}
	return cols
}

func shapeType(v any, depth int) *types.Type {
	switch x := v.(type) {
	case bool:
		return types.BooleanType
	case float64:
		if x == float64(int64(x)) {
			return types.BigintType
		}
		return types.DoubleType
	case []any:
		if len(x) > 0 && depth < 4 {
			return types.ArrayOf(shapeType(x[0], depth+1))
		}
		return types.ArrayOf(types.StringType)
	case map[string]any:
		if depth < 4 {
			return types.StructOf(fieldsOf(shapeColumns(x))...)
		}
	}
	return types.StringType
}

func fuzzSR(f *testing.F, format string) {
	codecs := srSeeds(f, format)
	if len(codecs) == 0 { // without the corpus: one codec over every kind
		c, _ := NewValueCodecSR(format, srCols()[:11], nil, SR{Registry: registry.NewMemory(), Topic: "t"})
		codecs = append(codecs, c)
		if b, err := c.Encode(nil, srRow()[:11]); err == nil {
			f.Add(uint8(0), b)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		c := codecs[int(which)%len(codecs)]
		dst := make([]any, 64)
		switch sc := c.(type) {
		case *avroCodec:
			dst = dst[:len(sc.cols)]
		case *jsonSRCodec:
			dst = dst[:len(sc.cols)]
		}
		err := c.Decode(b, dst)
		if sc, ok := c.(*jsonSRCodec); ok {
			// Pruned to every other column, it refuses what c refuses
			// and reads the same values of the columns it keeps.
			read := make([]bool, len(dst))
			for i := range read {
				read[i] = i%2 == 1
			}
			got := make([]any, len(dst))
			perr := Prune(sc, read).Decode(b, got)
			if fmt.Sprint(perr) != fmt.Sprint(err) {
				t.Fatalf("pruned: %v, not %v", perr, err)
			}
			for i := 0; perr == nil && i < len(got); i++ {
				want := dst[i]
				if !read[i] && !sc.unwrapped {
					want = nil
				}
				if canon(got[i]) != canon(want) {
					t.Fatalf("pruned: column %d reads %s, not %s", i, canon(got[i]), canon(want))
				}
			}
		}
		if err != nil {
			return
		}
		// What decodes encodes, and decodes again to the same row.
		again, err := c.Encode(nil, dst)
		if err != nil {
			return
		}
		dst2 := make([]any, len(dst))
		if err := c.Decode(again, dst2); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if again2, _ := c.Encode(nil, dst2); !bytes.Equal(again, again2) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// FuzzAvroDecode feeds the AVRO codec arbitrary bytes; it must not panic.
func FuzzAvroDecode(f *testing.F) { fuzzSR(f, Avro) }

// FuzzJSONSRDecode feeds the JSON_SR codec arbitrary bytes; it must not
// panic.
func FuzzJSONSRDecode(f *testing.F) { fuzzSR(f, JSONSR) }
