package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// isAggregate reports whether n calls an aggregate function.
func isAggregate(n ast.Expr) (*ast.FuncCall, bool) {
	c, ok := n.(*ast.FuncCall)
	if !ok {
		return nil, false
	}
	_, agg := expr.LookupAggregate(c.Name)
	return c, agg
}

// aggregateCalls lists the aggregate calls of the select list and HAVING,
// outermost only, in order of appearance.
func aggregateCalls(items []ast.SelectItem, having ast.Expr) []*ast.FuncCall {
	var calls []*ast.FuncCall
	visit := func(e ast.Expr) {
		ast.Walk(e, func(n ast.Expr) bool {
			if c, ok := isAggregate(n); ok {
				calls = append(calls, c)
				return false
			}
			return true
		})
	}
	for _, si := range items {
		if si.Expr != nil {
			visit(si.Expr)
		}
	}
	if having != nil {
		visit(having)
	}
	return calls
}

// aggregate plans GROUP BY: one Aggregate step whose output carries the
// group key as key columns and one column per aggregate call. The returned
// relation binds each aggregate call to its column and matches select
// items equal to a GROUP BY expression to the key.
func aggregate(cat *catalog.Catalog, q *ast.Query, rel relation, src *catalog.Source, qualifier string, opts QueryOptions) (relation, *topology.Step, error) {
	calls := aggregateCalls(q.Items, q.Having)
	if len(q.GroupBy) == 0 {
		if e := nonAggregate(q.Items); e != nil {
			return relation{}, nil, errorf(e.Position(), "Non-aggregate SELECT expression(s) not part of GROUP BY: %s. Add GROUP BY with the columns to aggregate over.", ast.FormatExpr(e))
		}
		return relation{}, nil, errorf(calls[0].Pos, "Aggregate function %s needs a GROUP BY clause; add GROUP BY with the columns to aggregate over.", calls[0].Name)
	}
	if len(calls) == 0 {
		return relation{}, nil, errorf(q.GroupBy[0].Position(), "GROUP BY requires aggregate functions in either the SELECT or HAVING clause.")
	}
	win, err := window(q)
	if err != nil {
		return relation{}, nil, err
	}
	if src.Kind == catalog.Table {
		if err := checkRetractable(calls); err != nil {
			return relation{}, nil, err
		}
	}
	if len(q.PartitionBy) > 0 {
		return relation{}, nil, errorf(q.PartitionBy[0].Position(), "PARTITION BY cannot be combined with GROUP BY; GROUP BY already keys the result.")
	}
	for _, si := range q.Items {
		if si.Expr == nil {
			continue
		}
		var tf *ast.FuncCall
		ast.Walk(si.Expr, func(n ast.Expr) bool {
			if c, ok := isTableFunc(n); ok && tf == nil {
				tf = c
			}
			return tf == nil
		})
		if tf != nil {
			return relation{}, nil, errorf(tf.Pos, "Table functions cannot be used with aggregations.")
		}
	}

	step := &topology.Step{Kind: topology.Aggregate, StateTable: "aggregate"}
	if opts.QueryID != "" {
		step.Changelog = opts.InternalPrefix + opts.QueryID + "-aggregate-changelog"
	}
	for i := 0; i < topology.PseudoColumns; i++ {
		c := rel.scope[i]
		step.Schema = append(step.Schema, types.Column{Name: c.Name, Type: c.Type})
	}
	out := relation{keyExpr: map[string]string{}, keyMsg: map[string]string{}, keyPos: map[string]ast.Pos{}, keyWord: "key column"}
	sourceKeyed := len(src.Key) == len(q.GroupBy)
	generated := 0
	for i, ge := range q.GroupBy {
		if c, ok := ge.(*ast.Literal); ok && c.Kind == ast.NullLit {
			return relation{}, nil, errorf(ge.Position(), "GROUP BY null is not allowed; group by a column or expression")
		}
		e, err := bindIn(cat, "GROUP BY", ge, rel.scope, qualifier)
		if err != nil {
			return relation{}, nil, err
		}
		if e.Type == nil {
			return relation{}, nil, errorf(ge.Position(), "Can't infer a type of null. Please explicitly cast it to a required type, e.g. CAST(null AS VARCHAR).")
		}
		var name string
		switch x := ge.(type) {
		case *ast.ColumnRef:
			name = x.Name
			if i >= len(src.Key) || src.Key[i].Name != x.Name {
				sourceKeyed = false
			}
		case *ast.Dereference:
			name = x.Field
			sourceKeyed = false
		default:
			name = fmt.Sprintf("KSQL_COL_%d", generated)
			generated++
			sourceKeyed = false
		}
		for _, k := range out.keys {
			if k.Name == name {
				return relation{}, nil, errorf(ge.Position(), "GROUP BY names %s twice", name)
			}
		}
		step.GroupBy = append(step.GroupBy, e)
		out.keys = append(out.keys, types.Column{Name: name, Type: e.Type})
		out.keyExpr[name] = ast.FormatExpr(ge)
		out.keyMsg[name] = name
		out.keyPos[name] = ge.Position()
	}
	if !sourceKeyed && src.Partitions > 1 {
		return relation{}, nil, errorf(q.GroupBy[0].Position(), "GROUP BY other than the key of %s, which has %d partitions, needs a repartition topic, which is not supported yet; group a single-partition stream or by its key", src.Name, src.Partitions)
	}
	step.Keys = len(out.keys)
	step.Schema = append(step.Schema, out.keys...)
	if win != nil {
		step.Window = win
		step.Schema = append(step.Schema, topology.WindowColumns()...)
		out.window = &topology.KeyWindow{Type: win.Type}
		if win.Type != topology.Session {
			out.window.Size = win.Size
		}
	}

	cs := callScope{calls: map[*ast.FuncCall]int{}}
	for i, c := range calls {
		agg, _ := expr.LookupAggregate(c.Name)
		call := topology.AggCall{Func: agg.Name, Star: c.Star}
		var argTypes []*types.Type
		nLit := agg.LiteralCount(len(c.Args))
		for j, a := range c.Args {
			var nested bool
			ast.Walk(a, func(n ast.Expr) bool {
				if _, ok := isAggregate(n); ok {
					nested = true
				}
				return !nested
			})
			if nested {
				return relation{}, nil, errorf(c.Pos, "Aggregate functions cannot be nested: %s", ast.FormatExpr(c))
			}
			e, err := bindIn(cat, "SELECT", a, rel.scope, qualifier)
			if err != nil {
				return relation{}, nil, err
			}
			if j >= len(c.Args)-nLit {
				if e.Op != expr.OpLiteral {
					return relation{}, nil, errorf(a.Position(), "argument %d of %s must be a literal", j+1, c.Name)
				}
				call.Params = append(call.Params, e)
			} else {
				call.Args = append(call.Args, e)
			}
			argTypes = append(argTypes, e.Type)
		}
		ret, err := agg.Check(argTypes)
		if err != nil {
			return relation{}, nil, errorf(c.Pos, "%v", err)
		}
		step.Aggs = append(step.Aggs, call)
		cs.calls[c] = len(step.Schema)
		step.Schema = append(step.Schema, types.Column{Name: fmt.Sprintf("KSQL_AGG_VARIABLE_%d", i), Type: ret})
	}
	cs.ColumnScope = expr.ScopeOf(qualifier, step.Schema)
	out.scope = cs.ColumnScope
	out.calls = cs
	out.aggregated = true
	return out, step, nil
}

