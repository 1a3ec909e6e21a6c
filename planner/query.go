package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// QueryOptions say what kind of query a SELECT is planned for.
type QueryOptions struct {
	// QueryID names a persistent query; empty for a push query.
	QueryID string
	// Sink is the CREATE ... AS SELECT target's name; empty for a push
	// query.
	Sink    string
	SinkPos ast.Pos
	// SinkProps is the WITH list of CREATE ... AS SELECT.
	SinkProps ast.Properties
	// OffsetReset is "earliest" or "latest".
	OffsetReset string
	// Defaults are the session's default formats.
	Defaults Defaults
	// Target is the existing stream INSERT INTO ... SELECT writes; Sink
	// then names it.
	Target *catalog.Source
	// SinkKind is what CREATE ... AS SELECT declares: a stream or a table.
	SinkKind catalog.Kind
	// AggregateLimits are the configured limits of aggregates by name
	// (COLLECT_LIST, COLLECT_SET), from the session's properties.
	AggregateLimits map[string]int64
	// InternalPrefix starts the names of the internal topics (changelogs)
	// a persistent query creates.
	InternalPrefix string
	// Ctx, when set, stops planning with its cause once it ends (the
	// statement's client went away or its deadline passed).
	Ctx context.Context
}

// QueryPlan is a planned query.
type QueryPlan struct {
	Graph *topology.Graph
	// Sink is the source a CREATE ... AS SELECT declares; nil for a push
	// query.
	Sink     *catalog.Source
	Replicas int16
	// Tombstone says, per column of a push query's output, whether its
	// deletes keep the column's value (see tombstoneColumns); the others
	// are null in a delete.
	Tombstone []bool
}

// limitInPersistent is ksqlDB's refusal of a LIMIT in the query of a
// persistent query, which runs until it is terminated. ksqlDB's parser
// refuses it in CREATE STREAM AS SELECT and CREATE TABLE AS SELECT; INSERT
// INTO ... SELECT is refused the same way.
func limitInPersistent(q *ast.Query, opts QueryOptions) error {
	what := "INSERT INTO ... SELECT"
	switch {
	case opts.Target != nil:
	case opts.SinkKind == catalog.Table:
		what = "CREATE TABLE AS SELECT"
	default:
		what = "CREATE STREAM AS SELECT"
	}
	return errorf(q.Pos, "Failed to prepare statement: %s statements don't support LIMIT clause.", what)
}

// limitOf is the LIMIT of a push or pull query's plan: nil for none. A
// negative LIMIT is kept: a push query with one ends before its first row,
// as ksqlDB's does (a pull query refuses it).
func limitOf(q *ast.Query) *int64 {
	if q.Limit == nil {
		return nil
	}
	n := *q.Limit
	return &n
}

