package eval

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"crypto/md5"
	"github.com/sluice-sql/sluice/internal/types"
)

// String functions. Lengths and positions count Unicode code points where
// ksqlDB counts UTF-16 units; the two differ only for characters outside
// the Basic Multilingual Plane.

var kInt = []types.Kind{types.Int}

// variadicKind checks that every type in ts is of kind k (or NULL).
func variadicKind(ts []*types.Type, k types.Kind) bool {
	for _, t := range ts {
		if t != nil && t.Kind != k {
			return false
		}
	}
	return true
}

// strOrBytesKind returns the kind shared by the STRING or BYTES arguments
// ts (STRING when all are NULL), or false when they mix or are of another
// type.
func strOrBytesKind(ts []*types.Type) (types.Kind, bool) {
	var k types.Kind
	for _, t := range ts {
		if t == nil {
			continue
		}
		if (t.Kind != types.String && t.Kind != types.Bytes) || (k != 0 && t.Kind != k) {
			return 0, false
		}
		k = t.Kind
	}
	if k == 0 {
		k = types.String
	}
	return k, true
}

func typeOfKind(k types.Kind) *types.Type {
	if k == types.Bytes {
		return types.BytesType
	}
	return types.StringType
}

// fixed returns a Check for one signature of argument kinds and a result.
func fixed(name, want string, ret *types.Type, kinds ...[]types.Kind) func([]*types.Type) (*types.Type, error) {
	return func(ts []*types.Type) (*types.Type, error) {
		if err := sig(name, want, ts, kinds...); err != nil {
			return nil, err
		}
		return ret, nil
	}
}

// arities returns a Check accepting a prefix of kinds of length n for each
// n in counts.
func arities(name, want string, ret *types.Type, counts []int, kinds ...[]types.Kind) func([]*types.Type) (*types.Type, error) {
	return func(ts []*types.Type) (*types.Type, error) {
		for _, n := range counts {
			if len(ts) == n {
				if err := sig(name, want, ts, kinds[:n]...); err != nil {
					return nil, err
				}
				return ret, nil
			}
		}
		return nil, badArgs(name, ts, want)
	}
}

func buildStrict(fn func(args []any) (any, error)) func([]*types.Type, *types.Type) (Impl, error) {
	return func([]*types.Type, *types.Type) (Impl, error) { return Strict(fn), nil }
}

func javaIsSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\x0b', '\f', '\r':
		return true
	}
	return false
}

// initCap lower-cases s and upper-cases the first character of each word,
// a word being a run of non-spaces; leading whitespace is dropped, as
// ksqlDB's INITCAP does.
func initCap(s string) string {
	s = strings.TrimLeftFunc(strings.ToLower(s), javaIsSpace)
	var b strings.Builder
	b.Grow(len(s))
	start := true
	for _, r := range s {
		if start && !javaIsSpace(r) {
			b.WriteString(strings.ToUpper(string(r)))
		} else {
			b.WriteRune(r)
		}
		start = javaIsSpace(r)
	}
	return b.String()
}

// ordinalIndex returns the index (in runes of s) of the n-th occurrence of
// sub in s, occurrences allowed to overlap, or -1.
func ordinalIndex(s, sub []rune, n int) int {
	if n <= 0 {
		return -1
	}
	if len(sub) == 0 {
		return 0
	}
	found := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if runesHavePrefix(s[i:], sub) {
			found++
			if found == n {
				return i
			}
		}
	}
	return -1
}

func runesHavePrefix(s, p []rune) bool {
	for i := range p {
		if s[i] != p[i] {
			return false
		}
	}
	return true
}

func reverseRunes(rs []rune) []rune {
	out := make([]rune, len(rs))
	for i, r := range rs {
		out[len(rs)-1-i] = r
	}
	return out
}

