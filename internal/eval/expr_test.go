package eval_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

func col(name string) ast.Expr { return &ast.ColumnRef{Name: name} }
func intLit(s string) ast.Expr { return &ast.Literal{Kind: ast.IntLit, Text: s} }
func decLit(s string) ast.Expr { return &ast.Literal{Kind: ast.DecimalLit, Text: s} }
func dblLit(s string) ast.Expr { return &ast.Literal{Kind: ast.DoubleLit, Text: s} }
func strLit(s string) ast.Expr { return &ast.Literal{Kind: ast.StringLit, Text: s} }
func boolLit(b bool) ast.Expr {
	return &ast.Literal{Kind: ast.BoolLit, Text: map[bool]string{true: "TRUE", false: "FALSE"}[b]}
}
func null() ast.Expr                              { return &ast.Literal{Kind: ast.NullLit, Text: "NULL"} }
func bin(op ast.BinaryOp, l, r ast.Expr) ast.Expr { return &ast.Binary{Op: op, L: l, R: r} }
func call(name string, args ...ast.Expr) ast.Expr { return &ast.FuncCall{Name: name, Args: args} }

// testScope: I INT, B BIGINT, D DOUBLE, M DECIMAL(4,2), S STRING, T BOOLEAN,
// A ARRAY<INT>, MP MAP<STRING, INT>, ST STRUCT<X INT, Y STRING>, TS TIMESTAMP.
var testScope = bind.ScopeOf("T1", []types.Column{
	{Name: "I", Type: types.IntType},
	{Name: "B", Type: types.BigintType},
	{Name: "D", Type: types.DoubleType},
	{Name: "M", Type: types.DecimalOf(4, 2)},
	{Name: "S", Type: types.StringType},
	{Name: "T", Type: types.BooleanType},
	{Name: "A", Type: types.ArrayOf(types.IntType)},
	{Name: "MP", Type: types.MapOf(types.StringType, types.IntType)},
	{Name: "ST", Type: types.StructOf(types.Field{Name: "X", Type: types.IntType}, types.Field{Name: "Y", Type: types.StringType})},
	{Name: "TS", Type: types.TimestampType},
})

// dec parses a DECIMAL of the cases (eval.Dec, of export_test.go).
var dec = eval.Dec

func testRow() []any {
	return []any{
		int32(7), int64(10), 2.5, dec("1.50"), "hello", true,
		[]any{int32(1), int32(2), int32(3)},
		&types.MapValue{Keys: []any{"a"}, Values: []any{int32(1)}},
		types.StructValue{int32(5), "y"},
		types.TimestampValue(1000),
	}
}

func nullRow() []any { return make([]any, 10) }

func TestBindTypes(t *testing.T) {
	tests := []struct {
		e    ast.Expr
		want string
	}{
		{intLit("1"), "INTEGER"},
		{intLit("2147483648"), "BIGINT"},
		{decLit("1.5"), "DECIMAL(2, 1)"},
		{decLit("0.05"), "DECIMAL(2, 2)"},
		{dblLit("1.5E0"), "DOUBLE"},
		{strLit("x"), "STRING"},
		{bin(ast.OpAdd, col("I"), col("I")), "INTEGER"},
		{bin(ast.OpAdd, col("I"), col("B")), "BIGINT"},
		{bin(ast.OpAdd, col("M"), col("M")), "DECIMAL(5, 2)"},
		{bin(ast.OpAdd, col("M"), col("I")), "DECIMAL(13, 2)"},
		{bin(ast.OpMul, col("M"), col("M")), "DECIMAL(9, 4)"},
		{bin(ast.OpDiv, col("M"), col("M")), "DECIMAL(11, 7)"},
		{bin(ast.OpAdd, col("M"), col("D")), "DOUBLE"},
		{bin(ast.OpAdd, col("S"), strLit("x")), "STRING"},
		{bin(ast.OpConcat, col("S"), strLit("x")), "STRING"},
		{bin(ast.OpEq, col("I"), col("D")), "BOOLEAN"},
		{&ast.Cast{X: col("S"), Type: types.IntType}, "INTEGER"},
		{call("LEN", col("S")), "INTEGER"},
		{call("COALESCE", col("I"), col("B")), "BIGINT"},
		{call("ROUND", col("D")), "BIGINT"},
		{&ast.Subscript{X: col("A"), Index: intLit("1")}, "INTEGER"},
		{&ast.Subscript{X: col("MP"), Index: strLit("a")}, "INTEGER"},
		{&ast.Dereference{X: col("ST"), Field: "Y"}, "STRING"},
		{&ast.ArrayCtor{Elems: []ast.Expr{intLit("1"), decLit("2.5")}}, "ARRAY<DECIMAL(11, 1)>"},
		{&ast.Case{Whens: []ast.When{{Cond: col("T"), Result: col("I")}}, Else: col("B")}, "BIGINT"},
		{&ast.Case{Whens: []ast.When{{Cond: col("T"), Result: null()}}, Else: strLit("x")}, "STRING"},
	}
	for _, tt := range tests {
		e, err := bind.Bind(tt.e, testScope)
		if err != nil {
			t.Errorf("Bind(%T): %v", tt.e, err)
			continue
		}
		if got := e.Type.String(); got != tt.want {
			t.Errorf("Bind(%s).Type = %s, want %s", e, got, tt.want)
		}
	}
}

