package eval_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/bind"
)

var (
	stXY   = types.StructOf(types.Field{Name: "X", Type: types.IntType}, types.Field{Name: "Y", Type: types.StringType})
	stAB   = types.StructOf(types.Field{Name: "A", Type: types.BigintType}, types.Field{Name: "B", Type: types.BigintType})
	stCD   = types.StructOf(types.Field{Name: "C", Type: types.StringType}, types.Field{Name: "D", Type: types.IntType})
	arrInt = types.ArrayOf(types.IntType)
)

// fullScope has a column of every type; fullRow and its variants fill it.
var fullScope = bind.ScopeOf("T", []types.Column{
	{Name: "I", Type: types.IntType},                                         // 0
	{Name: "B", Type: types.BigintType},                                      // 1
	{Name: "D", Type: types.DoubleType},                                      // 2
	{Name: "M", Type: types.DecimalOf(4, 2)},                                 // 3
	{Name: "S", Type: types.StringType},                                      // 4
	{Name: "T", Type: types.BooleanType},                                     // 5
	{Name: "BS", Type: types.BytesType},                                      // 6
	{Name: "TS", Type: types.TimestampType},                                  // 7
	{Name: "DT", Type: types.DateType},                                       // 8
	{Name: "TM", Type: types.TimeType},                                       // 9
	{Name: "A", Type: arrInt},                                                // 10
	{Name: "STRS", Type: types.ArrayOf(types.StringType)},                    // 11
	{Name: "AA", Type: types.ArrayOf(arrInt)},                                // 12
	{Name: "MP", Type: types.MapOf(types.StringType, types.IntType)},         // 13
	{Name: "MA", Type: types.MapOf(types.StringType, arrInt)},                // 14
	{Name: "ST", Type: stXY},                                                 // 15
	{Name: "ST2", Type: stAB},                                                // 16
	{Name: "AST", Type: types.ArrayOf(stCD)},                                 // 17
	{Name: "MD", Type: types.MapOf(types.StringType, types.DecimalOf(4, 2))}, // 18
})

func mapOf(kv ...any) *types.MapValue {
	m := &types.MapValue{Keys: []any{}, Values: []any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Keys = append(m.Keys, kv[i])
		m.Values = append(m.Values, kv[i+1])
	}
	return m
}

func ints(vs ...any) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = int32(v.(int))
		}
	}
	return out
}

func fullRow() []any {
	return []any{
		int32(7), int64(10), 2.5, dec("1.50"), "hello", true, []byte{0x0a, 0xff},
		types.TimestampValue(86400100), types.DateValue(10), types.TimeValue(3723004),
		ints(1, 2, 3), []any{"a", nil, "c"}, []any{ints(5, 7, 1), ints(3, nil)},
		mapOf("a", int32(15), "abc", int32(7)), mapOf("yes", ints(2, 14), "no", ints(-4, 35)),
		types.StructValue{int32(5), "y"}, types.StructValue{int64(4), int64(2)},
		[]any{types.StructValue{"ste", int32(2)}, types.StructValue{"q", int32(0)}},
		mapOf("test", dec("3.21"), "hello", dec("4.49")),
	}
}

// withCol returns fullRow with column i set to v.
func withCol(i int, v any) []any {
	r := fullRow()
	r[i] = v
	return r
}

func nullFullRow() []any { return make([]any, len(fullScope)) }

func bindText(t *testing.T, text string) *expr.Expr {
	t.Helper()
	a, err := parser.ParseExpr(text)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", text, err)
	}
	e, err := bind.Bind(a, fullScope)
	if err != nil {
		t.Fatalf("Bind(%q): %v", text, err)
	}
	return e
}

func evalText(t *testing.T, text string, row []any) (any, error) {
	t.Helper()
	e := bindText(t, text)
	ev, err := eval.Compile(e)
	if err != nil {
		t.Fatalf("Compile(%s): %v", e, err)
	}
	return ev.Eval(row)
}

type evalCase struct {
	text    string
	row     []any
	want    any
	wantErr bool // Eval reports a failure (the value is still want)
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tt := range cases {
		row := tt.row
		if row == nil {
			row = fullRow()
		}
		got, err := evalText(t, tt.text, row)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.text, err, tt.wantErr)
		}
		if !deepValueEqual(got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.text, got, tt.want)
		}
	}
}

