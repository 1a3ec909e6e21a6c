package parser

import (
	"math"
	"strconv"
	"time"

	"github.com/sluice-sql/sluice/parser/ast"
)

// clause is one top-level clause of a query: its keyword tokens and body.
type clause struct {
	kw   []token // FROM | WINDOW | WHERE | GROUP BY | HAVING | PARTITION BY | EMIT | LIMIT
	body []token
}

// query parses SELECT ... from the cursor to the end of the statement.
func (c *cursor) query() (*ast.Query, error) {
	toks := c.toks[c.i : len(c.toks)-1]
	endOff := c.toks[len(c.toks)-1].off
	c.i = len(c.toks) - 1
	if len(toks) == 0 || !toks[0].is("SELECT") {
		t := c.toks[len(c.toks)-1]
		if len(toks) > 0 {
			t = toks[0]
		}
		return nil, c.errAt(t, "expected SELECT but found "+t.describe())
	}
	sel := toks[0]
	q := &ast.Query{Pos: c.pos(sel)}
	if err := checkBrackets(c.src, toks); err != nil {
		return nil, err
	}

	// Split the query into its top-level clauses; each is a run of toks.
	items := []token{}
	clauses := map[string]*clause{}
	var cur *clause
	bodyStart := 1
	endBody := func(i int) {
		if cur == nil {
			items = toks[bodyStart:i:i]
		} else {
			cur.body = toks[bodyStart:i:i]
		}
	}
	lastRank, lastName := 0, ""
	depth := 0
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		if t.isOp("(") || t.isOp("[") {
			depth++
		} else if t.isOp(")") || t.isOp("]") {
			depth--
		}
		name := ""
		if depth == 0 && t.kind == tkWord {
			u := t.upper()
			var nx token
			if i+1 < len(toks) {
				nx = toks[i+1]
			}
			switch {
			case u == "FROM" && !toks[i-1].is("DISTINCT") && clauses["FROM"] == nil:
				name = u
			case u == "WINDOW" && (isWindowKind(nx) || nx.kind == tkWord && i+2 < len(toks) && isWindowKind(toks[i+2])):
				name = u
			case (u == "GROUP" || u == "PARTITION") && nx.is("BY"):
				name = u
			case u == "WHERE" || u == "HAVING" || u == "EMIT" || u == "LIMIT":
				name = u
			}
		}
		if name == "" {
			continue
		}
		rank := clauseKeywords[name]
		if clauses[name] != nil {
			hint := ""
			if wantsOperand(toks[i-1]) {
				hint = reservedWordHint(name, "a column name") // WHERE where = 1
			}
			return nil, c.errAt(t, "duplicate "+name+" clause; a query has at most one"+hint)
		}
		if rank < lastRank {
			return nil, c.errAt(t, name+" must come before "+lastName+"; the order is FROM, WINDOW, WHERE, GROUP BY, HAVING, PARTITION BY, EMIT, LIMIT")
		}
		if name != "FROM" && clauses["FROM"] == nil {
			hint := ""
			if toks[i-1].isOp(",") || i == 1 {
				hint = reservedWordHint(name, "a column name") // SELECT a, limit FROM s
			}
			return nil, c.errAt(t, "expected FROM before "+name+"; write SELECT ... FROM source"+hint)
		}
		endBody(i)
		cur = &clause{kw: []token{t}}
		if name == "GROUP" || name == "PARTITION" {
			cur.kw = append(cur.kw, toks[i+1])
			i++
		}
		bodyStart = i + 1
		clauses[name] = cur
		lastRank, lastName = rank, name
	}
	endBody(len(toks))
	from := clauses["FROM"]
	if from == nil {
		return nil, c.errAt(c.toks[len(c.toks)-1], "expected FROM after the select list; write SELECT ... FROM source")
	}
	if len(items) == 0 {
		hint := ""
		if len(from.body) > 0 && from.body[0].is("FROM") {
			hint = reservedHint(from.kw[0], toks[0]) // SELECT from FROM s
		}
		return nil, c.errAt(from.kw[0], "expected a select list before FROM, e.g. SELECT * FROM s"+hint)
	}
	if len(from.body) == 0 {
		return nil, c.errAt(c.toks[len(c.toks)-1], "expected a stream or table after FROM")
	}

	for _, name := range []string{"GROUP", "PARTITION"} {
		if cl := clauses[name]; cl != nil {
			if err := c.checkGrouping(cl); err != nil {
				return nil, err
			}
		}
	}

	// Take out the ksqlDB-only clauses.
	if w := clauses["WINDOW"]; w != nil {
		win, err := c.sub(w.kw[0], w.body).window()
		if err != nil {
			return nil, err
		}
		q.Window = win
	}
	if e := clauses["EMIT"]; e != nil {
		sc := c.sub(e.kw[0], e.body)
		switch {
		case sc.accept("CHANGES"):
			q.Emit = ast.EmitChanges
		case sc.accept("FINAL"):
			q.Emit = ast.EmitFinal
		default:
			return nil, sc.errAt(sc.peek(), "expected CHANGES or FINAL after EMIT but found "+sc.peek().describe())
		}
		if err := sc.end("EMIT " + e.body[0].upper()); err != nil {
			return nil, err
		}
	}
	if l := clauses["LIMIT"]; l != nil {
		n, err := c.sub(l.kw[0], l.body).limit()
		if err != nil {
			return nil, err
		}
		q.Limit = &n
	}
	fromToks, withins, tablePos, err := c.fromClause(from.body)
	if err != nil {
		return nil, err
	}

	// Reassemble what TiDB parses: SELECT items FROM ... WHERE ... GROUP BY
	// ... HAVING ... ORDER BY <partition by>.
	all := make([]token, 0, len(toks)+2)
	all = append(append(all, sel), items...)
	all = append(all, from.kw...)
	all = append(all, fromToks...)
	for _, name := range []string{"WHERE", "GROUP", "HAVING"} {
		if cl := clauses[name]; cl != nil {
			if len(cl.body) == 0 {
				return nil, c.errAt(cl.kw[len(cl.kw)-1], "expected an expression after "+name)
			}
			all = append(all, cl.kw...)
			all = append(all, cl.body...)
		}
	}
	if pb := clauses["PARTITION"]; pb != nil {
		if len(pb.body) == 0 {
			return nil, c.errAt(pb.kw[1], "expected an expression after PARTITION BY")
		}
		all = append(all, token{kind: tkRaw, text: "ORDER", off: pb.kw[0].off, end: pb.kw[0].end},
			token{kind: tkRaw, text: "BY", off: pb.kw[1].off, end: pb.kw[1].end})
		all = append(all, pb.body...)
	}
	r := newRewriter(c.src, endOff)
	for _, name := range []string{"FROM", "WHERE", "GROUP", "HAVING"} {
		cl := clauses[name]
		if cl == nil {
			continue
		}
		if name == "FROM" && len(cl.body) > 1 && cl.body[0].is("FROM") {
			// SELECT a, from FROM s: the first FROM may be a name, the
			// second is the clause's; in SELECT a FROM FROM s it is
			// doubled.
			r.clauseKw = append(r.clauseKw, cl.body[0].off)
			continue
		}
		// SELECT * FROM from: the second FROM is a name.
		r.clauseKw = append(r.clauseKw, cl.kw[0].off)
	}
	if err := r.rewrite(all); err != nil {
		return nil, err
	}
	ts, release, err := r.parseSelect()
	if err != nil {
		return nil, err
	}
	defer release()
	cv := &converter{r: r, withins: withins, tablePos: tablePos}
	if err := cv.query(ts, q); err != nil {
		return nil, err
	}
	return q, nil
}

