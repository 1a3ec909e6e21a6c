package eval

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
)

// MD5, SLICE, JSON_ARRAY_CONTAINS and JSON_ITEMS, as ksqlDB's function
// reference documents them.

// errNullJSON is JSON_ARRAY_CONTAINS's failure on a null document, which
// ksqlDB's parser cannot read: the call is null and the row goes on.
var errNullJSON = errors.New("JSON_ARRAY_CONTAINS: the JSON array is null")

func init() {
	Register(&Func{
		Name: "MD5", Description: "MD5(s): the hex-encoded MD5 hash of the string s; null when s is null.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 || (ts[0] != nil && ts[0].Kind != types.String) {
				return nil, rejectArgs("MD5", ts, "md5(VARCHAR s)")
			}
			return types.StringType, nil
		},
		Build: buildStrict(func(a []any) (any, error) {
			sum := md5.Sum([]byte(a[0].(string)))
			return hex.EncodeToString(sum[:]), nil
		}),
	})
	Register(&Func{
		Name: "SLICE", Description: "SLICE(array, from, to): the elements of array from position from to position to, both included, counting from 1; a null bound is the array's start or end; null when the positions are outside the array.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			const alt = "slice(ARRAY<T> in, INT from, INT to)"
			if len(ts) != 3 || !isKind(ts[0], types.Array) && ts[0] != nil {
				return nil, rejectArgs("SLICE", ts, alt)
			}
			for _, t := range ts[1:] {
				if t != nil && t.Kind != types.Int {
					return nil, rejectArgs("SLICE", ts, alt)
				}
			}
			if ts[0] == nil {
				return types.ArrayOf(types.StringType), nil
			}
			return ts[0], nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				arr, err := args[0](row)
				from, e := args[1](row)
				keep(&err, e)
				to, e := args[2](row)
				keep(&err, e)
				if arr == nil {
					return nil, err
				}
				in := arr.([]any)
				start, end := 0, len(in)
				if from != nil {
					start = int(from.(int32)) - 1
				}
				if to != nil {
					end = int(to.(int32))
				}
				if start < 0 || end > len(in) || start > end {
					return nil, err
				}
				return append([]any(nil), in[start:end]...), err
			}, nil
		},
	})
	Register(&Func{
		Name: "JSON_ARRAY_CONTAINS", Description: "JSON_ARRAY_CONTAINS(json, value): whether the JSON array in the string json has an element equal to value (a BOOLEAN, INT, BIGINT, DOUBLE or STRING, or NULL for a JSON null); false when json is not a JSON array.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 2 || (ts[0] != nil && ts[0].Kind != types.String) {
				return nil, rejectArgs("JSON_ARRAY_CONTAINS", ts, "json_array_contains(VARCHAR jsonArray, T val)")
			}
			return types.BooleanType, nil
		},
		Build: func(ts []*types.Type, _ *types.Type) (Impl, error) {
			var kind types.Kind
			if ts[1] != nil {
				kind = ts[1].Kind
			}
			return func(row []any, args []ArgFunc) (any, error) {
				doc, err := args[0](row)
				v, e := args[1](row)
				keep(&err, e)
				if doc == nil {
					keep(&err, errNullJSON)
					return nil, err
				}
				return jsonArrayContains(doc.(string), v, kind), err
			}, nil
		},
	})
	Register(&Func{
		Name: "JSON_ITEMS", Description: "JSON_ITEMS(json): the objects of the JSON array in the string json, each as a JSON string; null when json is null, not a JSON array, or an element is not an object.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 || (ts[0] != nil && ts[0].Kind != types.String) {
				return nil, rejectArgs("JSON_ITEMS", ts, "json_items(VARCHAR jsonItems)")
			}
			return types.ArrayOf(types.StringType), nil
		},
		Build: buildStrict(func(a []any) (any, error) {
			n, err := parseJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			if n == nil || n.kind != jsonArray {
				return nil, fmt.Errorf("JSON_ITEMS: not a JSON array: %s", a[0].(string))
			}
			out := make([]any, len(n.elems))
			for i, e := range n.elems {
				if e.kind != jsonObject {
					return nil, nil
				}
				out[i] = e.String()
			}
			return out, nil
		}),
	})
}

// jsonArrayContains reads doc as ksqlDB's JSON_ARRAY_CONTAINS does, one
// token at a time: false unless doc starts a JSON array; then each
// top-level element (nested arrays and objects are skipped whole) is
// compared with v, of kind k, and the first equal one gives true. A
// malformed document gives false from where it stops being JSON, so an
// element before that point still counts. JSON numbers without a
// fraction or exponent match INT and BIGINT values, the others DOUBLE
// values; a JSON null matches a null value; nothing else matches.
func jsonArrayContains(doc string, v any, k types.Kind) bool {
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil || tok != json.Delim('[') {
		return false
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == ']' {
				return false
			}
			if skipJSON(d) != nil {
				return false
			}
		case nil:
			if v == nil {
				return true
			}
		case bool:
			if b, ok := v.(bool); ok && k == types.Boolean && b == t {
				return true
			}
		case string:
			if s, ok := v.(string); ok && k == types.String && s == t {
				return true
			}
		case json.Number:
			if v != nil && numberEquals(string(t), v, k) {
				return true
			}
		}
	}
}

// skipJSON reads the rest of the array or object whose opening delimiter
// d has just returned.
func skipJSON(d *json.Decoder) error {
	depth := 1
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		if delim, ok := tok.(json.Delim); ok {
			if delim == '[' || delim == '{' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// numberEquals compares the JSON number text with v: an integer token
// with an INT or BIGINT value (a token out of the value's range is not
// equal), a token with a fraction or an exponent with a DOUBLE value.
func numberEquals(text string, v any, k types.Kind) bool {
	integer := !strings.ContainsAny(text, ".eE")
	switch {
	case integer && k == types.Int:
		n, err := strconv.ParseInt(text, 10, 32)
		return err == nil && int32(n) == v.(int32)
	case integer && k == types.Bigint:
		n, err := strconv.ParseInt(text, 10, 64)
		return err == nil && n == v.(int64)
	case !integer && k == types.Double:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return false
		}
		w := v.(float64)
		// Java's Double.equals: NaN equals NaN, 0.0 and -0.0 differ.
		return math.Float64bits(f) == math.Float64bits(w) || (math.IsNaN(f) && math.IsNaN(w))
	}
	return false
}
