package planner

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// isAggregate reports whether n calls an aggregate function.
func isAggregate(n ast.Expr) (*ast.FuncCall, bool) {
	c, ok := n.(*ast.FuncCall)
	if !ok {
		return nil, false
	}
	_, agg := eval.LookupAggregate(c.Name)
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
func aggregate(cat *catalog.Catalog, q *ast.Query, rel relation, src *catalog.Source, qualifier string, opts QueryOptions) (relation, []topology.Step, error) {
	calls := aggregateCalls(q.Items, q.Having)
	for _, ge := range q.GroupBy {
		var inner *ast.FuncCall
		ast.Walk(ge, func(n ast.Expr) bool {
			if c, ok := isAggregate(n); ok && inner == nil {
				inner = c
			}
			return inner == nil
		})
		if inner != nil {
			return relation{}, nil, errorf(inner.Pos, "GROUP BY does not support aggregate functions: %s is an aggregate function.", inner.Name)
		}
	}
	if err := unknownFunction(q); err != nil {
		return relation{}, nil, err
	}
	if err := windowBoundsOutsideSelect(q); err != nil {
		return relation{}, nil, err
	}
	if len(q.GroupBy) > 0 && len(calls) == 0 {
		return relation{}, nil, errorf(q.GroupBy[0].Position(), "GROUP BY requires aggregate functions in either the SELECT or HAVING clause.")
	}
	groups := newGroupKeys()
	for i, ge := range q.GroupBy {
		if _, dup := groups.find(ge); dup {
			return relation{}, nil, errorf(ge.Position(), "Duplicate GROUP BY expression: %s", exprText(ge, qualifier))
		}
		groups.add(ge, i)
		if sh, ok := chainOf(ge); ok {
			groups.chains[sh] = true
		}
	}
	if err := checkGrouped(q, groups, rel, qualifier); err != nil {
		return relation{}, nil, err
	}
	if len(q.GroupBy) == 0 {
		if opts.SinkKind == catalog.Table && opts.Sink != "" {
			texts := make([]string, len(calls))
			for i, c := range calls {
				texts[i] = callText(c)
			}
			return relation{}, nil, errorf(calls[0].Pos, "CREATE TABLE AS SELECT statement does not support aggregate function [%s] without a GROUP BY clause.", strings.Join(texts, ", "))
		}
	}
	// groupBy is what the rows are grouped by. A push query that
	// aggregates without GROUP BY has a single group: as ksqlDB, it groups
	// by the constant 1 (key KSQL_COL_0).
	groupBy := q.GroupBy
	groupPos := calls[0].Pos
	if len(groupBy) == 0 {
		groupBy = []ast.Expr{&ast.Literal{Pos: calls[0].Pos, Kind: ast.IntLit, Text: "1"}}
	} else {
		groupPos = q.GroupBy[0].Position()
	}
	win, err := window(q)
	if err != nil {
		return relation{}, nil, err
	}
	if src.Kind == catalog.Table {
		if q.Window != nil {
			// As ksqlDB, before the aggregates are checked.
			return relation{}, nil, errorf(q.Window.Pos, "Windowing not supported for table aggregations.\n%s is a TABLE, whose rows are updated in place: remove the WINDOW clause, or aggregate a stream in windows.", src.Name)
		}
		if err := checkRetractable(calls); err != nil {
			return relation{}, nil, err
		}
	}
	if len(q.PartitionBy) > 0 {
		return relation{}, nil, errorf(q.PartitionBy[0].Position(), "PARTITION BY cannot be combined with GROUP BY; GROUP BY already keys the result.")
	}
	if src.ValueFormat == format.Kafka {
		return relation{}, nil, errorf(groupPos, "Source(s) %s are using the 'KAFKA' value format. This format does not yet support GROUP BY.", src.Name)
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
	out := relation{keyExpr: map[string]string{}, keyMsg: map[string]string{}, keyPos: map[string]ast.Pos{}, keyWord: "grouping expression"}
	sourceKeyed := len(src.Key) == len(groupBy)
	generated := 0
	for i, ge := range groupBy {
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
			if e.Op == expr.OpColumn && e.Col < len(rel.joinNames) && rel.joinNames[e.Col] != "" {
				name = rel.joinNames[e.Col]
			}
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
				return relation{}, nil, errorf(ge.Position(), "GROUP BY names %s twice; alias one of the expressions in the SELECT or group by another", name)
			}
		}
		step.GroupBy = append(step.GroupBy, e)
		out.keys = append(out.keys, types.Column{Name: name, Type: e.Type})
		out.keyExpr[name] = ast.FormatExpr(ge)
		out.keyMsg[name] = exprText(ge, "")
		out.keyPos[name] = ge.Position()
	}
	// inScope is what the aggregate arguments bind in: the source, or the
	// rows read back from the repartition topic.
	inScope := rel.scope
	var steps []topology.Step
	if !sourceKeyed && src.Partitions > 1 {
		// A group's rows are spread over the source's partitions: move
		// them to the task that owns the group. A table's changes move
		// as change records (see topology.RegroupSchema): each takes its
		// old row out of the old row's group and its new row into the
		// new row's.
		var rekey topology.Step
		rekey, inScope = groupRekey(step.GroupBy, rel.scope, qualifier)
		rep := topology.Step{Kind: topology.Repartition, Schema: rekey.Schema, Keys: rekey.Keys, Partitions: src.Partitions, NullKeysLogged: true}
		suffix := "-repartition"
		if src.Kind == catalog.Table {
			rep.Regroup, step.Regroup = true, true
			rep.Schema = topology.RegroupSchema(rekey.Schema, rekey.Keys)
			// ksqlDB's name for its table aggregation's topic.
			suffix = "-Aggregate-GroupBy-repartition"
		}
		if opts.QueryID != "" {
			// A push query's owner names the topic when it names the run.
			rep.Topic = opts.InternalPrefix + opts.QueryID + suffix
		}
		steps = append(steps, rekey, rep)
		for i, e := range step.GroupBy {
			c := rekey.Schema[topology.PseudoColumns+i]
			step.GroupBy[i] = expr.Column(topology.PseudoColumns+i, c.Name, e.Type)
		}
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
		agg, _ := eval.LookupAggregate(c.Name)
		call := topology.AggCall{Func: agg.Name, Star: c.Star, Limit: opts.AggregateLimits[agg.Name]}
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
				return relation{}, nil, errorf(c.Pos, "Aggregate functions can not be nested: %s", ast.FormatExpr(c))
			}
			e, err := bindIn(cat, "SELECT", a, inScope, qualifier)
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
		if structuredState[agg.Name] && src.ValueFormat == format.Delimited {
			return relation{}, nil, errorf(c.Pos, "One of the functions used in the statement has an intermediate type that the value format can not handle. Please remove the function or change the format. (%s keeps a structured state, which the source's %s value format cannot hold; use JSON.)", agg.Name, src.ValueFormat)
		}
		step.Aggs = append(step.Aggs, call)
		cs.calls[c] = len(step.Schema)
		step.Schema = append(step.Schema, types.Column{Name: fmt.Sprintf("KSQL_AGG_VARIABLE_%d", i), Type: ret})
	}
	cs.ColumnScope = bind.ScopeOf(qualifier, step.Schema)
	out.scope = cs.ColumnScope
	gs := groupScope{callScope: cs, groups: groups.shifted(topology.PseudoColumns)}
	out.calls = gs
	out.aggregated = true
	return out, append(steps, *step), nil
}

