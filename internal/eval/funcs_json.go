package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sluice-sql/sluice/internal/types"
)

// JSON functions. Documents are parsed into jsonNode trees that keep the
// order of object members and the text of numbers, and are written back
// compactly as ksqlDB's Jackson mapper writes them. Only the first JSON
// value of a string is read; text after it is ignored.

type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

type jsonNode struct {
	kind jsonKind
	// text is the string value, the number as written, or true/false.
	text  string
	keys  []string
	elems []*jsonNode
}

func (n *jsonNode) get(key string) *jsonNode {
	for i, k := range n.keys {
		if k == key {
			return n.elems[i]
		}
	}
	return nil
}

// set replaces the value of key, or appends it.
func (n *jsonNode) set(key string, v *jsonNode) {
	for i, k := range n.keys {
		if k == key {
			n.elems[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.elems = append(n.elems, v)
}

// parseJSON reads the first JSON value of s. It returns nil, nil when s
// holds no value at all (only whitespace).
func parseJSON(s string) (*jsonNode, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	n, err := readJSON(d)
	if err == io.EOF && strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("Invalid JSON format:%s", s)
	}
	return n, nil
}

func readJSON(d *json.Decoder) (*jsonNode, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jsonNode{kind: jsonNull}, nil
	case bool:
		return &jsonNode{kind: jsonBool, text: strconv.FormatBool(t)}, nil
	case json.Number:
		return &jsonNode{kind: jsonNumber, text: string(t)}, nil
	case string:
		return &jsonNode{kind: jsonString, text: t}, nil
	case json.Delim:
		if t == '[' {
			n := &jsonNode{kind: jsonArray, elems: []*jsonNode{}}
			for d.More() {
				e, err := readJSON(d)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, e)
			}
			_, err := d.Token()
			return n, err
		}
		if t == '{' {
			n := &jsonNode{kind: jsonObject, elems: []*jsonNode{}, keys: []string{}}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := readJSON(d)
				if err != nil {
					return nil, err
				}
				n.set(k.(string), v)
			}
			_, err := d.Token()
			return n, err
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// appendJSONString writes s as a JSON string the way Jackson does: only
// quotes, backslashes and control characters are escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
	}
	return append(dst, '"')
}

func (n *jsonNode) appendTo(dst []byte) []byte {
	switch n.kind {
	case jsonNull:
		return append(dst, "null"...)
	case jsonBool, jsonNumber:
		return append(dst, n.text...)
	case jsonString:
		return appendJSONString(dst, n.text)
	case jsonArray:
		dst = append(dst, '[')
		for i, e := range n.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.appendTo(dst)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, e := range n.elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, n.keys[i])
		dst = append(dst, ':')
		dst = e.appendTo(dst)
	}
	return append(dst, '}')
}

func (n *jsonNode) String() string { return string(n.appendTo(nil)) }

// textValue is a node as EXTRACTJSONFIELD and JSON_RECORDS return it: a
// string's value, or the JSON text of anything else.
func (n *jsonNode) textValue() string {
	if n.kind == jsonString {
		return n.text
	}
	return n.String()
}

// parseJSONPath splits a JSONPath such as $.a.b[0] or $['a']["b"] into
// its member names and indexes.
func parseJSONPath(path string) ([]string, error) {
	bad := fmt.Errorf("Invalid JsonPath: %s", path)
	p := strings.TrimSpace(path)
	if !strings.HasPrefix(p, "$") {
		return nil, bad
	}
	p = p[1:]
	var toks []string
	for {
		p = strings.TrimLeft(p, " \t\n\r")
		if p == "" {
			return toks, nil
		}
		switch p[0] {
		case '.':
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			if end == 0 {
				return nil, bad
			}
			toks = append(toks, strings.TrimSpace(p[:end]))
			p = p[end:]
		case '[':
			p = p[1:]
			if p != "" && (p[0] == '"' || p[0] == '\'') {
				q := p[0]
				var tok strings.Builder
				i := 1
				for ; i < len(p) && p[i] != q; i++ {
					if p[i] == '\\' && i+1 < len(p) {
						i++
					}
					tok.WriteByte(p[i])
				}
				if i+1 >= len(p) || p[i+1] != ']' {
					return nil, bad
				}
				toks = append(toks, tok.String())
				p = p[i+2:]
				continue
			}
			end := strings.IndexByte(p, ']')
			if end <= 0 {
				return nil, bad
			}
			toks = append(toks, strings.TrimSpace(p[:end]))
			p = p[end+1:]
		default:
			return nil, bad
		}
	}
}