// PlanSelect binds a SELECT against the catalog and returns its plan.
func PlanSelect(cat *catalog.Catalog, q *ast.Query, opts QueryOptions) (*QueryPlan, error) {
	if err := cancelled(opts.Ctx); err != nil {
		return nil, err
	}
	persistent := opts.Sink != ""
	if persistent && q.Limit != nil {
		return nil, limitInPersistent(q, opts)
	}
	ref, ok := q.From.(*ast.TableRef)
	if !ok {
		return planJoinSelect(cat, q, opts)
	}
	src, ok := cat.Source(ref.Name)
	if !ok {
		return nil, errorf(ref.Pos, "%s does not exist.\nSHOW STREAMS and SHOW TABLES list the sources you can query.", ref.Name)
	}
	table := src.Kind == catalog.Table
	aggregating := len(q.GroupBy) > 0 || len(aggregateCalls(q.Items, q.Having)) > 0
	if err := tableFunctionsWithAggregation(q, aggregating); err != nil {
		return nil, err
	}
	switch {
	case persistent && opts.Target == nil && aggregating && opts.SinkKind != catalog.Table:
		return nil, errorf(q.Pos, "Invalid result type. Your SELECT query produces a TABLE. Please use CREATE TABLE AS SELECT statement instead.")
	case opts.Target != nil && aggregating:
		return nil, errorf(q.Pos, "INSERT INTO can only be used to insert into a stream, and this query produces a TABLE.")
	}
	switch {
	case persistent && opts.Target == nil && table && opts.SinkKind != catalog.Table:
		return nil, errorf(q.Pos, "Invalid result type. Your SELECT query produces a TABLE. Please use CREATE TABLE AS SELECT statement instead.")
	case persistent && opts.Target == nil && !table && !aggregating && opts.SinkKind == catalog.Table:
		return nil, errorf(q.Pos, "Invalid result type. Your SELECT query produces a STREAM. Please use CREATE STREAM AS SELECT statement instead.")
	case table && len(q.PartitionBy) > 0:
		return nil, errorf(q.PartitionBy[0].Position(), "Cannot repartition a TABLE source. PARTITION BY applies to streams.")
	}
	switch {
	case q.Window != nil && !aggregating:
		return nil, errorf(q.Window.Pos, "WINDOW needs an aggregation: add GROUP BY and an aggregate function, or remove the WINDOW clause.")
	case q.Window != nil && table:
		return nil, errorf(q.Window.Pos, "Windowing not supported for table aggregations.\nWINDOW groups the rows of a stream by time; aggregate the stream %s is built from, or remove the WINDOW clause.", src.Name)
	case q.Having != nil && len(q.GroupBy) == 0 && len(aggregateCalls(q.Items, nil)) == 0:
		// An aggregate in the select list makes a single group, which
		// HAVING may filter.
		return nil, errorf(q.Having.Position(), "HAVING needs GROUP BY; add GROUP BY or use WHERE")
	case q.Emit == ast.EmitFinal && (q.Window == nil || !aggregating):
		return nil, errorf(q.Pos, "EMIT FINAL is only supported for windowed aggregations.")
	}

	if persistent {
		if _, err := checkProps(opts.SinkProps, sinkProps); err != nil {
			return nil, err
		}
	}
	node := SourceNode(src)
	in := node.Schema()
	qualifier := src.Name
	if ref.Alias != "" {
		qualifier = ref.Alias
	}
	sc := bind.ScopeOf(qualifier, in)
	g := &topology.Graph{QueryID: opts.QueryID, Source: node, OffsetReset: opts.OffsetReset}
	var err error

	if err := windowBoundsInWhere(q, src.Window != nil, sc, func(s bind.Scope) error {
		_, err := bindIn(cat, "WHERE", q.Where, s, qualifier)
		return err
	}); err != nil {
		return nil, err
	}
	if q.Where != nil {
		pred, err := bindIn(cat, "WHERE", q.Where, sc, qualifier)
		if err != nil {
			return nil, err
		}
		if pred.Type.Kind != types.Boolean {
			return nil, errorf(q.Where.Position(), "WHERE must be a BOOLEAN condition, not %s", pred.Type)
		}
		// On a table, a row that fails the filter deletes its key downstream.
		g.Steps = append(g.Steps, topology.Step{Kind: topology.Filter, Predicate: pred, Schema: in, Retract: table})
	}

	if err := cancelled(opts.Ctx); err != nil {
		return nil, err
	}
	// rel is the relation the projection reads: the source, or the source
	// rekeyed by PARTITION BY.
	rel := relation{scope: sc, keys: src.Key, window: src.Window}
	if len(q.PartitionBy) > 0 {
		if src.Window != nil {
			return nil, errorf(q.PartitionBy[0].Position(), "Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385.")
		}
		var step *topology.Step
		rel, step, err = partitionBy(cat, q.PartitionBy, rel, src, qualifier)
		if err != nil {
			return nil, err
		}
		g.Steps = append(g.Steps, *step)
	}

	if aggregating {
		var steps []topology.Step
		if rel, steps, err = aggregate(cat, q, rel, src, qualifier, opts); err != nil {
			return nil, err
		}
		g.Steps = append(g.Steps, steps...)
		agg := &steps[len(steps)-1]
		if table {
			materializeSource(g, len(src.Key), opts)
		}
		if q.Having != nil {
			pred, err := bindIn(cat, "HAVING", q.Having, rel.bindScope(), qualifier)
			if err != nil {
				return nil, havingError(err, rel)
			}
			if pred.Type == nil || pred.Type.Kind != types.Boolean {
				return nil, errorf(q.Having.Position(), "HAVING must be a BOOLEAN condition, not %s", pred.Type)
			}
			// A group that stops matching HAVING leaves the result.
			g.Steps = append(g.Steps, topology.Step{Kind: topology.Filter, Predicate: pred, Schema: agg.Schema, Retract: true})
		}
	} else {
		var fm *topology.Step
		if rel, fm, err = tableFunctions(cat, q.Items, rel, qualifier, table); err != nil {
			return nil, err
		}
		if fm != nil {
			g.Steps = append(g.Steps, *fm)
		}
	}
	if err := cancelled(opts.Ctx); err != nil {
		return nil, err
	}
	items, err := projection(cat, q.Items, rel, qualifier, !persistent, newAliasGen(src))
	if err != nil {
		return nil, err
	}
	if err := cancelled(opts.Ctx); err != nil {
		return nil, err
	}
	// names are the projection's columns in SELECT order, as ksqlDB's
	// rewritten statement of an error lists them.
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.name
	}
	if persistent && opts.Target == nil {
		// The TIMESTAMP column is checked before the key rules, as ksqlDB
		// does.
		if err := checkSinkTimestamp(items, opts); err != nil {
			return nil, err
		}
	}
	if persistent {
		items, g.KeyColumns, err = keysFirst(items, rel, opts.Sink, q.Pos)
		if err != nil {
			return nil, err
		}
	}
	tail := selectTail{items: items, sinkSource: src, droppedKey: len(q.PartitionBy) > 0 && len(rel.keys) == 0, materialize: table && !aggregating}
	// A windowed result keeps its windows: the sink reads each row's
	// bounds from two columns after the output.
	if persistent && rel.window != nil {
		tail.keyWindow = rel.window
		for b, c := range topology.WindowColumns() {
			idx, _, ok := rel.scope.Resolve("", c.Name)
			if !ok {
				return nil, fmt.Errorf("planner: windowed relation without %s", c.Name)
			}
			tail.bounds[b] = idx
		}
	}
	if rel.aggregated {
		tail.sinkError = func(err error) error {
			var pe *Error
			if errors.As(err, &pe) && strings.HasPrefix(pe.Msg, "Key format does not support schema.") {
				// ksqlDB names the statement as it rewrote it.
				return &Error{Pos: pe.Pos, Msg: pe.Msg + "\nStatement: " + statementText(q, opts, names, src.Name, qualifier)}
			}
			return err
		}
	}
	return finishSelect(g, q, opts, tail)
}