// instr implements INSTR(str, sub, position, occurrence): a 1-based
// position, 0 when not found; a negative position searches backwards from
// that many characters before the end.
func instr(str, sub string, pos, occ int64) int32 {
	s, t := []rune(str), []rune(sub)
	n := int64(len(s))
	if pos > n || -pos > n {
		return 0
	}
	reversed := pos < 0
	if reversed {
		s, t, pos = reverseRunes(s), reverseRunes(t), -pos
	}
	// The search starts at pos-1; a start of -1 (position 0) counts from
	// the end, as Apache Commons' substring does.
	from := pos - 1
	if from < 0 {
		from = max(n+from, 0)
	}
	i := ordinalIndex(s[from:], t, int(min(occ, 1<<31-1)))
	if i == -1 {
		return 0
	}
	if reversed {
		return int32(n - pos - int64(i) - int64(len(t)) + 2)
	}
	return int32(int64(i) + pos)
}

// padString implements LPAD and RPAD on strings.
func padString(input string, target int64, padding string, left bool) (any, error) {
	if padding == "" || target < 0 {
		return nil, nil
	}
	in, pad := []rune(input), []rune(padding)
	if int64(len(in)) >= target {
		return string(in[:target]), nil
	}
	out := make([]rune, 0, target)
	if !left {
		out = append(out, in...)
	}
	npad := int(target) - len(in)
	for i := range npad {
		out = append(out, pad[i%len(pad)])
	}
	if left {
		out = append(out, in...)
	}
	return string(out), nil
}

// padBytes implements LPAD and RPAD on bytes.
func padBytes(input []byte, target int64, padding []byte, left bool) (any, error) {
	if len(padding) == 0 || target < 0 {
		return nil, nil
	}
	if int64(len(input)) >= target {
		return append([]byte{}, input[:target]...), nil
	}
	out := make([]byte, 0, target)
	if !left {
		out = append(out, input...)
	}
	npad := int(target) - len(input)
	for i := range npad {
		out = append(out, padding[i%len(padding)])
	}
	if left {
		out = append(out, input...)
	}
	return out, nil
}

// masker replaces characters by class; a mask of -1 keeps the class as is.
type masker struct{ upper, lower, digit, other rune }

var defaultMasker = masker{'X', 'x', 'n', '-'}

func (m masker) maskRune(r rune) rune {
	var c rune
	switch {
	case unicode.IsUpper(r):
		c = m.upper
	case unicode.IsLower(r):
		c = m.lower
	case unicode.IsDigit(r):
		c = m.digit
	default:
		c = m.other
	}
	if c < 0 {
		return r
	}
	return c
}

func (m masker) mask(rs []rune) {
	for i, r := range rs {
		rs[i] = m.maskRune(r)
	}
}

// maskChar reads a mask argument: null keeps the class unmasked.
func maskChar(v any) (rune, error) {
	if v == nil {
		return -1, nil
	}
	s := v.(string)
	if utf8.RuneCountInString(s) != 1 {
		return 0, fmt.Errorf("Invalid mask character. Must be only single character, but was '%s'", s)
	}
	r, _ := utf8.DecodeRuneInString(s)
	return r, nil
}

// maskFunc registers one of the MASK family. region returns the [start,
// end) rune range to mask given the length and the count argument.
func maskFunc(name, desc string, counted bool, region func(n, count int) (int, int)) *Func {
	nfixed := 1
	kinds := [][]types.Kind{kString}
	want := "(STRING[, STRING, STRING, STRING, STRING])"
	if counted {
		nfixed = 2
		kinds = append(kinds, kInt)
		want = "(STRING, INTEGER[, STRING, STRING, STRING, STRING])"
	}
	kinds = append(kinds, kString, kString, kString, kString)
	return &Func{
		Name: name, Description: desc,
		Check: arities(name, want, types.StringType, []int{nfixed, nfixed + 4}, kinds...),
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				var err error
				vals := make([]any, len(args))
				for i, a := range args {
					v, e := a(row)
					keep(&err, e)
					vals[i] = v
				}
				count := 0
				if counted {
					if vals[1] == nil {
						return nil, err
					}
					count = int(toInt64(vals[1]))
					if count < 0 {
						keep(&err, fmt.Errorf("function %s requires a non-negative number of characters to mask or skip", strings.ToLower(name)))
						return nil, err
					}
				}
				m := defaultMasker
				if len(vals) > nfixed {
					var e error
					marks := []*rune{&m.upper, &m.lower, &m.digit, &m.other}
					for i, p := range marks {
						if *p, e = maskChar(vals[nfixed+i]); e != nil {
							keep(&err, e)
							return nil, err
						}
					}
				}
				if vals[0] == nil {
					return nil, err
				}
				rs := []rune(vals[0].(string))
				s, e := region(len(rs), count)
				m.mask(rs[s:e])
				return string(rs), err
			}, nil
		},
	}
}