// deepValueEqual is valueEqual inside arrays, maps and structs too.
func deepValueEqual(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !deepValueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case types.StructValue:
		y, ok := b.(types.StructValue)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !deepValueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *types.MapValue:
		y, ok := b.(*types.MapValue)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for i := range x.Keys {
			if !deepValueEqual(x.Keys[i], y.Keys[i]) || !deepValueEqual(x.Values[i], y.Values[i]) {
				return false
			}
		}
		return true
	}
	return valueEqual(a, b)
}

func TestLambdas(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "TRANSFORM(A, x => x + 5)", want: ints(6, 7, 8)},
		// ksqlDB runs lambda arithmetic without null checks: a null operand
		// fails the whole call.
		{text: "TRANSFORM(A, x => x + 5)", row: withCol(10, ints(5, nil)), want: nil, wantErr: true},
		{text: "TRANSFORM(A, x => x + 5)", row: nullFullRow(), want: nil},
		{text: "TRANSFORM(A, x => x + I)", want: ints(8, 9, 10)},
		{text: "TRANSFORM(A, I => I * 10)", want: ints(10, 20, 30)},
		{text: "TRANSFORM(STRS, x => UCASE(x))", want: []any{"A", nil, "C"}},
		{text: "TRANSFORM(A, x => CASE WHEN x > 1 THEN 'big' ELSE 'small' END)", want: []any{"small", "big", "big"}},
		{text: "TRANSFORM(A, x => CASE WHEN x > 1 THEN 'big' ELSE 'small' END)", row: withCol(10, ints(nil)), want: []any{"small"}},
		{text: "TRANSFORM(AST, x => STRUCT(Q := x->D + 5, P := x->C + 'h'))",
			want: []any{types.StructValue{int32(7), "steh"}, types.StructValue{int32(5), "qh"}}},
		{text: "TRANSFORM(A, x => TRANSFORM(A, y => x * y))", want: []any{ints(1, 2, 3), ints(2, 4, 6), ints(3, 6, 9)}},
		// A null operand inside the inner lambda fails the inner call only.
		{text: "TRANSFORM(AA, x => TRANSFORM(x, y => y + 1))", want: []any{ints(6, 8, 2), nil}, wantErr: true},
		{text: "TRANSFORM(A, x => ARRAY[NULL, STRUCT(X := I, Y := x), STRUCT(Y := I, Z := x)])", row: withCol(10, ints(40)),
			want: []any{[]any{nil, types.StructValue{int32(7), int32(40), nil}, types.StructValue{nil, int32(7), int32(40)}}}},
		{text: "TRANSFORM(MP, (k, v) => k + '_x', (k, v) => v * 2)", want: mapOf("a_x", int32(30), "abc_x", int32(14))},
		{text: "TRANSFORM(MD, (x, y) => UCASE(x), (x, y) => ROUND(y))", want: mapOf("TEST", dec("3"), "HELLO", dec("4"))},
		{text: "TRANSFORM(MP, (k, v) => 'same', (k, v) => v)", want: nil, wantErr: true},
		{text: "TRANSFORM(MP, (k, v) => k, (k, v) => v)", row: nullFullRow(), want: nil},
		{text: "FILTER(A, x => x > 1)", want: ints(2, 3)},
		{text: "FILTER(A, x => x > 5)", row: withCol(10, ints(5, nil)), want: []any{}},
		{text: "FILTER(A, x => x > 5)", row: nullFullRow(), want: nil},
		{text: "FILTER(MP, (k, v) => LEN(k) * 5 > 10 AND v % 7 = 0)", want: mapOf("abc", int32(7))},
		{text: "FILTER(MP, (k, v) => LEN(k) * 5 > 10 AND v % 7 = 0)", row: withCol(13, mapOf("abcd", nil, "x", int32(1))), want: nil, wantErr: true},
		{text: "FILTER(MA, (k, v) => v[1] < 0)", want: mapOf("no", ints(-4, 35))},
		{text: "REDUCE(A, 2, (s, x) => s + x)", want: int32(8)},
		{text: "REDUCE(A, 2, (s, x) => s + x)", row: withCol(10, ints(5, nil)), want: nil, wantErr: true},
		{text: "REDUCE(A, 2, (s, x) => s + x)", row: nullFullRow(), want: int32(2)},
		{text: "REDUCE(A, B, (s, x) => s + x)", want: int64(16)},
		{text: "REDUCE(A, B, (s, x) => s + x)", row: withCol(1, nil), want: nil},
		{text: "REDUCE(STRS, '', (s, x) => CONCAT(s, x))", want: "ac"},
		{text: "REDUCE(MP, 0, (s, k, v) => s + v + LEN(k))", want: int32(26)},
		// A function that fails inside a lambda yields null for that call
		// only.
		{text: "TRANSFORM(STRS, x => IFNULL(CAST(x AS INT), -1))", want: ints(-1, -1, -1), wantErr: true},
	})
}