type compiledJSONPath struct {
	src  string
	toks []string
	err  error
}

// extractJSONField implements EXTRACTJSONFIELD for a parsed path.
func extractJSONField(doc string, toks []string) (any, error) {
	n, err := parseJSON(doc)
	if err != nil {
		return nil, err
	}
	for _, t := range toks {
		if n == nil {
			return nil, nil
		}
		switch n.kind {
		case jsonArray:
			i, err := strconv.ParseInt(t, 10, 32)
			if err != nil || i < 0 || i >= int64(len(n.elems)) {
				return nil, nil
			}
			n = n.elems[i]
		case jsonObject:
			n = n.get(t)
		default:
			return nil, nil
		}
	}
	if n == nil {
		return nil, nil
	}
	return n.textValue(), nil
}

// toJSON writes v, a value of type t, as TO_JSON_STRING does: temporal
// values and bytes as strings (ISO-8601 and base64), structs and maps as
// objects with their keys sorted.
func toJSON(dst []byte, v any, t *types.Type) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return appendJSONString(dst, types.FormatDouble(x))
		}
		return types.AppendDouble(dst, x)
	case types.Dec:
		return append(dst, x.String()...)
	case string:
		return appendJSONString(dst, x)
	case []byte:
		return appendJSONString(dst, mimeBase64(x))
	case types.TimestampValue:
		return appendJSONString(dst, types.FormatTimestamp(x))
	case types.DateValue:
		return appendJSONString(dst, types.FormatDate(x))
	case types.TimeValue:
		return appendJSONString(dst, types.FormatTime(x))
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = toJSON(dst, e, elemOf(t))
		}
		return append(dst, ']')
	case types.StructValue:
		names := make([]string, len(x))
		ftypes := make([]*types.Type, len(x))
		for i := range x {
			if t != nil && i < len(t.Fields) {
				names[i], ftypes[i] = t.Fields[i].Name, t.Fields[i].Type
			} else {
				names[i] = "F" + strconv.Itoa(i)
			}
		}
		return appendSortedObject(dst, names, x, func(i int) *types.Type { return ftypes[i] })
	case *types.MapValue:
		var kt *types.Type
		if t != nil {
			kt = t.Key
		}
		names := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			names[i] = types.CastToString(k, kt)
		}
		return appendSortedObject(dst, names, x.Values, func(int) *types.Type { return elemOf(t) })
	}
	return appendJSONString(dst, types.FormatValue(v, t))
}

func elemOf(t *types.Type) *types.Type {
	if t == nil {
		return nil
	}
	return t.Elem
}

func appendSortedObject(dst []byte, names []string, vals []any, typ func(int) *types.Type) []byte {
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
	dst = append(dst, '{')
	for j, i := range order {
		// A repeated name keeps its last value, as a map would.
		if j+1 < len(order) && names[order[j+1]] == names[i] {
			continue
		}
		if len(dst) > 0 && dst[len(dst)-1] != '{' {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, names[i])
		dst = append(dst, ':')
		dst = toJSON(dst, vals[i], typ(i))
	}
	return append(dst, '}')
}

// jsonConcat implements JSON_CONCAT: objects are merged, later keys
// winning; otherwise values are concatenated as arrays, a non-array value
// counting as an array of one element.
func jsonConcat(docs []string) (any, error) {
	nodes := make([]*jsonNode, len(docs))
	allObjects := true
	for i, d := range docs {
		n, err := parseJSON(d)
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, nil
		}
		allObjects = allObjects && n.kind == jsonObject
		nodes[i] = n
	}
	res := nodes[0]
	if allObjects {
		for _, n := range nodes[1:] {
			for i, k := range n.keys {
				res.set(k, n.elems[i])
			}
		}
		return res.String(), nil
	}
	if res.kind != jsonArray {
		res = &jsonNode{kind: jsonArray, elems: []*jsonNode{res}}
	}
	for _, n := range nodes[1:] {
		if n.kind == jsonArray {
			res.elems = append(res.elems, n.elems...)
		} else {
			res.elems = append(res.elems, n)
		}
	}
	return res.String(), nil
}

// jsonOf parses s for the JSON functions that return null for an empty
// string or a value of the wrong kind.
func jsonOf(s string, kind jsonKind) (*jsonNode, error) {
	n, err := parseJSON(s)
	if err != nil || n == nil || n.kind != kind {
		return nil, err
	}
	return n, nil
}

var errJSONConcatArgs = errors.New("JSON_CONCAT requires at least two arguments")

