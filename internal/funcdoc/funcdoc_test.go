package funcdoc

import (
	"strings"
	"testing"
)

func TestAlternatives(t *testing.T) {
	for _, c := range []struct {
		name, msg string
		want      []string
	}{
		{"ABS", "Function 'abs' does not accept parameters ().\nValid alternatives are:\nabs(INTEGER|BIGINT)", []string{"ABS(INTEGER|BIGINT)"}},
		{"F", "Function 'f' does not accept parameters (). Valid alternatives are: f(), f(DATE, STRING)", []string{"F()", "F(DATE, STRING)"}},
		{"F", "Function 'f' does not accept parameters (). Valid alternatives are: f(ARRAY<T>) where T is A, B or C", []string{"F(ARRAY<T>) where T is A, B or C"}},
		{"F", "Function 'F' does not accept parameters (); expected (INTEGER), (MAP<STRING, T>, INTEGER) or (DOUBLE)", []string{"F(INTEGER)", "F(MAP<STRING, T>, INTEGER)", "F(DOUBLE)"}},
		{"F", "Function 'F' does not accept parameters (); expected arguments of one type", []string{"F: arguments of one type"}},
		{"F", "Function 'F' does not accept parameters (); expected (T, INTEGER) where T is one of (INTEGER) or (DOUBLE)", []string{"F(T, INTEGER) where T is one of (INTEGER) or (DOUBLE)"}},
		{"F", "F takes one argument", nil},
	} {
		got := alternatives(c.name, errString(c.msg))
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") || (got == nil) != (c.want == nil) {
			t.Errorf("alternatives(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestAll: every function is described, with its type, a category and
// arguments; COUNT is an aggregate, EXPLODE a table function.
func TestAll(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if f.Category == "" || len(f.Signatures) == 0 || f.Description == "" {
			t.Errorf("%s: %+v", f.Name, f)
		}
	}
	for name, want := range map[string][2]string{
		"COUNT": {"AGGREGATE", "AGGREGATE"}, "EXPLODE": {"TABLE", "TABLE"}, "cube_explode": {"TABLE", "TABLE"},
		"ABS": {"SCALAR", "MATHEMATICAL"}, "MD5": {"SCALAR", "STRING"}, "JSON_ITEMS": {"SCALAR", "JSON"},
		"PARSE_DATE": {"SCALAR", "DATE / TIME"}, "TRANSFORM": {"SCALAR", "LAMBDA"}, "AS_VALUE": {"SCALAR", "OTHER"},
	} {
		f, ok := Lookup(name)
		if !ok || f.Type != want[0] || f.Category != want[1] {
			t.Errorf("Lookup(%s) = %+v, %v; want type %s category %s", name, f, ok, want[0], want[1])
		}
	}
	if _, ok := Lookup("NOPE"); ok {
		t.Error("Lookup(NOPE) found a function")
	}
}