// checkSinkTimestamp refuses a sink's TIMESTAMP property that names none
// of the projection's columns, or one of the wrong type.
func checkSinkTimestamp(items []item, opts QueryOptions) error {
	cols := make([]types.Column, len(items))
	for i, it := range items {
		cols[i] = types.Column{Name: it.name, Type: it.e.Type}
	}
	p, _ := checkProps(opts.SinkProps, sinkProps)
	_, _, err := timestampColumn(p, cols)
	return err
}

// selectTail is what a query's plan ends with, whatever it reads (one
// source or a join): the projection, in output order with the key columns
// of a persistent query first, and the sink.
type selectTail struct {
	items []item
	// keyWindow, set for a windowed persistent result, is its sink's
	// window; bounds are then the row indexes of its WINDOWSTART and
	// WINDOWEND, which the sink reads after the output columns.
	keyWindow *topology.KeyWindow
	bounds    [2]int
	// sinkSource is the source a new sink takes its formats and
	// partitions from.
	sinkSource *catalog.Source
	// droppedKey says PARTITION BY dropped the key (PARTITION BY NULL).
	droppedKey bool
	// materialize says the sink is a table the query does not aggregate
	// into, which it materializes.
	materialize bool
	// sinkError, when set, rewrites planSink's error.
	sinkError func(error) error
}

