package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// ksqlDB's settings of pull queries that PullOptions honour. Each is true
// by default.
const (
	PullTableScanProperty = "ksql.query.pull.table.scan.enabled"
	PullRangeScanProperty = "ksql.query.pull.range.scan.enabled"
	PullLimitProperty     = "ksql.query.pull.limit.clause.enabled"
	PullStreamProperty    = "ksql.query.pull.stream.enabled"
)

// maxDisjuncts bounds the OR-ed conditions a WHERE clause becomes once its
// ANDs are distributed over its ORs, which a few ANDs of ORs multiply.
const maxDisjuncts = 1 << 16

// streamsDisabled refuses a pull query on a stream, as ksqlDB does with
// ksql.query.pull.stream.enabled=false.
func streamsDisabled(pos ast.Pos) *Error {
	return &Error{Pos: pos, Msg: "Pull queries on streams are disabled. To create a push query on the stream, add EMIT CHANGES to the end. To enable pull queries on streams, set the " + PullStreamProperty + " config to 'true'."}
}

// whereErr refuses a pull query's WHERE clause with ksqlDB's message and
// the help that follows it there: what a WHERE clause must say while
// table scans are disabled.
func whereErr(pos ast.Pos, msg string, windowed bool) *Error {
	var b strings.Builder
	b.WriteString(msg + ". " + pullHelp)
	b.WriteString("\nPull queries require a WHERE clause that:")
	b.WriteString("\n - includes a key equality expression, e.g. `SELECT * FROM X WHERE <key-column> = Y;`.")
	b.WriteString("\n - in the case of a multi-column key, is a conjunction of equality expressions that cover all key columns.")
	b.WriteString("\n - to support range expressions, e.g. `SELECT * FROM X WHERE <key-column> < Y;`, range scans need to be enabled by setting " + PullRangeScanProperty + "=true")
	if windowed {
		b.WriteString("\n - (optionally) limits the time bounds of the windowed table.")
		b.WriteString("\n\t Bounds on [`WINDOWSTART`, `WINDOWEND`] are supported")
		b.WriteString("\n\t Supported operators are [EQUAL, GREATER_THAN, GREATER_THAN_OR_EQUAL, LESS_THAN, LESS_THAN_OR_EQUAL]")
	}
	b.WriteString("\nIf more flexible queries are needed, table scans can be enabled by setting " + PullTableScanProperty + "=true.")
	return &Error{Pos: pos, Msg: b.String()}
}

// access is how a pull query reads a table, as ksqlDB plans it.
type access uint8

const (
	keyLookup access = iota // every OR-ed condition pins every key column
	rangeScan               // one condition bounds the one STRING or BYTES key
	tableScan
)

