package planner

import (
	"fmt"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// partitionBy plans PARTITION BY: a step that rekeys each row. Its output
// keeps the pseudo-columns, puts the new key columns next, then the value
// columns (without one that became the key) and last the old key columns
// (unless one is the new key), as ksqlDB lays a repartitioned stream out.
// PARTITION BY null leaves no key.
func partitionBy(cat *catalog.Catalog, list []ast.Expr, rel relation, src *catalog.Source, qualifier string) (relation, *topology.Step, error) {
	in := make([]types.Column, len(rel.scope))
	for i, c := range rel.scope {
		in[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	var keyExprs []*expr.Expr
	var keys []types.Column
	out := relation{keyExpr: map[string]string{}, keyMsg: map[string]string{}, keyPos: map[string]ast.Pos{}}
	moved := map[string]bool{} // source columns that became key columns
	generated := 0
	for _, pe := range list {
		if lit, ok := pe.(*ast.Literal); ok && lit.Kind == ast.NullLit {
			if len(list) > 1 {
				return relation{}, nil, errorf(pe.Position(), "Cannot PARTITION BY multiple columns including NULL. Partition by NULL alone to drop the key.")
			}
			continue
		}
		if cr, ok := pe.(*ast.ColumnRef); ok {
			if _, _, found := rel.scope.Resolve(cr.Qualifier, cr.Name); !found {
				return relation{}, nil, errorf(pe.Position(), "PARTITION BY column '%s' cannot be resolved. '%s' must be a column in the source schema since PARTITION BY is applied on the input.", cr.Name, cr.Name)
			}
		}
		e, err := bindExpr(cat, pe, rel.scope)
		if err != nil {
			return relation{}, nil, err
		}
		var name string
		switch x := pe.(type) {
		case *ast.ColumnRef:
			name = x.Name
			moved[x.Name] = true
		case *ast.Dereference:
			name = x.Field
		default:
			name = fmt.Sprintf("KSQL_COL_%d", generated)
			generated++
		}
		for _, k := range keys {
			if k.Name == name {
				return relation{}, nil, errorf(pe.Position(), "PARTITION BY names the column %s twice", name)
			}
		}
		keys = append(keys, types.Column{Name: name, Type: e.Type})
		keyExprs = append(keyExprs, e)
		out.keyExpr[name] = ast.FormatExpr(pe)
		out.keyMsg[name] = qualifiedText(pe, qualifier)
		out.keyPos[name] = pe.Position()
	}

	step := &topology.Step{Kind: topology.Rekey}
	add := func(e *expr.Expr, c types.Column) {
		step.Exprs = append(step.Exprs, e)
		step.Schema = append(step.Schema, c)
	}
	for i := 0; i < topology.PseudoColumns; i++ {
		add(expr.Column(i, in[i].Name, in[i].Type), in[i])
	}
	for i, k := range keys {
		add(keyExprs[i], k)
	}
	isOldKey := map[string]bool{}
	for _, k := range src.Key {
		isOldKey[k.Name] = true
	}
	for i := topology.PseudoColumns; i < len(in); i++ {
		c := in[i]
		if moved[c.Name] || isOldKey[c.Name] {
			continue
		}
		add(expr.Column(i, c.Name, c.Type), c)
	}
	for i := topology.PseudoColumns; i < len(in); i++ {
		c := in[i]
		if isOldKey[c.Name] && !moved[c.Name] {
			add(expr.Column(i, c.Name, c.Type), c)
		}
	}
	step.Keys = len(keys)
	out.scope = bind.ScopeOf(qualifier, step.Schema)
	out.keys = keys
	return out, step, nil
}

// qualifiedText prints e with its column references qualified by the
// source, as ksqlDB's messages show partitioning expressions.
func qualifiedText(e ast.Expr, qualifier string) string {
	var refs []*ast.ColumnRef
	ast.Walk(e, func(x ast.Expr) bool {
		if c, ok := x.(*ast.ColumnRef); ok && c.Qualifier == "" {
			refs = append(refs, c)
			c.Qualifier = qualifier
		}
		return true
	})
	s := ast.FormatExpr(e)
	for _, c := range refs {
		c.Qualifier = ""
	}
	return s
}