// finishSelect appends the projection to g, the graph of q so far (whose
// KeyColumns are set), and plans its sink, an INSERT INTO target or
// nothing (a push query).
func finishSelect(g *topology.Graph, q *ast.Query, opts QueryOptions, t selectTail) (*QueryPlan, error) {
	persistent := opts.Sink != ""
	seen := map[string]bool{}
	proj := topology.Step{Kind: topology.Project}
	for _, it := range t.items {
		if persistent && reserved(it.name) && it.keyCol != it.name {
			if it.aliased {
				return nil, errorf(it.pos, "`%s` is a reserved column name. You cannot use it as an alias for a column.", it.name)
			}
			return nil, errorf(it.pos, "Reserved column name in select: `%s`. Please remove or alias the column.", it.name)
		}
		if seen[it.name] {
			return nil, errorf(it.pos, "Duplicate value columns found in schema: `%s` %s\nThe projection has more than one column named %s; give one an alias with AS.", it.name, it.e.Type, it.name)
		}
		seen[it.name] = true
		proj.Exprs = append(proj.Exprs, it.e)
		proj.Schema = append(proj.Schema, types.Column{Name: it.name, Type: it.e.Type})
	}
	g.Output = proj.Schema
	keyWindow := t.keyWindow
	if !persistent {
		keyWindow = nil
	}
	if keyWindow != nil {
		g.Output = proj.Schema[:len(proj.Schema):len(proj.Schema)]
		for b, c := range topology.WindowColumns() {
			proj.Exprs = append(proj.Exprs, expr.Column(t.bounds[b], c.Name, c.Type))
			proj.Schema = append(proj.Schema, c)
		}
	}
	g.Steps = append(g.Steps, proj)
	g.Limit = limitOf(q)
	plan := &QueryPlan{Graph: g, Tombstone: tombstoneColumns(t.items)}
	switch {
	case opts.Target != nil:
		if err := planInsertWindowed(plan, opts.Target, keyWindow, q.Pos); err != nil {
			return nil, err
		}
	case persistent:
		if err := planSink(plan, t.sinkSource, opts, t.droppedKey); err != nil {
			if t.sinkError != nil {
				return nil, t.sinkError(err)
			}
			return nil, err
		}
		if t.materialize {
			materializeSink(g, opts)
		}
		if keyWindow != nil {
			plan.Sink.Window = keyWindow
			g.Sink.Window = keyWindow
		}
	}
	topology.PruneSources(g)
	// The last pass: operator settings and the physical plan.
	if err := topology.Complete(g); err != nil {
		return nil, err
	}
	return plan, nil
}

// planInsert points the query at an existing stream, whose schema the
// query's output must match exactly.
func planInsert(plan *QueryPlan, target *catalog.Source, pos ast.Pos) error {
	g := plan.Graph
	want := schemaText(target.Columns(), len(target.Key))
	got := schemaText(g.Output, g.KeyColumns)
	if want != got && !widenInsert(g, target) {
		return &Error{Pos: pos, Msg: fmt.Sprintf("Incompatible schema between results and sink.\nResult schema is %s\nSink schema is %s", got, want)}
	}
	g.Sink = &topology.Sink{
		Name: target.Name, Topic: target.Topic, Partitions: target.Partitions,
		KeyFormat: target.KeyFormat, ValueFormat: target.ValueFormat, ValueProps: target.ValueProps,
		KeyProps: target.KeyProps, Timestamp: target.Timestamp, TimestampFormat: target.TimestampFormat,
	}
	return nil
}

// widenInsert makes the rows of g, an INSERT INTO query, the target's
// when they differ only by numbers of narrower types (INTEGER into BIGINT,
// DECIMAL or DOUBLE; BIGINT into DECIMAL or DOUBLE; DECIMAL into DECIMAL
// or DOUBLE), which ksqlDB casts implicitly: the last projection casts
// them. It reports whether it did; it changes nothing when it cannot.
func widenInsert(g *topology.Graph, target *catalog.Source) bool {
	cols := target.Columns()
	if len(cols) != len(g.Output) || g.KeyColumns != len(target.Key) || len(g.Steps) == 0 {
		return false
	}
	proj := &g.Steps[len(g.Steps)-1]
	if proj.Kind != topology.Project || len(proj.Exprs) < len(cols) {
		return false
	}
	widens := func(from, to *types.Type) bool {
		switch from.Kind {
		case types.Int:
			return to.Kind == types.Bigint || to.Kind == types.Decimal || to.Kind == types.Double
		case types.Bigint, types.Decimal:
			return to.Kind == types.Decimal || to.Kind == types.Double
		}
		return false
	}
	for i, c := range cols {
		o := g.Output[i]
		if o.Name != c.Name || !(o.Type.Equal(c.Type) || widens(o.Type, c.Type)) {
			return false
		}
	}
	for i, c := range cols {
		if g.Output[i].Type.Equal(c.Type) {
			continue
		}
		proj.Exprs[i] = &expr.Expr{Op: expr.OpCast, Type: c.Type, Args: []*expr.Expr{proj.Exprs[i]}}
		proj.Schema[i].Type = c.Type
		g.Output[i].Type = c.Type
	}
	return true
}

// schemaText spells a schema as ksqlDB's messages do: `K` STRING KEY, `V` INTEGER.
func schemaText(cols []types.Column, keys int) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "`" + c.Name + "` " + c.Type.String()
		if i < keys {
			parts[i] += " KEY"
		}
	}
	return strings.Join(parts, ", ")
}