func TestLambdaTypes(t *testing.T) {
	tests := []struct{ text, typ, str string }{
		{"TRANSFORM(A, x => x + 5)", "ARRAY<INTEGER>", "TRANSFORM(A, X => (X + 5))"},
		{"TRANSFORM(A, x => CAST(x AS STRING))", "ARRAY<STRING>", "TRANSFORM(A, X => CAST(X AS STRING))"},
		{"TRANSFORM(MP, (k, v) => v, (k, v) => k)", "MAP<INTEGER, STRING>", "TRANSFORM(MP, (K, V) => V, (K, V) => K)"},
		{"FILTER(MA, (k, v) => v[1] > 0)", "MAP<STRING, ARRAY<INTEGER>>", "FILTER(MA, (K, V) => (V[1] > 0))"},
		{"REDUCE(A, B, (s, x) => s + x)", "BIGINT", "REDUCE(A, B, (S, X) => (S + X))"},
		{"REDUCE(A, 0, (s, x) => NULL)", "INTEGER", "REDUCE(A, 0, (S, X) => null)"},
		{"TRANSFORM(AA, x => TRANSFORM(x, y => y * 2))", "ARRAY<ARRAY<INTEGER>>", "TRANSFORM(AA, X => TRANSFORM(X, Y => (Y * 2)))"},
	}
	for _, tt := range tests {
		e := bindText(t, tt.text)
		if got := e.Type.String(); got != tt.typ {
			t.Errorf("%s: type %s, want %s", tt.text, got, tt.typ)
		}
		if got := e.String(); got != tt.str {
			t.Errorf("%s: String() = %q, want %q", tt.text, got, tt.str)
		}
	}
	// Slots: the inner lambda's parameter follows the outer one's.
	e := bindText(t, "TRANSFORM(AA, x => TRANSFORM(x, y => y))")
	outer := e.Args[1]
	inner := outer.Args[0].Args[1]
	if outer.Op != expr.OpLambda || outer.Col != 0 || inner.Op != expr.OpLambda || inner.Col != 1 {
		t.Fatalf("slots: outer %v@%d, inner %v@%d", outer.Op, outer.Col, inner.Op, inner.Col)
	}
	if v := inner.Args[0]; v.Op != expr.OpLambdaVar || v.Col != 1 || v.Name != "Y" || v.Type.Kind != types.Int {
		t.Fatalf("inner variable = %+v", v)
	}
}

func bindErr(t *testing.T, text string) string {
	t.Helper()
	a, err := parser.ParseExpr(text)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", text, err)
	}
	_, err = bind.Bind(a, fullScope)
	var be *bind.Error
	if !errors.As(err, &be) {
		t.Fatalf("Bind(%q) error = %v, want an *Error", text, err)
	}
	return be.Msg
}

func TestBindTextErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"UCASE(x => x)", "argument 1 of UCASE cannot be a lambda"},
		{"TRANSFORM(A, 5)", "argument 2 of TRANSFORM must be a lambda with 1 parameter"},
		{"TRANSFORM(A, (x, y) => x)", "must be a lambda with 1 parameter, not 2"},
		{"TRANSFORM(MP, x => x, (k, v) => v)", "must be a lambda with 2 parameters, not 1"},
		{"TRANSFORM(A, (x, x) => x)", "must be a lambda with 1 parameter, not 2"},
		{"TRANSFORM(MP, (x, x) => x, (k, v) => v)", "lambda parameter X is declared twice"},
		{"TRANSFORM(S, x => x)", "the first argument of TRANSFORM must be an ARRAY or a MAP, not STRING"},
		{"TRANSFORM(A, x => y)", "column 'Y' cannot be resolved"},
		{"TRANSFORM(A, x => NULL)", "cannot infer the type of the TRANSFORM lambda's result"},
		{"FILTER(A, x => x + 1)", "the FILTER lambda must return BOOLEAN, not INTEGER"},
		{"REDUCE(A, NULL, (s, x) => x)", "cannot infer the type of the REDUCE initial state"},
		{"REDUCE(A, 0, (s, x) => CAST(x AS BIGINT))", "the REDUCE lambda returns BIGINT, which does not fit the state type INTEGER"},
		{"REDUCE(A, 0, s => s)", "argument 3 of REDUCE must be a lambda with 2 parameters, not 1"},
		{"CAST(I AS MYTYPE)", "unknown type MYTYPE; create it with CREATE TYPE"},
		{"CAST(A AS ARRAY<MYTYPE>)", "unknown type MYTYPE; create it with CREATE TYPE"},
		{"ST->`x`", "field 'x' not found in ST; fields: X, Y"},
		{"ST2 IN (ST2, STRUCT(A := T))", "operator does not exist: STRUCT<`A` BIGINT, `B` BIGINT> = STRUCT<`A` BOOLEAN> (STRUCT(A:=T))\nHint: You might need to add explicit type casts."},
		{"ST2 IN (STRUCT(A := 'not 10'))", `invalid input syntax for type BIGINT: "not 10"`},
		{"A IN (ARRAY['10', 'not 10'])", `invalid input syntax for type INTEGER: "not 10"`},
		// Arithmetic refuses an untyped NULL, printing the operator's node
		// and both operand types as ksqlDB does.
		{"1 + NULL", "Error processing expression: (1 + null). Arithmetic on types INTEGER and null are not supported."},
		{"NULL * NULL", "Error processing expression: (null * null). Arithmetic on types null and null are not supported."},
		{"5.0 / NULL", "Arithmetic on types DECIMAL(2, 1) and null are not supported."},
		{"NULL % I", "Error processing expression: (null % I). Arithmetic on types null and INTEGER are not supported."},
		{"'a' + NULL", "Arithmetic on types STRING and null are not supported."},
		{"I + B + NULL", "Error processing expression: ((I + B) + null). Arithmetic on types BIGINT and null are not supported."},
		{"MAP(1 := 'cat') + NULL", "Error processing expression: (MAP(1:='cat') + null). Arithmetic on types MAP<INTEGER, STRING> and null are not supported."},
		{"ST2 IN (STRUCT(A := 10), ARRAY[10])", "operator does not exist: STRUCT<`A` BIGINT, `B` BIGINT> = ARRAY<INTEGER> (ARRAY[10])"},
	}
	for _, tt := range tests {
		if got := bindErr(t, tt.text); !strings.Contains(got, tt.want) {
			t.Errorf("Bind(%s) error = %q, want it to contain %q", tt.text, got, tt.want)
		}
	}
}

func TestLocalErrors(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "IFNULL(CAST('x' AS INT), 0)", want: int32(0), wantErr: true},
		{text: "COALESCE(I / 0, 5)", want: int32(5), wantErr: true},
		{text: "CAST('x' AS INT) IS NULL", want: true, wantErr: true},
		{text: "I / 0", want: nil, wantErr: true},
		{text: "I / 0 > 1 OR T", want: true, wantErr: true},
		{text: "ARRAY[I, I / 0, 1]", want: ints(7, nil, 1), wantErr: true},
		{text: "STRUCT(A := CAST('x' AS INT), B := S)", want: types.StructValue{nil, "hello"}, wantErr: true},
		{text: "CONCAT(S, CAST(CAST('x' AS INT) AS STRING))", want: "hello", wantErr: true},
		{text: "CASE WHEN I / 0 = 1 THEN 'a' ELSE 'b' END", want: "b", wantErr: true},
		{text: "UCASE(CAST(I / 0 AS STRING))", want: nil, wantErr: true},
		{text: "I + 1", want: int32(8)},
	})
	// The first failure is the one reported.
	_, err := evalText(t, "ARRAY[CAST('x' AS INT), I / 0]", fullRow())
	if err == nil || !strings.Contains(err.Error(), "INTEGER") {
		t.Errorf("first error = %v, want the CAST's", err)
	}
}

