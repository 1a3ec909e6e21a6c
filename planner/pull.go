package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// pullHelp ends every message refusing a pull query, as ksqlDB's do.
const pullHelp = " See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."

// PullOptions say how to plan a pull query.
type PullOptions struct {
	// Materialized reports whether the persistent query g keeps the rows
	// of the table it writes in state a pull query can read. A table
	// written by no such query cannot be pull-queried.
	Materialized func(g *topology.Graph) bool
	// RowTime reports whether the state of such a query keeps the time
	// of each row, which ROWTIME reads.
	RowTime func(g *topology.Graph) bool
	// Ctx, when set, stops planning with its cause once it ends (the
	// statement's client went away or its deadline passed).
	Ctx context.Context
	// TableScansDisabled is ksqlDB's ksql.query.pull.table.scan.enabled
	// set to false: a pull query on a table must then name its keys, with
	// = or IN on every key column of each OR-ed condition, or bound its
	// one STRING or BYTES key column with a range (see RangeScansDisabled);
	// any other is refused with ksqlDB's messages (pull_settings.go).
	TableScansDisabled bool
	// RangeScansDisabled is ksql.query.pull.range.scan.enabled set to
	// false: a range on the key reads the whole table, so that with table
	// scans disabled it is refused.
	RangeScansDisabled bool
	// LimitDisabled is ksql.query.pull.limit.clause.enabled set to false:
	// a pull query with LIMIT is refused, on streams and tables.
	LimitDisabled bool
	// StreamsDisabled is ksql.query.pull.stream.enabled set to false: a
	// pull query on a stream is refused.
	StreamsDisabled bool
}

// PullPlan is a planned pull query (a SELECT without EMIT CHANGES).
type PullPlan struct {
	// Source is the stream or table queried.
	Source *catalog.Source
	// Query is the persistent query whose state holds the table's rows;
	// nil for a pull query on a stream.
	Query *catalog.Query
	// Graph is what runs. On a stream it reads the topic from its start
	// (up to the end offsets the query finds when it starts) through the
	// pull query's filter and projection. On a table, Graph.Source
	// describes the table's rows as the state reader produces them (the
	// pseudo-columns, then the table's key and value columns) and Steps
	// are the pull query's own filter and projection over them.
	Graph *topology.Graph
	// Lookup narrows the keys a pull query on a table reads; Graph's
	// filter still checks every row read.
	Lookup Lookup
	// Pos is where the query names its source.
	Pos ast.Pos
}

// Lookup is what the WHERE clause of a pull query on a table says about
// its key and window bounds. It only narrows what is read: the full WHERE
// is evaluated on every row anyway.
type Lookup struct {
	// Keys, when not nil, are the only keys that can match: one value per
	// key column, in the table's key order, already of the key columns'
	// types. Empty and not nil means no key can match.
	Keys [][]any
	// Range bounds the key when the table has one key column and Keys is
	// nil.
	Range *Range
	// WindowStart and WindowEnd bound the window bounds of a windowed
	// table.
	WindowStart, WindowEnd *Range
}

// Range is an interval of values of one column; a nil bound is unbounded.
type Range struct {
	Lo, Hi         any
	LoIncl, HiIncl bool
}

// Contains reports whether v is in the range. A null v never is.
func (r *Range) Contains(v any) bool {
	if r == nil {
		return true
	}
	if v == nil {
		return false
	}
	if r.Lo != nil {
		c, err := types.Compare(v, r.Lo)
		if err != nil || c < 0 || (c == 0 && !r.LoIncl) {
			return false
		}
	}
	if r.Hi != nil {
		c, err := types.Compare(v, r.Hi)
		if err != nil || c > 0 || (c == 0 && !r.HiIncl) {
			return false
		}
	}
	return true
}

// String renders the range for plans and tests: [1, 10), (-inf, 5].
func (r *Range) String() string {
	lo, hi := "(-inf", "+inf)"
	if r.Lo != nil {
		lo = fmt.Sprintf("(%v", r.Lo)
		if r.LoIncl {
			lo = fmt.Sprintf("[%v", r.Lo)
		}
	}
	if r.Hi != nil {
		hi = fmt.Sprintf("%v)", r.Hi)
		if r.HiIncl {
			hi = fmt.Sprintf("%v]", r.Hi)
		}
	}
	return lo + ", " + hi
}