// isWindowKind reports whether t is TUMBLING, HOPPING or SESSION.
func isWindowKind(t token) bool { return t.is("TUMBLING") || t.is("HOPPING") || t.is("SESSION") }

// predicateWords and predicateOps make a boolean expression, which ksqlDB's
// grammar does not take as a GROUP BY or PARTITION BY item unless it is in
// parentheses.
var (
	predicateWords = map[string]bool{"AND": true, "OR": true, "NOT": true, "IS": true, "IN": true, "BETWEEN": true, "LIKE": true}
	predicateOps   = map[string]bool{"=": true, "<>": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}
)

// checkGrouping checks a GROUP BY or PARTITION BY clause as ksqlDB's grammar
// does: a list of value expressions (no top-level AND, OR, NOT, comparison
// or other predicate), or one parenthesized list of them as the whole clause.
func (c *cursor) checkGrouping(cl *clause) error {
	what := cl.kw[0].upper() + " BY"
	body := cl.body
	if len(body) == 0 {
		return nil
	}
	match, err := bracketTable(c.src, body)
	if err != nil {
		return err
	}
	st := &stmt{ts: body, match: match}
	items := st.splitTop(span{0, len(body)}, ",")
	if len(items) == 1 && body[0].isOp("(") {
		if close := int(match[0]); close == len(body)-1 {
			if close == 1 {
				return c.errAt(body[1], what+" requires at least one expression; write one inside the ()")
			}
			if inner := st.splitTop(span{1, close}, ","); len(inner) > 1 {
				items = inner
			}
		}
	} else if len(items) > 1 {
		for _, sp := range items {
			it := body[sp.lo:sp.hi]
			if len(it) == 0 || !it[0].isOp("(") {
				continue
			}
			if comma, ok := firstListComma(it); ok {
				return c.errAt(comma, "missing ')' at ','; expected ')' to close the parenthesized expression: a list in parentheses, as in "+
					what+" (a, b), must be the whole "+what+" clause")
			}
		}
	}
	for _, sp := range items {
		it := body[sp.lo:sp.hi]
		depth, cases := 0, 0
		for _, t := range it {
			switch {
			case t.isOp("(") || t.isOp("["):
				depth++
			case t.isOp(")") || t.isOp("]"):
				depth--
			case t.is("CASE"):
				cases++
			case t.is("END"):
				cases--
			case depth == 0 && cases == 0 && (t.kind == tkWord && predicateWords[t.upper()] || t.kind == tkOp && predicateOps[t.text]):
				return c.errAt(t, "mismatched input "+t.describe()+"; expected ',' or the next clause after a "+what+
					" expression; a condition must be in parentheses, e.g. "+what+" (a = b)")
			}
		}
	}
	return nil
}