// splitString splits s on the literal delimiter sep, keeping empty
// pieces; an empty sep splits s into its characters.
func splitString(s, sep string) []any {
	if sep == "" {
		if s == "" {
			return []any{""}
		}
		out := make([]any, 0, utf8.RuneCountInString(s))
		for _, r := range s {
			out = append(out, string(r))
		}
		return out
	}
	parts := strings.Split(s, sep)
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

func splitBytes(b, sep []byte) []any {
	if len(b) == 0 {
		return []any{[]byte{}}
	}
	if len(sep) == 0 {
		out := make([]any, len(b))
		for i := range b {
			out[i] = []byte{b[i]}
		}
		return out
	}
	var out []any
	for {
		i := indexBytes(b, sep)
		if i < 0 {
			return append(out, append([]byte{}, b...))
		}
		out = append(out, append([]byte{}, b[:i]...))
		b = b[i+len(sep):]
	}
}

func indexBytes(b, sep []byte) int {
	for i := 0; i+len(sep) <= len(b); i++ {
		if string(b[i:i+len(sep)]) == string(sep) {
			return i
		}
	}
	return -1
}

// splitToMap implements SPLIT_TO_MAP: entries split on entryDelim (empty
// ones skipped), those containing kvDelim split into key and value; a
// later duplicate key replaces the value of the earlier one.
func splitToMap(s, entryDelim, kvDelim string) any {
	if entryDelim == "" || kvDelim == "" || entryDelim == kvDelim {
		return nil
	}
	m := &types.MapValue{Keys: []any{}, Values: []any{}}
	index := map[string]int{}
	for _, e := range strings.Split(s, entryDelim) {
		if e == "" || !strings.Contains(e, kvDelim) {
			continue
		}
		parts := strings.SplitN(e, kvDelim, 3)
		k, v := parts[0], parts[1]
		if i, ok := index[k]; ok {
			m.Values[i] = v
			continue
		}
		index[k] = len(m.Keys)
		m.Keys = append(m.Keys, k)
		m.Values = append(m.Values, v)
	}
	return m
}

// chrFromString implements CHR('\uXXXX'): the string is unescaped as a
// Java string literal body.
func chrFromString(s string) (any, error) {
	if utf8.RuneCountInString(s) < 6 || !strings.HasPrefix(s, `\u`) {
		return nil, nil
	}
	var units []uint16
	var b strings.Builder
	flush := func() {
		if len(units) > 0 {
			b.WriteString(string(utf16.Decode(units)))
			units = units[:0]
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			flush()
			r, w := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += w
			continue
		}
		n := s[i+1]
		if n == 'u' {
			j := i + 1
			for j < len(s) && s[j] == 'u' {
				j++
			}
			if j+4 > len(s) {
				return nil, fmt.Errorf("Less than 4 hex digits in unicode value: '%s' due to end of CharSequence", s[i:])
			}
			var x [2]byte
			if _, err := hex.Decode(x[:], []byte(s[j:j+4])); err != nil {
				return nil, fmt.Errorf("Unable to parse unicode value: %s", s[j:j+4])
			}
			units = append(units, uint16(x[0])<<8|uint16(x[1]))
			i = j + 4
			continue
		}
		flush()
		switch n {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case '\\', '\'', '"':
			b.WriteByte(n)
		default:
			b.WriteByte('\\')
			b.WriteByte(n)
		}
		i += 2
	}
	flush()
	return b.String(), nil
}

// newUUID returns a random (version 4) UUID in its canonical form.
func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u[:])
}

