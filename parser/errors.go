package parser

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/parser/ast"
)

// Error is a syntax error in the user's text. Line and Col are 1-based and
// count in the whole script the user gave (Col counts characters, not bytes);
// Statement is the text of the statement that failed, when known.
type Error struct {
	Line, Col int
	Msg       string
	// Hint, when set, says more than Msg does of what is wrong and what to
	// write instead.
	Hint string
	// Syntax marks an error of the kind ksqlDB's grammar reports as just
	// "Syntax Error" (Msg) with no detail: a token it cannot place where
	// it stands. ksqlDB's message then names the statement on a line of
	// its own.
	Syntax    bool
	Statement string
}

// Error returns "line L:C: message", and the hint on a line of its own.
func (e *Error) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("line %d:%d: %s\n%s", e.Line, e.Col, e.Msg, e.Hint)
	}
	return fmt.Sprintf("line %d:%d: %s", e.Line, e.Col, e.Msg)
}

// syntaxError is ksqlDB's message for a token its grammar cannot place.
const syntaxError = "Syntax Error"

// syntaxErrAt builds the Error ksqlDB's grammar gives for a token it
// cannot place at byte offset off of src; hint says what Sluice found
// there.
func syntaxErrAt(src string, off int, hint string) *Error {
	e := errAt(src, off, syntaxError)
	e.Hint, e.Syntax = hint, true
	return e
}

// posAt returns the position of byte offset off in src.
func posAt(src string, off int) ast.Pos {
	if off > len(src) {
		off = len(src)
	}
	if off < 0 {
		off = 0
	}
	line := 1 + strings.Count(src[:off], "\n")
	start := strings.LastIndexByte(src[:off], '\n') + 1
	return ast.Pos{Line: line, Col: 1 + utf8.RuneCountInString(src[start:off]), Offset: off}
}

// errAt builds an Error at byte offset off of src.
func errAt(src string, off int, msg string) *Error {
	p := posAt(src, off)
	return &Error{Line: p.Line, Col: p.Col, Msg: msg}
}

// posIndex finds the positions of offsets in one statement of a script
// without counting from the start of the script each time, as posAt does:
// a statement's converter asks for the position of every node. It covers
// the lines from the one holding lo up to hi; other offsets go to posAt.
type posIndex struct {
	src     string
	from    int   // start of the line holding lo
	hi      int   // end of the indexed text
	line    int   // line number at from
	nl      []int // offsets of the '\n' in [from, hi)
	cont    []int // offsets of the UTF-8 continuation bytes in [from, hi)
	invalid bool  // the text is not valid UTF-8: every offset goes to posAt
}

func newPosIndex(src string, lo, hi int) *posIndex {
	lo, hi = max(0, min(lo, len(src))), max(0, min(hi, len(src)))
	from := strings.LastIndexByte(src[:lo], '\n') + 1
	x := &posIndex{src: src, from: from, hi: max(hi, from), line: 1 + strings.Count(src[:from], "\n")}
	text := src[from:x.hi]
	if !utf8.ValidString(text) {
		x.invalid = true
		return x
	}
	for i := 0; i < len(text); i++ {
		switch b := text[i]; {
		case b == '\n':
			x.nl = append(x.nl, from+i)
		case b&0xC0 == 0x80:
			x.cont = append(x.cont, from+i)
		}
	}
	return x
}

// pos returns the position of offset off, as posAt(src, off) does.
func (x *posIndex) pos(off int) ast.Pos {
	if x.invalid || off < x.from || off > x.hi {
		return posAt(x.src, off)
	}
	k := sort.SearchInts(x.nl, off) // '\n' before off
	start := x.from
	if k > 0 {
		start = x.nl[k-1] + 1
	}
	runes := off - start - (sort.SearchInts(x.cont, off) - sort.SearchInts(x.cont, start))
	return ast.Pos{Line: x.line + k, Col: 1 + runes, Offset: off}
}