// checkTableAccess refuses, while table scans are disabled, a pull query
// on the table src that ksqlDB would have to answer with a table scan,
// with ksqlDB's messages. ksqlDB rewrites the WHERE clause as ORs of ANDs
// (IN as ORs of =, BETWEEN as >= AND <=, NOT pushed down to the
// comparisons) and checks each OR-ed condition: every comparison must
// pair a column with an expression of no column; a key column may only be
// compared once, and not with <> or IS [NOT] DISTINCT FROM; the condition
// must compare every key column. The query is then a key lookup when every
// condition pins the key with =, a range scan when there is one condition
// and it bounds the one key column, of type STRING or BYTES (with range
// scans enabled, on a table that is not windowed), else a table scan.
func checkTableAccess(q *ast.Query, src *catalog.Source, opts PullOptions) error {
	if !opts.TableScansDisabled {
		return nil
	}
	windowed := src.Window != nil
	if q.Where == nil {
		return whereErr(q.Pos, "Missing WHERE clause", windowed)
	}
	pos := q.Where.Position()
	ds, ok := disjuncts(q.Where, false, new(int))
	if !ok {
		return errorf(pos, "Query requires table scan to be enabled. Table scans can be enabled by setting %s=true\nThe WHERE clause has more than %d OR-ed conditions once its ANDs are distributed over its ORs: too many to check that they name keys; simplify it, or list the keys with IN.", PullTableScanProperty, maxDisjuncts)
	}
	kinds := make([]access, 0, len(ds))
	for _, d := range ds {
		k, err := checkDisjunct(d, src, pos, windowed)
		if err != nil {
			return err
		}
		kinds = append(kinds, k)
	}
	how, why := tableScan, ""
	switch {
	case allKind(kinds, keyLookup):
		how = keyLookup
	case len(kinds) == 1 && kinds[0] == rangeScan:
		how = rangeScan
	case len(kinds) > 1 && !allKind(kinds, tableScan):
		why = "A range of keys is read by a table scan unless it is the whole WHERE clause: each OR-ed condition must pin the key with = or IN."
	case len(src.Key) > 1:
		why = "Every column of the table's key must be compared with = or IN: a range on a multi-column key is read by a table scan."
	default:
		why = fmt.Sprintf("A range of keys is read by a range scan only on a STRING or BYTES key; %s is %s.", src.Key[0].Name, src.Key[0].Type)
	}
	if how == rangeScan {
		switch {
		case windowed:
			how, why = tableScan, "A range of keys of a windowed table is read by a table scan."
		case opts.RangeScansDisabled:
			how, why = tableScan, "Range scans are disabled: "+PullRangeScanProperty+" is false."
		}
	}
	if how != tableScan {
		return nil
	}
	msg := "Query requires table scan to be enabled. Table scans can be enabled by setting " + PullTableScanProperty + "=true"
	if why != "" {
		msg += "\n" + why
	}
	return &Error{Pos: pos, Msg: msg}
}

func allKind(kinds []access, k access) bool {
	for _, x := range kinds {
		if x != k {
			return false
		}
	}
	return true
}

// disjunct is one of the OR-ed conditions of a WHERE clause in ksqlDB's
// rewriting: Expr, an AND of Atoms, as ksqlDB prints it in its messages.
type disjunct struct {
	Expr  ast.Expr
	Atoms []ast.Expr
}

// disjuncts rewrites e (negated when neg) as ORs of ANDs, as ksqlDB's
// pull query planner does: IN becomes ORs of =, BETWEEN an AND of >= and
// <=, NOT moves down to the comparisons through De Morgan's laws, and
// ANDs distribute over ORs, in order. n counts the disjuncts made so far;
// ok is false once there are more than maxDisjuncts.
func disjuncts(e ast.Expr, neg bool, n *int) (out []disjunct, ok bool) {
	switch x := e.(type) {
	case *ast.Unary:
		if x.Op == ast.OpNot {
			return disjuncts(x.X, !neg, n)
		}
	case *ast.Binary:
		if x.Op == ast.OpAnd || x.Op == ast.OpOr {
			return combine(x.Op, []ast.Expr{x.L, x.R}, neg, n)
		}
	case *ast.Nary:
		if x.Op == ast.OpAnd || x.Op == ast.OpOr {
			return combine(x.Op, x.Args, neg, n)
		}
	case *ast.In:
		if x.Not {
			return disjuncts(&ast.In{Pos: x.Pos, X: x.X, List: x.List}, !neg, n)
		}
		eqs := make([]ast.Expr, len(x.List))
		for i, v := range x.List {
			eqs[i] = &ast.Binary{Pos: x.Pos, Op: ast.OpEq, L: x.X, R: v}
		}
		if len(eqs) == 1 {
			return disjuncts(eqs[0], neg, n)
		}
		return combine(ast.OpOr, eqs, neg, n)
	case *ast.Between:
		if x.Not {
			return disjuncts(&ast.Between{Pos: x.Pos, X: x.X, Lo: x.Lo, Hi: x.Hi}, !neg, n)
		}
		return combine(ast.OpAnd, []ast.Expr{
			&ast.Binary{Pos: x.Pos, Op: ast.OpGe, L: x.X, R: x.Lo},
			&ast.Binary{Pos: x.Pos, Op: ast.OpLe, L: x.X, R: x.Hi},
		}, neg, n)
	case *ast.Like:
		if x.Not {
			return disjuncts(&ast.Like{Pos: x.Pos, X: x.X, Pattern: x.Pattern, Escape: x.Escape}, !neg, n)
		}
	}
	if neg {
		e = &ast.Unary{Pos: e.Position(), Op: ast.OpNot, X: e}
	}
	*n++
	return []disjunct{{Expr: e, Atoms: []ast.Expr{e}}}, *n <= maxDisjuncts
}

