package eval_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

func TestCoercedListTypes(t *testing.T) {
	tests := []struct {
		text string
		want string // the type of the IN value or the constructor
	}{
		{"I IN (1, 2.0, 3.00, '4.000', 5.10, B, D, M)", "DOUBLE"},
		{"I IN (1, '2147483648')", "BIGINT"},
		{"M IN (10, 1.5)", "DECIMAL(12, 2)"},
		{"S IN (true, 10, '10.1', 10.30)", "STRING"},
		{"T IN (true, 'TrUe', 'tr', 'Y')", "BOOLEAN"},
		{"A IN (ARRAY['3', NULL], ARRAY[1, 123456789000])", "ARRAY<BIGINT>"},
		{"ARRAY[NULL, 10, '2e1', I, B]", "ARRAY<DECIMAL(19, 0)>"},
		{"MAP(S := T, 'k' := 'true', 10 := 'no')", "MAP<STRING, BOOLEAN>"},
	}
	for _, tt := range tests {
		e := bindText(t, tt.text)
		got := e.Type
		if e.Op == expr.OpIn {
			got = e.Args[0].Type
			for _, a := range e.Args[1:] {
				if !a.Type.Equal(got) {
					t.Errorf("%s: element %s is %s, want %s", tt.text, a, a.Type, got)
				}
			}
		}
		if got.String() != tt.want {
			t.Errorf("%s: type %s, want %s", tt.text, got, tt.want)
		}
	}
}

func TestCoercedListValues(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "MAP(S := T, 'k' := 'true', 10 := 'no')['10']", want: false},
		{text: "ARRAY[NULL, 10, '2e1'][3]", want: types.DecFromInt64(20)},
		{text: "'10.30' IN (10.30)", want: true},
		{text: "'10.3' IN (10.30)", want: false},
	})
}

func TestCoercionErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"T IN (true, 10)", "operator does not exist: BOOLEAN = INTEGER (10)\nHint: You might need to add explicit type casts."},
		{"T IN (true, 'Not a boolean')", `invalid input syntax for type BOOLEAN: "Not a boolean".`},
		{"M IN (10, true)", "operator does not exist: DECIMAL(12, 2) = BOOLEAN (true)"},
		{"M IN (10.0, '10.0 - not a number')", `invalid input syntax for type DECIMAL: "10.0 - not a number".`},
		{"S IN (10, D)", "operator does not exist: STRING = DOUBLE (D)"},
		{"A IN (A, ARRAY[T])", "operator does not exist: ARRAY<INTEGER> = ARRAY<BOOLEAN> (ARRAY[T])"},
		{"MP IN (MAP('a' := T))", "operator does not exist: MAP<STRING, INTEGER> = MAP<STRING, BOOLEAN> (MAP('a':=T))"},
		{"ARRAY[1, 'not a number']", `invalid input syntax for type INTEGER: "not a number"`},
		{"ARRAY[NULL]", "Cannot construct an array with all NULL elements"},
		{"MAP(NULL := 1)", "Cannot construct a map with all NULL keys"},
		{"MAP('a' := NULL)", "Cannot construct a map with all NULL values"},
		{"STRUCT(F := 1, F := 2)", "Duplicate field names found in STRUCT"},
	}
	for _, tt := range tests {
		if got := bindErr(t, tt.text); !strings.Contains(got, tt.want) {
			t.Errorf("Bind(%s) error = %q, want it to contain %q", tt.text, got, tt.want)
		}
	}
}
