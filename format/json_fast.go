package format

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

// The JSON codec reads an object in two ways. decodeFast is compiled for
// the codec's columns and reads the common shape of a record: an object
// whose members come as plain names matching the columns (usually in their
// order), with scalar values, integers without fraction or exponent and
// strings without escapes. It never reports an error: on anything else it
// gives up, and DecodeArena reads the record again with the general
// reader, which decides what the record means or which error it is. Both
// read a record the same way; the fast one only skips work.

// fastName is what decodeFast matches a member name against: the
// column's name in lower case (letters only), with its fold mask (0x20
// over each letter), so that a name matches when each byte, or'ed with
// its mask, equals the lower-case byte.
type fastName struct {
	lower, mask []byte
}

// newFastNames returns the names decodeFast matches for cols, or nil when
// a name does not suit: it is not plain printable ASCII without quote and
// backslash, or two names fold alike (then case decides between them,
// which the general reader does).
func newFastNames(cols []types.Column, folded map[string]int) []fastName {
	if folded == nil {
		return nil
	}
	names := make([]fastName, len(cols))
	for i, col := range cols {
		if col.Name == "" {
			return nil
		}
		n := fastName{lower: make([]byte, len(col.Name)), mask: make([]byte, len(col.Name))}
		for k := 0; k < len(col.Name); k++ {
			ch := col.Name[k]
			switch {
			case ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\':
				return nil
			case 'A' <= ch && ch <= 'Z':
				n.lower[k], n.mask[k] = ch+'a'-'A', 0x20
			case 'a' <= ch && ch <= 'z':
				n.lower[k], n.mask[k] = ch, 0x20
			default:
				n.lower[k] = ch
			}
		}
		names[i] = n
	}
	return names
}

// matches reports whether b starts with the name followed by the closing
// quote of a member name.
func (n *fastName) matches(b []byte) bool {
	l := len(n.lower)
	if len(b) <= l || b[l] != '"' {
		return false
	}
	k := 0
	for ; k+8 <= l; k += 8 {
		x := binary.LittleEndian.Uint64(b[k:]) | binary.LittleEndian.Uint64(n.mask[k:])
		if x != binary.LittleEndian.Uint64(n.lower[k:]) {
			return false
		}
	}
	for ; k < l; k++ {
		if b[k]|n.mask[k] != n.lower[k] {
			return false
		}
	}
	return true
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainPrefix returns the length of the longest prefix of b holding only
// bytes a JSON string carries as they are: printable ASCII other than the
// quote and the backslash. It reads eight bytes at a time.
func plainPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ ('"' * lsb)
		s := x ^ ('\\' * lsb)
		// Each term sets the high bit of a lane that is below 0x20, a
		// quote, a backslash or not ASCII; a borrow may also set it in
		// lanes above a lane that is, so the lowest one set is exact.
		m := ((x-0x20*lsb)&^x | (q-lsb)&^q | (s-lsb)&^s | x) & msb
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// decodeFast reads b, an object, into dst as described above; ok is
// false when it gave up. dst may then hold some values.
func (c *jsonCodec) decodeFast(a *Arena, b []byte, dst []any) (ok bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) || b[i] != '{' {
		return false
	}
	i++
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i < len(b) && b[i] == '}' {
		return fastEnd(b, i+1)
	}
	guess := 0
	for {
		if i == len(b) || b[i] != '"' {
			return false
		}
		i++
		col := -1
		if guess < len(c.fast) && c.fast[guess].matches(b[i:]) {
			col = guess
			i += len(c.fast[guess].lower) + 1
		} else {
			n := plainPrefix(b[i:])
			if i+n == len(b) || b[i+n] != '"' {
				return false
			}
			col = c.field(b[i : i+n])
			i += n + 1
		}
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) || b[i] != ':' {
			return false
		}
		i++
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return false
		}
		if col < 0 {
			// A member no column reads: skip it with the general
			// reader, which only moves on valid JSON.
			d := jsonDecoder{b: b, i: i}
			if d.skip() != nil {
				return false
			}
			i = d.i
		} else if c.skip != nil && c.skip[col] {
			if i = c.fastSkip(a, b, i, c.cols[col].Type); i < 0 {
				return false
			}
			guess = col + 1
		} else {
			var v any
			if v, i = c.fastValue(a, b, i, c.cols[col].Type); i < 0 {
				return false
			}
			dst[col] = v
			guess = col + 1
		}
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return false
		}
		if b[i] == '}' {
			return fastEnd(b, i+1)
		}
		if b[i] != ',' {
			return false
		}
		i++
		for i < len(b) && isSpace(b[i]) {
			i++
		}
	}
}

