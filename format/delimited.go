package format

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

// The properties that set the field delimiter of the DELIMITED format.
const (
	ValueDelimiter = "VALUE_DELIMITER"
	KeyDelimiter   = "KEY_DELIMITER"
)

// delimitedCodec is the DELIMITED format: one CSV record per key or value,
// read and written as ksqlDB does with Apache Commons CSV's default format
// (double quotes, doubled inside quoted fields, minimal quoting).
type delimitedCodec struct {
	cols  []types.Column
	kinds []types.Kind
	// delim is the UTF-8 encoding of the delimiter character.
	delim []byte
	// key: a single null key column encodes as a null record.
	key bool
}

// parseDelimiter reads a VALUE_DELIMITER or KEY_DELIMITER property: a
// single character, or TAB or SPACE.
func parseDelimiter(prop, v string) ([]byte, error) {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	const example = "\nExample valid value: ';'"
	switch {
	case strings.TrimSpace(v) == "":
		return nil, fmt.Errorf("Configuration %s is invalid: Delimiter cannot be empty, if you meant to have a tab or space for delimiter, please use the special values 'TAB' or 'SPACE'"+example, prop)
	case strings.EqualFold(v, "TAB"):
		return []byte{'\t'}, nil
	case strings.EqualFold(v, "SPACE"):
		return []byte{' '}, nil
	case utf8.RuneCountInString(v) != 1:
		return nil, fmt.Errorf("Configuration %s is invalid: Invalid delimiter value: '%s'. Delimiter must be a single character or TAB,SPACE"+example, prop, v)
	case v == `"`:
		return nil, fmt.Errorf("Configuration %s is invalid: the delimiter cannot be the quote character '\"'; use another character, e.g. ';'", prop)
	case v == "\r" || v == "\n":
		return nil, fmt.Errorf("Configuration %s is invalid: the delimiter cannot be a line break; use TAB, SPACE or a single character such as ';'", prop)
	}
	return []byte(v), nil
}

func newDelimitedCodec(cols []types.Column, props map[string]string, prop string, key bool) (Codec, error) {
	delim := []byte{','}
	if v, ok := props[prop]; ok {
		var err error
		if delim, err = parseDelimiter(prop, v); err != nil {
			return nil, err
		}
	}
	c := &delimitedCodec{cols: cols, kinds: make([]types.Kind, len(cols)), delim: delim, key: key}
	for i, col := range cols {
		switch k := col.Type.Kind; k {
		case types.Array, types.Map, types.Struct:
			reason := fmt.Sprintf("The 'DELIMITED' format does not support type '%s', column: `%s`", k, col.Name)
			if key {
				return nil, keySchemaError(Delimited, cols, reason)
			}
			return nil, fmt.Errorf("%s; use JSON for nested types", reason)
		default:
			c.kinds[i] = k
		}
	}
	return c, nil
}

// keySchemaError is ksqlDB's error for a key schema a format cannot hold.
func keySchemaError(format string, cols []types.Column, reason string) error {
	return fmt.Errorf("Key format does not support schema.\nformat: %s\nschema: Persistence{columns=%s, features=[]}\nreason: %s", format, columnList(cols, " KEY"), reason)
}

// columnList spells columns as ksqlDB does in schema errors: [`A` INTEGER KEY, ...].
func columnList(cols []types.Column, suffix string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + c.Name + "` " + c.Type.String() + suffix)
	}
	b.WriteByte(']')
	return b.String()
}

func (c *delimitedCodec) isDelim(b []byte, i int) bool {
	if len(c.delim) == 1 {
		return b[i] == c.delim[0]
	}
	return b[i] == c.delim[0] && bytes.HasPrefix(b[i:], c.delim)
}