// String renders the lookup for plans and tests.
func (l Lookup) String() string {
	var parts []string
	switch {
	case l.Keys != nil && len(l.Keys) == 0:
		parts = append(parts, "no key can match")
	case l.Keys != nil:
		keys := make([]string, len(l.Keys))
		for i, k := range l.Keys {
			vals := make([]string, len(k))
			for j, v := range k {
				vals[j] = fmt.Sprintf("%v", v)
			}
			keys[i] = "(" + strings.Join(vals, ", ") + ")"
		}
		parts = append(parts, "keys "+strings.Join(keys, " "))
	case l.Range != nil:
		parts = append(parts, "key range "+l.Range.String())
	default:
		parts = append(parts, "table scan")
	}
	if l.WindowStart != nil {
		parts = append(parts, "WINDOWSTART "+l.WindowStart.String())
	}
	if l.WindowEnd != nil {
		parts = append(parts, "WINDOWEND "+l.WindowEnd.String())
	}
	return strings.Join(parts, "; ")
}

// pullErr refuses a pull query with ksqlDB's words and its help line.
func pullErr(pos ast.Pos, msg string) *Error {
	return &Error{Pos: pos, Msg: msg + pullHelp}
}

// PlanPull plans a pull query: a SELECT without EMIT CHANGES, which reads
// a table's current state, or a stream from its start to its current end,
// and ends.
func PlanPull(cat *catalog.Catalog, q *ast.Query, opts PullOptions) (*PullPlan, error) {
	if err := cancelled(opts.Ctx); err != nil {
		return nil, err
	}
	ref, ok := q.From.(*ast.TableRef)
	switch {
	case !ok:
		return nil, pullErr(q.From.Position(), "Pull queries don't support JOIN clauses.")
	case q.Window != nil:
		return nil, pullErr(q.Window.Pos, "Pull queries don't support WINDOW clauses.")
	case len(q.GroupBy) > 0:
		return nil, pullErr(q.GroupBy[0].Position(), "Pull queries don't support GROUP BY clauses.")
	case len(q.PartitionBy) > 0:
		return nil, pullErr(q.PartitionBy[0].Position(), "Pull queries don't support PARTITION BY clauses.")
	case q.Having != nil:
		return nil, pullErr(q.Having.Position(), "Pull queries don't support HAVING clauses.")
	case q.Limit != nil && opts.LimitDisabled:
		return nil, pullErr(q.Pos, "LIMIT clause in pull queries is currently disabled. You can enable them by setting "+PullLimitProperty+"=true.")
	case q.Limit != nil && *q.Limit < 0:
		return nil, pullErr(q.Pos, "Pull queries don't support negative integers in the LIMIT clause.")
	case q.Emit != ast.EmitNone:
		return nil, pullErr(q.Pos, "Pull queries don't support EMIT clauses.")
	}
	if calls := aggregateCalls(q.Items, nil); len(calls) > 0 {
		return nil, pullErr(calls[0].Pos, fmt.Sprintf("Pull queries don't support aggregate functions: %s. Aggregate in a CREATE TABLE AS SELECT ... GROUP BY and pull-query its table.", ast.FormatExpr(calls[0])))
	}
	var items []ast.Expr
	for _, si := range q.Items {
		if si.Expr != nil {
			items = append(items, si.Expr)
		}
	}
	if err := disallowedColumns("SELECT", items...); err != nil {
		return nil, err
	}
	if q.Where != nil {
		if err := disallowedColumns("WHERE", q.Where); err != nil {
			return nil, err
		}
	}
	src, ok := cat.Source(ref.Name)
	if !ok {
		return nil, errorf(ref.Pos, "%s does not exist.\nSHOW STREAMS and SHOW TABLES list the sources you can query.", ref.Name)
	}
	plan := &PullPlan{Source: src, Pos: ref.Pos}
	if src.Kind == catalog.Stream {
		// A stream pull query is a push query that starts at the beginning
		// and stops at the end offsets found when it starts.
		qp, err := PlanSelect(cat, q, QueryOptions{OffsetReset: "earliest", Ctx: opts.Ctx})
		if err != nil {
			return nil, err
		}
		if opts.StreamsDisabled {
			return nil, streamsDisabled(ref.Pos)
		}
		plan.Graph = qp.Graph
		return plan, nil
	}
	for _, id := range cat.Writers(src.Name) {
		if wq, ok := cat.Query(id); ok && opts.Materialized != nil && opts.Materialized(wq.Plan) {
			plan.Query = wq
			break
		}
	}
	qualifier := src.Name
	if ref.Alias != "" {
		qualifier = ref.Alias
	}
	if plan.Query == nil {
		// ksqlDB analyses the query (its columns, its expressions' types)
		// before it finds the table cannot be read: those errors come
		// first.
		if _, err := PlanSelect(cat, expandStar(q, src, qualifier), QueryOptions{OffsetReset: "earliest", Ctx: opts.Ctx}); err != nil {
			return nil, err
		}
		return nil, pullErr(ref.Pos, fmt.Sprintf("The `%s` table isn't queryable. To derive a queryable table, you can do 'CREATE TABLE QUERYABLE_%s AS SELECT * FROM %s'.", src.Name, src.Name, src.Name))
	}
	if opts.RowTime == nil || !opts.RowTime(plan.Query.Plan) {
		if err := rowtimeUnknown(q, src.Name); err != nil {
			return nil, err
		}
	}
	qp, err := PlanSelect(cat, expandStar(q, src, qualifier), QueryOptions{OffsetReset: "earliest", Ctx: opts.Ctx})
	if err != nil {
		return nil, err
	}
	if err := checkTableAccess(q, src, opts); err != nil {
		return nil, err
	}
	if err := checkKeyValues(cat, q, src); err != nil {
		return nil, err
	}
	g := qp.Graph
	for i := range g.Steps {
		// The rows read are the table's current rows, not changes: a row
		// the filter rejects is simply left out.
		g.Steps[i].Retract = false
	}
	plan.Graph = g
	if q.Where != nil {
		// PlanSelect bound the same WHERE over the same scope: its first
		// filter is that one.
		for _, st := range g.Steps {
			if st.Kind == topology.Filter {
				plan.Lookup = analyzeWhere(st.Predicate, src)
				if opts.RangeScansDisabled {
					// Without range scans, a range of keys is read as
					// ksqlDB reads it then: by a table scan.
					plan.Lookup.Range = nil
				}
				break
			}
		}
	}
	return plan, nil
}

