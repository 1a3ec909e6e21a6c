package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// tableFuncs are the table functions: each turns one input row into as many
// rows as its argument has elements.
var tableFuncs = map[string]bool{"EXPLODE": true, "CUBE_EXPLODE": true}

// TableFunctions lists the table functions with a one-line description,
// for SHOW FUNCTIONS and DESCRIBE FUNCTION.
func TableFunctions() map[string]string {
	return map[string]string{
		"EXPLODE":      "EXPLODE(array): one output row per element of the array; other columns repeat.",
		"CUBE_EXPLODE": "CUBE_EXPLODE(array): one output row per combination of the array's values, each kept or replaced by null (2^n rows for n values, fewer when some are null); other columns repeat.",
	}
}

// isTableFunc reports whether n calls a table function.
func isTableFunc(n ast.Expr) (*ast.FuncCall, bool) {
	c, ok := n.(*ast.FuncCall)
	return c, ok && tableFuncs[c.Name]
}

// callScope is a scope whose row also holds the results of table function
// calls, which bind to those columns.
type callScope struct {
	bind.ColumnScope
	calls map[*ast.FuncCall]int
}

// ResolveCall implements bind.CallResolver.
func (s callScope) ResolveCall(c *ast.FuncCall) (int, string, *types.Type, bool) {
	i, ok := s.calls[c]
	if !ok {
		return 0, "", nil, false
	}
	return i, s.ColumnScope[i].Name, s.ColumnScope[i].Type, true
}

// tableFunctions plans the table function calls of the select list, if
// any: a step that repeats each row once per element, adding one column per
// call. The returned relation resolves each call to its column.
func tableFunctions(cat *catalog.Catalog, items []ast.SelectItem, rel relation, qualifier string, table bool) (relation, *topology.Step, error) {
	var calls []*ast.FuncCall
	for _, si := range items {
		if si.Expr == nil {
			continue
		}
		ast.Walk(si.Expr, func(n ast.Expr) bool {
			if c, ok := isTableFunc(n); ok {
				calls = append(calls, c)
				return false
			}
			return true
		})
	}
	if len(calls) == 0 {
		return rel, nil, nil
	}
	if table {
		return relation{}, nil, errorf(calls[0].Pos, "Table source is not supported with table functions. Table functions apply to streams.")
	}
	step := &topology.Step{Kind: topology.FlatMap}
	for _, c := range rel.scope {
		step.Schema = append(step.Schema, types.Column{Name: c.Name, Type: c.Type})
	}
	out := rel
	cs := callScope{calls: map[*ast.FuncCall]int{}}
	for i, c := range calls {
		if len(c.Args) != 1 || c.Star {
			return relation{}, nil, errorf(c.Pos, "Function '%s' takes exactly one argument, an ARRAY.", strings.ToLower(c.Name))
		}
		nested := false
		ast.Walk(c.Args[0], func(n ast.Expr) bool {
			if _, ok := isTableFunc(n); ok {
				nested = true
			}
			return !nested
		})
		if nested {
			return relation{}, nil, errorf(c.Pos, "Table functions cannot be nested; call %s on a column or an expression.", c.Name)
		}
		arg, err := bindIn(cat, "SELECT", c.Args[0], rel.scope, qualifier)
		if err != nil {
			return relation{}, nil, err
		}
		if arg.Type == nil || arg.Type.Kind != types.Array {
			alts := "explode(ARRAY<DECIMAL> input)\nexplode(ARRAY<T> list)"
			if c.Name == "CUBE_EXPLODE" {
				alts = "cube_explode(ARRAY<T> columns)"
			}
			return relation{}, nil, errorf(c.Pos, "Function '%s' does not accept parameters (%s).\nValid alternatives are:\n%s",
				strings.ToLower(c.Name), arg.Type, alts)
		}
		step.Exprs = append(step.Exprs, arg)
		step.TableFuncs = append(step.TableFuncs, c.Name)
		cs.calls[c] = len(step.Schema)
		elem := arg.Type.Elem
		if c.Name == "CUBE_EXPLODE" {
			// Each row holds one combination: an array like the input.
			elem = arg.Type
		}
		step.Schema = append(step.Schema, types.Column{Name: fmt.Sprintf("KSQL_SYNTH_%d", i), Type: elem})
	}
	cs.ColumnScope = bind.ScopeOf(qualifier, step.Schema)
	out.scope = cs.ColumnScope
	out.calls = cs
	return out, step, nil
}

// tableFunctionsWithAggregation refuses a table function in the select
// list of an aggregating query, as ksqlDB does.
func tableFunctionsWithAggregation(q *ast.Query, aggregating bool) error {
	if !aggregating {
		return nil
	}
	for _, si := range q.Items {
		if si.Expr == nil {
			continue
		}
		var found *ast.FuncCall
		ast.Walk(si.Expr, func(n ast.Expr) bool {
			if c, ok := isTableFunc(n); ok && found == nil {
				found = c
			}
			return found == nil
		})
		if found != nil {
			return errorf(found.Pos, "Table functions cannot be used with aggregations.\nExplode the rows in one query, and aggregate them in another that reads its output.")
		}
	}
	return nil
}