// combine rewrites args joined by op (AND or OR; the other when neg) as
// ORs of ANDs, left to right as ksqlDB nests a chain.
func combine(op ast.BinaryOp, args []ast.Expr, neg bool, n *int) ([]disjunct, bool) {
	if neg {
		op = map[ast.BinaryOp]ast.BinaryOp{ast.OpAnd: ast.OpOr, ast.OpOr: ast.OpAnd}[op]
	}
	acc, ok := disjuncts(args[0], neg, n)
	if !ok {
		return nil, false
	}
	for _, a := range args[1:] {
		next, ok := disjuncts(a, neg, n)
		if !ok {
			return nil, false
		}
		if op == ast.OpOr {
			acc = append(acc, next...)
			continue
		}
		// (a OR b) AND (c OR d) is (a AND c) OR (a AND d) OR (b AND c) OR
		// (b AND d).
		*n += len(acc)*len(next) - len(acc) - len(next)
		if len(acc)*len(next) > maxDisjuncts || *n > maxDisjuncts {
			return nil, false
		}
		out := make([]disjunct, 0, len(acc)*len(next))
		for _, l := range acc {
			for _, r := range next {
				atoms := make([]ast.Expr, 0, len(l.Atoms)+len(r.Atoms))
				atoms = append(append(atoms, l.Atoms...), r.Atoms...)
				out = append(out, disjunct{Expr: &ast.Binary{Pos: l.Expr.Position(), Op: ast.OpAnd, L: l.Expr, R: r.Expr}, Atoms: atoms})
			}
		}
		acc = out
	}
	return acc, true
}

// comparisonNames are ksqlDB's names of the comparisons, as its messages
// give them.
var comparisonNames = map[ast.BinaryOp]string{
	ast.OpEq: "EQUAL", ast.OpNe: "NOT_EQUAL", ast.OpLt: "LESS_THAN", ast.OpLe: "LESS_THAN_OR_EQUAL",
	ast.OpGt: "GREATER_THAN", ast.OpGe: "GREATER_THAN_OR_EQUAL",
}

