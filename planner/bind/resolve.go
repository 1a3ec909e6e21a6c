package bind

import (
	"errors"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// ResolveTypes replaces, in place, the custom type names in the CAST target
// types of e (and of every expression below it) by the types resolve
// returns for them; see types.Resolve. It fails with an *Error at the
// CAST's position when a name is unknown. Call it before Bind, which
// refuses a CAST to an unresolved type.
func ResolveTypes(e ast.Expr, resolve func(name string) (*types.Type, bool)) error {
	var err error
	walkAST(e, func(x ast.Expr) bool {
		c, ok := x.(*ast.Cast)
		if !ok {
			return true
		}
		t, rerr := types.Resolve(c.Type, resolve)
		if rerr != nil {
			var u *types.UnknownTypeError
			if errors.As(rerr, &u) {
				err = errorf(c.Pos, "%v", u)
			} else {
				err = errorf(c.Pos, "%v", rerr)
			}
			return false
		}
		c.Type = t
		return true
	})
	return err
}

// walkAST calls fn for e and the expressions below it, parents first, until
// fn returns false.
func walkAST(e ast.Expr, fn func(ast.Expr) bool) bool {
	if e == nil {
		return true
	}
	if !fn(e) {
		return false
	}
	all := func(es ...ast.Expr) bool {
		for _, x := range es {
			if !walkAST(x, fn) {
				return false
			}
		}
		return true
	}
	switch n := e.(type) {
	case *ast.Binary:
		return all(n.L, n.R)
	case *ast.Nary:
		return all(n.Args...)
	case *ast.Unary:
		return all(n.X)
	case *ast.IsNull:
		return all(n.X)
	case *ast.IsDistinct:
		return all(n.L, n.R)
	case *ast.In:
		return all(n.X) && all(n.List...)
	case *ast.Between:
		return all(n.X, n.Lo, n.Hi)
	case *ast.Like:
		return all(n.X, n.Pattern, n.Escape)
	case *ast.Case:
		if !all(n.Operand) {
			return false
		}
		for _, w := range n.Whens {
			if !all(w.Cond, w.Result) {
				return false
			}
		}
		return all(n.Else)
	case *ast.Cast:
		return all(n.X)
	case *ast.FuncCall:
		return all(n.Args...)
	case *ast.Dereference:
		return all(n.X)
	case *ast.Subscript:
		return all(n.X, n.Index)
	case *ast.ArrayCtor:
		return all(n.Elems...)
	case *ast.MapCtor:
		return all(n.Keys...) && all(n.Values...)
	case *ast.StructCtor:
		return all(n.Values...)
	case *ast.Lambda:
		return all(n.Body)
	}
	return true
}