// item is one output column being planned.
type item struct {
	pos     ast.Pos
	name    string
	aliased bool
	e       *expr.Expr
	keyCol  string // the relation's key column it copies, if any
}

// relation is what a projection reads: a scope over a row layout (the
// pseudo-columns first) and the key columns among it. After PARTITION BY,
// keyExpr holds the expression that computes each key as written (to match
// select items) and keyMsg the same qualified by the source (for messages).
type relation struct {
	scope   bind.ColumnScope
	keys    []types.Column
	keyExpr map[string]string
	keyMsg  map[string]string
	keyPos  map[string]ast.Pos
	// keyWord names the keys in messages when keyExpr is set:
	// "partitioning expression" (PARTITION BY) or "key column" (GROUP BY).
	keyWord string
	// aggregated marks the relation an Aggregate step emits: columns that
	// are not grouped cannot be selected.
	aggregated bool
	// calls, when set, binds table function calls to the columns a
	// flat-map step added.
	calls bind.Scope
	// window, when set, says the rows are windowed: they carry
	// WINDOWSTART and WINDOWEND, and a sink writes windowed keys.
	window *topology.KeyWindow
	// joinNames, for joined rows, names each column as a GROUP BY of it
	// names its key (L_A).
	joinNames []string
}

// bindScope is the scope select items bind in.
func (r relation) bindScope() bind.Scope {
	if r.calls != nil {
		return r.calls
	}
	return r.scope
}

func (r relation) isKey(name string) bool {
	for _, k := range r.keys {
		if k.Name == name {
			return true
		}
	}
	return false
}

