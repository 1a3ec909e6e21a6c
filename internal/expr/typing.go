package expr

import (
	"fmt"

	"github.com/sluice-sql/sluice/internal/types"
)

// AsDecimal returns the DECIMAL type an integer or decimal widens to.
func AsDecimal(t *types.Type) *types.Type {
	switch t.Kind {
	case types.Int:
		return types.DecimalOf(10, 0)
	case types.Bigint:
		return types.DecimalOf(19, 0)
	}
	return t
}

func numRank(k types.Kind) int {
	switch k {
	case types.Int:
		return 1
	case types.Bigint:
		return 2
	case types.Decimal:
		return 3
	case types.Double:
		return 4
	}
	return 0
}

// ArithType returns the result type of l op r for numeric l and r, with
// ksqlDB's decimal precision and scale rules.
func ArithType(op Op, l, r *types.Type) *types.Type {
	rk := numRank(l.Kind)
	if numRank(r.Kind) > rk {
		rk = numRank(r.Kind)
	}
	switch rk {
	case 1:
		return types.IntType
	case 2:
		return types.BigintType
	case 4:
		return types.DoubleType
	}
	a, b := AsDecimal(l), AsDecimal(r)
	p1, s1, p2, s2 := a.Precision, a.Scale, b.Precision, b.Scale
	var p, s int
	switch op {
	case OpAdd, OpSub:
		s = max(s1, s2)
		p = s + max(p1-s1, p2-s2) + 1
	case OpMul:
		p, s = p1+p2+1, s1+s2
	case OpDiv:
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	case OpMod:
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	if p > 38 {
		p = 38
	}
	if s > p {
		s = p
	}
	return types.DecimalOf(p, s)
}

// CommonType returns the type that values of all ts can be widened to: the
// widest numeric type, or the one shared type. nil entries (untyped NULL)
// are ignored; the result is nil when all are nil.
func CommonType(ts []*types.Type) (*types.Type, error) {
	var out *types.Type
	for _, t := range ts {
		if t == nil {
			continue
		}
		if out == nil {
			out = t
			continue
		}
		w, ok := Widen(out, t)
		if !ok {
			return nil, fmt.Errorf("types %s and %s are incompatible", out, t)
		}
		out = w
	}
	return out, nil
}

// Widen returns the type that values of both a and b can be widened to,
// and false when they have none: the wider numeric type, or for ARRAY, MAP
// and STRUCT the same rule element by element (a STRUCT takes the union of
// the fields).
func Widen(a, b *types.Type) (*types.Type, bool) {
	if a.Equal(b) {
		return a, true
	}
	if a.IsNumeric() && b.IsNumeric() {
		ra, rb := numRank(a.Kind), numRank(b.Kind)
		switch {
		case ra == 4 || rb == 4:
			return types.DoubleType, true
		case ra == 3 || rb == 3:
			x, y := AsDecimal(a), AsDecimal(b)
			s := max(x.Scale, y.Scale)
			p := s + max(x.Precision-x.Scale, y.Precision-y.Scale)
			return types.DecimalOf(min(p, 38), s), true
		case ra == 2 || rb == 2:
			return types.BigintType, true
		}
		return types.IntType, true
	}
	if a.Kind != b.Kind {
		return nil, false
	}
	switch a.Kind {
	case types.Array:
		e, ok := Widen(a.Elem, b.Elem)
		if !ok {
			return nil, false
		}
		return types.ArrayOf(e), true
	case types.Map:
		k, ok1 := Widen(a.Key, b.Key)
		v, ok2 := Widen(a.Elem, b.Elem)
		if !ok1 || !ok2 {
			return nil, false
		}
		return types.MapOf(k, v), true
	case types.Struct:
		// The union of the fields, by name in order of appearance, each of
		// the common type of its occurrences.
		fields := append([]types.Field(nil), a.Fields...)
		for _, g := range b.Fields {
			found := false
			for i, f := range fields {
				if f.Name == g.Name {
					w, ok := Widen(f.Type, g.Type)
					if !ok {
						return nil, false
					}
					fields[i].Type = w
					found = true
					break
				}
			}
			if !found {
				fields = append(fields, g)
			}
		}
		return types.StructOf(fields...), true
	}
	return nil, false
}

// Comparable reports whether values of l and r can be compared with op.
func Comparable(op Op, l, r *types.Type) bool {
	if l.IsNumeric() && r.IsNumeric() {
		return true
	}
	if l.Kind != r.Kind {
		return false
	}
	switch l.Kind {
	case types.Array, types.Map, types.Struct:
		if op != OpEq && op != OpNe && op != OpIsDistinct && op != OpIsNotDistinct && op != OpIn {
			return false
		}
		_, ok := Widen(l, r)
		if !ok && l.Kind == types.Struct {
			return structsComparable(l, r)
		}
		return ok
	}
	return true
}

func structsComparable(l, r *types.Type) bool {
	for _, f := range l.Fields {
		for _, g := range r.Fields {
			if f.Name == g.Name && !Comparable(OpEq, f.Type, g.Type) {
				return false
			}
		}
	}
	return true
}