// groupRekey plans the step ahead of a repartition for GROUP BY: its rows
// are the pseudo-columns, one key column per grouping expression (named
// KSQL_GROUP_KEY_n, internal to the repartition topic), every column of the
// input, then ROWPARTITION and ROWOFFSET again. It returns the step and the
// scope of its rows, in which the input's columns (pseudo-columns too)
// keep their names and values.
func groupRekey(groupBy []*expr.Expr, in bind.ColumnScope, qualifier string) (topology.Step, bind.ColumnScope) {
	step := topology.Step{Kind: topology.Rekey, Keys: len(groupBy)}
	add := func(e *expr.Expr, c types.Column) {
		step.Exprs = append(step.Exprs, e)
		step.Schema = append(step.Schema, c)
	}
	for i := 0; i < topology.PseudoColumns; i++ {
		add(expr.Column(i, in[i].Name, in[i].Type), types.Column{Name: in[i].Name, Type: in[i].Type})
	}
	for i, e := range groupBy {
		add(e, types.Column{Name: fmt.Sprintf("KSQL_GROUP_KEY_%d", i), Type: e.Type})
	}
	for i := topology.PseudoColumns; i < len(in); i++ {
		c := types.Column{Name: in[i].Name, Type: in[i].Type}
		add(expr.Column(i, c.Name, c.Type), c)
	}
	// ROWPARTITION and ROWOFFSET travel as values too: after the
	// repartition they still name the source record, as without it. The
	// record time travels as the record's timestamp.
	for i := 1; i < topology.PseudoColumns; i++ {
		add(expr.Column(i, in[i].Name, in[i].Type), types.Column{Name: in[i].Name, Type: in[i].Type})
	}
	sc := bind.ScopeOf(qualifier, step.Schema)
	for i := topology.PseudoColumns; i < len(in); i++ {
		// The input's columns keep their qualifiers (a join's sources).
		sc[len(groupBy)+i].Qualifier = in[i].Qualifier
	}
	for i := 1; i < topology.PseudoColumns; i++ {
		// The repartition record's own coordinates are not selectable.
		sc[i] = bind.ScopeColumn{Name: "KSQL_REPARTITION_" + sc[i].Name, Type: sc[i].Type}
	}
	return step, sc
}