func formatUUID(u []byte) string {
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], u[10:])
	return string(buf[:])
}

var errUUIDBytes = errors.New("UUID requires exactly 16 bytes")

func init() {
	Register(&Func{
		Name: "CONCAT_WS", Description: "CONCAT_WS(sep, x, ...): joins the non-null strings or bytes with sep; null when sep is null.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			want := "(STRING, STRING, ...) or (BYTES, BYTES, ...)"
			k, ok := strOrBytesKind(ts)
			if !ok || len(ts) < 2 {
				return nil, badArgs("CONCAT_WS", ts, want)
			}
			return typeOfKind(k), nil
		},
		Build: func(_ []*types.Type, ret *types.Type) (Impl, error) {
			isBytes := ret.Kind == types.Bytes
			return func(row []any, args []ArgFunc) (any, error) {
				sep, err := args[0](row)
				if sep == nil {
					return nil, err
				}
				var out []byte
				first := true
				for _, a := range args[1:] {
					v, e := a(row)
					keep(&err, e)
					if v == nil {
						continue
					}
					if !first {
						out = appendStrOrBytes(out, sep)
					}
					first = false
					out = appendStrOrBytes(out, v)
				}
				if isBytes {
					if out == nil {
						out = []byte{}
					}
					return out, err
				}
				return string(out), err
			}, nil
		},
	})
	Register(stringFunc("INITCAP", "Capitalizes the first letter of each whitespace-separated word and lower-cases the rest.", func(s string) any { return initCap(s) }))
	Register(&Func{
		Name: "INSTR", Description: "INSTR(str, sub[, position[, occurrence]]): 1-based position of sub in str, 0 if absent; a negative position searches backwards.",
		Check: arities("INSTR", "(STRING, STRING[, INTEGER[, INTEGER]])", types.IntType, []int{2, 3, 4}, kString, kString, kInt, kInt),
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				var err error
				vals := [4]any{nil, nil, int32(1), int32(1)}
				for i, a := range args {
					v, e := a(row)
					keep(&err, e)
					if v == nil && i >= 2 {
						return nil, err
					}
					vals[i] = v
				}
				if vals[0] == nil || vals[1] == nil {
					return int32(0), err
				}
				return instr(vals[0].(string), vals[1].(string), toInt64(vals[2]), toInt64(vals[3])), err
			}, nil
		},
	})
	for _, left := range []bool{true, false} {
		name, side := "LPAD", "start"
		if !left {
			name, side = "RPAD", "end"
		}
		Register(&Func{
			Name: name, Description: name + "(x, length, padding): pads a string or bytes at the " + side + " with padding up to length, truncating longer input.",
			Check: func(ts []*types.Type) (*types.Type, error) {
				want := "(STRING, INTEGER, STRING) or (BYTES, INTEGER, BYTES)"
				if len(ts) != 3 || !variadicKind(ts[1:2], types.Int) {
					return nil, badArgs(name, ts, want)
				}
				k, ok := strOrBytesKind([]*types.Type{ts[0], ts[2]})
				if !ok {
					return nil, badArgs(name, ts, want)
				}
				return typeOfKind(k), nil
			},
			Build: buildStrict(func(a []any) (any, error) {
				if b, ok := a[0].([]byte); ok {
					return padBytes(b, toInt64(a[1]), a[2].([]byte), left)
				}
				return padString(a[0].(string), toInt64(a[1]), a[2].(string), left)
			}),
		})
	}
	Register(maskFunc("MASK", "Masks a string: upper-case letters as X, lower-case as x, digits as n, others as - (or the given mask characters).", false,
		func(n, _ int) (int, int) { return 0, n }))
	Register(maskFunc("MASK_KEEP_LEFT", "MASK_KEEP_LEFT(s, n[, ...]): masks all but the first n characters.", true,
		func(n, c int) (int, int) { return min(c, n), n }))
	Register(maskFunc("MASK_KEEP_RIGHT", "MASK_KEEP_RIGHT(s, n[, ...]): masks all but the last n characters.", true,
		func(n, c int) (int, int) { return 0, max(n-c, 0) }))
	Register(maskFunc("MASK_LEFT", "MASK_LEFT(s, n[, ...]): masks the first n characters.", true,
		func(n, c int) (int, int) { return 0, min(c, n) }))
	Register(maskFunc("MASK_RIGHT", "MASK_RIGHT(s, n[, ...]): masks the last n characters.", true,
		func(n, c int) (int, int) { return max(n-c, 0), n }))
	Register(&Func{
		Name: "REPLACE", Description: "REPLACE(s, old, new): replaces every occurrence of old in s with new.",
		Check: fixed("REPLACE", "(STRING, STRING, STRING)", types.StringType, kString, kString, kString),
		Build: buildStrict(func(a []any) (any, error) {
			return strings.ReplaceAll(a[0].(string), a[1].(string), a[2].(string)), nil
		}),
	})
	Register(&Func{
		Name: "SPLIT", Description: "SPLIT(x, delimiter): splits a string or bytes on a literal delimiter; an empty delimiter splits every character or byte.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			want := "(STRING, STRING) or (BYTES, BYTES)"
			k, ok := strOrBytesKind(ts)
			if !ok || len(ts) != 2 {
				return nil, badArgs("SPLIT", ts, want)
			}
			return types.ArrayOf(typeOfKind(k)), nil
		},
		Build: buildStrict(func(a []any) (any, error) {
			if b, ok := a[0].([]byte); ok {
				return splitBytes(b, a[1].([]byte)), nil
			}
			return splitString(a[0].(string), a[1].(string)), nil
		}),
	})
	Register(&Func{
		Name: "SPLIT_TO_MAP", Description: "SPLIT_TO_MAP(s, entryDelimiter, kvDelimiter): splits s into key-value pairs; the last value of a repeated key wins.",
		Check: fixed("SPLIT_TO_MAP", "(STRING, STRING, STRING)", types.MapOf(types.StringType, types.StringType), kString, kString, kString),
		Build: buildStrict(func(a []any) (any, error) {
			return splitToMap(a[0].(string), a[1].(string), a[2].(string)), nil
		}),
	})
	Register(&Func{
		Name: "CHR", Description: "CHR(code): the character with a decimal code point, or with a UTF-16 escape such as '\\u004b'.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 || (ts[0] != nil && ts[0].Kind != types.Int && ts[0].Kind != types.String) {
				return nil, badArgs("CHR", ts, "(INTEGER) or (STRING)")
			}
			return types.StringType, nil
		},
		Build: buildStrict(func(a []any) (any, error) {
			if s, ok := a[0].(string); ok {
				return chrFromString(s)
			}
			c := toInt64(a[0])
			if c < 0 || c > unicode.MaxRune {
				return nil, nil
			}
			return string(rune(c)), nil
		}),
	})
	Register(&Func{
		Name: "ELT", Description: "ELT(n, s1, s2, ...): the n-th string (1-based), null when n is out of range.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) < 1 || !variadicKind(ts[:1], types.Int) || !variadicKind(ts[1:], types.String) {
				return nil, badArgs("ELT", ts, "(INTEGER, STRING, ...)")
			}
			return types.StringType, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				n, err := args[0](row)
				if n == nil {
					return nil, err
				}
				i := toInt64(n)
				if i < 1 || i >= int64(len(args)) {
					return nil, err
				}
				v, e := args[i](row)
				keep(&err, e)
				return v, err
			}, nil
		},
	})
	Register(&Func{
		Name: "FIELD", Description: "FIELD(s, s1, s2, ...): 1-based position of s among the strings, 0 if absent or s is null.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) < 1 || !variadicKind(ts, types.String) {
				return nil, badArgs("FIELD", ts, "(STRING, STRING, ...)")
			}
			return types.IntType, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				s, err := args[0](row)
				if s == nil {
					return int32(0), err
				}
				for i, a := range args[1:] {
					v, e := a(row)
					keep(&err, e)
					if v != nil && v.(string) == s.(string) {
						return int32(i + 1), err
					}
				}
				return int32(0), err
			}, nil
		},
	})
	Register(&Func{
		Name: "UUID", Description: "UUID(): a random UUID; UUID(bytes): the UUID of 16 bytes, as a string.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) > 1 || (len(ts) == 1 && ts[0] != nil && ts[0].Kind != types.Bytes) {
				return nil, badArgs("UUID", ts, "() or (BYTES)")
			}
			return types.StringType, nil
		},
		Build: func(ts []*types.Type, _ *types.Type) (Impl, error) {
			if len(ts) == 0 {
				return func([]any, []ArgFunc) (any, error) { return newUUID(), nil }, nil
			}
			return Strict1(func(a any) (any, error) {
				b := a.([]byte)
				if len(b) != 16 {
					return nil, errUUIDBytes
				}
				return formatUUID(b), nil
			}), nil
		},
	})
}

