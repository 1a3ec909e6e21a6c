package parser

import (
	"math"
	"strconv"
	"strings"

	tast "github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/sluice-sql/sluice/parser/ast"
)

// converter turns TiDB's AST for one rewritten query into Sluice's AST.
type converter struct {
	r        *rewriter
	withins  map[int]*ast.Within
	tablePos []ast.Pos
	tables   int // source names converted so far
	joins    int // joins converted so far
	lastNum  int // rewritten offset of the last number found by findNumber
	// level is the depth in the tree of the expression node being
	// converted: the number of nodes above it.
	level int
}

// pos returns the user's position of a rewritten offset.
func (cv *converter) pos(out int) ast.Pos { return cv.r.pos(cv.r.orig(out)) }

func (cv *converter) errAt(out int, msg string) *Error {
	return errAt(cv.r.src, cv.r.orig(out), msg)
}

// query fills q from TiDB's SELECT.
func (cv *converter) query(s *tast.SelectStmt, q *ast.Query) error {
	if s.Distinct {
		return errAt(cv.r.src, q.Offset, "SELECT DISTINCT is not supported; use GROUP BY instead")
	}
	if s.WindowSpecs != nil || s.With != nil || s.Limit != nil || s.LockInfo != nil || s.SelectIntoOpt != nil {
		return errAt(cv.r.src, q.Offset, "unsupported clause in SELECT")
	}
	q.Items = make([]ast.SelectItem, 0, len(s.Fields.Fields))
	for _, f := range s.Fields.Fields {
		it := ast.SelectItem{Pos: cv.pos(f.Offset)}
		if f.WildCard != nil {
			if f.WildCard.Schema.O != "" {
				return cv.errAt(f.Offset, "expected '*' or 'source.*'")
			}
			it.Star = true
			it.StarSource = f.WildCard.Table.O
		} else if fc, ok := f.Expr.(*tast.FuncCallExpr); ok && cv.r.phAt(fc.OriginTextPosition()) == phDerefStar {
			e, err := cv.expr(fc.Args[0])
			if err != nil {
				return err
			}
			if f.AsName.O != "" {
				return cv.errAt(f.Offset, "col->* selects several columns and cannot have an alias")
			}
			it.Expr, it.StructStar = e, true
		} else {
			e, err := cv.expr(f.Expr)
			if err != nil {
				return err
			}
			it.Expr = e
			it.Alias = f.AsName.O
		}
		q.Items = append(q.Items, it)
	}
	if s.From == nil || s.From.TableRefs == nil {
		return errAt(cv.r.src, q.Offset, "expected FROM source")
	}
	rel, err := cv.relation(s.From.TableRefs)
	if err != nil {
		return err
	}
	q.From = rel
	if s.Where != nil {
		if q.Where, err = cv.expr(s.Where); err != nil {
			return err
		}
	}
	if s.GroupBy != nil {
		cv.lastNum = cv.clauseOffset("GROUP")
		for _, it := range s.GroupBy.Items {
			// GROUP BY (a, b) groups by both.
			xs := []tast.ExprNode{it.Expr}
			if row, ok := it.Expr.(*tast.RowExpr); ok {
				xs = row.Values
			}
			es, err := cv.exprs(xs)
			if err != nil {
				return err
			}
			q.GroupBy = append(q.GroupBy, es...)
		}
	}
	if s.Having != nil {
		if q.Having, err = cv.expr(s.Having.Expr); err != nil {
			return err
		}
	}
	if s.OrderBy != nil {
		cv.lastNum = cv.clauseOffset("ORDER")
		for _, it := range s.OrderBy.Items {
			if it.Desc {
				return cv.errAt(it.Expr.OriginTextPosition(), "expected an expression in PARTITION BY")
			}
			e, err := cv.expr(it.Expr)
			if err != nil {
				return err
			}
			q.PartitionBy = append(q.PartitionBy, e)
		}
	}
	return nil
}