func TestCompoundValues(t *testing.T) {
	sv := func(vs ...any) types.StructValue { return types.StructValue(vs) }
	runEvalCases(t, []evalCase{
		// Struct comparison matches fields by name; a missing field is null.
		{text: "ST2 IN (STRUCT(A:=1,B:=2), STRUCT(A:=3,B:=2,C:=4), STRUCT(B:=2,A:=4), STRUCT(A:=5), STRUCT(A:=6,B:=CAST(null AS BIGINT)), STRUCT(A:='7',B:=2))",
			row: withCol(16, sv(int64(4), int64(2))), want: true},
		{text: "ST2 IN (STRUCT(A:=3,B:=2,C:=4))", row: withCol(16, sv(int64(3), int64(2))), want: false},
		{text: "ST2 IN (STRUCT(A:=5))", row: withCol(16, sv(int64(5), nil)), want: true},
		{text: "ST2 IN (STRUCT(A:='7',B:=2))", row: withCol(16, sv(int64(7), int64(2))), want: true},
		{text: "ST2 IN (STRUCT(A:=4,B:=2))", row: nullFullRow(), want: false},
		{text: "ST2 = STRUCT(B := 2, A := 4)", want: true},
		{text: "ST2 <> STRUCT(B := 2, A := 4)", want: false},
		{text: "ST2 IS DISTINCT FROM STRUCT(A := 4)", want: true},
		{text: "STRUCT(X := 5, Y := 'y') = ST", want: true},
		{text: "A = ARRAY[1, 2, 3]", want: true},
		{text: "MP = MAP('abc' := 7, 'a' := 15)", want: true},
		{text: "A IN (ARRAY['1', '2', '3'])", want: true},
		// Subscripts: 1-based, negative from the end, out of range null.
		{text: "A[1]", want: int32(1)},
		{text: "A[-1]", want: int32(3)},
		{text: "A[-3]", want: int32(1)},
		{text: "A[0]", want: nil},
		{text: "A[4]", want: nil},
		{text: "A[-4]", want: nil},
		{text: "A[I - 6]", want: int32(1)},
		{text: "A[B]", want: nil},
		{text: "A[1]", row: nullFullRow(), want: nil},
		{text: "AA[1][2]", want: int32(7)},
		{text: "MP['abc']", want: int32(7)},
		{text: "MP['zz']", want: nil},
		{text: "MA['yes'][-1]", want: int32(14)},
		{text: "ST->X", want: int32(5)},
		{text: "ST->Y", row: nullFullRow(), want: nil},
		{text: "AST[1]->C", want: "ste"},
		// Constructors.
		{text: "ARRAY[1, 2.5, NULL]", want: []any{dec("1.0"), dec("2.5"), nil}},
		{text: "ARRAY[I, B]", want: []any{int64(7), int64(10)}},
		{text: "ARRAY[S, NULL]", row: nullFullRow(), want: []any{nil, nil}},
		{text: "MAP('a' := I, 'b' := 2)", want: mapOf("a", int32(7), "b", int32(2))},
		{text: "MAP('a' := 1, 'a' := 2)", want: mapOf("a", int32(2))},
		{text: "STRUCT(A := I, `b` := S)", want: sv(int32(7), "hello")},
		{text: "STRUCT(A := I, `b` := S)->`b`", want: "hello"},
		// CAST between compound types.
		{text: "CAST(A AS ARRAY<STRING>)", want: []any{"1", "2", "3"}},
		{text: "CAST(AA AS ARRAY<ARRAY<STRING>>)", want: []any{[]any{"5", "7", "1"}, []any{"3", nil}}},
		{text: "CAST(STRS AS ARRAY<INT>)", want: nil, wantErr: true},
		{text: "CAST(MP AS MAP<STRING, BIGINT>)", want: mapOf("a", int64(15), "abc", int64(7))},
		{text: "CAST(MP AS MAP<STRING, STRING>)", want: mapOf("a", "15", "abc", "7")},
		{text: "CAST(ST AS STRUCT<X BIGINT, Z STRING>)", want: sv(int64(5), nil)},
		{text: "CAST(ST AS STRUCT<Y STRING, X STRING>)", want: sv("y", "5")},
		{text: "CAST(ST AS STRING)", want: "Struct{X=5,Y=y}"},
		{text: "CAST(MP AS STRING)", want: "{a=15, abc=7}"},
		{text: "CAST(A AS STRING)", want: "[1, 2, 3]"},
	})
}