func init() {
	Register(&Func{
		Name: "EXTRACTJSONFIELD", Description: "EXTRACTJSONFIELD(json, path): the value at a JSONPath such as $.a.b[0] in a JSON string, null if absent.",
		Check: fixed("EXTRACTJSONFIELD", "(STRING, STRING)", types.StringType, kString, kString),
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			var last atomic.Pointer[compiledJSONPath]
			return Strict(func(a []any) (any, error) {
				path := a[1].(string)
				c := last.Load()
				if c == nil || c.src != path {
					toks, err := parseJSONPath(path)
					c = &compiledJSONPath{src: path, toks: toks, err: err}
					last.Store(c)
				}
				if c.err != nil {
					return nil, c.err
				}
				return extractJSONField(a[0].(string), c.toks)
			}), nil
		},
	})
	Register(&Func{
		Name: "IS_JSON_STRING", Description: "IS_JSON_STRING(s): whether s parses as JSON; false for null.",
		Check: fixed("IS_JSON_STRING", "(STRING)", types.BooleanType, kString),
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				v, err := args[0](row)
				if v == nil {
					return false, err
				}
				n, e := parseJSON(v.(string))
				return e == nil && n != nil, err
			}, nil
		},
	})
	Register(&Func{
		Name: "JSON_ARRAY_LENGTH", Description: "JSON_ARRAY_LENGTH(json): the number of elements of a JSON array, null if not an array.",
		Check: fixed("JSON_ARRAY_LENGTH", "(STRING)", types.IntType, kString),
		Build: buildStrict(func(a []any) (any, error) {
			n, err := jsonOf(a[0].(string), jsonArray)
			if n == nil {
				return nil, err
			}
			return int32(len(n.elems)), nil
		}),
	})
	Register(&Func{
		Name: "JSON_KEYS", Description: "JSON_KEYS(json): the keys of a JSON object, null if not an object.",
		Check: fixed("JSON_KEYS", "(STRING)", types.ArrayOf(types.StringType), kString),
		Build: buildStrict(func(a []any) (any, error) {
			n, err := jsonOf(a[0].(string), jsonObject)
			if n == nil {
				return nil, err
			}
			out := make([]any, len(n.keys))
			for i, k := range n.keys {
				out[i] = k
			}
			return out, nil
		}),
	})
	Register(&Func{
		Name: "JSON_RECORDS", Description: "JSON_RECORDS(json): the members of a JSON object as a map of keys to JSON text (strings unquoted).",
		Check: fixed("JSON_RECORDS", "(STRING)", types.MapOf(types.StringType, types.StringType), kString),
		Build: buildStrict(func(a []any) (any, error) {
			n, err := jsonOf(a[0].(string), jsonObject)
			if n == nil {
				return nil, err
			}
			m := &types.MapValue{Keys: make([]any, len(n.keys)), Values: make([]any, len(n.keys))}
			for i, k := range n.keys {
				m.Keys[i], m.Values[i] = k, n.elems[i].textValue()
			}
			return m, nil
		}),
	})
	Register(&Func{
		Name: "JSON_CONCAT", Description: "JSON_CONCAT(json, json, ...): merges JSON objects, or concatenates JSON values as arrays; null if any is null or invalid.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) < 2 || !variadicKind(ts, types.String) {
				return nil, badArgs("JSON_CONCAT", ts, "(STRING, STRING, ...)")
			}
			return types.StringType, nil
		},
		Build: buildStrict(func(a []any) (any, error) {
			if len(a) < 2 {
				return nil, errJSONConcatArgs
			}
			docs := make([]string, len(a))
			for i, v := range a {
				docs[i] = v.(string)
			}
			return jsonConcat(docs)
		}),
	})
	Register(&Func{
		Name: "TO_JSON_STRING", Description: "TO_JSON_STRING(x): x of any type written as a JSON string; null is written as null.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 {
				return nil, badArgs("TO_JSON_STRING", ts, "(ANY)")
			}
			return types.StringType, nil
		},
		Build: func(ts []*types.Type, _ *types.Type) (Impl, error) {
			t := ts[0]
			return func(row []any, args []ArgFunc) (any, error) {
				v, err := args[0](row)
				return string(toJSON(nil, v, t)), err
			}, nil
		},
	})
}

// errNullJSON is JSON_ARRAY_CONTAINS's failure on a null document, which
// ksqlDB's parser cannot read: the call is null and the row goes on.
var errNullJSON = errors.New("JSON_ARRAY_CONTAINS: the JSON array is null")

func init() {
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