// notGrouped rewrites an unresolved column in an aggregate query into
// ksqlDB's message.
func notGrouped(err error, e ast.Expr) error {
	pe, ok := err.(*Error)
	if !ok || !strings.Contains(pe.Msg, "cannot be resolved") {
		return err
	}
	return &Error{Pos: pe.Pos, Msg: "Non-aggregate SELECT expression(s) not part of GROUP BY: " + ast.FormatExpr(e) + ". Add it to GROUP BY or wrap it in an aggregate function."}
}

// nonAggregate returns the first select item that reads a column outside
// any aggregate call, or nil.
func nonAggregate(items []ast.SelectItem) ast.Expr {
	for _, si := range items {
		if si.Star {
			return &ast.ColumnRef{Pos: si.Pos, Name: "*"}
		}
		if si.Expr == nil {
			continue
		}
		found := false
		ast.Walk(si.Expr, func(n ast.Expr) bool {
			if _, ok := isAggregate(n); ok {
				return false
			}
			if _, ok := n.(*ast.ColumnRef); ok {
				found = true
			}
			return !found
		})
		if found {
			return si.Expr
		}
	}
	return nil
}

// window plans the WINDOW clause of an aggregation, nil when there is
// none: the grace period defaults as in ksqlDB (24 hours, or none for EMIT
// FINAL) and the retention to the window's size plus its grace period.
func window(q *ast.Query) (*topology.Window, error) {
	w := q.Window
	if w == nil {
		return nil, nil
	}
	out := &topology.Window{Size: w.Size.Milliseconds(), Final: q.Emit == ast.EmitFinal}
	switch w.Type {
	case ast.Tumbling:
		out.Type = topology.Tumbling
		out.Advance = out.Size
	case ast.Hopping:
		out.Type = topology.Hopping
		out.Advance = w.Advance.Milliseconds()
	default:
		out.Type = topology.Session
	}
	if out.Size <= 0 {
		if out.Type == topology.Session {
			return nil, errorf(w.Pos, "Gap (%d ms) must be larger than zero.", out.Size)
		}
		return nil, errorf(w.Pos, "Window size (%d ms) must be larger than zero.", out.Size)
	}
	if out.Type == topology.Hopping && (out.Advance <= 0 || out.Advance > out.Size) {
		return nil, errorf(w.Pos, "Window advance interval should be more than zero and less than window duration; ADVANCE BY %d ms does not fit a window of %d ms.", out.Advance, out.Size)
	}
	switch {
	case w.Grace != nil:
		out.Grace = w.Grace.Milliseconds()
	case out.Final:
		out.Grace = 0
	default:
		out.Grace = topology.DefaultGrace
	}
	out.Retention = out.Size + out.Grace
	if w.Retention != nil {
		r := w.Retention.Milliseconds()
		if r < out.Retention {
			return nil, errorf(w.Pos, "The retention period of the window store (%d ms) must be no smaller than its window size plus the grace period (%d ms); raise RETENTION or lower GRACE PERIOD.", r, out.Retention)
		}
		out.Retention = r
	}
	return out, nil
}
