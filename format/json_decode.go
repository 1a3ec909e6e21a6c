package format

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

// jsonDecoder is a small JSON reader that decodes straight into SQL values
// guided by the expected type, without building an intermediate tree.
type jsonDecoder struct {
	b       []byte
	i       int
	scratch []byte
	// box boxes BIGINT and STRING values; nil boxes them on the heap.
	box *Arena
}

func (d *jsonDecoder) wrap(err error) error {
	return fmt.Errorf("invalid JSON at offset %d: %w", d.i, err)
}

func (d *jsonDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonDecoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *jsonDecoder) literal(s string) error {
	if len(d.b)-d.i < len(s) || string(d.b[d.i:d.i+len(s)]) != s {
		return fmt.Errorf("invalid literal")
	}
	d.i += len(s)
	return nil
}

// object reads an object, calling field for each member with the decoder
// positioned at the member's value; field must consume the value. name is
// only valid during the call.
func (d *jsonDecoder) object(field func(name []byte) error) error {
	if d.peek() != '{' {
		return fmt.Errorf("expected a JSON object")
	}
	d.i++
	d.ws()
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		d.ws()
		name, err := d.stringBytes()
		if err != nil {
			return err
		}
		d.ws()
		if d.peek() != ':' {
			return fmt.Errorf("expected ':'")
		}
		d.i++
		d.ws()
		if err := field(name); err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return fmt.Errorf("expected ',' or '}'")
		}
	}
}

func (d *jsonDecoder) array(elem func() error) error {
	if d.peek() != '[' {
		return fmt.Errorf("expected a JSON array")
	}
	d.i++
	d.ws()
	if d.peek() == ']' {
		d.i++
		return nil
	}
	for {
		d.ws()
		if err := elem(); err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return fmt.Errorf("expected ',' or ']'")
		}
	}
}

// stringBytes reads a string and returns its unescaped bytes, which alias
// the input or the scratch buffer and are valid until the next read. A
// string that is not valid UTF-8 is an error.
func (d *jsonDecoder) stringBytes() ([]byte, error) {
	if d.peek() != '"' {
		return nil, fmt.Errorf("expected a string")
	}
	start := d.i + 1
	i := start
	for {
		i += plainPrefix(d.b[i:])
		if i == len(d.b) {
			d.i = i
			return nil, fmt.Errorf("unterminated string")
		}
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			return d.b[start:i], nil
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.b[i:])
			if r == utf8.RuneError && size == 1 {
				d.i = i
				return nil, errInvalidUTF8
			}
			i += size
		default:
			// An escape or a control character.
			d.i = i
			return d.slowString(start)
		}
	}
}

// errInvalidUTF8 is the error for a string that is not valid UTF-8.
var errInvalidUTF8 = errors.New("invalid UTF-8 in string")

func (d *jsonDecoder) slowString(start int) ([]byte, error) {
	out := append(d.scratch[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			d.scratch = out
			return out, nil
		case c < 0x20:
			return nil, fmt.Errorf("control character in string")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				return nil, errInvalidUTF8
			}
			out = append(out, d.b[d.i:d.i+size]...)
			d.i += size
			continue
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		d.i++
		if d.i >= len(d.b) {
			break
		}
		e := d.b[d.i]
		d.i++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return nil, fmt.Errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					if x, ok := d.hex4(); ok {
						r2 = x
					} else {
						d.i = save
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, fmt.Errorf("bad escape \\%c", e)
		}
	}
	return nil, fmt.Errorf("unterminated string")
}

func (d *jsonDecoder) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}

// number reads a JSON number and returns its text and whether it is an
// integer (no fraction or exponent).
func (d *jsonDecoder) number() ([]byte, bool, error) {
	start := d.i
	integer := true
	if d.peek() == '-' {
		d.i++
	}
	digits := 0
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || c == 'e' || c == 'E':
			integer = false
		case (c == '+' || c == '-') && (d.b[d.i-1] == 'e' || d.b[d.i-1] == 'E'):
		default:
			goto done
		}
		d.i++
	}
done:
	if digits == 0 {
		return nil, false, fmt.Errorf("invalid number")
	}
	return d.b[start:d.i], integer, nil
}

// skip consumes one value of any kind.
func (d *jsonDecoder) skip() error {
	switch c := d.peek(); {
	case c == '{':
		return d.object(func([]byte) error { return d.skip() })
	case c == '[':
		return d.array(d.skip)
	case c == '"':
		_, err := d.stringBytes()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, _, err := d.number()
		return err
	}
	return fmt.Errorf("unexpected character %q", d.peek())
}