// relation converts a FROM tree.
func (cv *converter) relation(n tast.ResultSetNode) (ast.Relation, error) {
	switch n := n.(type) {
	case *tast.Join:
		if n.Right == nil {
			return cv.relation(n.Left)
		}
		left, err := cv.relation(n.Left)
		if err != nil {
			return nil, err
		}
		cv.joins++
		jn := cv.joins
		rightRel, err := cv.relation(n.Right)
		if err != nil {
			return nil, err
		}
		right, ok := rightRel.(*ast.TableRef)
		if !ok {
			return nil, errAt(cv.r.src, rightRel.Position().Offset, "the right side of a JOIN must be a stream or table name")
		}
		j := &ast.Join{Pos: right.Pos, Left: left, Right: right, Within: cv.withins[jn]}
		switch {
		case n.StraightJoin:
			j.Type = ast.FullJoin
		case n.Tp == tast.LeftJoin:
			j.Type = ast.LeftJoin
		case n.Tp == tast.RightJoin:
			j.Type = ast.RightJoin
		default:
			j.Type = ast.InnerJoin
		}
		if n.NaturalJoin || n.Using != nil {
			return nil, errAt(cv.r.src, right.Offset, "only JOIN ... ON is supported; write ON left.col = right.col")
		}
		if n.On == nil {
			return nil, errAt(cv.r.src, right.Offset, "JOIN needs an ON condition, e.g. JOIN b ON a.id = b.id")
		}
		if j.On, err = cv.expr(n.On.Expr); err != nil {
			return nil, err
		}
		return j, nil
	case *tast.TableSource:
		tn, ok := n.Source.(*tast.TableName)
		var p ast.Pos
		if cv.tables < len(cv.tablePos) {
			p = cv.tablePos[cv.tables]
		}
		cv.tables++
		if !ok {
			return nil, errAt(cv.r.src, p.Offset, "expected a stream or table name; subqueries are not supported")
		}
		if tn.Schema.O != "" {
			return nil, errAt(cv.r.src, p.Offset, "qualified source names are not supported; write the stream or table name alone")
		}
		return &ast.TableRef{Pos: p, Name: tn.Name.O, Alias: n.AsName.O}, nil
	}
	return nil, errAt(cv.r.src, cv.r.orig(0), "unsupported FROM clause")
}

var binOps = map[opcode.Op]ast.BinaryOp{
	opcode.Plus: ast.OpAdd, opcode.Minus: ast.OpSub, opcode.Mul: ast.OpMul, opcode.Div: ast.OpDiv,
	opcode.Mod: ast.OpMod, opcode.EQ: ast.OpEq, opcode.NE: ast.OpNe, opcode.LT: ast.OpLt,
	opcode.LE: ast.OpLe, opcode.GT: ast.OpGt, opcode.GE: ast.OpGe, opcode.LogicAnd: ast.OpAnd,
	opcode.LogicOr: ast.OpOr, opcode.Or: ast.OpConcat,
}