func TestScalarCasts(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "CAST(M AS DECIMAL(5, 3))", want: dec("1.500")},
		{text: "CAST(I AS DECIMAL(2, 1))", want: dec("7.0")},
		{text: "CAST(B AS DECIMAL(2, 1))", want: nil, wantErr: true},
		{text: "CAST(0.99 AS DECIMAL(2, 1))", want: dec("1.0")},
		{text: "CAST(D AS DECIMAL(2, 1))", want: dec("2.5")},
		{text: "CAST('0.01' AS DECIMAL(2, 1))", want: dec("0.0")},
		{text: "CAST(M AS INT)", want: int32(1)},
		{text: "CAST(M AS BIGINT)", want: int64(1)},
		{text: "CAST(M AS DOUBLE)", want: 1.5},
		{text: "CAST(M AS STRING)", want: "1.50"},
		{text: "CAST(D AS INT)", want: int32(2)},
		{text: "CAST(TS AS STRING)", want: "1970-01-02T00:00:00.100"},
		{text: "CAST(TS AS DATE)", want: types.DateValue(1)},
		{text: "CAST(TS AS TIME)", want: types.TimeValue(100)},
		{text: "CAST(CAST(-2000 AS BIGINT) AS STRING)", want: "-2000"},
		{text: "CAST(DT AS STRING)", want: "1970-01-11"},
		{text: "CAST(DT AS TIMESTAMP)", want: types.TimestampValue(864000000)},
		{text: "CAST(TM AS STRING)", want: "01:02:03.004"},
		{text: "CAST('1970-01-10' AS DATE)", want: types.DateValue(9)},
		{text: "CAST('1970-01' AS DATE)", want: types.DateValue(0)},
		{text: "CAST('1969-12-31' AS DATE)", want: types.DateValue(-1)},
		{text: "CAST('foo' AS DATE)", want: nil, wantErr: true},
		{text: "CAST('1970-01-01T00:00:00.010' AS TIMESTAMP)", want: types.TimestampValue(10)},
		{text: "CAST('2022-04-28T21:44:47.943Z' AS TIMESTAMP)", want: types.TimestampValue(1651182287943)},
		{text: "CAST('10:00' AS TIME)", want: types.TimeValue(36000000)},
		{text: "CAST('true' AS BOOLEAN)", want: true},
		{text: "CAST(NULL AS ARRAY<INT>)", want: nil},
		{text: "CAST(S AS STRING)", row: nullFullRow(), want: nil},
	})
	for _, text := range []string{"CAST(BS AS STRING)", "CAST(S AS BYTES)", "CAST(TS AS BIGINT)", "CAST(S AS STRUCT<A INT>)"} {
		if msg := bindErr(t, text); !strings.Contains(msg, "is not supported") {
			t.Errorf("Bind(%s) error = %q", text, msg)
		}
	}
}

func TestLiterals(t *testing.T) {
	tests := []struct {
		text, typ string
		want      any
	}{
		{"TRUE", "BOOLEAN", true},
		{"false", "BOOLEAN", false},
		{"2147483647", "INTEGER", int32(2147483647)},
		{"-2147483648", "INTEGER", int32(-2147483648)},
		{"2147483648", "BIGINT", int64(2147483648)},
		{"-9223372036854775808", "BIGINT", int64(-9223372036854775808)},
		{"000009223372036854775807", "BIGINT", int64(9223372036854775807)},
		{"2.345", "DECIMAL(4, 3)", dec("2.345")},
		{"0.050", "DECIMAL(3, 3)", dec("0.050")},
		{"-1.50", "DECIMAL(3, 2)", dec("-1.50")},
		{"1.5E10", "DOUBLE", 1.5e10},
		{"04.90E-324", "DOUBLE", 4.9e-324},
		{"'it''s'", "STRING", "it's"},
		{"X'0AFF'", "BYTES", []byte{0x0a, 0xff}},
		{"TIMESTAMP '1970-01-01T00:00:01.5'", "TIMESTAMP", types.TimestampValue(1500)},
		{"DATE '1970-01-03'", "DATE", types.DateValue(2)},
		{"TIME '00:00:02'", "TIME", types.TimeValue(2000)},
		{"ARRAY['a']", "ARRAY<STRING>", []any{"a"}},
		{"MAP(1 := TRUE)", "MAP<INTEGER, BOOLEAN>", mapOf(int32(1), true)},
		{"STRUCT(`x y` := 1.5)", "STRUCT<`x y` DECIMAL(2, 1)>", types.StructValue{dec("1.5")}},
	}
	for _, tt := range tests {
		e := bindText(t, tt.text)
		if got := e.Type.String(); got != tt.typ {
			t.Errorf("%s: type %s, want %s", tt.text, got, tt.typ)
		}
		got, err := evalText(t, tt.text, nil)
		if err != nil || !deepValueEqual(got, tt.want) {
			t.Errorf("%s = %#v, %v; want %#v", tt.text, got, err, tt.want)
		}
	}
}

