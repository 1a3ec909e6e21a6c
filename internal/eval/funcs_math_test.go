package eval_test

import (
	"math"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/bind"
)

// bindError returns the error of binding text against fullScope.
func bindError(t *testing.T, text string) error {
	t.Helper()
	a, err := parser.ParseExpr(text)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", text, err)
	}
	_, err = bind.Bind(a, fullScope)
	return err
}

type typeCase struct{ text, want string }

func runTypeCases(t *testing.T, cases []typeCase) {
	t.Helper()
	for _, tt := range cases {
		if got := bindText(t, tt.text).Type.String(); got != tt.want {
			t.Errorf("type of %s = %s, want %s", tt.text, got, tt.want)
		}
	}
}

func runBindErrors(t *testing.T, cases []typeCase) {
	t.Helper()
	for _, tt := range cases {
		err := bindError(t, tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Bind(%s) error = %v, want one containing %q", tt.text, err, tt.want)
		}
	}
}

func TestMathTypes(t *testing.T) {
	runTypeCases(t, []typeCase{
		{"ABS(I)", "INTEGER"}, {"ABS(B)", "BIGINT"}, {"ABS(D)", "DOUBLE"}, {"ABS(M)", "DECIMAL(4, 2)"},
		{"FLOOR(M)", "DECIMAL(4, 2)"}, {"CEIL(D)", "DOUBLE"}, {"CEIL(I)", "INTEGER"},
		{"ROUND(D)", "BIGINT"}, {"ROUND(D, 1)", "DOUBLE"}, {"ROUND(M)", "DECIMAL(2, 0)"}, {"ROUND(M, 1)", "DECIMAL(4, 2)"},
		{"ROUND(I)", "INTEGER"}, {"ROUND(B, -1)", "BIGINT"},
		{"TRUNC(D)", "BIGINT"}, {"TRUNC(D, 1)", "DOUBLE"}, {"TRUNC(M)", "DECIMAL(2, 0)"}, {"TRUNC(M, 1)", "DECIMAL(4, 2)"},
		{"SIGN(D)", "INTEGER"}, {"SIGN(M)", "INTEGER"},
		{"EXP(I)", "DOUBLE"}, {"LN(M)", "DOUBLE"}, {"LOG(B, D)", "DOUBLE"}, {"POWER(I, 2)", "DOUBLE"},
		{"PI()", "DOUBLE"}, {"RANDOM()", "DOUBLE"}, {"GEO_DISTANCE(1, 2, 3.5, D, 'mi')", "DOUBLE"},
		{"GREATEST(I, 5, NULL)", "INTEGER"}, {"GREATEST(B, B)", "BIGINT"},
		{"LEAST(I, B, M, D)", "DOUBLE"}, {"GREATEST(M, CAST(1 AS DECIMAL(7, 6)))", "DECIMAL(8, 6)"},
		{"GREATEST(S, 'x')", "STRING"}, {"LEAST(DT, '2020-01-01')", "DATE"}, {"GREATEST(TS, TS)", "TIMESTAMP"},
		{"GREATEST(BS, BS)", "BYTES"},
	})
}

func TestMathBindErrors(t *testing.T) {
	runBindErrors(t, []typeCase{
		{"ABS(S)", "Function 'abs' does not accept parameters (STRING)."},
		{"EXP(S)", "Function 'exp' does not accept parameters (STRING)."},
		{"SQRT(I, I)", "Function 'sqrt' does not accept parameters (INTEGER, INTEGER)."},
		{"ROUND(D, D)", "Function 'round' does not accept parameters (DOUBLE, DOUBLE)."},
		{"PI(1)", "Function 'pi' does not accept parameters (INTEGER)."},
		{"GEO_DISTANCE(D, D, 'foo', 0)", "Function 'geo_distance' does not accept parameters"},
		{"GREATEST()", "Function 'greatest' does not accept parameters ()."},
		{"GREATEST(*)", "Function 'greatest' does not accept parameters ()."},
		{"GREATEST(S, I)", "Function 'greatest' does not accept parameters (STRING, INTEGER)."},
		{"GREATEST(I, B)", "Function 'greatest' cannot be resolved due to ambiguous method parameters (INTEGER, BIGINT)."},
		{"LEAST(NULL, NULL)", "Function 'least' cannot be resolved due to ambiguous method parameters (null, null)."},
		{"GREATEST(T, T)", "Function 'greatest' does not accept parameters (BOOLEAN, BOOLEAN)."},
		{"GREATEST(DT, TS)", "Function 'greatest' does not accept parameters (DATE, TIMESTAMP)."},
	})
}