// projection binds a query's select list over rel. With bounds (a push
// query's), * over windowed rows gives the window bounds after the key
// columns, as ksqlDB shows them: K, WINDOWSTART, WINDOWEND, the values. A
// persistent query writes them into its sink's windowed key instead.
func projection(cat *catalog.Catalog, list []ast.SelectItem, rel relation, qualifier string, bounds bool, names *aliasGen) ([]item, error) {
	var out []item
	for _, si := range list {
		if si.Star {
			if si.StarSource != "" && si.StarSource != qualifier {
				return nil, errorf(si.Pos, "%s.* names no source of this query; use %s.*", si.StarSource, qualifier)
			}
			var keys, window, values []item
			for i, c := range rel.scope[topology.PseudoColumns:] {
				if strings.HasPrefix(c.Name, "KSQL_SYNTH_") || strings.HasPrefix(c.Name, "KSQL_AGG_VARIABLE_") {
					continue
				}
				idx := i + topology.PseudoColumns
				it := item{pos: si.Pos, name: c.Name, e: expr.Column(idx, c.Name, c.Type)}
				switch {
				case rel.window != nil && (c.Name == topology.WindowStart || c.Name == topology.WindowEnd):
					if bounds {
						window = append(window, it)
					}
				case rel.isKey(c.Name):
					it.keyCol = c.Name
					keys = append(keys, it)
				case bounds:
					values = append(values, it)
				default:
					keys = append(keys, it) // scope order, as before
				}
			}
			out = append(append(append(out, keys...), window...), values...)
			continue
		}
		if si.StructStar {
			// s->* selects every field of the struct, each named after it.
			st, err := bindIn(cat, "SELECT", si.Expr, rel.bindScope(), qualifier)
			if err != nil {
				return nil, err
			}
			if st.Type == nil || st.Type.Kind != types.Struct {
				return nil, errorf(si.Pos, "-> * selects the fields of a STRUCT, but %s is %s", ast.FormatExpr(si.Expr), st.Type)
			}
			for _, f := range st.Type.Fields {
				e, err := bindIn(cat, "SELECT", &ast.Dereference{Pos: si.Pos, X: si.Expr, Field: f.Name}, rel.bindScope(), qualifier)
				if err != nil {
					return nil, err
				}
				out = append(out, item{pos: si.Pos, name: f.Name, e: e})
			}
			continue
		}
		e, err := bindIn(cat, "SELECT", si.Expr, rel.bindScope(), qualifier)
		if err != nil {
			return nil, err
		}
		if e.Type == nil {
			return nil, errorf(si.Pos, "Can't infer a type of null. Please explicitly cast it to a required type, e.g. CAST(null AS VARCHAR).")
		}
		it := item{pos: si.Pos, e: e}
		if cr, ok := si.Expr.(*ast.ColumnRef); ok && rel.isKey(cr.Name) {
			it.keyCol = cr.Name
		}
		if rel.aggregated && e.Op == expr.OpColumn && e.Col >= topology.PseudoColumns && e.Col < topology.PseudoColumns+len(rel.keys) {
			// An expression equal to a GROUP BY expression reads its key.
			it.keyCol = rel.keys[e.Col-topology.PseudoColumns].Name
		}
		if it.keyCol == "" && len(rel.keyExpr) > 0 {
			// The PARTITION BY expression itself: read the key it computed.
			text := ast.FormatExpr(si.Expr)
			for k, ke := range rel.keyExpr {
				if ke != text {
					continue
				}
				it.keyCol = k
				if idx, t, ok := rel.scope.Resolve("", k); ok {
					it.e = expr.Column(idx, k, t)
				}
			}
		}
		switch {
		case si.Alias != "":
			it.name, it.aliased = si.Alias, true
		default:
			switch x := si.Expr.(type) {
			case *ast.ColumnRef:
				it.name = x.Name
			case *ast.Dereference:
				// A field's name, made unique against the source's columns
				// and the fields before it, as ksqlDB does: B, B_1, B_2.
				it.name = names.field(x.Field)
				if it.keyCol != "" {
					// The PARTITION BY expression itself names its key.
					it.name = it.keyCol
				}
			default:
				it.name = names.expression()
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// keysFirst moves the copied key columns to the front, as a persistent
// query's sink schema has them.
func keysFirst(items []item, rel relation, sink string, pos ast.Pos) ([]item, int, error) {
	var keys, values []item
	byKey := map[string]item{}
	for _, it := range items {
		if it.keyCol == "" {
			values = append(values, it)
			continue
		}
		if prev, dup := byKey[it.keyCol]; dup && rel.aggregated {
			return nil, 0, errorf(it.pos, "The projection contains a key column more than once: `%s` and `%s`. Select each grouping expression once; use AS_VALUE to copy it into the value.", prev.name, it.name)
		}
		if prev, dup := byKey[it.keyCol]; dup {
			return nil, 0, errorf(it.pos, "The projection contains a key column (`%s`) more than once, aliased as: %s and %s. Keep one of them.", it.keyCol, prev.name, it.name)
		}
		byKey[it.keyCol] = it
		keys = append(keys, it)
	}
	missing := false
	for _, k := range rel.keys {
		if _, ok := byKey[k.Name]; !ok {
			missing = true
		}
	}
	if missing {
		// ksqlDB names every key (or partitioning expression), not just
		// the missing ones.
		keys := rel.keys
		if rel.aggregated {
			// ksqlDB names only the missing grouping expressions.
			keys = nil
			for _, k := range rel.keys {
				if _, ok := byKey[k.Name]; !ok {
					keys = append(keys, k)
				}
			}
		}
		names := make([]string, len(keys))
		what := "key column"
		for i, k := range keys {
			names[i] = k.Name
			if rel.keyExpr != nil {
				names[i] = rel.keyMsg[k.Name]
				what = "partitioning expression"
				if rel.keyWord != "" {
					what = rel.keyWord
				}
			}
		}
		list := names[0]
		if len(names) > 1 {
			what += "s"
			list = strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
		}
		at := pos
		if rel.keyExpr != nil {
			at = rel.keyPos[keys[0].Name]
		}
		return nil, 0, &Error{Pos: at, Msg: fmt.Sprintf("Key missing from projection (ie, SELECT). The query used to build `%s` must include the %s %s in its projection (eg, SELECT %s...).", sink, what, list, strings.Join(names, ", "))}
	}
	if len(values) == 0 {
		return nil, 0, &Error{Pos: pos, Msg: "The projection contains no value columns. Select at least one column that is not a key."}
	}
	// Key columns keep the relation's order (the source's, or PARTITION
	// BY's), whatever order the projection lists them in.
	ordered := make([]item, 0, len(keys))
	for _, k := range rel.keys {
		ordered = append(ordered, byKey[k.Name])
	}
	keys = ordered
	return append(keys, values...), len(keys), nil
}

// planSink declares the stream a CREATE ... AS SELECT writes. droppedKey
// says PARTITION BY null took the key away.
func planSink(plan *QueryPlan, src *catalog.Source, opts QueryOptions, droppedKey bool) error {
	g := plan.Graph
	p, err := checkProps(opts.SinkProps, sinkProps)
	if err != nil {
		return err
	}
	topic, _, err := p.str("KAFKA_TOPIC", opts.Sink)
	if err != nil {
		return err
	}
	keyFormat, valueFormat, err := p.formats(opts.SinkPos, src.KeyFormat, src.ValueFormat)
	if err == nil {
		err = checkKeyTypes(opts.SinkPos, g.Output[:g.KeyColumns])
	}
	if err != nil {
		return err
	}
	vprops, err := p.valueProps()
	if err != nil {
		return err
	}
	// A sink keeps its source's delimiter, but wraps single values again
	// unless told otherwise, as ksqlDB does.
	if d, ok := src.ValueProps["VALUE_DELIMITER"]; ok && valueFormat == src.ValueFormat {
		if _, given := vprops["VALUE_DELIMITER"]; !given {
			if vprops == nil {
				vprops = map[string]string{}
			}
			vprops["VALUE_DELIMITER"] = d
		}
	}
	partitions, err := p.int("PARTITIONS", int64(src.Partitions))
	if err != nil {
		return err
	}
	replicas, err := p.int("REPLICAS", 0)
	if err != nil {
		return err
	}
	key := g.Output[:g.KeyColumns]
	value := g.Output[g.KeyColumns:]
	kprops, err := p.keyProps()
	if err != nil {
		return err
	}
	_, keyGiven := opts.SinkProps.Get("KEY_FORMAT")
	if _, ok := opts.SinkProps.Get("FORMAT"); ok {
		keyGiven = true
	}
	switch {
	case droppedKey && keyGiven:
		return errorf(opts.SinkPos, "Key format specified for stream without key columns. Remove KEY_FORMAT (or use VALUE_FORMAT instead of FORMAT).")
	case droppedKey:
		// PARTITION BY null: the stream has no key at all.
		keyFormat = format.None
	case len(key) > 0 && keyFormat == format.None:
		// A keyless source's result that has a key takes the default key
		// format (ksql.persistence.default.format.key).
		keyFormat = format.Kafka
		if opts.Defaults.KeyFormat != "" {
			keyFormat = opts.Defaults.KeyFormat
		}
	}
	if kprops == nil && keyFormat == src.KeyFormat {
		// The key delimiter carries over; the source's schema id and
		// name are the source topic's, not the sink's.
		if d, ok := src.KeyProps["KEY_DELIMITER"]; ok {
			kprops = map[string]string{"KEY_DELIMITER": d}
		}
	}
	kprops = withKeySchemaName(keyFormat, opts.Sink, kprops)
	if err := checkCodecs(opts.SinkPos, keyFormat, key, kprops, valueFormat, value, vprops); err != nil {
		return err
	}
	kind := opts.SinkKind
	if kind == "" {
		kind = catalog.Stream
	}
	sink := &catalog.Source{
		Name: opts.Sink, Kind: kind, Topic: topic, Partitions: int32(partitions),
		KeyFormat: keyFormat, ValueFormat: valueFormat, ValueProps: vprops, KeyProps: kprops,
		Key: append([]types.Column(nil), key...), Value: append([]types.Column(nil), value...),
	}
	g.Sink = &topology.Sink{
		Name: sink.Name, Topic: topic, Partitions: sink.Partitions,
		KeyFormat: keyFormat, ValueFormat: valueFormat, ValueProps: vprops, KeyProps: kprops,
	}
	// The sink's records take their time from this output column, and
	// queries reading the new stream use it as record time.
	if sink.Timestamp, sink.TimestampFormat, err = timestampColumn(p, g.Output); err != nil {
		return err
	}
	g.Sink.Timestamp, g.Sink.TimestampFormat = sink.Timestamp, sink.TimestampFormat
	plan.Sink = sink
	plan.Replicas = int16(replicas)
	return nil
}

// bindIn binds e, an expression of clause (SELECT, WHERE, PARTITION BY),
// with ksqlDB's wording for the errors it names by clause.
func bindIn(cat *catalog.Catalog, clause string, e ast.Expr, sc bind.Scope, qualifier string) (*expr.Expr, error) {
	var bad *ast.ColumnRef
	ast.Walk(e, func(x ast.Expr) bool {
		// A join's relation (no single qualifier) resolves qualifiers
		// itself.
		if c, ok := x.(*ast.ColumnRef); ok && bad == nil && qualifier != "" && c.Qualifier != "" && c.Qualifier != qualifier {
			bad = c
		}
		return true
	})
	if bad != nil {
		return nil, errorf(bad.Pos, "'%s' is not a valid stream/table name or alias; this query reads %s.", bad.Qualifier, qualifier)
	}
	out, err := bindClause(cat, clause, e, sc)
	if err == nil {
		return out, nil
	}
	var pe *Error
	if !errors.As(err, &pe) {
		return nil, err
	}
	switch {
	case strings.HasPrefix(pe.Msg, "column '"):
		msg := strings.Replace(pe.Msg, "; known columns:", ". Known columns:", 1)
		msg = strings.Replace(msg, "' cannot be resolved", "' cannot be resolved", 1)
		return nil, &Error{Pos: pe.Pos, Msg: clause + " " + msg}
	case clause == "WHERE" && whereError(pe, e) != nil:
		return nil, whereError(pe, e)
	case clause == "WHERE":
		return nil, &Error{Pos: pe.Pos, Msg: "Invalid Predicate: " + pe.Msg}
	case clause == "SELECT":
		return nil, &Error{Pos: pe.Pos, Msg: "Invalid Select: " + pe.Msg}
	}
	return nil, err
}

// reserved reports whether name is a pseudo-column name no output column
// may take.
func reserved(name string) bool {
	for _, r := range reservedColumns {
		if name == r {
			return true
		}
	}
	return false
}

// bindExpr resolves custom type names in e's CASTs against the catalog, then
// binds e in scope sc.
func bindExpr(cat *catalog.Catalog, e ast.Expr, sc bind.Scope) (*expr.Expr, error) {
	err := bind.ResolveTypes(e, cat.Type)
	var out *expr.Expr
	if err == nil {
		out, err = bind.Bind(e, sc)
	}
	if err != nil {
		var be *bind.Error
		if errors.As(err, &be) {
			return nil, &Error{Pos: be.Pos, Msg: be.Msg}
		}
		return nil, errorf(e.Position(), "%v", err)
	}
	return out, nil
}

// windowText names the windowing of keys in messages.
func windowText(w *topology.KeyWindow) string {
	if w == nil {
		return "unwindowed"
	}
	return w.String() + " windowed"
}

// statementText prints a CREATE ... AS SELECT as ksqlDB shows it in some
// messages: one select item a line, each column qualified by the source
// and each item followed by its output name (names, in select order).
func statementText(q *ast.Query, opts QueryOptions, names []string, source, qualifier string) string {
	var b strings.Builder
	kind := "STREAM"
	if opts.SinkKind == catalog.Table {
		kind = "TABLE"
	}
	b.WriteString("CREATE " + kind + " " + opts.Sink)
	if len(opts.SinkProps) > 0 {
		b.WriteString(" WITH (")
		for i, p := range opts.SinkProps {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Name + "=" + ast.FormatExpr(p.Value))
		}
		b.WriteString(")")
	}
	b.WriteString(" AS SELECT")
	for i, si := range q.Items {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		if si.Star || si.Expr == nil || len(names) != len(q.Items) {
			b.WriteString("*")
			continue
		}
		b.WriteString(exprText(si.Expr, qualifier) + " " + names[i])
	}
	b.WriteString("\nFROM " + source + " " + qualifier)
	if q.Where != nil {
		b.WriteString("\nWHERE " + exprText(q.Where, qualifier))
	}
	if len(q.GroupBy) > 0 {
		keys := make([]string, len(q.GroupBy))
		for i, ge := range q.GroupBy {
			keys[i] = exprText(ge, qualifier)
		}
		b.WriteString("\nGROUP BY " + strings.Join(keys, ", "))
	}
	if q.Having != nil {
		b.WriteString("\nHAVING " + exprText(q.Having, qualifier))
	}
	b.WriteString("\nEMIT CHANGES")
	return b.String()
}

// planInsertWindowed plans INSERT INTO target for a query whose output
// keys carry keyWindow (nil for unwindowed keys): the target must have the
// same windowing.
func planInsertWindowed(plan *QueryPlan, target *catalog.Source, keyWindow *topology.KeyWindow, pos ast.Pos) error {
	if err := planInsert(plan, target, pos); err != nil {
		return err
	}
	if (keyWindow == nil) != (target.Window == nil) || (keyWindow != nil && *keyWindow != *target.Window) {
		return errorf(pos, "Incompatible windowing between results and sink: the query writes %s keys, %s has %s keys. Insert into a stream with the same WINDOW_TYPE and WINDOW_SIZE.", windowText(keyWindow), target.Name, windowText(target.Window))
	}
	plan.Graph.Sink.Window = keyWindow
	return nil
}
