package planner

import (
	"fmt"

	"github.com/sluice-sql/sluice/parser/ast"
)

// Error is a statement the planner refuses: where, and what to do.
type Error struct {
	Pos ast.Pos
	Msg string
}

func (e *Error) Error() string {
	if e.Pos.Line > 0 {
		return fmt.Sprintf("line %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	}
	return e.Msg
}

func errorf(pos ast.Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