func (c *delimitedCodec) Decode(b []byte, dst []any) error {
	if len(dst) != len(c.cols) {
		return fmt.Errorf("DELIMITED codec decodes %d columns, got a row of %d", len(c.cols), len(dst))
	}
	for i := range dst {
		dst[i] = nil
	}
	if b == nil {
		return nil
	}
	i := 0
	for i < len(b) && (b[i] == '\r' || b[i] == '\n') {
		i++
	}
	if i == len(b) {
		return fmt.Errorf("invalid DELIMITED record: No fields in record")
	}
	var (
		firstErr error
		scratch  []byte
		n        int
	)
	for {
		var tok []byte
		end, skip := false, false
		if i < len(b) && b[i] == '"' {
			// A quoted field: up to the next lone quote; "" is a quote.
			i++
			start := i
			escaped := false
			for {
				if i >= len(b) {
					return fmt.Errorf("invalid DELIMITED record: EOF reached before encapsulated token finished (field %d)", n+1)
				}
				if b[i] == '"' {
					if i+1 < len(b) && b[i+1] == '"' {
						escaped = true
						i += 2
						continue
					}
					break
				}
				i++
			}
			tok = b[start:i]
			if escaped {
				if n < len(c.cols) && c.kinds[n] == types.String && firstErr == nil {
					dst[n] = unescapeString(tok)
					tok = nil
					skip = true
				} else {
					scratch = unescapeAppend(scratch[:0], tok)
					tok = scratch
				}
			}
			i++
			for {
				if i >= len(b) || b[i] == '\r' || b[i] == '\n' {
					end = true
					break
				}
				if c.isDelim(b, i) {
					i += len(c.delim)
					break
				}
				if !isCSVSpace(b[i]) {
					return fmt.Errorf("invalid DELIMITED record: invalid char %q between encapsulated token and delimiter (field %d)", b[i], n+1)
				}
				i++
			}
		} else {
			start := i
			for i < len(b) && b[i] != '\r' && b[i] != '\n' && !c.isDelim(b, i) {
				i++
			}
			tok = b[start:i]
			if i >= len(b) || b[i] == '\r' || b[i] == '\n' {
				end = true
			} else {
				i += len(c.delim)
			}
		}
		if n < len(c.cols) && firstErr == nil && !skip {
			v, err := parseDelimited(tok, c.cols[n].Type)
			if err != nil {
				firstErr = fmt.Errorf("column %s: %w", c.cols[n].Name, err)
			} else {
				dst[n] = v
			}
		}
		n++
		if end {
			break
		}
	}
	if n != len(c.cols) {
		for j := range dst {
			dst[j] = nil
		}
		return fmt.Errorf("Unexpected field count, csvFields:%d schemaFields:%d", n, len(c.cols))
	}
	return firstErr
}

// unescapeAppend appends a quoted field's contents with each doubled quote
// made single.
func unescapeAppend(dst, tok []byte) []byte {
	for j := 0; j < len(tok); j++ {
		dst = append(dst, tok[j])
		if tok[j] == '"' {
			j++
		}
	}
	return dst
}

// unescapeString is unescapeAppend to a new string.
func unescapeString(tok []byte) string {
	var sb strings.Builder
	sb.Grow(len(tok) - bytes.Count(tok, []byte{'"'})/2)
	for j := 0; j < len(tok); j++ {
		sb.WriteByte(tok[j])
		if tok[j] == '"' {
			j++
		}
	}
	return sb.String()
}

// isCSVSpace reports whether Java's Character.isWhitespace holds for an
// ASCII byte other than a line break.
func isCSVSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1f)
}

// parseDelimited converts one field's text to a value of type t; an empty
// field is null.
func parseDelimited(tok []byte, t *types.Type) (any, error) {
	if len(tok) == 0 {
		return nil, nil
	}
	switch t.Kind {
	case types.Boolean:
		return len(tok) == 4 && (tok[0]|0x20) == 't' && (tok[1]|0x20) == 'r' && (tok[2]|0x20) == 'u' && (tok[3]|0x20) == 'e', nil
	case types.Int, types.Date, types.Time:
		n, ok := parseJavaInt(tok, math.MinInt32, math.MaxInt32)
		if !ok {
			return nil, fmt.Errorf("cannot parse %q as %s", tok, t)
		}
		switch t.Kind {
		case types.Date:
			return types.DateValue(n), nil
		case types.Time:
			return types.TimeValue(n), nil
		}
		return int32(n), nil
	case types.Bigint, types.Timestamp:
		n, ok := parseJavaInt(tok, math.MinInt64, math.MaxInt64)
		if !ok {
			return nil, fmt.Errorf("cannot parse %q as %s", tok, t)
		}
		if t.Kind == types.Timestamp {
			return types.TimestampValue(n), nil
		}
		return n, nil
	case types.Double:
		f, ok := parseJavaDouble(tok)
		if !ok {
			return nil, fmt.Errorf("cannot parse %q as DOUBLE", tok)
		}
		return f, nil
	case types.Decimal:
		return parseDecimalField(tok, t)
	case types.String:
		return string(tok), nil
	case types.Bytes:
		enc := base64.StdEncoding
		if len(tok)%4 != 0 {
			enc = base64.RawStdEncoding
		}
		out := make([]byte, enc.DecodedLen(len(tok)))
		n, err := enc.Decode(out, tok)
		if err != nil {
			return nil, fmt.Errorf("BYTES value is not base64: %v", err)
		}
		return out[:n], nil
	}
	return nil, fmt.Errorf("type %s is not supported by DELIMITED", t)
}

// parseJavaInt parses an optionally signed decimal integer within [lo, hi]
// as Java's Integer.parseInt and Long.parseLong do.
func parseJavaInt(b []byte, lo, hi int64) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	limit := uint64(hi)
	if neg {
		limit = uint64(-(lo + 1)) + 1
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (limit-uint64(c-'0'))/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		return -int64(u-1) - 1, true
	}
	return int64(u), true
}