// firstListComma returns the first ',' directly inside the bracket that
// opens toks, if any.
func firstListComma(toks []token) (token, bool) {
	depth := 0
	for _, t := range toks {
		switch {
		case t.isOp("(") || t.isOp("["):
			depth++
		case t.isOp(")") || t.isOp("]"):
			depth--
			if depth == 0 {
				return token{}, false
			}
		case depth == 1 && t.isOp(","):
			return t, true
		}
	}
	return token{}, false
}

// sub returns a cursor over body, whose EOF sits after the keyword kw when
// body is empty.
func (c *cursor) sub(kw token, body []token) *cursor {
	end := kw.end
	if len(body) > 0 {
		end = body[len(body)-1].end
	}
	t := append(append([]token{}, body...), token{kind: tkEOF, off: end, end: end})
	return &cursor{src: c.src, toks: t}
}

// fromClause takes the WITHIN clauses out of a FROM clause, rewrites FULL
// [OUTER] JOIN for TiDB, and notes where each source name is. withins is
// keyed by join number (1 for the first JOIN).
func (c *cursor) fromClause(body []token) ([]token, map[int]*ast.Within, []ast.Pos, error) {
	var out []token
	withins := map[int]*ast.Within{}
	var tablePos []ast.Pos
	joins := 0
	depth := 0
	for i := 0; i < len(body); i++ {
		t := body[i]
		if t.isOp("(") {
			depth++
		} else if t.isOp(")") {
			depth--
		}
		if depth != 0 {
			out = append(out, t)
			continue
		}
		if i == 0 || t.is("JOIN") {
			p := t
			if t.is("JOIN") && i+1 < len(body) {
				p = body[i+1]
			}
			tablePos = append(tablePos, c.pos(p))
		}
		switch {
		case t.is("JOIN"):
			joins++
			out = append(out, t)
		case t.is("FULL"):
			j := i + 1
			if j < len(body) && body[j].is("OUTER") {
				j++
			}
			if j >= len(body) || !body[j].is("JOIN") {
				return nil, nil, nil, c.errAt(t, "expected JOIN after FULL [OUTER]")
			}
			joins++
			out = append(out, token{kind: tkRaw, text: "STRAIGHT_JOIN", off: t.off, end: body[j].end})
			tablePos = append(tablePos, c.pos(body[min(j+1, len(body)-1)]))
			i = j
		case t.is("WITHIN"):
			if joins == 0 {
				return nil, nil, nil, c.errAt(t, "WITHIN belongs to a JOIN: FROM a JOIN b WITHIN 10 SECONDS ON ...")
			}
			j := i + 1
			for j < len(body) && !body[j].is("ON") {
				j++
			}
			w, err := c.sub(t, body[i+1:j]).within(c.pos(t))
			if err != nil {
				return nil, nil, nil, err
			}
			withins[joins] = w
			i = j - 1
		default:
			out = append(out, t)
		}
	}
	return out, withins, tablePos, nil
}

