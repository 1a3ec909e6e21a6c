package ast

import (
	"hash/maphash"
	"slices"
)

// Equal reports whether a and b are the same expression: the same nodes
// with the same operators, names, literals and types, whatever their
// positions and, when ignoreQualifiers is set, the qualifiers of their
// column references (A.X and X are then equal). A chain of an associative
// operator equals the left-nested tree it stands for: a Nary a + b + c is
// the Binary ((a + b) + c).
func Equal(a, b Expr, ignoreQualifiers bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if ao, aa, ok := chain(a); ok {
		bo, ba, ok := chain(b)
		return ok && ao == bo && equalAll(aa, ba, ignoreQualifiers)
	}
	switch x := a.(type) {
	case *ColumnRef:
		y, ok := b.(*ColumnRef)
		return ok && x.Name == y.Name && (ignoreQualifiers || x.Qualifier == y.Qualifier)
	case *Literal:
		y, ok := b.(*Literal)
		return ok && x.Kind == y.Kind && x.Text == y.Text
	case *TypedLiteral:
		y, ok := b.(*TypedLiteral)
		return ok && x.Type.Kind == y.Type.Kind && x.Text == y.Text
	case *Binary:
		y, ok := b.(*Binary)
		return ok && x.Op == y.Op && Equal(x.L, y.L, ignoreQualifiers) && Equal(x.R, y.R, ignoreQualifiers)
	case *Unary:
		y, ok := b.(*Unary)
		return ok && x.Op == y.Op && Equal(x.X, y.X, ignoreQualifiers)
	case *IsNull:
		y, ok := b.(*IsNull)
		return ok && x.Not == y.Not && Equal(x.X, y.X, ignoreQualifiers)
	case *IsDistinct:
		y, ok := b.(*IsDistinct)
		return ok && x.Not == y.Not && Equal(x.L, y.L, ignoreQualifiers) && Equal(x.R, y.R, ignoreQualifiers)
	case *In:
		y, ok := b.(*In)
		return ok && x.Not == y.Not && Equal(x.X, y.X, ignoreQualifiers) && equalAll(x.List, y.List, ignoreQualifiers)
	case *Between:
		y, ok := b.(*Between)
		return ok && x.Not == y.Not && Equal(x.X, y.X, ignoreQualifiers) && Equal(x.Lo, y.Lo, ignoreQualifiers) && Equal(x.Hi, y.Hi, ignoreQualifiers)
	case *Like:
		y, ok := b.(*Like)
		return ok && x.Not == y.Not && Equal(x.X, y.X, ignoreQualifiers) && Equal(x.Pattern, y.Pattern, ignoreQualifiers) && Equal(x.Escape, y.Escape, ignoreQualifiers)
	case *Case:
		y, ok := b.(*Case)
		if !ok || len(x.Whens) != len(y.Whens) || !Equal(x.Operand, y.Operand, ignoreQualifiers) || !Equal(x.Else, y.Else, ignoreQualifiers) {
			return false
		}
		for i := range x.Whens {
			if !Equal(x.Whens[i].Cond, y.Whens[i].Cond, ignoreQualifiers) || !Equal(x.Whens[i].Result, y.Whens[i].Result, ignoreQualifiers) {
				return false
			}
		}
		return true
	case *Cast:
		y, ok := b.(*Cast)
		return ok && FormatType(x.Type) == FormatType(y.Type) && Equal(x.X, y.X, ignoreQualifiers)
	case *FuncCall:
		y, ok := b.(*FuncCall)
		return ok && x.Name == y.Name && x.Star == y.Star && x.Distinct == y.Distinct && equalAll(x.Args, y.Args, ignoreQualifiers)
	case *Dereference:
		y, ok := b.(*Dereference)
		return ok && x.Field == y.Field && Equal(x.X, y.X, ignoreQualifiers)
	case *Subscript:
		y, ok := b.(*Subscript)
		return ok && Equal(x.X, y.X, ignoreQualifiers) && Equal(x.Index, y.Index, ignoreQualifiers)
	case *ArrayCtor:
		y, ok := b.(*ArrayCtor)
		return ok && equalAll(x.Elems, y.Elems, ignoreQualifiers)
	case *MapCtor:
		y, ok := b.(*MapCtor)
		return ok && equalAll(x.Keys, y.Keys, ignoreQualifiers) && equalAll(x.Values, y.Values, ignoreQualifiers)
	case *StructCtor:
		y, ok := b.(*StructCtor)
		return ok && slices.Equal(x.Names, y.Names) && equalAll(x.Values, y.Values, ignoreQualifiers)
	case *Lambda:
		y, ok := b.(*Lambda)
		return ok && slices.Equal(x.Params, y.Params) && Equal(x.Body, y.Body, ignoreQualifiers)
	case *VariableRef:
		y, ok := b.(*VariableRef)
		return ok && x.Name == y.Name
	}
	return false
}

func equalAll(a, b []Expr, ignoreQualifiers bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Equal(a[i], b[i], ignoreQualifiers) {
			return false
		}
	}
	return true
}

// chain returns the operator and operands of e when e is a chain of an
// associative operator, a Nary or a Binary, with the chains of the same
// operator on its left flattened into it.
func chain(e Expr) (BinaryOp, []Expr, bool) {
	switch x := e.(type) {
	case *Nary:
		if op, args, ok := chain(x.Args[0]); ok && op == x.Op {
			return x.Op, append(slices.Clip(args), x.Args[1:]...), true
		}
		return x.Op, x.Args, true
	case *Binary:
		if !x.Op.Associative() {
			return 0, nil, false
		}
		if op, args, ok := chain(x.L); ok && op == x.Op {
			return x.Op, append(slices.Clip(args), x.R), true
		}
		return x.Op, []Expr{x.L, x.R}, true
	}
	return 0, nil, false
}

// Hasher hashes expressions consistently with Equal: equal expressions
// have equal hashes. The zero Hasher is not ready; use NewHasher.
type Hasher struct {
	seed             maphash.Seed
	ignoreQualifiers bool
}

// NewHasher returns a Hasher for Equal(_, _, ignoreQualifiers).
func NewHasher(ignoreQualifiers bool) Hasher {
	return Hasher{seed: maphash.MakeSeed(), ignoreQualifiers: ignoreQualifiers}
}

// Hash returns e's hash.
func (h Hasher) Hash(e Expr) uint64 {
	var m maphash.Hash
	m.SetSeed(h.seed)
	h.write(&m, e)
	return m.Sum64()
}

func (h Hasher) write(m *maphash.Hash, e Expr) {
	if e == nil {
		m.WriteByte(0)
		return
	}
	if op, args, ok := chain(e); ok {
		m.WriteByte(1)
		m.WriteByte(byte(op))
		for _, a := range args {
			h.write(m, a)
		}
		m.WriteByte(0xff)
		return
	}
	str := func(s string) {
		m.WriteString(s)
		m.WriteByte(0)
	}
	switch x := e.(type) {
	case *ColumnRef:
		m.WriteByte(2)
		if !h.ignoreQualifiers {
			str(x.Qualifier)
		}
		str(x.Name)
	case *Literal:
		m.WriteByte(3)
		m.WriteByte(byte(x.Kind))
		str(x.Text)
	case *FuncCall:
		m.WriteByte(4)
		str(x.Name)
		for _, a := range x.Args {
			h.write(m, a)
		}
	default:
		// Other nodes hash by their kind and children: enough to spread
		// what GROUP BY lists, and consistent with Equal.
		m.WriteByte(5)
		Walk(e, func(n Expr) bool {
			if n == e {
				return true
			}
			h.write(m, n)
			return false
		})
	}
}
