package parser

import (
	"fmt"
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
	Statement string
}

// Error returns "line L:C: message".
func (e *Error) Error() string {
	return fmt.Sprintf("line %d:%d: %s", e.Line, e.Col, e.Msg)
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