// expandStar returns q with each * (or qualifier.*) replaced by the
// columns a pull query on the table src shows for it, in ksqlDB's order:
// the key columns, the window bounds of a windowed table, then the value
// columns.
func expandStar(q *ast.Query, src *catalog.Source, qualifier string) *ast.Query {
	isStar := func(si ast.SelectItem) bool {
		return si.Star && (si.StarSource == "" || si.StarSource == qualifier)
	}
	star := false
	for _, si := range q.Items {
		star = star || isStar(si)
	}
	if !star {
		return q
	}
	cols := append([]types.Column(nil), src.Key...)
	if src.Window != nil {
		cols = append(cols, topology.WindowColumns()...)
	}
	cols = append(cols, src.Value...)
	out := *q
	out.Items = nil
	for _, si := range q.Items {
		if !isStar(si) {
			out.Items = append(out.Items, si)
			continue
		}
		for _, c := range cols {
			out.Items = append(out.Items, ast.SelectItem{Pos: si.Pos, Expr: &ast.ColumnRef{Pos: si.Pos, Name: c.Name}})
		}
	}
	return &out
}

// disallowedColumns refuses ROWPARTITION and ROWOFFSET in a pull query's
// clause, as ksqlDB does.
func disallowedColumns(clause string, es ...ast.Expr) error {
	var names []string
	var pos ast.Pos
	for _, e := range es {
		ast.Walk(e, func(n ast.Expr) bool {
			if c, ok := n.(*ast.ColumnRef); ok && (c.Name == topology.RowPartition || c.Name == topology.RowOffset) {
				if len(names) == 0 {
					pos = c.Pos
				}
				names = append(names, "`"+c.Name+"`")
			}
			return true
		})
	}
	if len(names) == 0 {
		return nil
	}
	return pullErr(pos, fmt.Sprintf("Pull queries don't support the following columns in %s clauses: %s\n", clause, strings.Join(names, ", ")))
}

// rowtimeUnknown refuses ROWTIME in a pull query on a table whose state
// does not keep the time of its rows.
func rowtimeUnknown(q *ast.Query, table string) error {
	var bad *ast.ColumnRef
	visit := func(e ast.Expr) {
		ast.Walk(e, func(n ast.Expr) bool {
			if c, ok := n.(*ast.ColumnRef); ok && c.Name == topology.RowTime && bad == nil {
				bad = c
			}
			return bad == nil
		})
	}
	for _, si := range q.Items {
		if si.Expr != nil {
			visit(si.Expr)
		}
	}
	if q.Where != nil {
		visit(q.Where)
	}
	if bad != nil {
		return errorf(bad.Pos, "ROWTIME is not available in pull queries on %s: its state does not keep the time of its rows. Remove ROWTIME, or read the table's changes with EMIT CHANGES.", table)
	}
	return nil
}