// exprs converts a list.
func (cv *converter) exprs(ns []tast.ExprNode) ([]ast.Expr, error) {
	if len(ns) == 0 {
		return nil, nil
	}
	out := make([]ast.Expr, 0, len(ns))
	for _, n := range ns {
		e, err := cv.expr(n)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// optExpr converts n, or returns nil for nil.
func (cv *converter) optExpr(n tast.ExprNode) (ast.Expr, error) {
	if n == nil {
		return nil, nil
	}
	return cv.expr(n)
}

// expr converts one expression, refusing a tree deeper than
// ast.MaxNesting.
func (cv *converter) expr(n tast.ExprNode) (ast.Expr, error) {
	n = unparen(n)
	off := n.OriginTextPosition()
	if cv.level > ast.MaxNesting {
		return nil, cv.errAt(off, ast.NestingMessage())
	}
	level := cv.level
	cv.level++ // the level of n's operands
	defer func() { cv.level = level }()
	p := cv.pos(off)
	switch n := n.(type) {
	case *test_driver.ValueExpr:
		return cv.literal(n, off, false)
	case *tast.ColumnNameExpr:
		if n.Name.Schema.O != "" {
			return nil, cv.errAt(off, "a column is named as col or source.col; for struct fields write col->field")
		}
		return &ast.ColumnRef{Pos: p, Qualifier: n.Name.Table.O, Name: n.Name.Name.O}, nil
	case *tast.BinaryOperationExpr:
		if n.Op == opcode.NullEQ {
			return cv.isDistinct(n, p)
		}
		return cv.binary(n, level)
	case *tast.UnaryOperationExpr:
		var x ast.Expr
		var err error
		if v, ok := n.V.(*test_driver.ValueExpr); ok && n.Op == opcode.Minus {
			x, err = cv.literal(v, v.OriginTextPosition(), true)
		} else {
			x, err = cv.expr(n.V)
		}
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case opcode.Minus:
			return &ast.Unary{Pos: p, Op: ast.OpNeg, X: x}, nil
		case opcode.Plus:
			return &ast.Unary{Pos: p, Op: ast.OpPlus, X: x}, nil
		case opcode.Not, opcode.Not2:
			return &ast.Unary{Pos: p, Op: ast.OpNot, X: x}, nil
		}
		return nil, cv.errAt(off, "unsupported operator "+n.Op.String())
	case *tast.IsNullExpr:
		x, err := cv.expr(n.Expr)
		if err != nil {
			return nil, err
		}
		return &ast.IsNull{Pos: p, X: x, Not: n.Not}, nil
	case *tast.PatternInExpr:
		if n.Sel != nil {
			return nil, cv.errAt(off, "subqueries are not supported; list the values: x IN (1, 2, 3)")
		}
		x, err := cv.expr(n.Expr)
		if err != nil {
			return nil, err
		}
		list, err := cv.exprs(n.List)
		if err != nil {
			return nil, err
		}
		return &ast.In{Pos: p, X: x, List: list, Not: n.Not}, nil
	case *tast.BetweenExpr:
		x, err := cv.expr(n.Expr)
		if err != nil {
			return nil, err
		}
		lo, err := cv.expr(n.Left)
		if err != nil {
			return nil, err
		}
		hi, err := cv.expr(n.Right)
		if err != nil {
			return nil, err
		}
		return &ast.Between{Pos: p, X: x, Lo: lo, Hi: hi, Not: n.Not}, nil
	case *tast.PatternLikeOrIlikeExpr:
		x, err := cv.expr(n.Expr)
		if err != nil {
			return nil, err
		}
		pat, err := cv.expr(n.Pattern)
		if err != nil {
			return nil, err
		}
		l := &ast.Like{Pos: p, X: x, Pattern: pat, Not: n.Not}
		if !n.IsLike { // the front writes ILIKE for a LIKE with ESCAPE
			i := strings.IndexByte(escapeAlphabet, n.Escape)
			if i < 0 || i >= len(cv.r.escapes) {
				return nil, cv.errAt(off, "expected ESCAPE followed by one character in quotes, e.g. ESCAPE '!'")
			}
			l.Escape = &ast.Literal{Pos: p, Kind: ast.StringLit, Text: cv.r.escapes[i]}
		}
		return l, nil
	case *tast.CaseExpr:
		c := &ast.Case{Pos: p}
		var err error
		if c.Operand, err = cv.optExpr(n.Value); err != nil {
			return nil, err
		}
		for _, w := range n.WhenClauses {
			cond, err := cv.expr(w.Expr)
			if err != nil {
				return nil, err
			}
			res, err := cv.expr(w.Result)
			if err != nil {
				return nil, err
			}
			c.Whens = append(c.Whens, ast.When{Cond: cond, Result: res})
		}
		if c.Else, err = cv.optExpr(n.ElseClause); err != nil {
			return nil, err
		}
		return c, nil
	case *tast.FuncCallExpr:
		return cv.funcCall(n, off, p)
	case *tast.IsTruthExpr:
		return nil, cv.errAt(off, "IS TRUE / IS FALSE is not supported; compare with = TRUE or = FALSE")
	case *tast.SubqueryExpr, *tast.ExistsSubqueryExpr:
		return nil, cv.errAt(off, "subqueries are not supported")
	case *tast.DefaultExpr:
		return nil, cv.errAt(off, "DEFAULT is not supported here")
	case *tast.PositionExpr:
		// GROUP BY 1 and PARTITION BY 1 group by the literal, as ksqlDB does.
		text := strconv.Itoa(n.N)
		return &ast.Literal{Pos: cv.findNumber(text), Kind: ast.IntLit, Text: text}, nil
	case *tast.RowExpr:
		return nil, cv.errAt(off, "a list of values is not allowed here; expected one expression")
	}
	return nil, cv.errAt(off, "unsupported expression")
}

// unparen returns n without the parentheses around it, which the tree
// does not keep.
func unparen(n tast.ExprNode) tast.ExprNode {
	for {
		p, ok := n.(*tast.ParenthesesExpr)
		if !ok {
			return n
		}
		n = p.Expr
	}
}

// binary converts the chain of binary operators that n heads, walking down
// its left operands in a loop rather than recursing once per operator: a
// run of one associative operator (a + b + c) becomes one Nary node, other
// operators nested Binary nodes, each one level deeper. level is n's
// level; a chain deeper than ast.MaxNesting is refused before any of its
// operands is converted.
func (cv *converter) binary(n *tast.BinaryOperationExpr, level int) (ast.Expr, error) {
	type link struct {
		off   int
		op    ast.BinaryOp
		level int
		r     tast.ExprNode
	}
	// Size the spine first: append's growth of a long slice would make the
	// bytes allocated grow faster than the chain.
	count := 0
	for x := tast.ExprNode(n); ; count++ {
		b, ok := x.(*tast.BinaryOperationExpr)
		if !ok || b.Op == opcode.NullEQ {
			break
		}
		x = unparen(b.L)
	}
	spine := make([]link, 0, count) // top first
	var x tast.ExprNode = n
	for {
		b, ok := x.(*tast.BinaryOperationExpr)
		if !ok || b.Op == opcode.NullEQ {
			break
		}
		off := b.OriginTextPosition()
		op, ok := binOps[b.Op]
		if !ok {
			return nil, cv.errAt(off, "unsupported operator "+b.Op.String())
		}
		if k := len(spine); k > 0 && !(op.Associative() && op == spine[k-1].op) {
			level++
		}
		if level > ast.MaxNesting {
			return nil, cv.errAt(off, ast.NestingMessage())
		}
		spine = append(spine, link{off: off, op: op, level: level, r: b.R})
		x = unparen(b.L)
	}
	// Convert the operands bottom up, in the order of the text.
	cv.level = spine[len(spine)-1].level + 1
	acc, err := cv.expr(x)
	if err != nil {
		return nil, err
	}
	for i := len(spine) - 1; i >= 0; {
		// The run of operators at spine[i]'s level: spine[top:i+1].
		l := spine[i]
		top := i
		for top > 0 && spine[top-1].level == l.level {
			top--
		}
		cv.level = l.level + 1
		if top == i {
			r, err := cv.expr(l.r)
			if err != nil {
				return nil, err
			}
			acc = &ast.Binary{Pos: cv.pos(l.off), Op: l.op, L: acc, R: r}
			i--
			continue
		}
		args := make([]ast.Expr, 1, i-top+2)
		links := make([]ast.Pos, 0, i-top+1)
		args[0] = acc
		for ; i >= top; i-- {
			r, err := cv.expr(spine[i].r)
			if err != nil {
				return nil, err
			}
			args = append(args, r)
			links = append(links, cv.pos(spine[i].off))
		}
		acc = &ast.Nary{Pos: links[len(links)-1], Op: l.op, Args: args, Links: links}
	}
	return acc, nil
}

// literal converts a constant using the token the user wrote; neg says a
// '-' comes right before it, for the range check of numbers.
func (cv *converter) literal(v *test_driver.ValueExpr, off int, neg bool) (ast.Expr, error) {
	p := cv.pos(off)
	t, ok := cv.r.tokAt(off)
	if !ok {
		return nil, cv.errAt(off, "unsupported literal")
	}
	switch t.kind {
	case tkString:
		return &ast.Literal{Pos: p, Kind: ast.StringLit, Text: t.val}, nil
	case tkBytes:
		return &ast.Literal{Pos: p, Kind: ast.BytesLit, Text: t.val}, nil
	case tkNumber:
		k := ast.IntLit
		if dec, dbl := numberKind(t.text); dbl {
			k = ast.DoubleLit
		} else if dec {
			k = ast.DecimalLit
		}
		if err := cv.checkRange(k, t.text, neg, off); err != nil {
			return nil, err
		}
		return &ast.Literal{Pos: p, Kind: k, Text: t.text}, nil
	case tkWord:
		switch t.upper() {
		case "NULL":
			return &ast.Literal{Pos: p, Kind: ast.NullLit, Text: "NULL"}, nil
		case "TRUE", "FALSE":
			return &ast.Literal{Pos: p, Kind: ast.BoolLit, Text: t.upper()}, nil
		}
	}
	return nil, cv.errAt(off, "unsupported literal "+t.describe())
}

// checkRange rejects integer literals outside BIGINT and double literals
// outside DOUBLE, as ksqlDB's parser does.
func (cv *converter) checkRange(k ast.LiteralKind, text string, neg bool, off int) error {
	sign := ""
	if neg {
		sign = "-"
	}
	switch k {
	case ast.IntLit:
		if _, err := strconv.ParseInt(sign+text, 10, 64); err != nil {
			return cv.errAt(off, "Invalid numeric literal: "+sign+text+"; expected a whole number from -9223372036854775808 to 9223372036854775807 (BIGINT), or a decimal such as "+sign+text+".0")
		}
	case ast.DoubleLit:
		if f, err := strconv.ParseFloat(text, 64); err != nil && math.IsInf(f, 0) {
			return cv.errAt(off, "Number overflows DOUBLE: "+sign+text+"; expected a magnitude of at most 1.7976931348623157E308")
		}
	}
	return nil
}

// strArg returns the string value of a placeholder's literal argument.
func strArg(n tast.ExprNode) string {
	if v, ok := n.(*test_driver.ValueExpr); ok {
		return v.GetString()
	}
	return ""
}

// funcCall converts a function call or a placeholder call written by the
// front.
func (cv *converter) funcCall(n *tast.FuncCallExpr, off int, p ast.Pos) (ast.Expr, error) {
	kind := cv.r.phAt(off)
	isPH := kind != phNone
	if !isPH {
		if n.Schema.O != "" {
			return nil, cv.errAt(off, "function names cannot be qualified")
		}
		var args []ast.Expr
		for _, a := range n.Args {
			var e ast.Expr
			var err error
			if fc, ok := a.(*tast.FuncCallExpr); ok && cv.r.phAt(fc.OriginTextPosition()) == phLambda {
				e, err = cv.lambda(fc)
			} else {
				e, err = cv.expr(a)
			}
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		return &ast.FuncCall{Pos: p, Name: strings.ToUpper(n.FnName.O), Args: args}, nil
	}
	a := n.Args
	switch kind {
	case phDeref:
		x, err := cv.expr(a[0])
		if err != nil {
			return nil, err
		}
		return &ast.Dereference{Pos: x.Position(), X: x, Field: strArg(a[1])}, nil
	case phSubscript:
		x, err := cv.expr(a[0])
		if err != nil {
			return nil, err
		}
		if len(a) != 2 {
			return nil, cv.errAt(off, "a subscript takes one index, e.g. col[1]")
		}
		i, err := cv.expr(a[1])
		if err != nil {
			return nil, err
		}
		return &ast.Subscript{Pos: x.Position(), X: x, Index: i}, nil
	case phArray:
		es, err := cv.exprs(a)
		if err != nil {
			return nil, err
		}
		return &ast.ArrayCtor{Pos: p, Elems: es}, nil
	case phMap:
		m := &ast.MapCtor{Pos: p}
		for i := 0; i+1 < len(a); i += 2 {
			k, err := cv.expr(a[i])
			if err != nil {
				return nil, err
			}
			v, err := cv.expr(a[i+1])
			if err != nil {
				return nil, err
			}
			m.Keys = append(m.Keys, k)
			m.Values = append(m.Values, v)
		}
		return m, nil
	case phStruct:
		s := &ast.StructCtor{Pos: p}
		for i := 0; i+1 < len(a); i += 2 {
			v, err := cv.expr(a[i+1])
			if err != nil {
				return nil, err
			}
			s.Names = append(s.Names, strArg(a[i]))
			s.Values = append(s.Values, v)
		}
		return s, nil
	case phLambda:
		return nil, cv.errAt(off, "a lambda is only allowed as a function argument, e.g. TRANSFORM(arr, x => x + 1)")
	case phCast:
		x, err := cv.expr(a[0])
		if err != nil {
			return nil, err
		}
		v, ok := a[1].(*test_driver.ValueExpr)
		if len(a) != 2 || !ok || v.GetInt64() < 0 || v.GetInt64() >= int64(len(cv.r.types)) {
			return nil, cv.errAt(off, "expected CAST(expression AS type)")
		}
		return &ast.Cast{Pos: p, X: x, Type: cv.r.types[v.GetInt64()]}, nil
	case phStar:
		return &ast.FuncCall{Pos: p, Name: strArg(a[0]), Star: true}, nil
	case phDistinct:
		args, err := cv.exprs(a[1:])
		if err != nil {
			return nil, err
		}
		return &ast.FuncCall{Pos: p, Name: strArg(a[0]), Args: args, Distinct: true}, nil
	case phTypedLit:
		typ := typedLitTypes[strArg(a[0])]
		return &ast.TypedLiteral{Pos: p, Type: typ, Text: strArg(a[1])}, nil
	case phIsDistinct:
		return nil, cv.errAt(off, "unexpected IS DISTINCT FROM")
	case phDerefStar:
		return nil, cv.errAt(off, "col->* is only allowed as an item of the select list")
	case phVar:
		return &ast.VariableRef{Pos: p, Name: strArg(a[0])}, nil
	}
	return nil, cv.errAt(off, "unsupported expression")
}

// findNumber returns the position of the next number token spelled text
// after the last one found; TiDB gives no position for GROUP BY 1.
func (cv *converter) findNumber(text string) ast.Pos {
	for _, w := range cv.r.toks {
		if w.tok.kind == tkNumber && w.tok.text == text && w.out > cv.lastNum {
			cv.lastNum = w.out
			return cv.pos(w.out)
		}
	}
	return cv.pos(0)
}

// clauseOffset returns the rewritten offset of the clause keyword kw.
func (cv *converter) clauseOffset(kw string) int {
	best := -1
	for _, w := range cv.r.toks {
		if t := w.tok; (t.kind == tkWord || t.kind == tkRaw) && strings.EqualFold(t.text, kw) && w.out > best {
			best = w.out
		}
	}
	return best
}

// isDistinct converts a <=> b (IS NOT DISTINCT FROM) and a <=>
// __is_distinct(b) (IS DISTINCT FROM).
func (cv *converter) isDistinct(n *tast.BinaryOperationExpr, p ast.Pos) (ast.Expr, error) {
	l, err := cv.expr(n.L)
	if err != nil {
		return nil, err
	}
	rn, not := n.R, true
	if pe, ok := rn.(*tast.ParenthesesExpr); ok {
		rn = pe.Expr
	}
	if fc, ok := rn.(*tast.FuncCallExpr); ok && cv.r.phAt(fc.OriginTextPosition()) == phIsDistinct {
		rn, not = fc.Args[0], false
	}
	r, err := cv.expr(rn)
	if err != nil {
		return nil, err
	}
	return &ast.IsDistinct{Pos: p, L: l, R: r, Not: not}, nil
}

// lambda converts a lambda placeholder given as a function argument.
func (cv *converter) lambda(fc *tast.FuncCallExpr) (ast.Expr, error) {
	a := fc.Args
	off := fc.OriginTextPosition()
	l := &ast.Lambda{Pos: cv.pos(off)}
	for _, x := range a[:len(a)-1] {
		l.Params = append(l.Params, strArg(x))
	}
	// The lambda is a level of its own, between the call and the body.
	if cv.level > ast.MaxNesting {
		return nil, cv.errAt(off, ast.NestingMessage())
	}
	level := cv.level
	cv.level++
	defer func() { cv.level = level }()
	body, err := cv.expr(a[len(a)-1])
	if err != nil {
		return nil, err
	}
	l.Body = body
	return l, nil
}