// smallInt parses an integer of at most 18 digits, which cannot
// overflow; ok is false for anything else.
func smallInt(b []byte) (n int64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func typeErr(t *types.Type, got string) error {
	return fmt.Errorf("cannot convert %s to %s", got, t)
}

func bytesString(b []byte) string { return string(b) }

// value reads one value and converts it to type t.
func (d *jsonDecoder) value(t *types.Type) (any, error) {
	c := d.peek()
	if c == 'n' {
		return nil, d.literal("null")
	}
	switch t.Kind {
	case types.Boolean:
		switch c {
		case 't':
			return true, d.literal("true")
		case 'f':
			return false, d.literal("false")
		case '"':
			s, err := d.stringBytes()
			if err != nil {
				return nil, err
			}
			switch strings.ToLower(string(s)) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
			return nil, typeErr(t, strconv.Quote(string(s)))
		}
	case types.Int, types.Bigint, types.Timestamp, types.Date, types.Time:
		var n int64
		switch {
		case c == '-' || (c >= '0' && c <= '9'):
			txt, integer, err := d.number()
			if err != nil {
				return nil, err
			}
			if integer {
				var ok bool
				if n, ok = smallInt(txt); !ok {
					if n, err = strconv.ParseInt(bytesString(txt), 10, 64); err != nil {
						return nil, typeErr(t, string(txt))
					}
				}
			} else {
				f, err := strconv.ParseFloat(bytesString(txt), 64)
				if err != nil {
					return nil, typeErr(t, string(txt))
				}
				n = int64(f)
			}
		case c == '"':
			s, err := d.stringBytes()
			if err != nil {
				return nil, err
			}
			if n, err = strconv.ParseInt(strings.TrimSpace(string(s)), 10, 64); err != nil {
				return nil, typeErr(t, strconv.Quote(string(s)))
			}
		default:
			if err := d.skip(); err != nil {
				return nil, err
			}
			return nil, typeErr(t, "a JSON "+jsonKind(c))
		}
		switch t.Kind {
		case types.Int:
			return d.box.Int32(int32(n)), nil
		case types.Timestamp:
			return types.TimestampValue(n), nil
		case types.Date:
			return types.DateValue(n), nil
		case types.Time:
			return types.TimeValue(n), nil
		}
		return d.box.Int64(n), nil
	case types.Double:
		var txt []byte
		switch {
		case c == '-' || (c >= '0' && c <= '9'):
			var err error
			if txt, _, err = d.number(); err != nil {
				return nil, err
			}
		case c == '"':
			var err error
			if txt, err = d.stringBytes(); err != nil {
				return nil, err
			}
		}
		if txt != nil {
			f, err := strconv.ParseFloat(strings.TrimSpace(bytesString(txt)), 64)
			if err != nil && !math.IsInf(f, 0) {
				return nil, typeErr(t, strconv.Quote(string(txt)))
			}
			return d.box.Float64(f), nil
		}
	case types.Decimal:
		var txt []byte
		var err error
		switch {
		case c == '-' || (c >= '0' && c <= '9'):
			txt, _, err = d.number()
		case c == '"':
			txt, err = d.stringBytes()
		}
		if err != nil {
			return nil, err
		}
		if txt != nil {
			dec, err := types.ParseDec(string(txt))
			if err != nil {
				return nil, typeErr(t, strconv.Quote(string(txt)))
			}
			r := dec.Rescale(t.Scale)
			if r.Sign() != 0 && r.Precision() > t.Precision {
				return nil, fmt.Errorf("%s does not fit %s", txt, t)
			}
			return r, nil
		}
	case types.String:
		switch {
		case c == '"':
			s, err := d.stringBytes()
			if err != nil {
				return nil, err
			}
			return d.box.String(s), nil
		case c == '-' || (c >= '0' && c <= '9'):
			txt, _, err := d.number()
			return string(txt), err
		case c == 't':
			return "true", d.literal("true")
		case c == 'f':
			return "false", d.literal("false")
		case c == '{' || c == '[':
			start := d.i
			if err := d.skip(); err != nil {
				return nil, err
			}
			return compactJSON(d.b[start:d.i]), nil
		}
	case types.Bytes:
		if c == '"' {
			s, err := d.stringBytes()
			if err != nil {
				return nil, err
			}
			out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
			n, err := base64.StdEncoding.Decode(out, s)
			if err != nil {
				return nil, fmt.Errorf("BYTES value is not base64: %v", err)
			}
			return out[:n], nil
		}
	case types.Array:
		if c == '[' {
			out := make([]any, 0, 4)
			err := d.array(func() error {
				v, err := d.value(t.Elem)
				out = append(out, v)
				return err
			})
			if err != nil {
				return nil, err
			}
			return out, nil
		}
	case types.Map:
		if c == '{' {
			m := &types.MapValue{}
			err := d.object(func(name []byte) error {
				k := string(name)
				v, err := d.value(t.Elem)
				if err != nil {
					return err
				}
				if j := m.Index(k); j >= 0 {
					m.Values[j] = v
					return nil
				}
				m.Keys = append(m.Keys, k)
				m.Values = append(m.Values, v)
				return nil
			})
			if err != nil {
				return nil, err
			}
			return m, nil
		}
	case types.Struct:
		if c == '{' {
			out := make(types.StructValue, len(t.Fields))
			err := d.object(func(name []byte) error {
				i := structField(t, name)
				if i < 0 {
					return d.skip()
				}
				v, err := d.value(t.Fields[i].Type)
				out[i] = v
				return err
			})
			if err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	if err := d.skip(); err != nil {
		return nil, err
	}
	return nil, typeErr(t, "a JSON "+jsonKind(c))
}

func structField(t *types.Type, name []byte) int {
	for i, f := range t.Fields {
		if f.Name == string(name) {
			return i
		}
	}
	for i, f := range t.Fields {
		if strings.EqualFold(f.Name, string(name)) {
			return i
		}
	}
	return -1
}

func jsonKind(c byte) string {
	switch {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return "value"
}

// compactJSON removes insignificant whitespace from valid JSON.
func compactJSON(b []byte) string {
	out := make([]byte, 0, len(b))
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inStr = true
		}
		out = append(out, c)
	}
	return string(out)
}