// duration parses n UNIT.
func (c *cursor) duration(what string) (time.Duration, error) {
	n, err := c.integer(what)
	if err != nil {
		return 0, err
	}
	t := c.peek()
	var unit time.Duration
	switch t.upper() {
	case "MILLISECOND", "MILLISECONDS":
		unit = time.Millisecond
	case "SECOND", "SECONDS":
		unit = time.Second
	case "MINUTE", "MINUTES":
		unit = time.Minute
	case "HOUR", "HOURS":
		unit = time.Hour
	case "DAY", "DAYS":
		unit = 24 * time.Hour
	default:
		return 0, c.errAt(t, "expected a time unit after "+what+" but found "+t.describe()+"; write MILLISECONDS, SECONDS, MINUTES, HOURS or DAYS")
	}
	if t.kind != tkWord {
		return 0, c.errAt(t, "expected a time unit such as SECONDS")
	}
	c.i++
	if n < 0 {
		return 0, c.errAt(t, what+" must not be negative")
	}
	if n > math.MaxInt64/int64(unit) {
		return 0, c.errAt(t, what+" is too long; expected at most 106751 DAYS")
	}
	return time.Duration(n) * unit, nil
}

// window parses TUMBLING|HOPPING|SESSION (...) after WINDOW.
func (c *cursor) window() (*ast.Window, error) {
	if c.peek().kind == tkWord && isWindowKind(c.peekAt(1)) {
		c.next() // a window name, which ksqlDB allows and ignores
	}
	kt := c.next()
	w := &ast.Window{Pos: c.pos(kt)}
	kind := kt.upper()
	switch kind {
	case "TUMBLING":
		w.Type = ast.Tumbling
	case "HOPPING":
		w.Type = ast.Hopping
	default:
		w.Type = ast.Session
	}
	if err := c.expectOp("(", "after WINDOW "+kind+", e.g. WINDOW TUMBLING (SIZE 1 MINUTE),"); err != nil {
		return nil, err
	}
	hasSize, hasAdvance := false, false
	for first := true; ; first = false {
		t := c.peek()
		switch {
		case kind == "SESSION" && first:
			d, err := c.duration("the session gap")
			if err != nil {
				return nil, err
			}
			w.Size, hasSize = d, true
		case t.is("SIZE") && kind != "SESSION":
			c.next()
			d, err := c.duration("SIZE")
			if err != nil {
				return nil, err
			}
			w.Size, hasSize = d, true
		case t.is("ADVANCE") && kind == "HOPPING":
			c.next()
			if err := c.expect("BY", "; write ADVANCE BY n SECONDS"); err != nil {
				return nil, err
			}
			d, err := c.duration("ADVANCE BY")
			if err != nil {
				return nil, err
			}
			w.Advance, hasAdvance = d, true
		case t.is("RETENTION"):
			c.next()
			d, err := c.duration("RETENTION")
			if err != nil {
				return nil, err
			}
			w.Retention = &d
		case t.is("GRACE"):
			c.next()
			if err := c.expect("PERIOD", "; write GRACE PERIOD n SECONDS"); err != nil {
				return nil, err
			}
			d, err := c.duration("GRACE PERIOD")
			if err != nil {
				return nil, err
			}
			w.Grace = &d
		default:
			opts := "SIZE, RETENTION or GRACE PERIOD"
			if kind == "HOPPING" {
				opts = "SIZE, ADVANCE BY, RETENTION or GRACE PERIOD"
			} else if kind == "SESSION" {
				opts = "RETENTION or GRACE PERIOD"
			}
			return nil, c.errAt(t, "unexpected "+t.describe()+" in WINDOW "+kind+"; expected "+opts)
		}
		if c.acceptOp(",") {
			continue
		}
		if err := c.expectOp(")", "to close the WINDOW "+kind+" clause"); err != nil {
			return nil, err
		}
		break
	}
	if !hasSize && kind != "SESSION" {
		return nil, c.errAt(kt, "WINDOW "+kind+" needs a SIZE, e.g. WINDOW "+kind+" (SIZE 1 MINUTE"+map[bool]string{true: ", ADVANCE BY 10 SECONDS", false: ""}[kind == "HOPPING"]+")")
	}
	if kind == "HOPPING" && !hasAdvance {
		return nil, c.errAt(kt, "WINDOW HOPPING needs ADVANCE BY, e.g. WINDOW HOPPING (SIZE 1 MINUTE, ADVANCE BY 10 SECONDS)")
	}
	return w, c.end("the WINDOW clause")
}