func TestBindErrors(t *testing.T) {
	tests := []struct {
		e    ast.Expr
		want string
	}{
		{bin(ast.OpEq, col("I"), strLit("abc")), "Cannot compare I (INTEGER) to 'abc' (STRING) with EQUAL."},
		{bin(ast.OpEq, col("I"), strLit("10")), "Cannot compare I (INTEGER) to '10' (STRING) with EQUAL."},
		{bin(ast.OpGt, intLit("11"), col("S")), "Cannot compare 11 (INTEGER) to S (STRING) with GREATER_THAN."},
		{bin(ast.OpEq, col("T"), strLit("true")), "Cannot compare T (BOOLEAN) to 'true' (STRING) with EQUAL."},
		{bin(ast.OpEq, col("I"), null()), "Comparison with NULL not supported: INTEGER = NULL\nUse 'IS NULL' or 'IS NOT NULL' instead."},
		{bin(ast.OpLt, null(), col("A")), "Comparison with NULL not supported: NULL < ARRAY"},
		{&ast.IsDistinct{L: col("S"), R: null()}, "Comparison with NULL not supported: STRING IS DISTINCT FROM NULL"},
		{bin(ast.OpEq, col("TS"), strLit("not a time")), "not a time"},
		{bin(ast.OpEq, col("T"), col("I")), "Cannot compare T (BOOLEAN) to I (INTEGER) with EQUAL."},
		{col("FOO"), "column 'FOO' cannot be resolved; known columns: I, B, D, M, S, T, A, MP, ST, TS"},
		{call("FOO"), "Can't find any functions with the name 'FOO'"},
		{call("COALESCE"), "Function 'COALESCE' does not accept parameters ()"},
		{call("UCASE", col("I")), "Function 'UCASE' does not accept parameters (INTEGER)"},
		{bin(ast.OpNe, null(), null()), "Comparison with NULL not supported: NULL <> NULL"},
		{bin(ast.OpAdd, col("S"), col("I")), "cannot apply + to STRING and INTEGER"},
		{bin(ast.OpAnd, col("I"), col("T")), "AND needs BOOLEAN operands"},
		{bin(ast.OpLt, col("A"), col("A")), "Cannot compare A (ARRAY<INTEGER>) to A (ARRAY<INTEGER>) with LESS_THAN."},
		{&ast.Cast{X: col("S"), Type: types.ArrayOf(types.IntType)}, "Cast of STRING to ARRAY<INTEGER> is not supported"},
		{&ast.Case{Whens: []ast.When{{Cond: col("T"), Result: null()}}, Else: null()}, "All case branches have NULL type"},
		{&ast.Dereference{X: col("ST"), Field: "Z"}, "field 'Z' not found"},
		{intLit("9223372036854775808"), "Invalid numeric literal"},
	}
	for _, tt := range tests {
		_, err := bind.Bind(tt.e, testScope)
		var be *bind.Error
		if !errors.As(err, &be) {
			t.Errorf("Bind(%T) error = %v, want *Error containing %q", tt.e, err, tt.want)
			continue
		}
		if !strings.Contains(be.Msg, tt.want) {
			t.Errorf("Bind error = %q, want it to contain %q", be.Msg, tt.want)
		}
	}
}