// parseJavaDouble parses a number as Java's Double.parseDouble does:
// surrounding whitespace is ignored, a trailing type suffix (d, f) is
// allowed, and NaN and Infinity are spelled as Java prints them.
func parseJavaDouble(b []byte) (float64, bool) {
	b = bytes.TrimFunc(b, func(r rune) bool { return r <= ' ' })
	if len(b) == 0 {
		return 0, false
	}
	s := b
	if s[0] == '+' || s[0] == '-' {
		if s = s[1:]; len(s) == 0 {
			return 0, false
		}
	}
	switch string(s) {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if b[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if c := s[len(s)-1] | 0x20; len(s) > 1 && (c == 'd' || c == 'f') && !bytes.HasPrefix(s, []byte("0x")) && !bytes.HasPrefix(s, []byte("0X")) {
		b = b[:len(b)-1]
	}
	for _, c := range s {
		if c == '_' || c == 'i' || c == 'I' || c == 'n' || c == 'N' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// parseDecimalField reads a DECIMAL as ksqlDB does: the value must fit the
// column's precision and must not need rounding to its scale.
func parseDecimalField(tok []byte, t *types.Type) (any, error) {
	for _, c := range tok {
		if c <= ' ' {
			return nil, fmt.Errorf("cannot parse %q as %s", tok, t)
		}
	}
	d, err := types.ParseDec(string(tok))
	if err != nil {
		return nil, fmt.Errorf("cannot parse %q as %s", tok, t)
	}
	digits := t.Precision - t.Scale
	if d.Sign() != 0 && d.Precision()-d.Scale > digits {
		return nil, fmt.Errorf("Numeric field overflow: A field with precision %d and scale %d must round to an absolute value less than 10^%d. Got %s", t.Precision, t.Scale, digits, d)
	}
	r := d.Rescale(t.Scale)
	if r.Cmp(d) != 0 {
		return nil, fmt.Errorf("Cannot fit decimal '%s' into DECIMAL(%d, %d) without rounding. (Requires %d,%d)", d, t.Precision, t.Scale, d.Precision(), d.Scale)
	}
	return r, nil
}

func (c *delimitedCodec) Encode(dst []byte, row []any) ([]byte, error) {
	if len(row) != len(c.cols) {
		return nil, fmt.Errorf("DELIMITED codec encodes %d columns, got a row of %d", len(c.cols), len(row))
	}
	if c.key && len(row) == 1 && row[0] == nil {
		return nil, nil
	}
	if dst == nil {
		dst = make([]byte, 0, 16*len(row))
	}
	var err error
	for i, v := range row {
		if i > 0 {
			dst = append(dst, c.delim...)
		}
		if v == nil {
			continue
		}
		start := len(dst)
		if dst, err = appendDelimitedField(dst, v, c.kinds[i]); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.cols[i].Name, err)
		}
		if c.needsQuotes(dst[start:], i == 0) {
			dst = quoteInPlace(dst, start)
		}
	}
	return dst, nil
}

// appendDelimitedField appends v's text, unquoted.
func appendDelimitedField(dst []byte, v any, k types.Kind) ([]byte, error) {
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float64:
		return types.AppendDouble(dst, x), nil
	case types.Dec:
		return append(dst, x.String()...), nil
	case string:
		return append(dst, x...), nil
	case []byte:
		return base64.StdEncoding.AppendEncode(dst, x), nil
	case types.TimestampValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case types.DateValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case types.TimeValue:
		return strconv.AppendInt(dst, int64(x), 10), nil
	}
	return nil, fmt.Errorf("cannot encode a %T value as DELIMITED %s", v, k)
}

// needsQuotes applies Commons CSV's minimal quoting: an empty first field,
// a first field not starting with a letter or digit, a field starting with
// a character up to '#', containing a quote, line break or the delimiter,
// or ending with a space or control character.
func (c *delimitedCodec) needsQuotes(f []byte, first bool) bool {
	if len(f) == 0 {
		return first
	}
	ch := f[0]
	if first && !(ch >= '0' && ch <= '9' || ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z') {
		return true
	}
	if ch <= '#' {
		return true
	}
	d := c.delim[0]
	for i, ch := range f {
		if ch == '"' || ch == '\n' || ch == '\r' || ch == d && (len(c.delim) == 1 || bytes.HasPrefix(f[i:], c.delim)) {
			return true
		}
	}
	return f[len(f)-1] <= ' '
}

// quoteInPlace wraps dst[start:] in quotes, doubling the quotes inside.
func quoteInPlace(dst []byte, start int) []byte {
	q := bytes.Count(dst[start:], []byte{'"'})
	end := len(dst)
	for range q + 2 {
		dst = append(dst, 0)
	}
	w := len(dst) - 1
	dst[w] = '"'
	w--
	for r := end - 1; r >= start; r-- {
		dst[w] = dst[r]
		w--
		if dst[r] == '"' {
			dst[w] = '"'
			w--
		}
	}
	dst[w] = '"'
	return dst
}