// analyzeWhere finds, among the AND-ed conditions of a bound WHERE over a
// table's rows, those that pin or bound the key and the window bounds.
// Anything it does not understand is left to the filter.
func analyzeWhere(pred *expr.Expr, src *catalog.Source) Lookup {
	keyIdx := map[int]int{} // row index -> key column number
	for i := range src.Key {
		keyIdx[topology.PseudoColumns+i] = i
	}
	var l Lookup
	sets := make([][]any, len(src.Key))
	pinned := make([]bool, len(src.Key))
	empty := false
	var keyRange *Range
	for _, c := range conjuncts(pred) {
		col, vals, rng, ok := condition(c)
		if !ok {
			continue
		}
		if k, isKey := keyIdx[col.Col]; isKey && col.Name == src.Key[k].Name {
			t := src.Key[k].Type
			if vals != nil {
				if pinned[k] {
					// A second equality on the same key: the filter
					// decides; the first one narrows enough.
					continue
				}
				if !col.Type.Equal(t) {
					continue
				}
				pinned[k], sets[k] = true, vals
				if len(vals) == 0 {
					empty = true
				}
				continue
			}
			if len(src.Key) == 1 {
				keyRange = intersect(keyRange, rng, nil)
			}
			continue
		}
		switch col.Name {
		case topology.WindowStart:
			l.WindowStart = intersect(l.WindowStart, rng, vals)
		case topology.WindowEnd:
			l.WindowEnd = intersect(l.WindowEnd, rng, vals)
		}
	}
	all := len(src.Key) > 0
	for _, p := range pinned {
		all = all && p
	}
	switch {
	case empty:
		l.Keys = [][]any{}
	case all:
		l.Keys = distinctKeys(product(sets))
	default:
		l.Range = keyRange
	}
	return l
}

// conjuncts splits e at its top-level ANDs.
func conjuncts(e *expr.Expr) []*expr.Expr {
	if e.Op != expr.OpAnd {
		return []*expr.Expr{e}
	}
	var out []*expr.Expr
	for _, a := range e.Args {
		out = append(out, conjuncts(a)...)
	}
	return out
}

// condition reads one condition of the forms col = c, col IN (c, ...),
// col <op> c (either side), col BETWEEN c AND c, where each c is
// constant. It returns the column and either the values it may equal
// (an empty, non-nil list when none) or the range it must fall in.
func condition(e *expr.Expr) (col *expr.Expr, vals []any, rng *Range, ok bool) {
	switch e.Op {
	case expr.OpEq, expr.OpLt, expr.OpLe, expr.OpGt, expr.OpGe:
		op := e.Op
		l, r := e.Args[0], e.Args[1]
		if l.Op != expr.OpColumn {
			l, r = r, l
			op = flip(op)
		}
		if l.Op != expr.OpColumn {
			return nil, nil, nil, false
		}
		v, ok := constant(r, l.Type)
		if !ok {
			return nil, nil, nil, false
		}
		if v == nil {
			// A comparison with NULL is never true.
			return l, []any{}, nil, true
		}
		switch op {
		case expr.OpEq:
			return l, []any{v}, nil, true
		case expr.OpLt:
			return l, nil, &Range{Hi: v}, true
		case expr.OpLe:
			return l, nil, &Range{Hi: v, HiIncl: true}, true
		case expr.OpGt:
			return l, nil, &Range{Lo: v}, true
		default:
			return l, nil, &Range{Lo: v, LoIncl: true}, true
		}
	case expr.OpIn:
		if e.Args[0].Op != expr.OpColumn {
			return nil, nil, nil, false
		}
		vals := []any{}
		for _, a := range e.Args[1:] {
			v, ok := constant(a, e.Args[0].Type)
			if !ok {
				return nil, nil, nil, false
			}
			if v != nil {
				vals = append(vals, v)
			}
		}
		return e.Args[0], vals, nil, true
	case expr.OpOr:
		// c = x OR c = y OR c IN (...): the values of one column, as IN.
		var col *expr.Expr
		vals := []any{}
		for _, a := range e.Args {
			c, vs, _, ok := condition(a)
			if !ok || vs == nil || col != nil && (c.Col != col.Col || c.Name != col.Name) {
				return nil, nil, nil, false
			}
			col = c
			vals = append(vals, vs...)
		}
		return col, vals, nil, col != nil
	case expr.OpBetween:
		if e.Args[0].Op != expr.OpColumn {
			return nil, nil, nil, false
		}
		lo, ok1 := constant(e.Args[1], e.Args[0].Type)
		hi, ok2 := constant(e.Args[2], e.Args[0].Type)
		if !ok1 || !ok2 {
			return nil, nil, nil, false
		}
		if lo == nil || hi == nil {
			return e.Args[0], []any{}, nil, true
		}
		return e.Args[0], nil, &Range{Lo: lo, Hi: hi, LoIncl: true, HiIncl: true}, true
	}
	return nil, nil, nil, false
}