func TestAmbiguousColumn(t *testing.T) {
	s := bind.ColumnScope{{Qualifier: "L", Name: "ID", Type: types.IntType}, {Qualifier: "R", Name: "ID", Type: types.IntType}}
	_, err := bind.Bind(col("ID"), s)
	if err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("err = %v", err)
	}
	e, err := bind.Bind(&ast.ColumnRef{Qualifier: "R", Name: "ID"}, s)
	if err != nil || e.Col != 1 || e.String() != "R.ID" {
		t.Fatalf("R.ID bound to %+v, %v", e, err)
	}
}

func evalAST(t *testing.T, e ast.Expr, row []any) (any, error) {
	t.Helper()
	b, err := bind.Bind(e, testScope)
	if err != nil {
		t.Fatalf("Bind: %v", err)
	}
	ev, err := eval.Compile(b)
	if err != nil {
		t.Fatalf("Compile(%s): %v", b, err)
	}
	return ev.Eval(row)
}

func TestEval(t *testing.T) {
	like := func(x, p ast.Expr, not bool) ast.Expr { return &ast.Like{X: x, Pattern: p, Not: not} }
	tests := []struct {
		name string
		e    ast.Expr
		want any // on testRow
		null any // on nullRow
	}{
		{"col", col("I"), int32(7), nil},
		{"add int", bin(ast.OpAdd, col("I"), intLit("1")), int32(8), nil},
		{"add bigint", bin(ast.OpAdd, col("I"), col("B")), int64(17), nil},
		{"sub double", bin(ast.OpSub, col("D"), intLit("1")), 1.5, nil},
		{"mul dec", bin(ast.OpMul, col("M"), intLit("2")), dec("3.00"), nil},
		{"div int", bin(ast.OpDiv, col("I"), intLit("2")), int32(3), nil},
		{"div dec", bin(ast.OpDiv, col("M"), decLit("0.5")), dec("3.000000"), nil},
		{"mod", bin(ast.OpMod, col("B"), intLit("3")), int64(1), nil},
		{"neg", &ast.Unary{Op: ast.OpNeg, X: col("M")}, dec("-1.50"), nil},
		{"concat", bin(ast.OpConcat, col("S"), strLit("!")), "hello!", "!"},
		{"plus concat", bin(ast.OpAdd, col("S"), strLit("!")), "hello!", "null!"},
		{"eq", bin(ast.OpEq, col("I"), intLit("7")), true, false},
		{"eq mixed", bin(ast.OpEq, col("M"), decLit("1.5")), true, false},
		{"lt int double", bin(ast.OpLt, col("I"), col("D")), false, false},
		{"ge", bin(ast.OpGe, col("B"), intLit("10")), true, false},
		{"ne str", bin(ast.OpNe, col("S"), strLit("x")), true, false},
		{"ts vs string", bin(ast.OpGt, col("TS"), strLit("1970-01-01T00:00:00")), true, false},
		{"array eq", bin(ast.OpEq, col("A"), &ast.ArrayCtor{Elems: []ast.Expr{intLit("1"), intLit("2"), intLit("3")}}), true, false},
		{"and", bin(ast.OpAnd, col("T"), bin(ast.OpGt, col("I"), intLit("1"))), true, false},
		{"and null", bin(ast.OpAnd, col("T"), boolLit(true)), true, nil},
		{"and false null", bin(ast.OpAnd, col("T"), boolLit(false)), false, false},
		{"or true null", bin(ast.OpOr, col("T"), boolLit(true)), true, true},
		{"or null", bin(ast.OpOr, col("T"), boolLit(false)), true, nil},
		{"not", &ast.Unary{Op: ast.OpNot, X: col("T")}, false, nil},
		{"is null", &ast.IsNull{X: col("S")}, false, true},
		{"is not null", &ast.IsNull{X: col("S"), Not: true}, true, false},
		{"distinct", &ast.IsDistinct{L: col("I"), R: intLit("7")}, false, true},
		{"not distinct", &ast.IsDistinct{L: col("I"), R: col("I"), Not: true}, true, true},
		{"in", &ast.In{X: col("I"), List: []ast.Expr{intLit("1"), null(), intLit("7")}}, true, false},
		{"not in", &ast.In{X: col("I"), List: []ast.Expr{intLit("1")}, Not: true}, true, true},
		{"in string coercion", &ast.In{X: col("S"), List: []ast.Expr{intLit("10"), strLit("hello")}}, true, false},
		{"between", &ast.Between{X: col("I"), Lo: intLit("1"), Hi: intLit("7")}, true, false},
		{"not between", &ast.Between{X: col("D"), Lo: intLit("3"), Hi: intLit("4"), Not: true}, true, true},
		{"like", like(col("S"), strLit("h%l_o"), false), true, nil},
		{"like no", like(col("S"), strLit("h_"), false), false, nil},
		{"not like", like(col("S"), strLit("%z%"), true), true, nil},
		{"like escape", &ast.Like{X: strLit("50%"), Pattern: strLit("50!%"), Escape: strLit("!")}, true, true},
		{"like escape literal", &ast.Like{X: strLit("50x"), Pattern: strLit("50!%"), Escape: strLit("!")}, false, false},
		{"case", &ast.Case{Whens: []ast.When{{Cond: bin(ast.OpGt, col("I"), intLit("5")), Result: strLit("big")}}, Else: strLit("small")}, "big", "small"},
		{"simple case", &ast.Case{Operand: col("I"), Whens: []ast.When{{Cond: intLit("7"), Result: strLit("seven")}}}, "seven", nil},
		{"cast str int", &ast.Cast{X: strLit(" 42 "), Type: types.IntType}, int32(42), int32(42)},
		{"cast int str", &ast.Cast{X: col("I"), Type: types.StringType}, "7", nil},
		{"cast dec", &ast.Cast{X: col("M"), Type: types.DecimalOf(5, 3)}, dec("1.500"), nil},
		{"cast double int", &ast.Cast{X: col("D"), Type: types.IntType}, int32(2), nil},
		{"cast array str", &ast.Cast{X: col("A"), Type: types.StringType}, "[1, 2, 3]", nil},
		{"cast struct str", &ast.Cast{X: col("ST"), Type: types.StringType}, "Struct{X=5,Y=y}", nil},
		{"cast str ts", &ast.Cast{X: strLit("1970-01-01T00:00:01Z"), Type: types.TimestampType}, types.TimestampValue(1000), types.TimestampValue(1000)},
		{"ucase", call("UCASE", col("S")), "HELLO", nil},
		{"lcase", call("LCASE", strLit("AbC")), "abc", "abc"},
		{"len", call("LEN", col("S")), int32(5), nil},
		{"concat fn", call("CONCAT", col("S"), null(), strLit("!")), "hello!", "!"},
		{"substring", call("SUBSTRING", col("S"), intLit("2"), intLit("3")), "ell", nil},
		{"substring neg", call("SUBSTRING", col("S"), intLit("-3")), "llo", nil},
		{"substring past", call("SUBSTRING", col("S"), intLit("9")), "", nil},
		{"trim", call("TRIM", strLit("  x ")), "x", "x"},
		{"abs", call("ABS", &ast.Unary{Op: ast.OpNeg, X: col("I")}), int32(7), nil},
		{"round", call("ROUND", col("D")), int64(3), nil},
		{"round dec", call("ROUND", col("M")), dec("2"), nil},
		{"round digits", call("ROUND", dblLit("1.255E0"), intLit("2")), 1.26, 1.26},
		{"floor", call("FLOOR", col("D")), 2.0, nil},
		{"ceil", call("CEIL", col("M")), dec("2.00"), nil},
		{"coalesce", call("COALESCE", col("I"), col("B")), int64(7), nil},
		{"ifnull", call("IFNULL", col("S"), strLit("x")), "hello", "x"},
		{"nullif", call("NULLIF", col("I"), intLit("7")), nil, nil},
		{"index", &ast.Subscript{X: col("A"), Index: intLit("-1")}, int32(3), nil},
		{"index out", &ast.Subscript{X: col("A"), Index: intLit("4")}, nil, nil},
		{"map index", &ast.Subscript{X: col("MP"), Index: strLit("a")}, int32(1), nil},
		{"field", &ast.Dereference{X: col("ST"), Field: "X"}, int32(5), nil},
		{"struct", &ast.StructCtor{Names: []string{"A"}, Values: []ast.Expr{col("I")}}, types.StructValue{int32(7)}, types.StructValue{nil}},
		{"map", &ast.MapCtor{Keys: []ast.Expr{strLit("k")}, Values: []ast.Expr{col("I")}}, &types.MapValue{Keys: []any{"k"}, Values: []any{int32(7)}}, &types.MapValue{Keys: []any{"k"}, Values: []any{nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := evalAST(t, tt.e, testRow())
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if !valueEqual(got, tt.want) {
				t.Errorf("Eval(row) = %#v, want %#v", got, tt.want)
			}
			got, err = evalAST(t, tt.e, nullRow())
			if err != nil {
				t.Fatalf("Eval(nulls): %v", err)
			}
			if !valueEqual(got, tt.null) {
				t.Errorf("Eval(nulls) = %#v, want %#v", got, tt.null)
			}
		})
	}
}

// valueEqual compares values exactly, including decimal scale.
func valueEqual(a, b any) bool {
	if x, ok := a.(types.Dec); ok {
		y, ok := b.(types.Dec)
		return ok && x.String() == y.String()
	}
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && math.Abs(x-y) < 1e-9
	}
	return reflect.DeepEqual(a, b)
}