// checkDisjunct checks one OR-ed condition d of a pull query's WHERE
// clause (at pos) on the table src, as ksqlDB does with table scans
// disabled, and says how it reads the table.
func checkDisjunct(d disjunct, src *catalog.Source, pos ast.Pos, windowed bool) (access, error) {
	seen := make([]bool, len(src.Key))
	ops := make([]string, len(src.Key))
	keyed := false
	for _, a := range d.Atoms {
		var l, r ast.Expr
		var op string
		switch x := a.(type) {
		case *ast.Binary:
			op = comparisonNames[x.Op]
			l, r = x.L, x.R
		case *ast.IsDistinct:
			op = "IS_DISTINCT_FROM"
			if x.Not {
				op = "IS_NOT_DISTINCT_FROM"
			}
			l, r = x.L, x.R
		case *ast.Like:
			if err := checkLike(x, src, pos, windowed); err != nil {
				return tableScan, err
			}
			continue
		}
		if op == "" {
			return tableScan, whereErr(pos, "Unsupported expression in WHERE clause: "+ast.FormatExpr(a), false)
		}
		// ksqlDB takes the column on the right of a comparison when both
		// sides are columns.
		col, other := columnRef(r), l
		if col == nil {
			col, other = columnRef(l), r
		}
		if col == nil {
			return tableScan, whereErr(pos, "A comparison must directly reference a key column", windowed)
		}
		if readsColumn(other) {
			return tableScan, whereErr(pos, "A comparison must be between a key column and a resolvable expression", windowed)
		}
		if col.Name == topology.WindowStart || col.Name == topology.WindowEnd {
			if op == "NOT_EQUAL" || strings.HasPrefix(op, "IS_") {
				return tableScan, whereErr(pos, "Unsupported "+col.Name+" bounds: "+op, true)
			}
			if !windowed {
				return tableScan, whereErr(pos, "Cannot use WINDOWSTART/WINDOWEND on non-windowed source", false)
			}
			continue
		}
		k := keyIndex(src, col.Name)
		if k < 0 {
			continue
		}
		if op == "NOT_EQUAL" || strings.HasPrefix(op, "IS_") {
			return tableScan, whereErr(pos, "Bound on key columns '"+keyColumnsText(src)+"' must currently be '='", windowed)
		}
		if seen[k] {
			return tableScan, whereErr(pos, "A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate", windowed)
		}
		seen[k], ops[k], keyed = true, op, true
	}
	if !keyed {
		return tableScan, whereErr(pos, "WHERE clause missing key column for disjunct: "+ast.FormatExpr(d.Expr), windowed)
	}
	var named []string
	for i, s := range seen {
		if s {
			named = append(named, "`"+src.Key[i].Name+"`")
		}
	}
	if len(named) != len(src.Key) {
		return tableScan, whereErr(pos, fmt.Sprintf("Multi-column sources must specify every key in the WHERE clause. Specified: [%s] Expected: %s", strings.Join(named, ", "), keyColumnsText(src)), windowed)
	}
	equal := true
	for _, op := range ops {
		equal = equal && op == "EQUAL"
	}
	switch {
	case equal:
		return keyLookup, nil
	case len(src.Key) == 1 && (src.Key[0].Type.Kind == types.String || src.Key[0].Type.Kind == types.Bytes):
		return rangeScan, nil
	}
	return tableScan, nil
}

// checkLike checks a LIKE of a pull query's WHERE clause as ksqlDB does:
// it compares a STRING column with a string, and names no key.
func checkLike(x *ast.Like, src *catalog.Source, pos ast.Pos, windowed bool) error {
	col := columnRef(x.X)
	if col == nil {
		return whereErr(pos, "Like condition must be between strings", windowed)
	}
	for _, c := range append(append([]types.Column(nil), src.Key...), src.Value...) {
		if c.Name == col.Name && c.Type.Kind != types.String {
			return whereErr(pos, "The column type for Like condition must be VARCHAR. The column type is "+c.Type.Kind.String(), windowed)
		}
	}
	if lit, ok := x.Pattern.(*ast.Literal); !ok || lit.Kind != ast.StringLit && lit.Kind != ast.NullLit {
		return whereErr(pos, "Like condition on non-string pattern "+ast.FormatExpr(x.Pattern), windowed)
	}
	return nil
}

// columnRef is e when it is a column name.
func columnRef(e ast.Expr) *ast.ColumnRef {
	c, _ := e.(*ast.ColumnRef)
	return c
}

// readsColumn reports whether e reads a column (a lambda's parameters are
// not columns).
func readsColumn(e ast.Expr) bool {
	params := map[string]bool{}
	ast.Walk(e, func(n ast.Expr) bool {
		if l, ok := n.(*ast.Lambda); ok {
			for _, p := range l.Params {
				params[p] = true
			}
		}
		return true
	})
	found := false
	ast.Walk(e, func(n ast.Expr) bool {
		if c, ok := n.(*ast.ColumnRef); ok && (c.Qualifier != "" || !params[c.Name]) {
			found = true
		}
		return !found
	})
	return found
}

func keyIndex(src *catalog.Source, name string) int {
	for i, c := range src.Key {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// keyColumnsText lists the key columns of src as ksqlDB's messages do:
// [`ID` STRING KEY, `N` INTEGER KEY].
func keyColumnsText(src *catalog.Source) string {
	cols := make([]string, len(src.Key))
	for i, c := range src.Key {
		cols[i] = "`" + c.Name + "` " + c.Type.String() + " KEY"
	}
	return "[" + strings.Join(cols, ", ") + "]"
}