// unknownFunction reports the first call in the select list, GROUP BY or
// HAVING of q that names no function, as ksqlDB checks before the
// aggregation rules.
func unknownFunction(q *ast.Query) error {
	var bad *ast.FuncCall
	visit := func(e ast.Expr) {
		ast.Walk(e, func(n ast.Expr) bool {
			c, ok := n.(*ast.FuncCall)
			if !ok || bad != nil {
				return bad == nil
			}
			_, scalar := eval.LookupFunc(c.Name)
			_, agg := eval.LookupAggregate(c.Name)
			if !scalar && !agg && !tableFuncs[c.Name] {
				bad = c
			}
			return true
		})
	}
	for _, si := range q.Items {
		visit(si.Expr)
	}
	for _, ge := range q.GroupBy {
		visit(ge)
	}
	visit(q.Having)
	if bad != nil {
		return errorf(bad.Pos, "Can't find any functions with the name '%s'. SHOW FUNCTIONS lists the functions.", bad.Name)
	}
	return nil
}

// structuredState names the aggregates whose intermediate state is a
// STRUCT, ARRAY or MAP in ksqlDB, which keeps that state in the source's
// value format: a DELIMITED source cannot run them.
var structuredState = map[string]bool{
	"AVG": true, "TOPK": true, "TOPKDISTINCT": true, "COLLECT_LIST": true, "COLLECT_SET": true,
	"HISTOGRAM": true, "LATEST_BY_OFFSET": true, "EARLIEST_BY_OFFSET": true, "CORRELATION": true,
	"STDDEV_SAMP": true, "STDDEV_SAMPLE": true, "COUNT_DISTINCT": true,
}

// groupScope binds the select list and HAVING of an aggregate query: the
// aggregate calls read their columns, and any expression equal to a GROUP
// BY expression reads its key column.
type groupScope struct {
	callScope
	// groups maps the GROUP BY expressions to their key columns.
	groups groupKeys
}