func TestEvalErrors(t *testing.T) {
	for _, e := range []ast.Expr{
		bin(ast.OpDiv, col("I"), intLit("0")),
		bin(ast.OpMod, col("B"), intLit("0")),
		bin(ast.OpDiv, col("M"), decLit("0.0")),
		&ast.Cast{X: strLit("abc"), Type: types.IntType},
		&ast.Cast{X: intLit("10"), Type: types.DecimalOf(2, 1)},
	} {
		if v, err := evalAST(t, e, testRow()); err == nil {
			t.Errorf("Eval = %v, want an error", v)
		}
	}
	if v, err := evalAST(t, bin(ast.OpDiv, col("D"), intLit("0")), testRow()); err != nil || !math.IsInf(v.(float64), 1) {
		t.Errorf("double / 0 = %v, %v; want +Inf", v, err)
	}
}

func TestTruthy(t *testing.T) {
	if !eval.Truthy(true) || eval.Truthy(false) || eval.Truthy(nil) || eval.Truthy("true") {
		t.Fatal("Truthy")
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		e    ast.Expr
		want string
	}{
		{bin(ast.OpAdd, col("I"), intLit("1")), "(I + 1)"},
		{bin(ast.OpEq, col("S"), strLit("it's")), "(S = 'it''s')"},
		{&ast.Cast{X: col("I"), Type: types.BigintType}, "CAST(I AS BIGINT)"},
		{call("UCASE", col("S")), "UCASE(S)"},
		{&ast.IsNull{X: col("S"), Not: true}, "(S IS NOT NULL)"},
		{&ast.In{X: col("I"), List: []ast.Expr{intLit("1"), intLit("2")}}, "(I IN (1, 2))"},
		{&ast.Between{X: col("I"), Lo: intLit("1"), Hi: intLit("2"), Not: true}, "(I NOT BETWEEN 1 AND 2)"},
		{&ast.Like{X: col("S"), Pattern: strLit("a%")}, "(S LIKE 'a%')"},
		{&ast.Case{Whens: []ast.When{{Cond: col("T"), Result: intLit("1")}}, Else: intLit("2")}, "(CASE WHEN T THEN 1 ELSE 2 END)"},
		{&ast.Dereference{X: col("ST"), Field: "X"}, "ST->X"},
		{&ast.Subscript{X: col("A"), Index: intLit("1")}, "A[1]"},
		{dblLit("1.5E10"), "1.5E10"},
		{decLit("1.50"), "1.50"},
		{&ast.TypedLiteral{Type: types.DateType, Text: "2020-01-02"}, "DATE '2020-01-02'"},
	}
	for _, tt := range tests {
		e, err := bind.Bind(tt.e, testScope)
		if err != nil {
			t.Fatalf("Bind: %v", err)
		}
		if got := e.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	exprs := []ast.Expr{
		col("I"), intLit("1"), intLit("5000000000"), decLit("1.50"), dblLit("2.5E-3"), strLit("x\"y"), boolLit(true),
		&ast.Literal{Kind: ast.BytesLit, Text: "\x01\xff"},
		&ast.TypedLiteral{Type: types.TimestampType, Text: "2020-01-01T00:00:00"},
		&ast.TypedLiteral{Type: types.DateType, Text: "2020-01-01"},
		&ast.TypedLiteral{Type: types.TimeType, Text: "10:00:00"},
		&ast.Unary{Op: ast.OpNeg, X: col("I")}, &ast.Unary{Op: ast.OpNot, X: col("T")},
		bin(ast.OpAdd, col("I"), col("B")), bin(ast.OpSub, col("M"), col("M")), bin(ast.OpMul, col("D"), col("D")),
		bin(ast.OpDiv, col("I"), col("I")), bin(ast.OpMod, col("I"), col("I")), bin(ast.OpConcat, col("S"), col("S")),
		bin(ast.OpEq, col("I"), col("I")), bin(ast.OpNe, col("I"), col("I")), bin(ast.OpLt, col("I"), col("I")),
		bin(ast.OpLe, col("I"), col("I")), bin(ast.OpGt, col("I"), col("I")), bin(ast.OpGe, col("I"), col("I")),
		bin(ast.OpAnd, col("T"), col("T")), bin(ast.OpOr, col("T"), null()),
		&ast.IsNull{X: col("S")}, &ast.IsNull{X: col("S"), Not: true},
		&ast.IsDistinct{L: col("I"), R: col("I")}, &ast.IsDistinct{L: col("I"), R: col("I"), Not: true},
		&ast.In{X: col("I"), List: []ast.Expr{intLit("1")}}, &ast.In{X: col("I"), List: []ast.Expr{intLit("1")}, Not: true},
		&ast.Between{X: col("I"), Lo: intLit("1"), Hi: intLit("2")}, &ast.Between{X: col("I"), Lo: intLit("1"), Hi: intLit("2"), Not: true},
		&ast.Like{X: col("S"), Pattern: strLit("a%"), Escape: strLit("!")}, &ast.Like{X: col("S"), Pattern: strLit("a%"), Not: true},
		&ast.Case{Whens: []ast.When{{Cond: col("T"), Result: intLit("1")}}, Else: intLit("2")},
		&ast.Case{Whens: []ast.When{{Cond: col("T"), Result: intLit("1")}}},
		&ast.Cast{X: col("I"), Type: types.DecimalOf(10, 2)}, &ast.Cast{X: null(), Type: types.IntType},
		call("SUBSTRING", col("S"), intLit("1")),
		&ast.Dereference{X: col("ST"), Field: "X"}, &ast.Subscript{X: col("MP"), Index: strLit("a")},
		&ast.ArrayCtor{Elems: []ast.Expr{decLit("1.5"), dblLit("1E300")}},
		&ast.MapCtor{Keys: []ast.Expr{strLit("k")}, Values: []ast.Expr{col("I")}},
		&ast.StructCtor{Names: []string{"A", "B"}, Values: []ast.Expr{col("I"), strLit("x")}},
	}
	row := testRow()
	for _, a := range exprs {
		e, err := bind.Bind(a, testScope)
		if err != nil {
			t.Errorf("Bind(%T): %v", a, err)
			continue
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("Marshal(%s): %v", e, err)
		}
		var back expr.Expr
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		b2, _ := json.Marshal(&back)
		if string(b) != string(b2) || back.String() != e.String() {
			t.Errorf("round trip changed %s:\n%s\n%s", e, b, b2)
		}
		ev1, err1 := eval.Compile(e)
		ev2, err2 := eval.Compile(&back)
		if err1 != nil || err2 != nil {
			t.Fatalf("Compile: %v %v", err1, err2)
		}
		v1, _ := ev1.Eval(row)
		v2, _ := ev2.Eval(row)
		if !reflect.DeepEqual(v1, v2) && !valueEqual(v1, v2) {
			t.Errorf("%s evaluates to %#v before and %#v after the round trip", e, v1, v2)
		}
	}
}

func TestLiteralValueRoundTrip(t *testing.T) {
	st := types.StructOf(types.Field{Name: "A", Type: types.ArrayOf(types.DoubleType)}, types.Field{Name: "M", Type: types.MapOf(types.StringType, types.DecimalOf(3, 1))})
	v := types.StructValue{[]any{math.NaN(), math.Inf(-1), 1.0}, &types.MapValue{Keys: []any{"x"}, Values: []any{dec("1.0")}}}
	e := expr.Literal(v, st)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back expr.Expr
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(&back)
	if string(b) != string(b2) {
		t.Fatalf("%s != %s", b, b2)
	}
}

func TestCoerce(t *testing.T) {
	tests := []struct {
		v        any
		from, to *types.Type
		want     any
		err      bool
	}{
		{int32(1), types.IntType, types.BigintType, int64(1), false},
		{int32(3), types.IntType, types.DoubleType, 3.0, false},
		{int32(3), types.IntType, types.DecimalOf(4, 2), dec("3.00"), false},
		{int64(3), types.BigintType, types.IntType, nil, true},
		{"2020-01-01T00:00:00", types.StringType, types.TimestampType, types.TimestampValue(1577836800000), false},
		{"2020-01-02", types.StringType, types.DateType, types.DateValue(18263), false},
		{"x", types.StringType, types.IntType, nil, true},
		{nil, types.StringType, types.IntType, nil, false},
		{types.StructValue{int32(2), []any{int32(2)}},
			types.StructOf(types.Field{Name: "FOO", Type: types.IntType}, types.Field{Name: "BAR", Type: types.ArrayOf(types.IntType)}),
			types.StructOf(types.Field{Name: "FOO", Type: types.BigintType}, types.Field{Name: "BAR", Type: types.ArrayOf(types.BigintType)}, types.Field{Name: "BAZ", Type: types.DoubleType}),
			types.StructValue{int64(2), []any{int64(2)}, nil}, false},
	}
	for _, tt := range tests {
		got, err := eval.Coerce(tt.v, tt.from, tt.to)
		if (err != nil) != tt.err {
			t.Errorf("Coerce(%v, %s, %s) error = %v", tt.v, tt.from, tt.to, err)
			continue
		}
		if !tt.err && !valueEqual(got, tt.want) {
			t.Errorf("Coerce(%v, %s, %s) = %#v, want %#v", tt.v, tt.from, tt.to, got, tt.want)
		}
	}
}

func BenchmarkEvalFilter(b *testing.B) {
	e, err := bind.Bind(bin(ast.OpAnd, bin(ast.OpGt, bin(ast.OpAdd, col("I"), intLit("1")), intLit("5")), bin(ast.OpEq, col("S"), strLit("hello"))), testScope)
	if err != nil {
		b.Fatal(err)
	}
	ev, _ := eval.Compile(e)
	row := testRow()
	b.ReportAllocs()
	for b.Loop() {
		v, _ := ev.Eval(row)
		if !eval.Truthy(v) {
			b.Fatal("false")
		}
	}
}