// fastEnd reports whether b[i:] is only white space.
func fastEnd(b []byte, i int) bool {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i == len(b)
}

// fastValue reads the value of type t at b[i] and returns it and the
// index after it, or -1 when it leaves the value to the general reader.
func (c *jsonCodec) fastValue(a *Arena, b []byte, i int, t *types.Type) (any, int) {
	ch := b[i]
	if ch == 'n' {
		if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
			return nil, i + 4
		}
		return nil, -1
	}
	switch t.Kind {
	case types.Bigint, types.Int:
		n, j := fastInt(b, i)
		if j < 0 {
			return nil, -1
		}
		if t.Kind == types.Int {
			return a.Int32(int32(n)), j
		}
		return a.Int64(n), j
	case types.String:
		if ch != '"' {
			return nil, -1
		}
		j := i + 1
		n := plainPrefix(b[j:])
		if j+n < len(b) && b[j+n] == '"' {
			return a.String(b[j : j+n]), j + n + 1
		}
		// Escapes, non-ASCII or the end: the general reader.
		d := jsonDecoder{b: b, i: i, box: a}
		s, err := d.stringBytes()
		if err != nil {
			return nil, -1
		}
		return a.String(s), d.i
	}
	d := jsonDecoder{b: b, i: i, box: a}
	v, err := d.value(t)
	if err != nil {
		return nil, -1
	}
	return v, d.i
}

// fastInt reads the integer at b[i], of at most 18 digits and without
// fraction or exponent, and returns it and the index after it, or -1 when
// it leaves the value to the general reader.
func fastInt(b []byte, i int) (int64, int) {
	j := i
	neg := b[j] == '-'
	if neg {
		j++
	}
	start := j
	var n int64
	for j < len(b) && j-start < 18 && '0' <= b[j] && b[j] <= '9' {
		n = n*10 + int64(b[j]-'0')
		j++
	}
	if j == start || j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E' || '0' <= b[j] && b[j] <= '9') {
		return 0, -1
	}
	if neg {
		n = -n
	}
	return n, j
}

// fastSkip is fastValue for a column the codec does not keep: it accepts
// what fastValue accepts, without converting or boxing the value, and
// returns the index after it, or -1 when it leaves the value to the
// general reader. Other types than BIGINT, INT and STRING are read by the
// general reader and dropped, so that a value it refuses is refused.
func (c *jsonCodec) fastSkip(a *Arena, b []byte, i int, t *types.Type) int {
	ch := b[i]
	if ch == 'n' {
		if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
			return i + 4
		}
		return -1
	}
	switch t.Kind {
	case types.Bigint, types.Int:
		_, j := fastInt(b, i)
		return j
	case types.String:
		if ch != '"' {
			return -1
		}
		j := i + 1
		n := plainPrefix(b[j:])
		if j+n < len(b) && b[j+n] == '"' {
			return j + n + 1
		}
		d := jsonDecoder{b: b, i: i}
		if _, err := d.stringBytes(); err != nil {
			return -1
		}
		return d.i
	}
	_, j := c.fastValue(a, b, i, t)
	return j
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