// within parses the body of WITHIN: n UNIT | (before, after) [GRACE PERIOD n UNIT].
func (c *cursor) within(p ast.Pos) (*ast.Within, error) {
	w := &ast.Within{Pos: p}
	if c.acceptOp("(") {
		b, err := c.duration("WITHIN (before")
		if err != nil {
			return nil, err
		}
		if err := c.expectOp(",", "between the WITHIN bounds, e.g. WITHIN (1 HOUR, 2 HOURS),"); err != nil {
			return nil, err
		}
		a, err := c.duration("WITHIN (before, after")
		if err != nil {
			return nil, err
		}
		if err := c.expectOp(")", "to close WITHIN (before, after)"); err != nil {
			return nil, err
		}
		w.Before, w.After = b, a
	} else {
		d, err := c.duration("WITHIN")
		if err != nil {
			return nil, err
		}
		w.Before, w.After = d, d
	}
	if c.accept("GRACE") {
		if err := c.expect("PERIOD", "; write GRACE PERIOD n SECONDS"); err != nil {
			return nil, err
		}
		d, err := c.duration("GRACE PERIOD")
		if err != nil {
			return nil, err
		}
		w.Grace = &d
	}
	if !c.atEOF() {
		return nil, c.errAt(c.peek(), "unexpected "+c.peek().describe()+" after WITHIN; expected ON")
	}
	return w, nil
}

// exprList parses a comma-separated list of expressions made of toks; at is
// the token before the list (for errors on an empty list).
func (c *cursor) exprList(toks []token, endOff int) ([]ast.Expr, error) {
	if err := checkBrackets(c.src, toks); err != nil {
		return nil, err
	}
	r := newRewriter(c.src, endOff)
	all := append([]token{{kind: tkRaw, text: "SELECT", off: toks[0].off, end: toks[0].off}}, toks...)
	if err := r.rewrite(all); err != nil {
		return nil, err
	}
	ts, release, err := r.parseSelect()
	if err != nil {
		return nil, err
	}
	defer release()
	if ts.From != nil || ts.Where != nil || ts.GroupBy != nil || ts.Having != nil || ts.OrderBy != nil || ts.Limit != nil {
		return nil, errAt(c.src, toks[0].off, "expected only expressions here")
	}
	cv := &converter{r: r}
	var out []ast.Expr
	for _, f := range ts.Fields.Fields {
		if f.WildCard != nil {
			return nil, errAt(c.src, r.orig(f.Offset), "'*' is not allowed here; write expressions")
		}
		if f.AsName.O != "" {
			return nil, errAt(c.src, r.orig(f.Offset), "expected ',' between expressions")
		}
		e, err := cv.expr(f.Expr)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// ParseExpr parses a single expression, such as a + 1 or col->field[2].
func ParseExpr(text string) (ast.Expr, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	body := toks[:len(toks)-1]
	if len(body) == 0 {
		return nil, errAt(text, 0, "expected an expression")
	}
	for _, t := range body {
		if t.isOp(";") {
			return nil, errAt(text, t.off, "unexpected ';' in an expression")
		}
	}
	if err := checkNesting(text, body); err != nil {
		return nil, err
	}
	c := &cursor{src: text, toks: toks}
	es, err := c.exprList(body, len(text))
	if err != nil {
		return nil, err
	}
	if len(es) != 1 {
		return nil, errAt(text, 0, "expected one expression but found a list")
	}
	return es[0], nil
}

// limit parses the body of a LIMIT clause: a number, as ksqlDB's grammar
// has it, which must be an INTEGER (a whole number that fits 32 bits). The
// sign is kept: what a negative LIMIT does depends on the query.
func (c *cursor) limit() (int64, error) {
	first := c.peek()
	neg := c.acceptOp("-")
	t := c.peek()
	if t.kind != tkNumber {
		return 0, c.syntaxErrAt(t, "expected the LIMIT (a whole number) but found "+t.describe())
	}
	c.i++
	n, err := strconv.ParseInt(t.text, 10, 64)
	if neg && err == nil {
		n = -n
	}
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		e := c.errAt(first, "Failed to prepare statement: Value must be integer for command: LIMIT")
		e.Hint = "LIMIT takes a whole number of rows up to 2147483647, e.g. LIMIT 10"
		return 0, e
	}
	if err := c.end("LIMIT"); err != nil {
		return 0, err
	}
	return n, nil
}
