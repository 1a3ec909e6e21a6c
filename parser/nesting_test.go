package parser

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser/ast"
)

// nestShape is one way of nesting an expression. expr(n) is an
// expression nested n levels deep, and past(n) the byte offset, in expr(m)
// for any m >= n, of the token or node that opens level n (where an input
// one level too deep is refused).
type nestShape struct {
	name string
	expr func(n int) string
	past func(n int) int
}

// repeat returns s n times, then mid, then end n times.
func repeat(s, mid, end string, n int) string {
	return strings.Repeat(s, n) + mid + strings.Repeat(end, n)
}

var nestShapes = []nestShape{
	{"parens", func(n int) string { return repeat("(", "1", ")", n) },
		func(n int) int { return n - 1 }},
	{"not", func(n int) string { return repeat("NOT ", "TRUE", "", n) },
		func(n int) int { return 4 * (n - 1) }},
	{"minus", func(n int) string { return repeat("- ", "1", "", n) },
		func(n int) int { return 2 * (n - 1) }},
	{"case", func(n int) string { return repeat("CASE WHEN TRUE THEN ", "1", " END", n) },
		func(n int) int { return 20 * (n - 1) }},
	{"call", func(n int) string { return repeat("ABS(", "1", ")", n) },
		func(n int) int { return 4*(n-1) + 3 }},
	{"array", func(n int) string { return repeat("ARRAY[", "1", "]", n) },
		func(n int) int { return 6*(n-1) + 5 }},
	{"struct", func(n int) string { return repeat("STRUCT(F := ", "1", ")", n) },
		func(n int) int { return 12*(n-1) + 6 }},
	// Each TRANSFORM is two levels, its call and its lambda body (an odd n
	// gets one more).
	{"lambda", func(n int) string { return repeat("TRANSFORM(A, X => ", "X", ")", (n+1)/2) },
		func(n int) int { return 18*((n-1)/2) + 9 }},
	{"deref", func(n int) string { return "S" + strings.Repeat("->F", n) },
		func(n int) int { return 1 + 3*(n-1) }},
	{"subscript", func(n int) string { return "A" + strings.Repeat("[1]", n) },
		func(n int) int { return 1 + 3*(n-1) }},
	// A chain of an operator that is not associative is a deep tree, which
	// the converter refuses: each of its nodes is at the first operand.
	{"minus-chain", func(n int) string { return "1" + strings.Repeat(" - 1", n) },
		func(int) int { return 0 }},
	{"is-null", func(n int) string { return "A" + strings.Repeat(" IS NULL", n) },
		func(int) int { return 0 }},
}

// flatShape is a chain that is long but not nested: its operands are one
// node of the tree, or one list.
type flatShape struct {
	name       string
	head, next string // the first operand, then each further one
	tail       string
}

var flatShapes = []flatShape{
	{"plus", "1", " + 1", ""},
	{"or", "A", " OR A", ""},
	{"and", "A = 1", " AND A = 1", ""},
	{"concat", "S", " || S", ""},
	{"in", "A IN (1", ", 1", ")"},
}

// statementOfSize returns SELECT item, item, ... FROM x with copies of item
// up to size bytes (at least one).
func statementOfSize(item string, size int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(item)
	for b.Len()+len(item)+2+7 <= size {
		b.WriteString(", ")
		b.WriteString(item)
	}
	b.WriteString(" FROM x")
	return b.String()
}

// chainOfSize returns SELECT head next next ... tail FROM x of about size
// bytes.
func chainOfSize(f flatShape, size int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(f.head)
	for b.Len()+len(f.next)+len(f.tail)+7 <= size {
		b.WriteString(f.next)
	}
	b.WriteString(f.tail)
	b.WriteString(" FROM x")
	return b.String()
}

var benchSizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"16KiB", 16 << 10}, {"256KiB", 256 << 10}, {"1MiB", 1 << 20}}

func benchParse(b *testing.B, text string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseNested parses copies of an expression nested as deep as
// allowed, side by side in one select list, for each nesting shape.
func BenchmarkParseNested(b *testing.B) {
	for _, sh := range nestShapes {
		for _, sz := range benchSizes {
			text := statementOfSize(sh.expr(ast.MaxNesting), sz.n)
			b.Run(sh.name+"/"+sz.name, func(b *testing.B) { benchParse(b, text) })
		}
	}
}

// BenchmarkParseChain parses one long flat chain or list.
func BenchmarkParseChain(b *testing.B) {
	for _, f := range flatShapes {
		for _, sz := range benchSizes {
			text := chainOfSize(f, sz.n)
			b.Run(f.name+"/"+sz.name, func(b *testing.B) { benchParse(b, text) })
		}
	}
}

// allocated returns the bytes Parse(text) allocates, and fails when Parse
// fails. The collection before it empties the pool of TiDB parsers, so
// every measure starts alike.
func allocated(t *testing.T, text string) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse(text)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("%.60s...: %v", text, err)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseAllocatesLinearly checks that the bytes Parse allocates grow
// with the input, not with its square: for every shape, 1 MiB of input
// allocates at most 70 times what 16 KiB does (64 times the bytes).
func TestParseAllocatesLinearly(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("parses 15 MiB; the race detector's own allocations would blur the measure")
	}
	const maxRatio = 70
	check := func(name string, small, large string) {
		t.Run(name, func(t *testing.T) {
			a, b := allocated(t, small), allocated(t, large)
			ratio := float64(b) / float64(a)
			t.Logf("16KiB: %9d B  1MiB: %10d B  ratio %.1f", a, b, ratio)
			if ratio > maxRatio {
				t.Errorf("1 MiB of input allocates %d bytes, %.1f times the %d of 16 KiB; want at most %d times", b, ratio, a, maxRatio)
			}
		})
	}
	for _, sh := range nestShapes {
		item := sh.expr(ast.MaxNesting)
		check("nested/"+sh.name, statementOfSize(item, 16<<10), statementOfSize(item, 1<<20))
	}
	for _, f := range flatShapes {
		check("chain/"+f.name, chainOfSize(f, 16<<10), chainOfSize(f, 1<<20))
	}
}

