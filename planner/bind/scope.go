package bind

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// Error is a user's mistake found while binding an expression, with the
// position of the offending node.
type Error struct {
	Pos ast.Pos
	Msg string
}

// Error returns the message with its line:column.
func (e *Error) Error() string {
	if e.Pos.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
}

func errorf(pos ast.Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Scope resolves column references during Bind. Resolve returns the row
// index and type of the column named name (canonical case), qualified by a
// source name or alias when qualifier is not empty.
type Scope interface {
	Resolve(qualifier, name string) (index int, t *types.Type, ok bool)
}

// CallResolver is optionally implemented by a Scope whose row already holds
// the result of some calls: the planner computes table functions
// (EXPLODE) in a step of their own and binds each call to the column that
// step adds. ResolveCall reports that column for call c.
type CallResolver interface {
	ResolveCall(c *ast.FuncCall) (index int, name string, t *types.Type, ok bool)
}

// ExprResolver is optionally implemented by a Scope whose row already holds
// the values of whole expressions: after GROUP BY, an expression equal to a
// grouping expression reads the key column that holds it. Bind asks
// ResolveExpr about every node outside lambdas before binding it, so a
// matching sub-expression resolves too.
type ExprResolver interface {
	ResolveExpr(e ast.Expr) (index int, name string, t *types.Type, ok bool)
}

// ScopeDescriber is optionally implemented by a Scope to improve Bind's
// errors: Explain returns why qualifier.name cannot be resolved (for
// example that it is ambiguous), or nil to use the default message, and
// Names lists the columns in scope.
type ScopeDescriber interface {
	Explain(qualifier, name string) error
	Names() []string
}

// ScopeColumn is one column of a ColumnScope.
type ScopeColumn struct {
	// Qualifier is the source name or alias the column may be qualified
	// with; empty when it cannot be.
	Qualifier string
	Name      string
	Type      *types.Type
}

// ColumnScope is a Scope over a row laid out as its columns, in order.
// An unqualified name that matches columns of several sources is
// ambiguous.
type ColumnScope []ScopeColumn

// ScopeOf returns a ColumnScope over cols, all qualified by qualifier.
func ScopeOf(qualifier string, cols []types.Column) ColumnScope {
	s := make(ColumnScope, len(cols))
	for i, c := range cols {
		s[i] = ScopeColumn{Qualifier: qualifier, Name: c.Name, Type: c.Type}
	}
	return s
}

func (s ColumnScope) find(qualifier, name string) []int {
	var out []int
	for i, c := range s {
		if c.Name == name && (qualifier == "" || c.Qualifier == qualifier) {
			out = append(out, i)
		}
	}
	return out
}

// Resolve implements Scope.
func (s ColumnScope) Resolve(qualifier, name string) (int, *types.Type, bool) {
	m := s.find(qualifier, name)
	if len(m) != 1 {
		return 0, nil, false
	}
	return m[0], s[m[0]].Type, true
}

// Explain implements ScopeDescriber.
func (s ColumnScope) Explain(qualifier, name string) error {
	m := s.find(qualifier, name)
	if len(m) > 1 {
		var srcs []string
		for _, i := range m {
			srcs = append(srcs, s[i].Qualifier+"."+name)
		}
		return fmt.Errorf("column '%s' is ambiguous; it could be %s", name, strings.Join(srcs, " or "))
	}
	return nil
}

// Names implements ScopeDescriber.
func (s ColumnScope) Names() []string {
	out := make([]string, len(s))
	for i, c := range s {
		out[i] = c.Name
	}
	return out
}
