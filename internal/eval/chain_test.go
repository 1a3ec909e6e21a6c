package eval_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// nested rewrites every Nary in e as the left-nested Binary nodes it
// stands for, which is how the parser wrote chains before they were one
// node.
func nested(e ast.Expr) ast.Expr {
	switch x := e.(type) {
	case *ast.Nary:
		acc := nested(x.Args[0])
		for i, a := range x.Args[1:] {
			acc = &ast.Binary{Pos: x.LinkPos(i), Op: x.Op, L: acc, R: nested(a)}
		}
		return acc
	case *ast.Binary:
		return &ast.Binary{Pos: x.Pos, Op: x.Op, L: nested(x.L), R: nested(x.R)}
	case *ast.Unary:
		return &ast.Unary{Pos: x.Pos, Op: x.Op, X: nested(x.X)}
	case *ast.IsNull:
		return &ast.IsNull{Pos: x.Pos, X: nested(x.X), Not: x.Not}
	case *ast.FuncCall:
		c := *x
		c.Args = make([]ast.Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = nested(a)
		}
		return &c
	case *ast.Lambda:
		l := *x
		l.Body = nested(x.Body)
		return &l
	}
	return e
}

// nestedForm rewrites every chain node of a bound tree (more than two
// arguments) as nested binary nodes typed as binding them gives.
func nestedForm(t *testing.T, e *expr.Expr) *expr.Expr {
	t.Helper()
	if e == nil {
		return nil
	}
	c := *e
	if e.Args != nil {
		c.Args = make([]*expr.Expr, len(e.Args))
		for i, a := range e.Args {
			c.Args[i] = nestedForm(t, a)
		}
	}
	if len(c.Args) <= 2 {
		return &c
	}
	switch e.Op {
	case expr.OpAnd, expr.OpOr, expr.OpAdd, expr.OpMul, expr.OpConcat:
	default:
		return &c
	}
	acc := c.Args[0]
	for i, a := range c.Args[1:] {
		var tt *types.Type
		switch {
		case i == len(c.Args)-2:
			tt = e.Type
		case e.Op == expr.OpAnd || e.Op == expr.OpOr:
			tt = types.BooleanType
		case e.Type.Kind == types.String || e.Type.Kind == types.Bytes:
			tt = e.Type
		default:
			tt = expr.ArithType(e.Op, acc.Type, a.Type)
		}
		acc = &expr.Expr{Op: e.Op, Type: tt, Args: []*expr.Expr{acc, a}}
	}
	return acc
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestChainsAsNested checks that a chain of one associative operator,
// bound as one node, types, prints, fails and evaluates exactly as the
// nested binary form it stands for.
func TestChainsAsNested(t *testing.T) {
	exprs := []string{
		"I + I + I", "I + B + D", "I + M + M", "M + M + M + I", "I * I * I", "B * I * M", "D * M * I",
		"I * 1000000 * 1000000", "2147483647 + I + 1", "I + 2147483647 + B", "B + 9223372036854775807 + I",
		"1.5 + M + 0.25 + I", "M * M * M * M", "D + 1 + 2", "I + NULL + I", "NULL + I + I",
		"S + S + S", "S + NULL + S", "'a' + S + 'b'", "I + CAST(NULL AS INT) + I", "S + CAST(NULL AS STRING) + S",
		"S || S || S", "S || NULL || S", "BS || BS || BS", "NULL || S || S",
		"T AND T AND T", "T AND NULL AND FALSE", "T OR NULL OR FALSE", "NOT T OR T OR NULL",
		"NULL AND T AND T", "T AND (T OR NULL) AND T",
		"I = 7 AND B = 10 AND S = 'hello'", "I = 1 OR B = 10 OR S = 'x'", "I > 0 AND I < 10 AND I <> 5 AND NOT T",
		"(I + B) + D", "I + (B + D) + M", "(NULL + NULL) + 1", "(T AND 1) AND T",
		"1 + 1 + 'x'", "NULL + NULL + 1", "T AND T AND 1", "S || S || I", "I + I + S", "S + S + I",
		"CAST(NULL AS INT) + I + NULL",
		"TRANSFORM(A, X => X + I + B)", "TRANSFORM(A, X => X * X * I)", "TRANSFORM(A, X => X = 1 OR X = 2 OR X = 3)",
	}
	rows := map[string][]any{
		"full": fullRow(), "nulls": nullFullRow(), "I null": withCol(0, nil), "I max": withCol(0, int32(2147483647)),
		"B max": withCol(1, int64(9223372036854775807)), "T false": withCol(5, false), "T null": withCol(5, nil),
		"S null": withCol(4, nil), "A with null": withCol(10, ints(1, nil, 3)), "M big": withCol(3, dec("99.99")),
	}
	for _, text := range exprs {
		chain, err := parser.ParseExpr(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		hasChain := false
		ast.Walk(chain, func(n ast.Expr) bool {
			_, ok := n.(*ast.Nary)
			hasChain = hasChain || ok
			return true
		})
		if !hasChain {
			t.Errorf("%s: the parser wrote no chain node", text)
		}
		got, gerr := bind.Bind(chain, fullScope)
		want, werr := bind.Bind(nested(chain), fullScope)
		if errText(gerr) != errText(werr) {
			t.Errorf("%s: bind error %q, nested form %q", text, errText(gerr), errText(werr))
			continue
		}
		if werr != nil {
			continue
		}
		if !reflect.DeepEqual(nestedForm(t, got), want) {
			t.Errorf("%s: bound as %s of type %s, unlike the nested form %s of type %s", text, got, got.Type, want, want.Type)
		}
		if got.String() != want.String() {
			t.Errorf("%s: prints %q, nested form %q", text, got.String(), want.String())
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("%s: marshal: %v", text, err)
		}
		var back expr.Expr
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: unmarshal: %v", text, err)
		}
		if !reflect.DeepEqual(&back, got) {
			t.Errorf("%s: JSON round trip changed the tree:\n  %s\n  %s", text, got, &back)
		}
		gev, err := eval.Compile(&back)
		if err != nil {
			t.Fatalf("%s: compile: %v", text, err)
		}
		wev, err := eval.Compile(want)
		if err != nil {
			t.Fatalf("%s: compile nested: %v", text, err)
		}
		for name, row := range rows {
			gv, gerr := gev.Eval(row)
			wv, werr := wev.Eval(row)
			if !reflect.DeepEqual(gv, wv) || errText(gerr) != errText(werr) {
				t.Errorf("%s on %s: %#v (%v), nested form %#v (%v)", text, name, gv, gerr, wv, werr)
			}
		}
	}
}

// TestLongChains binds, prints, persists and evaluates chains far longer
// than any nesting allows: one node each, evaluated in a loop. (The
// planner's tests plan one of 50,000.)
func TestLongChains(t *testing.T) {
	const n = 10000
	for _, tc := range []struct {
		op   ast.BinaryOp
		arg  ast.Expr
		want any
	}{
		{ast.OpAdd, intLit("1"), int32(n)},
		{ast.OpAdd, col("B"), int64(10 * n)},
		{ast.OpMul, intLit("1"), int32(1)},
		{ast.OpOr, &ast.Binary{Op: ast.OpEq, L: col("I"), R: intLit("8")}, false},
		{ast.OpAnd, col("T"), true},
		{ast.OpConcat, strLit("x"), strings.Repeat("x", n)},
	} {
		args := make([]ast.Expr, n)
		for i := range args {
			args[i] = tc.arg
		}
		e, err := bind.Bind(&ast.Nary{Op: tc.op, Args: args}, fullScope)
		if err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		if len(e.Args) != n {
			t.Fatalf("%s: %d arguments, want %d", tc.op, len(e.Args), n)
		}
		if s := e.String(); !strings.HasPrefix(s, strings.Repeat("(", n-1)) || !strings.HasSuffix(s, ")") {
			t.Errorf("%s: prints %.40s...", tc.op, s)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("%s: marshal: %v", tc.op, err)
		}
		var back expr.Expr
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: unmarshal: %v", tc.op, err)
		}
		ev, err := eval.Compile(&back)
		if err != nil {
			t.Fatalf("%s: compile: %v", tc.op, err)
		}
		v, err := ev.Eval(fullRow())
		if err != nil || !reflect.DeepEqual(v, tc.want) {
			t.Errorf("%s: %v (%v), want %v", tc.op, v, err, tc.want)
		}
	}
}