func TestMathEval(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "ABS(-I)", want: int32(7)},
		{text: "ABS(-B)", want: int64(10)},
		{text: "ABS(-D)", want: 2.5},
		{text: "ABS(-M)", want: dec("1.50")},
		{text: "ABS(I)", row: nullFullRow(), want: nil},

		{text: "FLOOR(D)", want: 2.0},
		{text: "FLOOR(-D)", want: -3.0},
		{text: "CEIL(D)", want: 3.0},
		{text: "FLOOR(M)", want: dec("1.00")},
		{text: "CEIL(M)", want: dec("2.00")},
		{text: "FLOOR(-M)", want: dec("-2.00")},
		{text: "CEIL(-M)", want: dec("-1.00")},
		{text: "FLOOR(I)", want: int32(7)},
		{text: "CEIL(M)", row: nullFullRow(), want: nil},

		// ROUND: ties toward positive infinity for doubles and decimals.
		{text: "ROUND(D)", want: int64(3)},
		{text: "ROUND(-D)", want: int64(-2)},
		{text: "ROUND(D, 0)", want: 3.0},
		{text: "ROUND(-D, 0)", want: -2.0},
		{text: "ROUND(12345.678, 1)", want: dec("12345.700")},
		{text: "ROUND(CAST(12345.678 AS DOUBLE), 2)", want: 12345.68},
		{text: "ROUND(CAST(-12345.678 AS DOUBLE), -2)", want: -12300.0},
		{text: "ROUND(CAST(111 AS DOUBLE), -1)", want: 110.0},
		{text: "ROUND(CAST(1.2 AS DOUBLE), -1)", want: 0.0},
		{text: "ROUND(CAST(1.234567 AS DOUBLE), 10)", want: 1.234567},
		{text: "ROUND(M)", want: dec("2")},
		{text: "ROUND(-M)", want: dec("-1")},
		{text: "ROUND(M, 1)", want: dec("1.50")},
		{text: "ROUND(CAST(-1.55 AS DECIMAL(4, 2)), 1)", want: dec("-1.50")},
		{text: "ROUND(CAST(1.55 AS DECIMAL(4, 2)), 1)", want: dec("1.60")},
		{text: "ROUND(CAST(12345678987654321.2345678987654321 AS DECIMAL(33, 16)), -1)", want: dec("12345678987654320.0000000000000000")},
		{text: "ROUND(CAST(12345678987654321.2345678987654321 AS DECIMAL(33, 16)), 10)", want: dec("12345678987654321.2345678988000000")},
		{text: "ROUND(I, -1)", want: int32(10)},
		{text: "ROUND(B, -1)", want: int64(10)},
		{text: "ROUND(B, -5)", want: int64(0)},
		{text: "ROUND(D, 1000000000)", want: 2.5},
		{text: "ROUND(D, -1000000000)", want: 0.0},
		{text: "ROUND(D, I)", row: withCol(0, nil), want: nil},
		{text: "ROUND(D)", row: nullFullRow(), want: nil},
		{text: "ROUND(D, 1)", row: withCol(2, math.Inf(1)), want: nil, wantErr: true},

		{text: "TRUNC(D)", want: int64(2)},
		{text: "TRUNC(-D)", want: int64(-2)},
		{text: "TRUNC(CAST(-12345.678 AS DOUBLE), 2)", want: -12345.67},
		{text: "TRUNC(CAST(12345.678 AS DOUBLE), -1)", want: 12340.0},
		{text: "TRUNC(M)", want: dec("1")},
		{text: "TRUNC(-M, 0)", want: dec("-1.00")},
		{text: "TRUNC(CAST(-1.57 AS DECIMAL(4, 2)), 1)", want: dec("-1.50")},
		{text: "TRUNC(I)", want: int32(7)},
		{text: "TRUNC(D)", row: withCol(2, math.NaN()), want: int64(0)},
		{text: "TRUNC(D)", row: withCol(2, 1e300), want: int64(math.MaxInt64)},
		{text: "TRUNC(M, 1)", row: nullFullRow(), want: nil},

		{text: "SIGN(-I)", want: int32(-1)},
		{text: "SIGN(B - B)", want: int32(0)},
		{text: "SIGN(D)", want: int32(1)},
		{text: "SIGN(-M)", want: int32(-1)},
		{text: "SIGN(D)", row: nullFullRow(), want: nil},

		{text: "EXP(0)", want: 1.0},
		{text: "EXP(I - 8)", want: 0.36787944117144233},
		{text: "LN(B - 8)", want: 0.6931471805599453},
		{text: "SQRT(M)", want: 1.224744871391589},
		{text: "CBRT(-8)", want: -2.0},
		{text: "POWER(15, -1)", want: 0.06666666666666667},
		{text: "POWER(0, 0)", want: 1.0},
		{text: "POWER(I, 2)", want: 49.0},
		{text: "LOG(13)", want: 2.5649493574615367},
		{text: "LOG(15, 13)", want: 0.9471572411831843},
		{text: "LOG(15, 1)", want: 0.0},
		{text: "COT(7)", want: 1.1475154224051},
		{text: "ATAN2(2, -3)", want: 2.5535900500422},
		{text: "ATAN2(0, -3)", want: math.Pi},
		{text: "ACOS(-1)", want: math.Pi},
		{text: "ASIN(1)", want: math.Pi / 2},
		{text: "ATAN(1)", want: math.Pi / 4},
		{text: "COS(0)", want: 1.0},
		{text: "SIN(0)", want: 0.0},
		{text: "TAN(6)", want: -0.2910061913847},
		{text: "COSH(7)", want: 548.317035155212},
		{text: "SINH(-7)", want: -548.3161232732465},
		{text: "TANH(0)", want: 0.0},
		{text: "DEGREES(2)", want: 114.59155902616465},
		{text: "RADIANS(114)", want: 1.9896753472735356},
		{text: "PI()", want: math.Pi},
		{text: "EXP(D)", row: nullFullRow(), want: nil},
		{text: "ATAN2(D, I)", row: withCol(0, nil), want: nil},
		{text: "LOG(D, I)", row: withCol(2, nil), want: nil},

		{text: "GEO_DISTANCE(37.4439, -122.1663, 51, 0)", want: 8682.459061368269},
		{text: "GEO_DISTANCE(37.4439, -122.1663, 51, 0, 'KM')", want: 8682.459061368269},
		{text: "GEO_DISTANCE(37.4439, -122.1663, 51, 0, 'miles')", want: 8682.459061368269 / 6371 * 3959},
		{text: "GEO_DISTANCE(37.4439, -122.1663, 51, 0, 'parsecs')", want: nil, wantErr: true},
		{text: "GEO_DISTANCE(97.4439, -122.1663, 51, 0)", want: nil, wantErr: true},
		{text: "GEO_DISTANCE(37.4439, -222.1663, 51, 0)", want: nil, wantErr: true},
		{text: "GEO_DISTANCE(D, 1, 2, 3)", row: nullFullRow(), want: nil},

		{text: "GREATEST(I, 5, NULL)", want: int32(7)},
		{text: "LEAST(I, 5, NULL)", want: int32(5)},
		{text: "GREATEST(I, 5)", row: nullFullRow(), want: int32(5)},
		{text: "GREATEST(I, CAST(NULL AS INT))", row: nullFullRow(), want: nil},
		{text: "GREATEST(I, B, M, D)", want: 10.0},
		{text: "LEAST(I, B, M, D)", want: 1.5},
		{text: "GREATEST(M, CAST(1.123456 AS DECIMAL(7, 6)))", want: dec("1.50")},
		{text: "LEAST(M, CAST(1.123456 AS DECIMAL(7, 6)))", want: dec("1.123456")},
		{text: "GREATEST(S, 'apple', 'zebra')", want: "zebra"},
		{text: "LEAST(S, 'apple', 'zebra')", want: "apple"},
		{text: "GREATEST(DT, '2022-06-14')", want: types.DateValue(19157)},
		{text: "LEAST(DT, '2022-06-14')", want: types.DateValue(10)},
		{text: "GREATEST(TM, '09:16:00')", want: types.TimeValue(33360000)},
		{text: "GREATEST(BS, BS)", want: []byte{0x0a, 0xff}},
	})
}

