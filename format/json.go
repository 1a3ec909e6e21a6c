package format

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/sluice-sql/sluice/internal/types"
)

// jsonCodec is the JSON format.
type jsonCodec struct {
	cols []types.Column
	// bare: the single column's value is the whole document.
	bare bool
	// exact maps a column name to its index; folded maps the names
	// folded to ASCII upper case, when no two fold alike and all are
	// ASCII.
	exact, folded map[string]int
	// upper are the column names in ASCII upper case, when folded is set.
	upper [][]byte
	// fast are the names the compiled reader (decodeFast) matches, nil
	// when it does not suit the columns.
	fast []fastName
	// heads are what Encode writes before each column's value: the
	// object's opening or a comma, the quoted name and a colon.
	heads [][]byte
	// skip marks the columns decoding leaves null (see Prune); nil
	// decodes them all.
	skip []bool
}

// Prune returns a codec that decodes only the columns where read is true
// and leaves the others null. It still reads the value of a skipped
// member as it would read it to keep it, without keeping it: a record
// whose skipped member does not hold its column's type is an error as it
// is with every column read.
func (c *jsonCodec) Prune(read []bool) Codec {
	if c.bare || len(read) != len(c.cols) {
		return c
	}
	skip := make([]bool, len(read))
	some := false
	for i, r := range read {
		skip[i] = !r
		some = some || !r
	}
	if !some {
		return c
	}
	p := *c
	p.skip = skip
	return &p
}

func newJSONCodec(cols []types.Column, bare bool) *jsonCodec {
	c := &jsonCodec{cols: cols, bare: bare, exact: make(map[string]int, len(cols))}
	for i, col := range cols {
		c.exact[col.Name] = i
		head := []byte{','}
		if i == 0 {
			head[0] = '{'
		}
		c.heads = append(c.heads, append(AppendJSONString(head, col.Name), ':'))
	}
	c.folded = make(map[string]int, len(cols))
	for i, col := range cols {
		up, ok := foldASCII(nil, []byte(col.Name))
		if _, dup := c.folded[string(up)]; dup || !ok {
			c.folded = nil
			break
		}
		c.folded[string(up)] = i
		c.upper = append(c.upper, up)
	}
	if c.folded == nil {
		c.upper = nil
	}
	if !bare {
		c.fast = newFastNames(cols, c.folded)
	}
	return c
}

// fieldAt is field, trying column guess first: members usually come in
// the order of the columns.
func (c *jsonCodec) fieldAt(name []byte, guess int) int {
	if guess < len(c.upper) {
		if up := c.upper[guess]; len(up) == len(name) {
			same := true
			for k, ch := range name {
				if 'a' <= ch && ch <= 'z' {
					ch -= 'a' - 'A'
				}
				if ch != up[k] {
					same = false
					break
				}
			}
			if same {
				return guess
			}
		}
	}
	return c.field(name)
}

// foldASCII appends name in ASCII upper case to dst; ok is false when
// name is not all ASCII.
func foldASCII(dst, name []byte) (_ []byte, ok bool) {
	for _, ch := range name {
		if ch >= utf8.RuneSelf {
			return dst, false
		}
		if 'a' <= ch && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		dst = append(dst, ch)
	}
	return dst, true
}

func (c *jsonCodec) field(name []byte) int {
	var buf [64]byte
	if c.folded != nil && len(name) <= len(buf) {
		// Every column matches only its own name, in any case.
		if up, ok := foldASCII(buf[:0], name); ok {
			if i, ok := c.folded[string(up)]; ok {
				return i
			}
			return -1
		}
	}
	if i, ok := c.exact[string(name)]; ok {
		return i
	}
	for i, col := range c.cols {
		if bytes.EqualFold([]byte(col.Name), name) {
			return i
		}
	}
	return -1
}

func (c *jsonCodec) Decode(b []byte, dst []any) error { return c.DecodeArena(nil, b, dst) }