// TestBindRefusesDeepTrees checks that a tree deeper than ast.MaxNesting,
// which the parser would refuse, is refused by Bind too, at the node past
// the limit, and that one at the limit binds and persists.
func TestBindRefusesDeepTrees(t *testing.T) {
	// deep(n) is 1 - 1 - ... with n operators, the node at level l (the
	// root's is 0) at column l+1.
	deep := func(n int) ast.Expr {
		var e ast.Expr = &ast.Literal{Pos: ast.Pos{Line: 1, Col: n + 1, Offset: n}, Kind: ast.IntLit, Text: "1"}
		for i := n; i > 0; i-- {
			e = &ast.Binary{Pos: ast.Pos{Line: 1, Col: i, Offset: i - 1}, Op: ast.OpSub, L: e, R: intLit("1")}
		}
		return e
	}
	e, err := bind.Bind(deep(ast.MaxNesting), fullScope)
	if err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatalf("at the limit: marshal: %v", err)
	}
	var back expr.Expr
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("at the limit: unmarshal: %v", err)
	}
	for _, n := range []int{ast.MaxNesting + 1, 100000} {
		_, err := bind.Bind(deep(n), fullScope)
		want := fmt.Sprintf("line 1:%d: %s", ast.MaxNesting+2, ast.NestingMessage())
		if errText(err) != want {
			t.Errorf("%d levels: %v, want %s", n, err, want)
		}
	}
}
