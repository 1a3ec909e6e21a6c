package exec

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// DecodeArena implements format.ArenaCodec: it reads the array of
// columns in one pass, boxing BIGINT and STRING values from a, and reads
// nested values with expr.UnmarshalValue. Anything it does not expect
// (escaped strings, DOUBLE's special values, malformed input) goes to
// Decode, whose result and errors are the reference.
func (c *internalCodec) DecodeArena(a *format.Arena, b []byte, dst []any) error {
	if b == nil || !c.scanRow(a, b, dst) {
		clear(dst)
		return c.Decode(b, dst)
	}
	return nil
}

// scanRow decodes b into dst, reporting false (dst then holds garbage)
// when it cannot.
func (c *internalCodec) scanRow(a *format.Arena, b []byte, dst []any) bool {
	fields := c.t.Fields
	if len(fields) != len(dst) {
		return false
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipSpace(b, i+1)
	for f := range fields {
		if f > 0 {
			if i >= len(b) || b[i] != ',' {
				return false
			}
			i = skipSpace(b, i+1)
		}
		v, n, ok := c.scanField(a, b, i, fields[f].Type)
		if !ok {
			return false
		}
		dst[f] = v
		i = skipSpace(b, n)
	}
	if i >= len(b) || b[i] != ']' {
		return false
	}
	return skipSpace(b, i+1) == len(b)
}

// scanField decodes the value of type t at b[i:], returning it and the
// index after it.
func (*internalCodec) scanField(a *format.Arena, b []byte, i int, t *types.Type) (any, int, bool) {
	if i+4 <= len(b) && string(b[i:i+4]) == "null" {
		return nil, i + 4, true
	}
	if t == nil {
		return nil, 0, false
	}
	switch t.Kind {
	case types.Boolean:
		switch {
		case i+4 <= len(b) && string(b[i:i+4]) == "true":
			return true, i + 4, true
		case i+5 <= len(b) && string(b[i:i+5]) == "false":
			return false, i + 5, true
		}
		return nil, 0, false
	case types.Int, types.Date, types.Time:
		n, end, ok := scanInt(b, i, 32)
		if !ok {
			return nil, 0, false
		}
		switch t.Kind {
		case types.Date:
			return types.DateValue(n), end, true
		case types.Time:
			return types.TimeValue(n), end, true
		}
		return int32(n), end, true
	case types.Bigint:
		n, end, ok := scanInt(b, i, 64)
		if !ok {
			return nil, 0, false
		}
		return a.Int64(n), end, true
	case types.Timestamp:
		n, end, ok := scanInt(b, i, 64)
		if !ok {
			return nil, 0, false
		}
		return types.TimestampValue(n), end, true
	case types.Double:
		end := numberEnd(b, i, true)
		if end < 0 {
			return nil, 0, false
		}
		f, err := strconv.ParseFloat(string(b[i:end]), 64)
		if err != nil {
			return nil, 0, false
		}
		return f, end, true
	case types.String:
		s, end, ok := plainString(b, i)
		if !ok {
			var tmp [256]byte
			if s, end, ok = unquote(tmp[:0], b, i); !ok {
				return nil, 0, false
			}
		}
		return a.String(s), end, true
	}
	// DECIMAL, BYTES and nested values: find the value's end, then read
	// it exactly.
	end := valueEnd(b, i)
	if end < 0 {
		return nil, 0, false
	}
	v, err := expr.UnmarshalValue(b[i:end], t)
	if err != nil {
		return nil, 0, false
	}
	return v, end, true
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// numberEnd returns the end of the JSON number at b[i:] (with a fraction
// or exponent only when frac), or -1 if there is none.
func numberEnd(b []byte, i int, frac bool) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return -1
	}
	if !frac {
		return i
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}

// scanInt reads the JSON integer of the given bit size at b[i:].
func scanInt(b []byte, i, bits int) (int64, int, bool) {
	end := numberEnd(b, i, false)
	if end < 0 || (end < len(b) && (b[end] == '.' || b[end] == 'e' || b[end] == 'E')) {
		return 0, 0, false
	}
	neg := b[i] == '-'
	j := i
	if neg {
		j++
	}
	if end-j > 18 {
		n, err := strconv.ParseInt(string(b[i:end]), 10, bits)
		return n, end, err == nil
	}
	var n int64
	for ; j < end; j++ {
		n = n*10 + int64(b[j]-'0')
	}
	if neg {
		n = -n
	}
	if bits == 32 && (n < -1<<31 || n > 1<<31-1) {
		return 0, 0, false
	}
	return n, end, true
}

// plainString returns the bytes of the JSON string at b[i:] when it has
// no escapes, no control characters and is valid UTF-8.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s := b[i+1 : j]
			if !ascii && !utf8.Valid(s) {
				return nil, 0, false
			}
			return s, j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, 0, false
}

// unquote appends to buf the JSON string at b[i:] with its escapes
// decoded; it fails on what encoding/json would read differently from
// the bytes (control characters, invalid UTF-8).
func unquote(buf, b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				return nil, 0, false
			}
			return buf, j + 1, true
		case c < 0x20:
			return nil, 0, false
		case c != '\\':
			buf = append(buf, c)
			j++
			continue
		}
		if j+1 >= len(b) {
			return nil, 0, false
		}
		switch e := b[j+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(b, j+2)
			if !ok {
				return nil, 0, false
			}
			j += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
					r2, ok = hex4(b, j+2)
				}
				if !ok {
					return nil, 0, false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return nil, 0, false
				}
				j += 6
			}
			buf = utf8.AppendRune(buf, r)
			continue
		default:
			return nil, 0, false
		}
		j += 2
	}
	return nil, 0, false
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// valueEnd returns the end of the JSON value at b[i:] (a string, an array
// or object, or a literal), or -1. It does not validate what it skips.
func valueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return -1
			}
			if depth == 0 {
				return j + 1
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth < 0 {
				return j
			}
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	if depth == 0 {
		return len(b)
	}
	return -1
}

var _ format.ArenaCodec = (*internalCodec)(nil)