func TestMathNaN(t *testing.T) {
	for _, text := range []string{
		"LN(-1)", "SQRT(-D)", "ACOS(2)", "ASIN(-6)", "LOG(-13)", "LOG(15, -13)", "LOG(-15, 13)",
		"LOG(0, 13)", "LOG(1, 13)", "POWER(1, CAST('NaN' AS DOUBLE))", "GREATEST(D, CAST('NaN' AS DOUBLE))",
	} {
		v, err := evalText(t, text, fullRow())
		if f, ok := v.(float64); err != nil || !ok || !math.IsNaN(f) {
			t.Errorf("%s = %v, %v; want NaN", text, v, err)
		}
	}
}

func TestMathInfinity(t *testing.T) {
	for _, tt := range []struct {
		text string
		sign int
	}{
		{"LN(0)", -1}, {"LOG(15, 0)", -1}, {"COT(0)", 1}, {"POWER(0, -1)", 1}, {"EXP(1000)", 1},
		{"GREATEST(CAST('Infinity' AS DOUBLE), 1.0)", 1}, {"LEAST(CAST('-Infinity' AS DOUBLE), D)", -1},
	} {
		v, err := evalText(t, tt.text, fullRow())
		if f, ok := v.(float64); err != nil || !ok || !math.IsInf(f, tt.sign) {
			t.Errorf("%s = %v, %v; want an infinity of sign %d", tt.text, v, err, tt.sign)
		}
	}
}

func TestRandom(t *testing.T) {
	for range 100 {
		v, err := evalText(t, "RANDOM()", fullRow())
		if f, ok := v.(float64); err != nil || !ok || f < 0 || f >= 1 {
			t.Fatalf("RANDOM() = %v, %v; want a DOUBLE in [0, 1)", v, err)
		}
	}
}
