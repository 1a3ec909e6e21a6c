package parser

import (
	"testing"

	"github.com/sluice-sql/sluice/parser/ast"
)

// TestExprEqual checks ast.Equal and ast.Hasher on parsed expressions:
// positions and (when asked) qualifiers do not count, a chain equals the
// left-nested tree it stands for, and equal expressions hash alike.
func TestExprEqual(t *testing.T) {
	for _, tt := range []struct {
		a, b             string
		ignoreQualifiers bool
		equal            bool
	}{
		{"a + 1", "a  +  1", false, true},
		{"t.a + 1", "a + 1", true, true},
		{"t.a + 1", "a + 1", false, false},
		{"t.a", "u.a", true, true},
		{"t.a", "u.a", false, false},
		{"a + b + c", "(a + b) + c", false, true},
		{"a + b + c", "a + (b + c)", false, false},
		{"a + b + c + d", "((a + b) + c) + d", true, true},
		{"a - b", "b - a", false, false},
		{"a AND b AND c", "(a AND b) AND c", false, true},
		{"a + 1", "a + 2", false, false},
		{"a + 1", "a + 1.0", false, false},
		{"'x'", "'x'", false, true},
		{"UCASE(a)", "ucase(a)", false, true},
		{"UCASE(a)", "LCASE(a)", false, false},
		{"CAST(a AS BIGINT)", "CAST(a AS INT)", false, false},
		{"CAST(a AS DECIMAL(4, 2))", "CAST(a AS DECIMAL(4,2))", false, true},
		{"CASE WHEN a > 1 THEN 'x' ELSE 'y' END", "CASE WHEN a > 1 THEN 'x' ELSE 'y' END", false, true},
		{"CASE WHEN a > 1 THEN 'x' END", "CASE WHEN a > 1 THEN 'x' ELSE 'y' END", false, false},
		{"a IN (1, 2)", "a NOT IN (1, 2)", false, false},
		{"a BETWEEN 1 AND 2", "a BETWEEN 1 AND 2", false, true},
		{"s->f", "s->g", false, false},
		{"m['k']", "m['k']", false, true},
		{"ARRAY[1, 2]", "ARRAY[1, 2, 3]", false, false},
		{"STRUCT(x := 1)", "STRUCT(y := 1)", false, false},
		{"TRANSFORM(xs, x => x + 1)", "TRANSFORM(xs, y => y + 1)", false, false},
		{"a IS NULL", "a IS NOT NULL", false, false},
	} {
		a, err := ParseExpr(tt.a)
		if err != nil {
			t.Fatalf("%s: %v", tt.a, err)
		}
		b, err := ParseExpr(tt.b)
		if err != nil {
			t.Fatalf("%s: %v", tt.b, err)
		}
		if got := ast.Equal(a, b, tt.ignoreQualifiers); got != tt.equal {
			t.Errorf("Equal(%s, %s, %v) = %v, want %v", tt.a, tt.b, tt.ignoreQualifiers, got, tt.equal)
		}
		if got := ast.Equal(b, a, tt.ignoreQualifiers); got != tt.equal {
			t.Errorf("Equal(%s, %s, %v) = %v, want %v", tt.b, tt.a, tt.ignoreQualifiers, got, tt.equal)
		}
		h := ast.NewHasher(tt.ignoreQualifiers)
		if tt.equal && h.Hash(a) != h.Hash(b) {
			t.Errorf("%s and %s are equal but hash differently", tt.a, tt.b)
		}
	}
}

// TestFormatExprQualified checks that printing with another qualifier
// leaves the expression as it was.
func TestFormatExprQualified(t *testing.T) {
	e, err := ParseExpr("t.a + b")
	if err != nil {
		t.Fatal(err)
	}
	before := ast.FormatExpr(e)
	if got, want := ast.FormatExprQualified(e, "S"), "(S.A + S.B)"; got != want {
		t.Errorf("FormatExprQualified = %s, want %s", got, want)
	}
	if got := ast.FormatExprQualified(e, ""); got != "(A + B)" {
		t.Errorf("FormatExprQualified without a qualifier = %s", got)
	}
	if after := ast.FormatExpr(e); after != before {
		t.Errorf("the expression changed: %s, then %s", before, after)
	}
}