func appendStrOrBytes(dst []byte, v any) []byte {
	if b, ok := v.([]byte); ok {
		return append(dst, b...)
	}
	return append(dst, v.(string)...)
}

// Regular expressions are written in Java's syntax and run with Go's
// regexp package (RE2). The common syntax is the same; javaRegexp rewrites
// Java's POSIX classes (\p{Alpha}, \p{Digit}, ...) and \Z. Not supported,
// reported as an invalid pattern: back-references (\1), look-ahead and
// look-behind ((?=, (?!, (?<=, (?<!), atomic groups ((?>) and possessive
// quantifiers (a*+). Replacement strings follow Java: $n or ${name} for a
// group, \ escaping the next character.

var javaPosixClasses = map[string]string{
	"Lower": `a-z`, "Upper": `A-Z`, "ASCII": `\x00-\x7F`, "Alpha": `a-zA-Z`, "Digit": `0-9`,
	"Alnum": `a-zA-Z0-9`, "Punct": `!-/:-@\[-` + "`" + `{-~`, "Graph": `!-~`, "Print": ` -~`,
	"Blank": ` \t`, "Cntrl": `\x00-\x1F\x7F`, "XDigit": `0-9a-fA-F`, "Space": ` \t\n\x0B\f\r`,
}

// javaRegexp rewrites the Java-only parts of pattern that have an RE2
// equivalent.
func javaRegexp(pattern string) string {
	if !strings.Contains(pattern, `\`) {
		return pattern
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			n := pattern[i+1]
			if (n == 'p' || n == 'P') && i+2 < len(pattern) && pattern[i+2] == '{' {
				if end := strings.IndexByte(pattern[i+3:], '}'); end >= 0 {
					name := pattern[i+3 : i+3+end]
					name = strings.TrimPrefix(name, "Is")
					if cls, ok := javaPosixClasses[name]; ok {
						switch {
						case inClass && n == 'p':
							b.WriteString(cls)
						case n == 'p':
							b.WriteString("[" + cls + "]")
						default:
							b.WriteString("[^" + cls + "]")
						}
						i += 3 + end
						continue
					}
				}
			}
			if n == 'Z' && !inClass {
				b.WriteString(`(?:\n?\z)`)
				i++
				continue
			}
			b.WriteByte(c)
			b.WriteByte(n)
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			if i+1 < len(pattern) && pattern[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

type compiledRegexp struct {
	src string
	re  *regexp.Regexp
	err error
	// need is text every match contains (requiredLiteral), "" if none
	// is known; start, if not nil, starts a search near it.
	need  string
	start *literalStart
}

// find is re.FindStringSubmatchIndex(s), sped up by what every match
// contains.
func (c *compiledRegexp) find(s string) []int {
	if c.start != nil {
		return c.start.find(c.re, s)
	}
	if !c.mayMatch(s) {
		return nil
	}
	return c.re.FindStringSubmatchIndex(s)
}

// mayMatch reports whether s may hold a match: false only when it lacks
// the text every match contains.
func (c *compiledRegexp) mayMatch(s string) bool {
	return c.need == "" || strings.Contains(s, c.need)
}

// regexpCache compiles the patterns a call site meets, keeping the last
// one, so a literal pattern is compiled once. It is safe for concurrent
// use.
type regexpCache struct {
	last atomic.Pointer[compiledRegexp]
}

func (c *regexpCache) get(pattern string) (*regexp.Regexp, error) {
	l, err := c.compiled(pattern)
	return l.re, err
}

// compiled is get's compiled pattern, with what every match contains.
func (c *regexpCache) compiled(pattern string) (*compiledRegexp, error) {
	if l := c.last.Load(); l != nil && l.src == pattern {
		return l, l.err
	}
	goPattern := javaRegexp(pattern)
	re, err := regexp.Compile(goPattern)
	l := &compiledRegexp{src: pattern, re: re, err: err}
	if err != nil {
		l.err = fmt.Errorf("Invalid regular expression pattern: %s: %v", pattern, err)
	} else {
		l.need = requiredLiteral(goPattern)
		l.start = newLiteralStart(goPattern)
	}
	c.last.Store(l)
	return l, l.err
}

// replacementPart is a literal (group < 0) or a group reference of a Java
// replacement string.
type replacementPart struct {
	lit   string
	group int
	name  string
}

// parseReplacement parses a Java replacement string for re: $n takes as
// many digits as still name a group of re, ${name} a named group, and a
// backslash quotes the next character.
func parseReplacement(repl string, re *regexp.Regexp) ([]replacementPart, error) {
	var parts []replacementPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, replacementPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	groups := re.NumSubexp()
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch c {
		case '\\':
			i++
			if i >= len(repl) {
				return nil, errors.New("character to be escaped is missing")
			}
			lit.WriteByte(repl[i])
		case '$':
			i++
			if i >= len(repl) {
				return nil, errors.New("Illegal group reference: group index is missing")
			}
			if repl[i] == '{' {
				end := strings.IndexByte(repl[i:], '}')
				if end < 0 {
					return nil, errors.New("named capturing group is missing trailing '}'")
				}
				name := repl[i+1 : i+end]
				if re.SubexpIndex(name) < 0 {
					return nil, fmt.Errorf("No group with name {%s}", name)
				}
				flush()
				parts = append(parts, replacementPart{group: re.SubexpIndex(name), name: name})
				i += end
				continue
			}
			if repl[i] < '0' || repl[i] > '9' {
				return nil, errors.New("Illegal group reference")
			}
			g := int(repl[i] - '0')
			if g > groups {
				return nil, fmt.Errorf("No group %d", g)
			}
			for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
				ng := g*10 + int(repl[i+1]-'0')
				if ng > groups {
					break
				}
				g = ng
				i++
			}
			flush()
			parts = append(parts, replacementPart{group: g})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return parts, nil
}

type compiledReplacement struct {
	re    *regexp.Regexp
	repl  string
	parts []replacementPart
	err   error
}

// regexpReplace replaces every match of re in s with the Java replacement
// string repl.
func regexpReplace(s string, re *regexp.Regexp, parts []replacementPart) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		for _, p := range parts {
			if p.group < 0 {
				b.WriteString(p.lit)
			} else if m[2*p.group] >= 0 {
				b.WriteString(s[m[2*p.group]:m[2*p.group+1]])
			}
		}
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// regexpSplit implements REGEXP_SPLIT_TO_ARRAY: empty pieces are kept,
// except that a pattern matching the empty string splits as Java's
// Pattern.split does, dropping trailing empty pieces.
func regexpSplit(s string, re *regexp.Regexp, pattern string) []any {
	var pieces []string
	if pattern == "" || fullEmptyMatch(re) {
		if s == "" {
			return []any{""}
		}
		pieces = re.Split(s, -1)
		n := len(pieces)
		for n > 0 && pieces[n-1] == "" {
			n--
		}
		pieces = pieces[:n]
	} else {
		last := 0
		for _, m := range re.FindAllStringIndex(s, -1) {
			pieces = append(pieces, s[last:m[0]])
			last = m[1]
		}
		pieces = append(pieces, s[last:])
	}
	out := make([]any, len(pieces))
	for i, p := range pieces {
		out[i] = p
	}
	return out
}

// fullEmptyMatch reports whether re matches the whole empty string.
func fullEmptyMatch(re *regexp.Regexp) bool {
	loc := re.FindStringIndex("")
	return loc != nil && loc[0] == 0 && loc[1] == 0
}

func init() {
	for _, all := range []bool{false, true} {
		name, desc := "REGEXP_EXTRACT", "REGEXP_EXTRACT(pattern, s[, group]): the first match of pattern in s, or of its capturing group; null if none."
		ret := types.StringType
		if all {
			name, desc = "REGEXP_EXTRACT_ALL", "REGEXP_EXTRACT_ALL(pattern, s[, group]): every match of pattern in s, or of its capturing group."
			ret = types.ArrayOf(types.StringType)
		}
		Register(&Func{
			Name: name, Description: desc,
			Check: arities(name, "(STRING, STRING[, INTEGER])", ret, []int{2, 3}, kString, kString, kInt),
			Build: func([]*types.Type, *types.Type) (Impl, error) {
				cache := &regexpCache{}
				return Strict(func(a []any) (any, error) {
					c, err := cache.compiled(a[0].(string))
					if err != nil {
						return nil, err
					}
					re := c.re
					g := 0
					if len(a) == 3 {
						g = int(toInt64(a[2]))
					}
					if g > re.NumSubexp() {
						return nil, nil
					}
					if g < 0 {
						return nil, fmt.Errorf("No group %d", g)
					}
					s := a[1].(string)
					if !all {
						m := c.find(s)
						if m == nil || m[2*g] < 0 {
							return nil, nil
						}
						return s[m[2*g]:m[2*g+1]], nil
					}
					if !c.mayMatch(s) {
						return []any{}, nil
					}
					ms := re.FindAllStringSubmatchIndex(s, -1)
					out := make([]any, len(ms))
					for i, m := range ms {
						if m[2*g] >= 0 {
							out[i] = s[m[2*g]:m[2*g+1]]
						}
					}
					return out, nil
				}), nil
			},
		})
	}
	Register(&Func{
		Name: "REGEXP_REPLACE", Description: "REGEXP_REPLACE(s, pattern, replacement): replaces every match of pattern; $n in replacement is a group.",
		Check: fixed("REGEXP_REPLACE", "(STRING, STRING, STRING)", types.StringType, kString, kString, kString),
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			cache := &regexpCache{}
			var last atomic.Pointer[compiledReplacement]
			return Strict(func(a []any) (any, error) {
				cr, err := cache.compiled(a[1].(string))
				if err != nil {
					return nil, err
				}
				re := cr.re
				repl := a[2].(string)
				c := last.Load()
				if c == nil || c.re != re || c.repl != repl {
					parts, err := parseReplacement(repl, re)
					c = &compiledReplacement{re: re, repl: repl, parts: parts, err: err}
					last.Store(c)
				}
				if c.err != nil {
					return nil, c.err
				}
				if !cr.mayMatch(a[0].(string)) {
					return a[0].(string), nil
				}
				return regexpReplace(a[0].(string), re, c.parts), nil
			}), nil
		},
	})
	Register(&Func{
		Name: "REGEXP_SPLIT_TO_ARRAY", Description: "REGEXP_SPLIT_TO_ARRAY(s, pattern): splits s around the matches of pattern.",
		Check: fixed("REGEXP_SPLIT_TO_ARRAY", "(STRING, STRING)", types.ArrayOf(types.StringType), kString, kString),
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			cache := &regexpCache{}
			return Strict(func(a []any) (any, error) {
				re, err := cache.get(a[1].(string))
				if err != nil {
					return nil, err
				}
				return regexpSplit(a[0].(string), re, a[1].(string)), nil
			}), nil
		},
	})
}

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
}