// ResolveExpr implements bind.ExprResolver.
func (s groupScope) ResolveExpr(e ast.Expr) (int, string, *types.Type, bool) {
	i, ok := s.groups.lookup(e)
	if !ok {
		return 0, "", nil, false
	}
	return i, s.ColumnScope[i].Name, s.ColumnScope[i].Type, true
}

// groupKeys are the GROUP BY expressions of a query, compared
// structurally (ast.Equal, qualifiers ignored) through their hashes, each
// with its value, and the shapes of those that are chains of an
// associative operator: a sub-chain of a long chain (a + b in a + b + c,
// which is one Nary node) is hashed and looked up only when a GROUP BY
// expression has its shape, so a chain of many operands costs no more
// than its length.
type groupKeys struct {
	hasher ast.Hasher
	byHash map[uint64][]groupKey
	chains map[chainShape]bool
}

// groupKey is one GROUP BY expression and its value.
type groupKey struct {
	e ast.Expr
	i int
}

func newGroupKeys() groupKeys {
	return groupKeys{hasher: ast.NewHasher(true), byHash: map[uint64][]groupKey{}, chains: map[chainShape]bool{}}
}

// add adds GROUP BY expression e with value i.
func (g groupKeys) add(e ast.Expr, i int) {
	h := g.hasher.Hash(e)
	g.byHash[h] = append(g.byHash[h], groupKey{e, i})
	if sh, ok := chainOf(e); ok {
		g.chains[sh] = true
	}
}

// find returns the value of the GROUP BY expression equal to e.
func (g groupKeys) find(e ast.Expr) (int, bool) {
	for _, k := range g.byHash[g.hasher.Hash(e)] {
		if ast.Equal(k.e, e, true) {
			return k.i, true
		}
	}
	return 0, false
}

// shifted returns the same expressions with their values moved by n.
func (g groupKeys) shifted(n int) groupKeys {
	out := groupKeys{hasher: g.hasher, byHash: make(map[uint64][]groupKey, len(g.byHash)), chains: g.chains}
	for h, ks := range g.byHash {
		moved := make([]groupKey, len(ks))
		for j, k := range ks {
			moved[j] = groupKey{k.e, k.i + n}
		}
		out.byHash[h] = moved
	}
	return out
}

// chainShape is the operator and number of operands of a chain.
type chainShape struct {
	op ast.BinaryOp
	n  int
}

// chainOf returns the shape of e when e is a chain of an associative
// operator: a Nary, or a Binary (whose left operand may chain on).
func chainOf(e ast.Expr) (chainShape, bool) {
	switch x := e.(type) {
	case *ast.Nary:
		return chainShape{x.Op, len(x.Args)}, true
	case *ast.Binary:
		if !x.Op.Associative() {
			return chainShape{}, false
		}
		n := 2
		for l := x.L; ; {
			if b, ok := l.(*ast.Binary); ok && b.Op == x.Op {
				n, l = n+1, b.L
				continue
			}
			if c, ok := l.(*ast.Nary); ok && c.Op == x.Op {
				n += len(c.Args) - 1
			}
			break
		}
		return chainShape{x.Op, n}, true
	}
	return chainShape{}, false
}

// lookup returns the value of the GROUP BY expression e is.
func (g groupKeys) lookup(e ast.Expr) (int, bool) {
	if sh, ok := chainOf(e); ok && !g.chains[sh] {
		return 0, false
	}
	return g.find(e)
}

// prefix returns the number of leading operands of n (fewer than all)
// that make the longest sub-chain equal to a GROUP BY expression, or 0.
func (g groupKeys) prefix(n *ast.Nary) int {
	for k := len(n.Args) - 1; k >= 2; k-- {
		if !g.chains[chainShape{n.Op, k}] {
			continue
		}
		if _, ok := g.find(n.Prefix(k)); ok {
			return k
		}
	}
	return 0
}

