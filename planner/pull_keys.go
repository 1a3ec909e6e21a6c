package planner

import (
	"fmt"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// checkKeyValues resolves, as ksqlDB does before a pull query on the table
// src reads it by its keys, each value the WHERE clause of q compares a
// key column with, and refuses the query, with ksqlDB's messages, when
// one is NULL or cannot be converted to the key column's type without a
// loss: IN ('10', 8) on an INTEGER key. ksqlDB does it (on the OR-ed
// conditions of its rewriting of the clause, IN as ORs of =, see
// disjuncts) only when every condition names every key column, each with
// a comparison other than <> and IS [NOT] DISTINCT FROM, against an
// expression of no column: otherwise it scans the table, and the filter
// decides.
//
// The conversion is ksqlDB's strict one: a number to a number type that
// holds every value of its type (INTEGER to BIGINT, DECIMAL or DOUBLE;
// BIGINT to DECIMAL or DOUBLE; DECIMAL to DOUBLE, or to a DECIMAL its
// value fits), a STRING to a STRING, TIMESTAMP, DATE, TIME or BYTES,
// element by element for ARRAY, MAP and STRUCT, and any type to itself.
func checkKeyValues(cat *catalog.Catalog, q *ast.Query, src *catalog.Source) error {
	if q.Where == nil || len(src.Key) == 0 {
		return nil
	}
	ds, ok := disjuncts(q.Where, false, new(int))
	if !ok {
		return nil
	}
	for _, d := range ds {
		if !keyedDisjunct(d, src) {
			return nil
		}
	}
	for _, d := range ds {
		for _, a := range d.Atoms {
			cmp, ok := a.(*ast.Binary)
			if !ok || comparisonNames[cmp.Op] == "" {
				continue
			}
			col, other := columnRef(cmp.R), cmp.L
			if col == nil {
				col, other = columnRef(cmp.L), cmp.R
			}
			if k := keyIndex(src, col.Name); k >= 0 {
				if err := resolveKey(cat, other, src.Key[k], cmp); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// keyedDisjunct reports whether ksqlDB reads the rows of one OR-ed
// condition d by their keys: each of its conditions is a comparison of a
// column with an expression of no column, or a LIKE on a column; those on
// key columns are not <> or IS [NOT] DISTINCT FROM; and every key column
// has one.
func keyedDisjunct(d disjunct, src *catalog.Source) bool {
	seen := make([]bool, len(src.Key))
	n := 0
	for _, a := range d.Atoms {
		var l, r ast.Expr
		equalityOnly := false
		switch x := a.(type) {
		case *ast.Binary:
			if comparisonNames[x.Op] == "" {
				return false
			}
			l, r, equalityOnly = x.L, x.R, x.Op == ast.OpNe
		case *ast.IsDistinct:
			l, r, equalityOnly = x.L, x.R, true
		case *ast.Like:
			if columnRef(x.X) == nil {
				return false
			}
			continue
		default:
			return false
		}
		col, other := columnRef(r), l
		if col == nil {
			col, other = columnRef(l), r
		}
		if col == nil || readsColumn(other) {
			return false
		}
		k := keyIndex(src, col.Name)
		if k < 0 {
			continue
		}
		if equalityOnly {
			return false
		}
		if !seen[k] {
			seen[k] = true
			n++
		}
	}
	return n == len(src.Key)
}

// resolveKey resolves e, the value the comparison cmp compares the key
// column key with, as ksqlDB does: a literal is its value, anything else
// is evaluated; NULL, or a value that does not convert to the key's type
// (see checkKeyValues), is an error.
func resolveKey(cat *catalog.Catalog, e ast.Expr, key types.Column, cmp ast.Expr) error {
	if lit, ok := e.(*ast.Literal); ok && lit.Kind == ast.NullLit {
		return errorf(cmp.Position(), "Primary key columns can not be NULL: %s", ksqlText(cmp))
	}
	b, err := bindExpr(cat, e, bind.ColumnScope(nil))
	if err != nil {
		// The WHERE clause bound: nothing that reads no column fails.
		return nil
	}
	ev, err := eval.Compile(b)
	if err != nil {
		return nil
	}
	v, err := ev.Eval(nil)
	if err != nil {
		return errorf(cmp.Position(), "%v", err)
	}
	if v == nil || b.Type == nil {
		return errorf(cmp.Position(), "Primary key columns can not be NULL: %s", ksqlText(cmp))
	}
	if strictConvert(v, b.Type, key.Type) {
		return nil
	}
	_, literal := e.(*ast.Literal)
	if _, typed := e.(*ast.TypedLiteral); literal || typed {
		return errorf(cmp.Position(), "'%s' can not be converted to the type of the key column: %s %s KEY", javaText(v, b.Type), key.Name, key.Type)
	}
	return errorf(cmp.Position(), "Expected type %s for field %s but got %s(%s)%s", key.Type, key.Name, b.Type.Kind, javaText(v, b.Type), timeFormatHint(b.Type, key.Type))
}

// strictConvert reports whether v, of type from, converts to type to as
// ksqlDB's strict coercion converts it (see checkKeyValues).
func strictConvert(v any, from, to *types.Type) bool {
	if !strictTypes(from, to) {
		return false
	}
	if from.Equal(to) || !isScalarType(to) {
		return true
	}
	c, err := eval.Compile(&expr.Expr{Op: expr.OpCast, Type: to, Args: []*expr.Expr{expr.Literal(v, from)}})
	if err != nil {
		return false
	}
	out, err := c.Eval(nil)
	if err != nil || out == nil {
		return false
	}
	if from.IsNumeric() {
		// A number must keep its value: 10.5 does not fit a DECIMAL(3, 0).
		cmp, err := types.Compare(out, v)
		return err == nil && cmp == 0
	}
	return true
}

// strictTypes reports whether ksqlDB's strict coercion takes values of
// type from to type to.
func strictTypes(from, to *types.Type) bool {
	switch from.Kind {
	case types.Int:
		return to.Kind == types.Int || to.Kind == types.Bigint || to.Kind == types.Decimal || to.Kind == types.Double
	case types.Bigint:
		return to.Kind == types.Bigint || to.Kind == types.Decimal || to.Kind == types.Double
	case types.Decimal:
		return to.Kind == types.Decimal || to.Kind == types.Double
	case types.String:
		switch to.Kind {
		case types.String, types.Timestamp, types.Date, types.Time, types.Bytes:
			return true
		}
		return false
	case types.Array:
		return to.Kind == types.Array && strictTypes(from.Elem, to.Elem)
	case types.Map:
		return to.Kind == types.Map && strictTypes(from.Key, to.Key) && strictTypes(from.Elem, to.Elem)
	case types.Struct:
		if to.Kind != types.Struct {
			return false
		}
		for _, f := range from.Fields {
			for _, g := range to.Fields {
				if f.Name == g.Name && !strictTypes(f.Type, g.Type) {
					return false
				}
			}
		}
		return true
	}
	return from.Kind == to.Kind
}

func isScalarType(t *types.Type) bool {
	switch t.Kind {
	case types.Array, types.Map, types.Struct:
		return false
	}
	return true
}

// javaText prints v, of type t, as Java's toString prints the value ksqlDB
// holds: a string as it is, a DOUBLE as 10.0.
func javaText(v any, t *types.Type) string {
	if s, ok := v.(string); ok {
		return s
	}
	c, err := eval.Compile(&expr.Expr{Op: expr.OpCast, Type: types.StringType, Args: []*expr.Expr{expr.Literal(v, t)}})
	if err == nil {
		if s, err := c.Eval(nil); err == nil {
			if s, ok := s.(string); ok {
				return s
			}
		}
	}
	return fmt.Sprint(v)
}

// timeFormatHint is what ksqlDB adds when a string is not the time a key
// column of type to holds.
func timeFormatHint(from, to *types.Type) string {
	if from.Kind != types.String {
		return ""
	}
	switch to.Kind {
	case types.Timestamp:
		return ". Timestamp format must be yyyy-mm-ddThh:mm:ss[.S]"
	case types.Time:
		return ". Time format must be hh:mm:ss[.S]"
	case types.Date:
		return ". Date format must be yyyy-mm-dd"
	}
	return ""
}
