package parser

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kr/pretty"

	"github.com/sluice-sql/sluice/parser/ast"
)

// FuzzParse feeds the parser arbitrary text. The seed corpus is every
// statement of the shared QTT corpus, read at run time, and each way of
// nesting an expression at and just past ast.MaxNesting. Parse must not
// panic; it either fails with a *Error whose position lies within the input,
// or returns statements that print (ast.Format) to SQL parsing back to the
// same AST. The printed form parenthesizes every operator, so it may nest
// past the limit where the input did not: that refusal is allowed.
func FuzzParse(f *testing.F) {
	for _, cases := range loadQTT(f) {
		for _, tc := range cases {
			for _, s := range tc.statements() {
				f.Add(s)
			}
		}
	}
	for _, sh := range nestShapes {
		for _, n := range []int{ast.MaxNesting, ast.MaxNesting + 1} {
			f.Add("SELECT " + sh.expr(n) + " FROM x;")
		}
	}
	for _, fl := range flatShapes {
		f.Add(chainOfSize(fl, 1<<10))
	}
	f.Add("SELECT " + strings.Repeat("1 - ", ast.MaxNesting) + "1 FROM x")
	f.Add("SELECT " + strings.Repeat("1 - ", ast.MaxNesting+1) + "1 FROM x")
	f.Fuzz(func(t *testing.T, text string) {
		sts, err := Parse(text)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is %T, not *parser.Error: %v", err, err)
			}
			if !posWithin(text, pe.Line, pe.Col) {
				t.Fatalf("error position %d:%d is outside the input %q: %v", pe.Line, pe.Col, text, err)
			}
			return
		}
		for _, st := range sts {
			printed := ast.Format(st)
			again, err := ParseOne(printed)
			if err != nil && strings.Contains(err.Error(), ast.NestingMessage()) {
				continue
			}
			if err != nil {
				t.Fatalf("printed statement does not parse: %v\n  original: %q\n  printed:  %q", err, st.SQL(), printed)
			}
			if a, b := stripped(st), stripped(again); !reflect.DeepEqual(a, b) {
				t.Fatalf("printed statement parses to another AST\n  original: %q\n  printed:  %q\n  diff: %s",
					st.SQL(), printed, strings.Join(pretty.Diff(a, b), "\n        "))
			}
		}
	})
}

// posWithin reports whether line:col (1-based, col in characters) is a
// position of text, counting the position just after its last character.
func posWithin(text string, line, col int) bool {
	lines := strings.Split(text, "\n")
	if line < 1 || line > len(lines) {
		return false
	}
	return col >= 1 && col <= utf8.RuneCountInString(lines[line-1])+1
}