// exprText prints e as ksqlDB's messages do: every column qualified by
// qualifier (none when empty), without back-quotes.
func exprText(e ast.Expr, qualifier string) string {
	return strings.ReplaceAll(ast.FormatExprQualified(e, qualifier), "`", "")
}

// callText prints an aggregate call as ksqlDB does, COUNT(*) reading
// ROWTIME.
func callText(c *ast.FuncCall) string {
	if c.Star || len(c.Args) == 0 && c.Name == "COUNT" {
		return c.Name + "(ROWTIME)"
	}
	return exprText(c, "")
}

// ungrouped lists the columns e reads outside its aggregate calls and
// outside sub-expressions equal to a GROUP BY expression.
func ungrouped(e ast.Expr, groups groupKeys) []string {
	params := map[string]bool{}
	ast.Walk(e, func(n ast.Expr) bool {
		if l, ok := n.(*ast.Lambda); ok {
			for _, p := range l.Params {
				params[p] = true
			}
		}
		return true
	})
	var cols []string
	var visit func(n ast.Expr) bool
	visit = func(n ast.Expr) bool {
		if _, ok := groups.lookup(n); ok {
			return false
		}
		if _, ok := isAggregate(n); ok {
			return false
		}
		if c, ok := n.(*ast.ColumnRef); ok && !params[c.Name] && !windowBound(c.Name) && !reserved(c.Name) {
			cols = append(cols, c.Name)
		}
		if c, ok := n.(*ast.Nary); ok {
			// A leading sub-chain may be grouped, as in the nested form.
			if k := groups.prefix(c); k > 0 {
				for _, x := range c.Args[k:] {
					ast.Walk(x, visit)
				}
				return false
			}
		}
		return true
	}
	ast.Walk(e, visit)
	return cols
}

// windowBound reports whether name is a window bound column, which a
// windowed aggregation provides.
func windowBound(name string) bool {
	return name == "WINDOWSTART" || name == "WINDOWEND"
}

// windowBoundsOutsideSelect rejects, in a windowed aggregation, a window
// bound read by an aggregate call of the select list or anywhere in
// HAVING, as ksqlDB does: the bounds exist only once the rows are grouped,
// and only the select list reads them.
func windowBoundsOutsideSelect(q *ast.Query) error {
	if q.Window == nil {
		return nil
	}
	var bad *ast.ColumnRef
	find := func(e ast.Expr) {
		ast.Walk(e, func(n ast.Expr) bool {
			if c, ok := n.(*ast.ColumnRef); ok && bad == nil && windowBound(c.Name) {
				bad = c
			}
			return bad == nil
		})
	}
	for _, si := range q.Items {
		if si.Expr == nil {
			continue
		}
		ast.Walk(si.Expr, func(n ast.Expr) bool {
			if c, ok := isAggregate(n); ok {
				for _, a := range c.Args {
					find(a)
				}
				return false
			}
			return bad == nil
		})
	}
	if bad == nil && q.Having != nil {
		find(q.Having)
	}
	if bad == nil {
		return nil
	}
	return errorf(bad.Pos, "Window bounds column %s can only be used in the SELECT clause of windowed aggregations and can not be passed to aggregate functions.\nSee https://github.com/confluentinc/ksql/issues/4397", bad.Name)
}

// windowBoundsInWhere rejects a WHERE that reads a window bound of a
// windowed aggregation over rows that have no window: the bounds exist
// only after the grouping, which the filter comes before. As ksqlDB, the
// other columns are resolved first (bindWhere binds the WHERE in the scope
// given, and its error wins); then the filter's type check finds the bound
// unknown.
func windowBoundsInWhere(q *ast.Query, windowedSource bool, sc describedScope, bindWhere func(bind.Scope) error) error {
	if q.Where == nil || q.Window == nil || windowedSource {
		return nil
	}
	var bound *ast.ColumnRef
	ast.Walk(q.Where, func(n ast.Expr) bool {
		if c, ok := n.(*ast.ColumnRef); ok && bound == nil && windowBound(c.Name) {
			bound = c
		}
		return bound == nil
	})
	if bound == nil {
		return nil
	}
	if err := bindWhere(withWindowBounds{sc}); err != nil {
		return err
	}
	return errorf(bound.Pos, "Error in WHERE expression: Unknown column %s.", bound.Name)
}

