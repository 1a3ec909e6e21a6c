package parser

import (
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the lexical class of a token.
type tokKind uint8

const (
	tkEOF    tokKind = iota
	tkWord           // unquoted identifier or keyword
	tkQIdent         // `quoted` or "quoted" identifier
	tkString         // 'string'
	tkNumber         // 12, 1.5, 1e3
	tkBytes          // X'0AFF'
	tkVar            // ${name}
	tkOp             // punctuation and operators
)

// token is one lexeme of the user's text. off and end are byte offsets in the
// whole script.
type token struct {
	kind     tokKind
	text     string // raw text as written
	val      string // identifier: canonical name; string: unquoted value; bytes: decoded bytes; var: name
	off, end int
}

// is reports whether t is the unquoted word w (case-insensitive).
func (t token) is(w string) bool {
	return t.kind == tkWord && strings.EqualFold(t.text, w)
}

// isOp reports whether t is the operator op.
func (t token) isOp(op string) bool { return t.kind == tkOp && t.text == op }

// upper returns the token's text upper-cased.
func (t token) upper() string { return strings.ToUpper(t.text) }

// isName reports whether t can name something: a word or a quoted identifier.
func (t token) isName() bool { return t.kind == tkWord || t.kind == tkQIdent }

// describe spells the token for an error message.
func (t token) describe() string {
	if t.kind == tkEOF {
		return "end of input"
	}
	s := t.text
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return "'" + s + "'"
}

// twoCharOps are the multi-character operators.
var twoCharOps = []string{"->", "=>", ":=", "<=", ">=", "<>", "!=", "||"}

// lex splits the whole script into tokens, dropping whitespace and comments.
// The last token is tkEOF at the end of the text.
func lex(src string) ([]token, error) {
	// Tokens are most of what parsing a long statement allocates: they are
	// gathered in chunks of bounded size and copied once into a slice of
	// the exact length, so that the bytes allocated are proportional to
	// the text (append's growth of large slices is not).
	var full [][]token
	toks := make([]token, 0, 64)
	i := 0
	for i < len(src) {
		if len(toks) == cap(toks) {
			full = append(full, toks)
			toks = make([]token, 0, min(2*cap(toks), 4096))
		}
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = len(src)
			} else {
				i += j + 1
			}
			continue
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, errAt(src, i, "unterminated comment: the /* opened here is never closed; close it with */")
			}
			i += 2 + j + 2
			continue
		case (c == 'x' || c == 'X') && i+1 < len(src) && src[i+1] == '\'':
			j := strings.IndexByte(src[i+2:], '\'')
			if j < 0 {
				return nil, errAt(src, i+1, "unterminated bytes literal: the ' opened here is never closed; close it with '")
			}
			h := src[i+2 : i+2+j]
			b, err := hex.DecodeString(h)
			if err != nil {
				return nil, errAt(src, i, "invalid bytes literal "+src[i:i+3+j]+"; write an even number of hex digits, e.g. X'0AFF'")
			}
			toks = append(toks, token{kind: tkBytes, text: src[i : i+3+j], val: string(b), off: i, end: i + 3 + j})
			i += 3 + j
			continue
		case c == '\'':
			v, n, ok := scanQuoted(src[i:], '\'')
			if !ok {
				return nil, errAt(src, i, "unterminated string literal: the ' opened here is never closed; close it with ' (write a quote inside a string as '')")
			}
			toks = append(toks, token{kind: tkString, text: src[i : i+n], val: v, off: i, end: i + n})
			i += n
			continue
		case c == '`' || c == '"':
			v, n, ok := scanQuoted(src[i:], c)
			if !ok {
				return nil, errAt(src, i, "unterminated quoted identifier: the "+string(c)+" opened here is never closed; close it with "+string(c))
			}
			if v == "" {
				return nil, errAt(src, i, "empty quoted identifier; write a name between the quotes")
			}
			toks = append(toks, token{kind: tkQIdent, text: src[i : i+n], val: v, off: i, end: i + n})
			i += n
			continue
		case c == '$' && strings.HasPrefix(src[i:], "${"):
			j := strings.IndexByte(src[i:], '}')
			if j < 0 {
				return nil, errAt(src, i, "unterminated variable reference; close it with '}'")
			}
			toks = append(toks, token{kind: tkVar, text: src[i : i+j+1], val: src[i+2 : i+j], off: i, end: i + j + 1})
			i += j + 1
			continue
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			n := scanNumber(src[i:])
			if r, _ := utf8.DecodeRuneInString(src[i+n:]); i+n < len(src) && isIdentPart(r) && c != '.' {
				// A digit identifier such as 1R, as ksqlDB allows for aliases.
				j := i + n
				for j < len(src) {
					r2, s2 := utf8.DecodeRuneInString(src[j:])
					if !isIdentPart(r2) {
						break
					}
					j += s2
				}
				w := src[i:j]
				toks = append(toks, token{kind: tkWord, text: w, val: strings.ToUpper(w), off: i, end: j})
				i = j
				continue
			}
			toks = append(toks, token{kind: tkNumber, text: src[i : i+n], val: src[i : i+n], off: i, end: i + n})
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		if isIdentStart(r) {
			j := i + size
			for j < len(src) {
				r2, s2 := utf8.DecodeRuneInString(src[j:])
				if !isIdentPart(r2) {
					break
				}
				j += s2
			}
			w := src[i:j]
			toks = append(toks, token{kind: tkWord, text: w, val: strings.ToUpper(w), off: i, end: j})
			i = j
			continue
		}
		op := ""
		for _, o := range twoCharOps {
			if strings.HasPrefix(src[i:], o) {
				op = o
				break
			}
		}
		if op == "" {
			if !strings.ContainsRune("()[],.;+-*/%=<>:{}", r) {
				return nil, errAt(src, i, "unexpected character "+quoteRune(r)+"; remove it or put it inside a string")
			}
			op = string(r)
		}
		toks = append(toks, token{kind: tkOp, text: op, val: op, off: i, end: i + len(op)})
		i += len(op)
	}
	toks = append(toks, token{kind: tkEOF, off: len(src), end: len(src)})
	if len(full) == 0 {
		return toks, nil
	}
	n := len(toks)
	for _, c := range full {
		n += len(c)
	}
	out := make([]token, 0, n)
	for _, c := range full {
		out = append(out, c...)
	}
	return append(out, toks...), nil
}

// scanQuoted reads a quoted run starting at s[0] == q, where a doubled quote
// stands for one. It returns the unquoted value and the length consumed.
func scanQuoted(s string, q byte) (string, int, bool) {
	var b strings.Builder
	i := 1
	for i < len(s) {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1, true
		}
		b.WriteByte(s[i])
		i++
	}
	return "", 0, false
}

// scanNumber returns the length of the number at the start of s.
func scanNumber(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool {
	return r == '_' || r == '@' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func quoteRune(r rune) string {
	if r == '\'' {
		return `"'"`
	}
	return "'" + string(r) + "'"
}

// numberKind classifies a number token as ksqlDB does.
func numberKind(text string) (isDecimal, isDouble bool) {
	if strings.ContainsAny(text, "eE") {
		return false, true
	}
	return strings.Contains(text, "."), false
}