// TestNestingLimit checks that each shape parses at the limit and is
// refused one level past it, at the token that goes past, with an
// allocation bounded by the length of the input even for a very deep one.
func TestNestingLimit(t *testing.T) {
	const prefix = "SELECT "
	for _, sh := range nestShapes {
		t.Run(sh.name, func(t *testing.T) {
			if _, err := Parse(prefix + sh.expr(ast.MaxNesting) + " FROM x"); err != nil {
				t.Fatalf("at the limit: %v", err)
			}
			for _, n := range []int{ast.MaxNesting + 1, 50 * ast.MaxNesting} {
				text := prefix + sh.expr(n) + " FROM x"
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, err := Parse(text)
				runtime.ReadMemStats(&after)
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("%d levels: got %v, want a *Error", n, err)
				}
				want := posAt(text, len(prefix)+sh.past(ast.MaxNesting+1))
				if pe.Line != want.Line || pe.Col != want.Col {
					t.Errorf("%d levels: error at %d:%d, want %d:%d: %v", n, pe.Line, pe.Col, want.Line, want.Col, err)
				}
				wantMsg := fmt.Sprintf("expression nested deeper than %d levels", ast.MaxNesting)
				if !strings.Contains(pe.Msg, wantMsg) || !strings.Contains(pe.Msg, "simplify") {
					t.Errorf("%d levels: message %q does not say %q and what to do", n, pe.Msg, wantMsg)
				}
				// The lexer's tokens are the bulk, some hundreds of bytes a
				// byte of input at most: nothing grows with the depth.
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(400*len(text)+1<<20) {
					t.Errorf("%d levels (%d bytes): refusing allocated %d bytes", n, len(text), alloc)
				}
			}
		})
	}
}

// TestNestingErrorPosition checks the line and column of the error in a
// statement of several lines.
func TestNestingErrorPosition(t *testing.T) {
	text := "SELECT a,\n  b,\n  " + repeat("(", "1", ")", ast.MaxNesting+5) + "\nFROM x;"
	_, err := Parse("SHOW STREAMS;\n" + text)
	want := fmt.Sprintf("line 4:%d: %s", 3+ast.MaxNesting, ast.NestingMessage())
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// TestChains checks that a chain of one associative operator is one Nary
// node with the position of each of its sub-chains, and that other chains
// stay nested.
func TestChains(t *testing.T) {
	e, err := ParseExpr("(a + b) + c + (d + e)")
	if err != nil {
		t.Fatal(err)
	}
	n, ok := e.(*ast.Nary)
	if !ok || n.Op != ast.OpAdd || len(n.Args) != 4 {
		t.Fatalf("got %s (%T), want a chain of 4 operands", ast.FormatExpr(e), e)
	}
	if _, ok := n.Args[3].(*ast.Binary); !ok {
		t.Errorf("a parenthesized right operand joined the chain: %#v", n.Args[3])
	}
	var cols []int
	for _, p := range n.Links {
		cols = append(cols, p.Col)
	}
	if want := []int{2, 1, 1}; !reflect.DeepEqual(cols, want) || n.Pos.Col != 1 {
		t.Errorf("sub-chains at columns %v and the chain at %d, want %v and 1", cols, n.Pos.Col, want)
	}
	if got, want := ast.FormatExpr(e), "(((A + B) + C) + (D + E))"; got != want {
		t.Errorf("prints %s, want %s", got, want)
	}
	for _, text := range []string{"a - b - c", "a + b - c + d", "a / b / c", "a = b = c", "a AND b OR c AND d"} {
		e, err := ParseExpr(text)
		if err != nil {
			t.Fatal(err)
		}
		ast.Walk(e, func(x ast.Expr) bool {
			if _, ok := x.(*ast.Nary); ok {
				t.Errorf("%s: a chain node in %s", text, ast.FormatExpr(e))
			}
			return true
		})
	}
}

// TestTypeNesting checks that a type may nest ARRAY, MAP and STRUCT up to
// the limit, and is refused past it at the type that goes past.
func TestTypeNesting(t *testing.T) {
	typ := func(n int) string { return repeat("STRUCT<A ARRAY<", "INT", ">>", n/2) }
	if _, err := Parse("CREATE STREAM s (v " + typ(ast.MaxNesting) + ") WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON')"); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	text := "CREATE STREAM s (v " + typ(ast.MaxNesting+2) + ") WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON')"
	_, err := Parse(text)
	want := fmt.Sprintf("line 1:%d: type nested deeper than %d levels", 1+len("CREATE STREAM s (v ")+15*ast.MaxNesting/2, ast.MaxNesting)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %s...", err, want)
	}
}