func TestStringOperators(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "'prefix-' + S + '-postfix'", want: "prefix-hello-postfix"},
		// + is Java string concatenation in ksqlDB: null is written as null.
		{text: "'prefix-' + S", row: nullFullRow(), want: "prefix-null"},
		{text: "S + 'x'", row: nullFullRow(), want: "nullx"},
		{text: "'a' + CAST(NULL AS STRING)", want: "anull"},
		// || is CONCAT: null operands are skipped.
		{text: "S || '!'", want: "hello!"},
		{text: "S || '!'", row: nullFullRow(), want: "!"},
		{text: "S || S", row: nullFullRow(), want: ""},
		{text: "BS || X'01'", want: []byte{0x0a, 0xff, 0x01}},
		{text: "BS || X'01'", row: nullFullRow(), want: []byte{0x01}},
	})
	if got := bindText(t, "S + 'x'").String(); got != "(S + 'x')" {
		t.Errorf("String() = %q", got)
	}
}

func TestResolveTypes(t *testing.T) {
	catalog := map[string]*types.Type{
		"MYINT":    types.IntType,
		"MYSTRUCT": types.StructOf(types.Field{Name: "N", Type: &types.Type{Kind: types.Unknown, Name: "MYINT"}}),
	}
	resolve := func(name string) (*types.Type, bool) {
		t, ok := catalog[name]
		return t, ok
	}
	a, err := parser.ParseExpr("CAST(CAST(S AS ARRAY<MYINT>) AS STRUCT<A MYSTRUCT>)")
	if err == nil {
		err = bind.ResolveTypes(a, resolve)
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err = parser.ParseExpr("TRANSFORM(A, x => CAST(x AS MYINT)) = ARRAY[CAST(STRUCT(N := 1) AS MYSTRUCT)->N]")
	if err != nil {
		t.Fatal(err)
	}
	if err := bind.ResolveTypes(a, resolve); err != nil {
		t.Fatal(err)
	}
	e, err := bind.Bind(a, fullScope)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.String(); got != "(TRANSFORM(A, X => CAST(X AS INTEGER)) = ARRAY[CAST(STRUCT(N:=1) AS STRUCT<`N` INTEGER>)->N])" {
		t.Errorf("resolved: %s", got)
	}
	a, _ = parser.ParseExpr("I + CAST(S AS MAP<STRING, NOPE>)")
	err = bind.ResolveTypes(a, resolve)
	var be *bind.Error
	if !errors.As(err, &be) || be.Msg != "unknown type NOPE; create it with CREATE TYPE" || be.Pos.Line != 1 {
		t.Errorf("unknown type error = %#v", err)
	}

	st := types.StructOf(types.Field{Name: "A", Type: types.ArrayOf(&types.Type{Kind: types.Unknown, Name: "MYSTRUCT"})}, types.Field{Name: "B", Type: types.StringType})
	r, err := types.Resolve(st, resolve)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.String(); got != "STRUCT<`A` ARRAY<STRUCT<`N` INTEGER>>, `B` STRING>" {
		t.Errorf("Resolve = %s", got)
	}
	if r.Fields[0].Type.Elem.Name != "MYSTRUCT" || st.Fields[0].Type.Elem.Kind != types.Unknown {
		t.Errorf("Resolve must name the resolved type and leave its input alone")
	}
	if same, _ := types.Resolve(types.MapOf(types.StringType, arrInt), resolve); !reflect.DeepEqual(same, types.MapOf(types.StringType, arrInt)) {
		t.Errorf("Resolve changed a type without custom names: %s", same)
	}
	var ue *types.UnknownTypeError
	if _, err := types.Resolve(types.MapOf(types.StringType, &types.Type{Name: "X"}), resolve); !errors.As(err, &ue) || ue.Name != "X" {
		t.Errorf("Resolve unknown = %v", err)
	}
	catalog["LOOP"] = &types.Type{Name: "LOOP"}
	if _, err := types.Resolve(&types.Type{Name: "LOOP"}, resolve); err == nil {
		t.Errorf("Resolve of a self-referencing type succeeded")
	}
}

func TestNewNodesJSONRoundTrip(t *testing.T) {
	texts := []string{
		"TRANSFORM(A, x => x + 5)",
		"TRANSFORM(MP, (k, v) => k + '_x', (k, v) => v * 2)",
		"FILTER(MA, (k, v) => v[1] < 0)",
		"REDUCE(MP, 0, (s, k, v) => s + v + LEN(k))",
		"TRANSFORM(A, x => TRANSFORM(A, y => x * y + I))",
		"REDUCE(A, 0.5, (s, x) => s + x)",
		"S + 'x'",
		"ST2 IN (STRUCT(A:='7',B:=2))",
		"X'0AFF' || BS",
	}
	row := fullRow()
	for _, text := range texts {
		e := bindText(t, text)
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
			t.Fatalf("Compile(%s): %v %v", e, err1, err2)
		}
		v1, _ := ev1.Eval(row)
		v2, _ := ev2.Eval(row)
		if !deepValueEqual(v1, v2) {
			t.Errorf("%s evaluates to %#v before and %#v after the round trip", e, v1, v2)
		}
	}
	// The op names are part of the plan format.
	b, _ := json.Marshal(bindText(t, "FILTER(A, x => x > 1)"))
	for _, want := range []string{`"op":"LAMBDA"`, `"op":"LAMBDA_VAR"`, `"names":["X"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
}

func TestCompileRejectsMalformedLambdas(t *testing.T) {
	v := &expr.Expr{Op: expr.OpLambdaVar, Type: types.IntType, Col: 0, Name: "X"}
	if _, err := eval.Compile(v); err == nil {
		t.Error("a lambda variable outside its lambda compiled")
	}
	e := bindText(t, "TRANSFORM(A, x => x)")
	e.Args[1].Col = 3
	if _, err := eval.Compile(e); err == nil {
		t.Error("a lambda with a wrong first slot compiled")
	}
	e = bindText(t, "TRANSFORM(A, x => x)")
	e.Args[1] = expr.Literal(int32(1), types.IntType)
	if _, err := eval.Compile(e); err == nil {
		t.Error("TRANSFORM without a lambda compiled")
	}
	e = bindText(t, "REDUCE(A, 0, (s, x) => s)")
	e.Args[2].Names = []string{"S"}
	if _, err := eval.Compile(e); err == nil {
		t.Error("REDUCE with a one-parameter lambda compiled")
	}
	if _, err := eval.Compile(&expr.Expr{Op: expr.OpLambda, Names: []string{"X"}, Args: []*expr.Expr{v}}); err == nil {
		t.Error("a lambda outside a call compiled")
	}
	if _, err := eval.Compile(&expr.Expr{Op: expr.OpCast, Type: &types.Type{Name: "T"}, Args: []*expr.Expr{expr.Literal(int32(1), types.IntType)}}); err == nil {
		t.Error("a CAST to an unresolved type compiled")
	}
}

func BenchmarkEvalTransform(b *testing.B) {
	a, _ := parser.ParseExpr("REDUCE(A, 0, (s, x) => s + x * 2) > 5")
	e, err := bind.Bind(a, fullScope)
	if err != nil {
		b.Fatal(err)
	}
	ev, _ := eval.Compile(e)
	row := fullRow()
	b.ReportAllocs()
	for b.Loop() {
		v, _ := ev.Eval(row)
		if !eval.Truthy(v) {
			b.Fatal("false")
		}
	}
}