// withWindowBounds is a scope in which the window bounds resolve too, for
// checking the rest of an expression that reads them.
type withWindowBounds struct{ scope describedScope }

// describedScope is a scope that names its columns in its errors.
type describedScope interface {
	bind.Scope
	bind.ScopeDescriber
}

// Resolve implements bind.Scope.
func (s withWindowBounds) Resolve(qualifier, name string) (int, *types.Type, bool) {
	if windowBound(name) {
		return 0, types.BigintType, true
	}
	return s.scope.Resolve(qualifier, name)
}

// Explain implements bind.ScopeDescriber.
func (s withWindowBounds) Explain(qualifier, name string) error {
	return s.scope.Explain(qualifier, name)
}

// Names implements bind.ScopeDescriber.
func (s withWindowBounds) Names() []string { return s.scope.Names() }

// checkGrouped rejects select items and HAVING conditions that read
// columns which are neither grouped nor aggregated, with ksqlDB's
// messages.
func checkGrouped(q *ast.Query, groups groupKeys, rel relation, qualifier string) error {
	var bad []string
	var at ast.Pos
	note := func(pos ast.Pos, text string) {
		if len(bad) == 0 {
			at = pos
		}
		bad = append(bad, text)
	}
	for _, si := range q.Items {
		switch {
		case si.Star:
			if si.StarSource != "" && si.StarSource != qualifier {
				continue
			}
			for _, c := range rel.scope[topology.PseudoColumns:] {
				if _, ok := groups.find(&ast.ColumnRef{Name: c.Name}); !ok {
					note(si.Pos, c.Name)
				}
			}
		case si.Expr != nil:
			if len(ungrouped(si.Expr, groups)) > 0 {
				note(si.Pos, exprText(si.Expr, ""))
			}
		}
	}
	if len(bad) > 0 {
		return &Error{Pos: at, Msg: "Non-aggregate SELECT expression(s) not part of GROUP BY: " + strings.Join(bad, ", ") + "\nEither add the column(s) to the GROUP BY or remove them from the SELECT."}
	}
	if q.Having != nil {
		if cols := ungrouped(q.Having, groups); len(cols) > 0 {
			return errorf(q.Having.Position(), "Non-aggregate HAVING expression not part of GROUP BY: %s\nEither add the column(s) to the GROUP BY or use them inside an aggregate function.", strings.Join(cols, ", "))
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

// havingError names the aggregates of a HAVING clause's error as the user
// wrote them (COUNT(*)), not by the columns that hold their values
// (KSQL_AGG_VARIABLE_1).
func havingError(err error, rel relation) error {
	var pe *Error
	gs, ok := rel.calls.(groupScope)
	if !errors.As(err, &pe) || !ok {
		return err
	}
	msg := pe.Msg
	// Longer names first, so that KSQL_AGG_VARIABLE_1 does not replace
	// the start of KSQL_AGG_VARIABLE_10.
	type pair struct{ name, text string }
	var pairs []pair
	for c, i := range gs.calls {
		pairs = append(pairs, pair{gs.ColumnScope[i].Name, ast.FormatExpr(c)})
	}
	sort.Slice(pairs, func(a, b int) bool { return len(pairs[a].name) > len(pairs[b].name) })
	for _, p := range pairs {
		msg = strings.ReplaceAll(msg, p.name, p.text)
	}
	return &Error{Pos: pe.Pos, Msg: msg}
}
