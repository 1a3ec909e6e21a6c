package ast

// Walk calls fn for e and, while fn returns true, for each expression
// inside it, depth first. Lambda bodies are visited too.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	each := func(es ...Expr) {
		for _, x := range es {
			Walk(x, fn)
		}
	}
	switch x := e.(type) {
	case *Binary:
		each(x.L, x.R)
	case *Nary:
		each(x.Args...)
	case *Unary:
		each(x.X)
	case *IsNull:
		each(x.X)
	case *IsDistinct:
		each(x.L, x.R)
	case *In:
		each(x.X)
		each(x.List...)
	case *Between:
		each(x.X, x.Lo, x.Hi)
	case *Like:
		each(x.X, x.Pattern, x.Escape)
	case *Case:
		each(x.Operand)
		for _, w := range x.Whens {
			each(w.Cond, w.Result)
		}
		each(x.Else)
	case *Cast:
		each(x.X)
	case *FuncCall:
		each(x.Args...)
	case *Dereference:
		each(x.X)
	case *Subscript:
		each(x.X, x.Index)
	case *ArrayCtor:
		each(x.Elems...)
	case *MapCtor:
		each(x.Keys...)
		each(x.Values...)
	case *StructCtor:
		each(x.Values...)
	case *Lambda:
		each(x.Body)
	}
}