func (c *jsonCodec) DecodeArena(a *Arena, b []byte, dst []any) error {
	if len(dst) != len(c.cols) {
		return fmt.Errorf("JSON codec decodes %d columns, got a row of %d", len(c.cols), len(dst))
	}
	for i := range dst {
		if dst[i] != nil {
			dst[i] = nil
		}
	}
	if b == nil {
		return nil
	}
	if c.fast != nil {
		if c.decodeFast(a, b, dst) {
			return nil
		}
		for i := range dst {
			dst[i] = nil
		}
	}
	d := jsonDecoder{b: b, box: a}
	d.ws()
	if c.bare {
		v, err := d.value(c.cols[0].Type)
		if err != nil {
			return d.wrap(err)
		}
		dst[0] = v
	} else {
		next := 0
		if d.peek() == 'n' {
			if err := d.literal("null"); err != nil {
				return d.wrap(err)
			}
		} else if err := d.object(func(name []byte) error {
			i := c.fieldAt(name, next)
			if i < 0 {
				return d.skip()
			}
			next = i + 1
			v, err := d.value(c.cols[i].Type)
			if err != nil {
				return fmt.Errorf("column %s: %w", c.cols[i].Name, err)
			}
			dst[i] = v
			return nil
		}); err != nil {
			return d.wrap(err)
		}
	}
	d.ws()
	if d.i != len(d.b) {
		return d.wrap(fmt.Errorf("unexpected data after the JSON value"))
	}
	for i, s := range c.skip {
		if s {
			dst[i] = nil
		}
	}
	return nil
}

func (c *jsonCodec) Encode(dst []byte, row []any) ([]byte, error) {
	if len(row) != len(c.cols) {
		return nil, fmt.Errorf("JSON codec encodes %d columns, got a row of %d", len(c.cols), len(row))
	}
	if c.bare {
		if row[0] == nil {
			return nil, nil
		}
		return appendJSON(dst, row[0], c.cols[0].Type)
	}
	if len(c.cols) == 0 {
		return append(dst, '{', '}'), nil
	}
	var err error
	for i, col := range c.cols {
		dst = append(dst, c.heads[i]...)
		// The common types first, without appendJSON's type switch.
		switch v := row[i].(type) {
		case int64:
			dst = strconv.AppendInt(dst, v, 10)
			continue
		case string:
			dst = AppendJSONString(dst, v)
			continue
		}
		if dst, err = appendJSON(dst, row[i], col.Type); err != nil {
			return nil, fmt.Errorf("column %s: %w", col.Name, err)
		}
	}
	return append(dst, '}'), nil
}

// appendJSON appends v, a value of type t, as JSON.
func appendJSON(dst []byte, v any, t *types.Type) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			dst = append(dst, '"')
			dst = types.AppendDouble(dst, x)
			return append(dst, '"'), nil
		}
		return types.AppendDouble(dst, x), nil
	case types.Dec:
		return append(dst, x.String()...), nil
	case string:
		return AppendJSONString(dst, x), nil
	case []byte:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, x)
		return append(dst, '"'), nil
	case types.TimestampValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case types.DateValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case types.TimeValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case []any:
		var et *types.Type
		if t != nil {
			et = t.Elem
		}
		dst = append(dst, '[')
		var err error
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendJSON(dst, e, et); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case *types.MapValue:
		var vt *types.Type
		if t != nil {
			vt = t.Elem
		}
		dst = append(dst, '{')
		var err error
		if x != nil {
			for i, k := range x.Keys {
				if i > 0 {
					dst = append(dst, ',')
				}
				ks, ok := k.(string)
				if !ok {
					ks = types.FormatValue(k, nil)
				}
				dst = AppendJSONString(dst, ks)
				dst = append(dst, ':')
				if dst, err = appendJSON(dst, x.Values[i], vt); err != nil {
					return nil, err
				}
			}
		}
		return append(dst, '}'), nil
	case types.StructValue:
		if t == nil || t.Kind != types.Struct {
			return nil, fmt.Errorf("STRUCT value without a STRUCT type")
		}
		dst = append(dst, '{')
		var err error
		for i, f := range t.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, f.Name)
			dst = append(dst, ':')
			var e any
			if i < len(x) {
				e = x[i]
			}
			if dst, err = appendJSON(dst, e, f.Type); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("cannot encode a %T value as JSON", v)
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string, escaping quotes, backslashes
// and control characters and replacing invalid UTF-8 with U+FFFD.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for len(b) > 0 {
		n := plainPrefix(b)
		dst = append(dst, b[:n]...)
		if b = b[n:]; len(b) == 0 {
			break
		}
		c := b[0]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(b)
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, "\ufffd"...)
			} else {
				dst = append(dst, b[:size]...)
			}
			b = b[size:]
			continue
		}
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		b = b[1:]
	}
	return append(dst, '"')
}
