package eval_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/bind"
)

// qttDir is the shared conformance corpus, relative to this package. Its
// statements seed the evaluator's fuzz target at run time; nothing of it is
// kept in the repository.
var qttDir = filepath.Join("..", "..", "..", "shared", "qtt")

var (
	selectListRE = regexp.MustCompile(`(?is)\bSELECT\s+(.*?)\s+FROM\b`)
	whereRE      = regexp.MustCompile(`(?is)\bWHERE\s+(.*?)(?:\s+(?:GROUP|PARTITION|EMIT|WINDOW|HAVING|LIMIT)\b|;|$)`)
	statementsRE = regexp.MustCompile(`"statements"\s*:\s*\[((?:\s*"(?:[^"\\]|\\.)*"\s*,?)*)\]`)
	stringRE     = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// splitTop splits s at commas outside parentheses, brackets and quotes.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '`' || c == '"':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// qttExpressions returns the select items and WHERE conditions of the
// corpus's statements, with any AS alias removed.
func qttExpressions(tb testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(qttDir, "*.json"))
	alias := regexp.MustCompile(`(?is)\s+AS\s+[A-Za-z_][A-Za-z_0-9]*\s*$`)
	seen := map[string]bool{}
	var out []string
	add := func(e string) {
		e = strings.TrimSpace(alias.ReplaceAllString(strings.TrimSpace(e), ""))
		if e != "" && e != "*" && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range statementsRE.FindAllSubmatch(b, -1) {
			for _, s := range stringRE.FindAllSubmatch(m[1], -1) {
				stmt := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, " ").Replace(string(s[1]))
				for _, sel := range selectListRE.FindAllStringSubmatch(stmt, -1) {
					for _, item := range splitTop(sel[1]) {
						add(item)
					}
				}
				for _, w := range whereRE.FindAllStringSubmatch(stmt, -1) {
					add(w[1])
				}
			}
		}
	}
	return out
}

// FuzzEval parses, binds, compiles and evaluates expressions over a row of
// every type and over a row of nulls: an expression may be refused or fail
// to evaluate, but never panic.
func FuzzEval(f *testing.F) {
	for _, s := range []string{
		"I + B * 2", "CASE WHEN T THEN S ELSE 'x' END", "SUBSTRING(S, 2, 3)",
		"CAST(M AS DOUBLE) / 0", "A[1] + MP['a']", "ST->X", "TRANSFORM(A, x => x * 2)",
		"REDUCE(A, 0, (s, x) => s + x)", "TIMESTAMPTOSTRING(B, 'yyyy-MM-dd')",
		"EXTRACTJSONFIELD(S, '$.a')", "LPAD(S, 8, '*')", "S LIKE 'h%'",
	} {
		f.Add(s)
	}
	if _, err := os.Stat(qttDir); err == nil {
		for _, e := range qttExpressions(f) {
			f.Add(e)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 512 {
			return
		}
		a, err := parser.ParseExpr(text)
		if err != nil {
			return
		}
		e, err := bind.Bind(a, fullScope)
		if err != nil {
			return
		}
		ev, err := eval.Compile(e)
		if err != nil {
			return
		}
		_, _ = ev.Eval(fullRow())
		_, _ = ev.Eval(nullFullRow())
	})
}

// TestFuzzEvalSeeds checks that the corpus gives the fuzz target seeds.
func TestFuzzEvalSeeds(t *testing.T) {
	if _, err := os.Stat(qttDir); err != nil {
		t.Skipf("QTT corpus not found in %s", qttDir)
	}
	if n := len(qttExpressions(t)); n < 200 {
		t.Fatalf("%d expressions from %s, want at least 200", n, qttDir)
	}
}
