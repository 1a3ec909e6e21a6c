package parser

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kr/pretty"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

func TestParseExpr(t *testing.T) {
	bin := func(op ast.BinaryOp, l, r ast.Expr) *ast.Binary { return &ast.Binary{Op: op, L: l, R: r} }
	tests := []struct {
		in   string
		want ast.Expr
	}{
		{"NULL", &ast.Literal{Kind: ast.NullLit, Text: "NULL"}},
		{"true", &ast.Literal{Kind: ast.BoolLit, Text: "TRUE"}},
		{"FALSE", &ast.Literal{Kind: ast.BoolLit, Text: "FALSE"}},
		{"42", intLit("42")},
		{"9223372036854775807", intLit("9223372036854775807")},
		{"-9223372036854775808", &ast.Unary{Op: ast.OpNeg, X: intLit("9223372036854775808")}},
		{"1.50", &ast.Literal{Kind: ast.DecimalLit, Text: "1.50"}},
		{"1.5E3", &ast.Literal{Kind: ast.DoubleLit, Text: "1.5E3"}},
		{"1.7976931348623157E308", &ast.Literal{Kind: ast.DoubleLit, Text: "1.7976931348623157E308"}},
		{"a LIKE 'x' ESCAPE 'é' OR b NOT LIKE 'y' ESCAPE ''''", &ast.Binary{Op: ast.OpOr,
			L: &ast.Like{X: col("A"), Pattern: strLit("x"), Escape: strLit("é")},
			R: &ast.Like{X: col("B"), Pattern: strLit("y"), Escape: strLit("'"), Not: true}}},
		{"1E-400", &ast.Literal{Kind: ast.DoubleLit, Text: "1E-400"}},
		{"12345678901234567890.5", &ast.Literal{Kind: ast.DecimalLit, Text: "12345678901234567890.5"}},
		{"'it''s'", strLit("it's")},
		{`'C:\new'`, strLit(`C:\new`)},
		{"X'0AFF'", &ast.Literal{Kind: ast.BytesLit, Text: "\x0a\xff"}},
		{"col", col("COL")},
		{"`Col`", col("Col")},
		{`"Col"`, col("Col")},
		{"s.col", qcol("S", "COL")},
		{"`s`.\"c\"", qcol("s", "c")},
		{"a + b * c", bin(ast.OpAdd, col("A"), bin(ast.OpMul, col("B"), col("C")))},
		{"(a + b) * c", bin(ast.OpMul, bin(ast.OpAdd, col("A"), col("B")), col("C"))},
		{"a - b / c % d", bin(ast.OpSub, col("A"), bin(ast.OpMod, bin(ast.OpDiv, col("B"), col("C")), col("D")))},
		{"a || b + c", bin(ast.OpConcat, col("A"), bin(ast.OpAdd, col("B"), col("C")))},
		{"a = b || c", bin(ast.OpEq, col("A"), bin(ast.OpConcat, col("B"), col("C")))},
		{"a <> b", bin(ast.OpNe, col("A"), col("B"))},
		{"a != b", bin(ast.OpNe, col("A"), col("B"))},
		{"a < 1 AND b <= 2 OR c > 3 AND d >= 4", bin(ast.OpOr,
			bin(ast.OpAnd, bin(ast.OpLt, col("A"), intLit("1")), bin(ast.OpLe, col("B"), intLit("2"))),
			bin(ast.OpAnd, bin(ast.OpGt, col("C"), intLit("3")), bin(ast.OpGe, col("D"), intLit("4"))))},
		{"NOT a = b", &ast.Unary{Op: ast.OpNot, X: bin(ast.OpEq, col("A"), col("B"))}},
		{"-a", &ast.Unary{Op: ast.OpNeg, X: col("A")}},
		{"-5", &ast.Unary{Op: ast.OpNeg, X: intLit("5")}},
		{"+a", &ast.Unary{Op: ast.OpPlus, X: col("A")}},
		{"a IS NULL", &ast.IsNull{X: col("A")}},
		{"a IS NOT NULL", &ast.IsNull{X: col("A"), Not: true}},
		{"a IS DISTINCT FROM b", &ast.IsDistinct{L: col("A"), R: col("B")}},
		{"a IS NOT DISTINCT FROM b + 1", &ast.IsDistinct{L: col("A"), R: bin(ast.OpAdd, col("B"), intLit("1")), Not: true}},
		{"a IN (1, 2)", &ast.In{X: col("A"), List: []ast.Expr{intLit("1"), intLit("2")}}},
		{"a NOT IN ('x')", &ast.In{X: col("A"), List: []ast.Expr{strLit("x")}, Not: true}},
		{"a BETWEEN 1 AND 2", &ast.Between{X: col("A"), Lo: intLit("1"), Hi: intLit("2")}},
		{"a NOT BETWEEN b AND c", &ast.Between{X: col("A"), Lo: col("B"), Hi: col("C"), Not: true}},
		{"a LIKE 'x%'", &ast.Like{X: col("A"), Pattern: strLit("x%")}},
		{"a NOT LIKE 'x!%' ESCAPE '!'", &ast.Like{X: col("A"), Pattern: strLit("x!%"), Escape: strLit("!"), Not: true}},
		{"a LIKE 'x' AND b LIKE 'y' ESCAPE '#'", bin(ast.OpAnd, &ast.Like{X: col("A"), Pattern: strLit("x")},
			&ast.Like{X: col("B"), Pattern: strLit("y"), Escape: strLit("#")})},
		{"CASE WHEN a THEN 1 ELSE 2 END", &ast.Case{Whens: []ast.When{{Cond: col("A"), Result: intLit("1")}}, Else: intLit("2")}},
		{"CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' END", &ast.Case{Operand: col("A"),
			Whens: []ast.When{{Cond: intLit("1"), Result: strLit("x")}, {Cond: intLit("2"), Result: strLit("y")}}}},
		{"CAST(a AS BIGINT)", &ast.Cast{X: col("A"), Type: types.BigintType}},
		{"cast(a as DECIMAL(6, 2))", &ast.Cast{X: col("A"), Type: types.DecimalOf(6, 2)}},
		{"CAST(a AS ARRAY<MAP<STRING, STRUCT<X INT, `y` VARCHAR>>>)", &ast.Cast{X: col("A"),
			Type: types.ArrayOf(types.MapOf(types.StringType, types.StructOf(
				types.Field{Name: "X", Type: types.IntType}, types.Field{Name: "y", Type: types.StringType})))}},
		{"CAST(a AS MyType)", &ast.Cast{X: col("A"), Type: &types.Type{Name: "MYTYPE"}}},
		{"count(*)", &ast.FuncCall{Name: "COUNT", Star: true}},
		{"COUNT(DISTINCT x)", &ast.FuncCall{Name: "COUNT", Args: []ast.Expr{col("X")}, Distinct: true}},
		{"count()", &ast.FuncCall{Name: "COUNT"}},
		{"substring(s, 1, 2)", &ast.FuncCall{Name: "SUBSTRING", Args: []ast.Expr{col("S"), intLit("1"), intLit("2")}}},
		{"timestampadd(milliseconds, 5, x)", &ast.FuncCall{Name: "TIMESTAMPADD", Args: []ast.Expr{col("MILLISECONDS"), intLit("5"), col("X")}}},
		{"IF(a, `key`, window)", &ast.FuncCall{Name: "IF", Args: []ast.Expr{col("A"), col("key"), col("WINDOW")}}},
		{"a->b", &ast.Dereference{X: col("A"), Field: "B"}},
		{"s.a->b->`c`", &ast.Dereference{X: &ast.Dereference{X: qcol("S", "A"), Field: "B"}, Field: "c"}},
		{"a[1]", &ast.Subscript{X: col("A"), Index: intLit("1")}},
		{"a['k'][-1]->f", &ast.Dereference{X: &ast.Subscript{X: &ast.Subscript{X: col("A"), Index: strLit("k")},
			Index: &ast.Unary{Op: ast.OpNeg, X: intLit("1")}}, Field: "F"}},
		{"f(x)[2]", &ast.Subscript{X: &ast.FuncCall{Name: "F", Args: []ast.Expr{col("X")}}, Index: intLit("2")}},
		{"ARRAY[1, 2 + 3]", &ast.ArrayCtor{Elems: []ast.Expr{intLit("1"), bin(ast.OpAdd, intLit("2"), intLit("3"))}}},
		{"ARRAY[]", &ast.ArrayCtor{}},
		{"ARRAY[1][1]", &ast.Subscript{X: &ast.ArrayCtor{Elems: []ast.Expr{intLit("1")}}, Index: intLit("1")}},
		{"MAP('a' := 1, k := v)", &ast.MapCtor{Keys: []ast.Expr{strLit("a"), col("K")}, Values: []ast.Expr{intLit("1"), col("V")}}},
		{"STRUCT(a := 1, `b` := 'x')", &ast.StructCtor{Names: []string{"A", "b"}, Values: []ast.Expr{intLit("1"), strLit("x")}}},
		{"STRUCT()", &ast.StructCtor{}},
		{"TRANSFORM(arr, x => x + 1)", &ast.FuncCall{Name: "TRANSFORM", Args: []ast.Expr{col("ARR"),
			&ast.Lambda{Params: []string{"X"}, Body: bin(ast.OpAdd, col("X"), intLit("1"))}}}},
		{"REDUCE(m, 0, (s, k, v) => CASE WHEN k = 'a' THEN s + v ELSE s END)", &ast.FuncCall{Name: "REDUCE", Args: []ast.Expr{col("M"), intLit("0"),
			&ast.Lambda{Params: []string{"S", "K", "V"}, Body: &ast.Case{
				Whens: []ast.When{{Cond: bin(ast.OpEq, col("K"), strLit("a")), Result: bin(ast.OpAdd, col("S"), col("V"))}}, Else: col("S")}}}}},
		{"filter(m, (k, v) => v > 1)", &ast.FuncCall{Name: "FILTER", Args: []ast.Expr{col("M"),
			&ast.Lambda{Params: []string{"K", "V"}, Body: bin(ast.OpGt, col("V"), intLit("1"))}}}},
		{"TIMESTAMP '2020-01-01T00:00:00'", &ast.TypedLiteral{Type: types.TimestampType, Text: "2020-01-01T00:00:00"}},
		{"DATE '2020-01-01'", &ast.TypedLiteral{Type: types.DateType, Text: "2020-01-01"}},
		{"TIME '10:00'", &ast.TypedLiteral{Type: types.TimeType, Text: "10:00"}},
		{"timestamp > 1", bin(ast.OpGt, col("TIMESTAMP"), intLit("1"))},
		{"${x} = 1", bin(ast.OpEq, &ast.VariableRef{Name: "x"}, intLit("1"))},
		{"a /* c */ + -- c\n b", bin(ast.OpAdd, col("A"), col("B"))},
	}
	for _, tc := range tests {
		got, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		got = stripped(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n%s", tc.in, strings.Join(pretty.Diff(got, tc.want), "\n"))
		}
	}
}

func TestExprPositions(t *testing.T) {
	e, err := ParseExpr("a +\n  f(b->c, x'00')")
	if err != nil {
		t.Fatal(err)
	}
	bin := e.(*ast.Binary)
	if p := bin.L.Position(); p.Line != 1 || p.Col != 1 {
		t.Errorf("a at %+v", p)
	}
	f := bin.R.(*ast.FuncCall)
	if p := f.Position(); p.Line != 2 || p.Col != 3 || p.Offset != 6 {
		t.Errorf("f at %+v", p)
	}
	if p := f.Args[0].Position(); p.Line != 2 || p.Col != 5 {
		t.Errorf("b->c at %+v", p)
	}
	if p := f.Args[1].Position(); p.Line != 2 || p.Col != 11 {
		t.Errorf("x'00' at %+v", p)
	}
}