func flip(op expr.Op) expr.Op {
	switch op {
	case expr.OpLt:
		return expr.OpGt
	case expr.OpLe:
		return expr.OpGe
	case expr.OpGt:
		return expr.OpLt
	case expr.OpGe:
		return expr.OpLe
	}
	return op
}

// constant evaluates an expression that reads no column and converts
// its value to t, the type of the column it is compared with; ok is false
// when it cannot or the conversion is not exact (the comparison then
// happens in a wider type, and the filter decides).
func constant(e *expr.Expr, t *types.Type) (any, bool) {
	if len(expr.Columns(e)) > 0 {
		return nil, false
	}
	ev, err := eval.Compile(e)
	if err != nil {
		return nil, false
	}
	v, err := ev.Eval(nil)
	if err != nil || v == nil || e.Type == nil || e.Type.Equal(t) {
		return v, err == nil
	}
	if !e.Type.IsNumeric() || !t.IsNumeric() {
		return nil, false
	}
	cast, err := eval.Compile(&expr.Expr{Op: expr.OpCast, Type: t, Args: []*expr.Expr{expr.Literal(v, e.Type)}})
	if err != nil {
		return nil, false
	}
	c, err := cast.Eval(nil)
	if err != nil || c == nil {
		return nil, false
	}
	if cmp, err := types.Compare(c, v); err != nil || cmp != 0 {
		return nil, false
	}
	return c, true
}

// intersect narrows a window bound range by one more condition.
func intersect(cur, rng *Range, vals []any) *Range {
	if vals != nil {
		if len(vals) != 1 {
			// IN over window bounds, or an impossible one: the filter
			// decides.
			return cur
		}
		rng = &Range{Lo: vals[0], Hi: vals[0], LoIncl: true, HiIncl: true}
	}
	if cur == nil {
		return rng
	}
	out := *cur
	if rng.Lo != nil {
		if c, err := types.Compare(rng.Lo, out.Lo); out.Lo == nil || (err == nil && (c > 0 || (c == 0 && !rng.LoIncl))) {
			out.Lo, out.LoIncl = rng.Lo, rng.LoIncl
		}
	}
	if rng.Hi != nil {
		if c, err := types.Compare(rng.Hi, out.Hi); out.Hi == nil || (err == nil && (c < 0 || (c == 0 && !rng.HiIncl))) {
			out.Hi, out.HiIncl = rng.Hi, rng.HiIncl
		}
	}
	return &out
}

// distinctKeys drops the keys keys lists more than once (IN (1, 1), or
// ORs naming a key twice), keeping the first of each: a key read twice
// would give its row twice.
func distinctKeys(keys [][]any) [][]any {
	if len(keys) < 2 {
		return keys
	}
	seen := make(map[string]bool, len(keys))
	out := keys[:0:0]
	var b strings.Builder
	for _, k := range keys {
		b.Reset()
		for _, v := range k {
			if s, ok := v.(string); ok {
				fmt.Fprintf(&b, "%q,", s)
			} else {
				fmt.Fprintf(&b, "%T %v,", v, v)
			}
		}
		id := b.String()
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, k)
	}
	return out
}

// product lists every combination of one value from each set.
func product(sets [][]any) [][]any {
	out := [][]any{{}}
	for _, set := range sets {
		next := make([][]any, 0, len(out)*len(set))
		for _, prefix := range out {
			for _, v := range set {
				next = append(next, append(append([]any(nil), prefix...), v))
			}
		}
		out = next
	}
	return out
}
