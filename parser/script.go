package parser

import (
	"errors"
	"io"
	"strings"

	"github.com/sluice-sql/sluice/parser/ast"
)

// Script walks a script one statement at a time, so that each statement is
// parsed only after the ones before it ran: a DEFINE changes what ${name}
// means for the statements after it, as in ksqlDB.
type Script struct {
	src  string
	toks []token
	next int // index of the first token of the next statement
	// start and end are the byte offsets of the statement Next returned
	// last.
	start, end int
}

// Span returns the byte offsets in the script's text of the statement Next
// returned last (or failed on): text[start:end] is its text before
// variable substitution, without the ';'.
func (s *Script) Span() (start, end int) { return s.start, s.end }

// NewScript lexes text; it fails only on lexical errors (an unterminated
// string or comment).
func NewScript(text string) (*Script, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	return &Script{src: text, toks: toks}, nil
}

// Next parses the next statement, first replacing each ${name} in its text
// with the value lookup gives (names are passed upper-cased; lookup reports
// whether the variable is defined). It returns io.EOF after the last
// statement. Positions refer to the script's text; after a substitution,
// those later on the same line move by the length the substitution added.
func (s *Script) Next(lookup func(name string) (string, bool)) (ast.Statement, error) {
	for s.next < len(s.toks) && s.toks[s.next].isOp(";") {
		s.next++
	}
	if s.next >= len(s.toks) || s.toks[s.next].kind == tkEOF {
		return nil, io.EOF
	}
	start := s.next
	end := start
	for end < len(s.toks) && !s.toks[end].isOp(";") && s.toks[end].kind != tkEOF {
		end++
	}
	s.next = end
	first, last := s.toks[start], s.toks[end-1]
	s.start, s.end = first.off, last.end
	text := s.src[first.off:last.end]
	if !strings.Contains(text, "${") {
		return s.parse(s.src, s.toks[start:end], text)
	}
	sub, err := substitute(s.src, first.off, text, lookup)
	if err != nil {
		return nil, err
	}
	src := s.src[:first.off] + sub
	toks, err := lex(sub)
	if err != nil {
		return nil, err
	}
	toks = toks[:len(toks)-1] // the EOF
	for i := range toks {
		toks[i].off += first.off
		toks[i].end += first.off
	}
	if len(toks) == 0 {
		return nil, errAt(s.src, first.off, "the statement is empty after variable substitution; check the DEFINEd values")
	}
	return s.parse(src, toks, sub)
}

func (s *Script) parse(src string, toks []token, text string) (ast.Statement, error) {
	st, err := parseOne(src, toks, toks[len(toks)-1].end)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Statement == "" {
			pe.Statement = maskText(toks, text, toks[0].off)
		}
		return nil, err
	}
	return st, nil
}

// substitute replaces every ${name} in text, which starts at byte off of
// src, including inside quoted strings, as ksqlDB does.
func substitute(src string, off int, text string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "${")
		if j < 0 {
			b.WriteString(text[i:])
			break
		}
		b.WriteString(text[i : i+j])
		k := strings.IndexByte(text[i+j:], '}')
		if k < 0 {
			return "", errAt(src, off+i+j, "unterminated variable reference; write ${name}")
		}
		name := strings.TrimSpace(text[i+j+2 : i+j+k])
		if name == "" {
			return "", errAt(src, off+i+j, "empty variable reference ${}; write ${name}")
		}
		v, ok := lookup(strings.ToUpper(name))
		if !ok {
			return "", errAt(src, off+i+j, "variable '"+name+"' is not defined; define it first with DEFINE "+name+" = '...'; (SHOW VARIABLES lists them)")
		}
		b.WriteString(v)
		i += j + k + 1
	}
	return b.String(), nil
}
