package parser

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kr/pretty"

	"github.com/sluice-sql/sluice/parser/ast"
)

// qttFloor is the share of corpus statements that must parse; it guards
// against regressions.
const qttFloor = 0.99

// stripJSONComments removes // and /* */ comments outside JSON strings (the
// corpus files were written for a lenient reader).
func stripJSONComments(s string) string {
	var b strings.Builder
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			b.WriteByte(c)
			if c == '\\' && i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			b.WriteByte(c)
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			i += j + 3
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// qttCase is one test case of the corpus.
type qttCase struct {
	Name       string   `json:"name"`
	Statements []string `json:"statements"`
	Format     []string `json:"format"`
	Exception  *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"expectedException"`
	// ExpectedError is the REST-shaped expectation of insert-values.json.
	ExpectedError *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"expectedError"`
}

type qttFile struct {
	Tests []qttCase `json:"tests"`
}

// qttDir is where the shared corpus lives, relative to this package.
var qttDir = filepath.Join("..", "..", "shared", "qtt")

// loadQTT reads every case of the corpus. It skips the test when the corpus
// is missing, except under CI=true, where that is a failure.
func loadQTT(tb testing.TB) map[string][]qttCase {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(qttDir, "*.json"))
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("QTT corpus not found in %s", qttDir)
		}
		tb.Skipf("QTT corpus not found in %s", qttDir)
	}
	out := map[string][]qttCase{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var qf qttFile
		if err := json.Unmarshal([]byte(stripJSONComments(string(b))), &qf); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = qf.Tests
	}
	return out
}

// statements returns the case's statements with {FORMAT} replaced by the
// case's first format (JSON when it has none).
func (c qttCase) statements() []string {
	format := "JSON"
	if len(c.Format) > 0 {
		format = c.Format[0]
	}
	out := make([]string, len(c.Statements))
	for i, s := range c.Statements {
		out[i] = strings.ReplaceAll(s, "{FORMAT}", format)
	}
	return out
}

// syntaxMessageRE matches the messages ksqlDB gives for errors of its
// grammar.
var syntaxMessageRE = regexp.MustCompile(`(?i)syntax error|mismatched input|extraneous input|no viable alternative|missing '.*' at`)

// expectsSyntaxError reports whether a case expects ksqlDB to reject one of
// its statements while parsing it.
//
// The rule: the expected exception's type is ParseFailedException (ksqlDB
// throws it from its parser stage: the ANTLR grammar and the building of the
// AST from the parse tree, which also checks numeric literal ranges and the
// WITH properties of CREATE), or its message carries one of the grammar's
// messages ("Syntax error", "mismatched input", "extraneous input", "no
// viable alternative", "missing 'x' at"). Messages such as "invalid input
// syntax for type INTEGER" are evaluation errors and do not count.
func (c qttCase) expectsSyntaxError() bool {
	for _, e := range []*struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}{c.Exception, c.ExpectedError} {
		if e == nil {
			continue
		}
		if strings.HasSuffix(e.Type, ".ParseFailedException") || syntaxMessageRE.MatchString(e.Message) {
			return true
		}
	}
	return false
}

// qttPosRE finds the position in an expected message: "line L:C" as the
// grammar reports it, or "Failed to prepare statement: line L:C" as ksqlDB's
// AST builder reports it; the AST builder's column is one past the token
// (ksqlDB adds 1 to a column that is already 1-based), so the test takes one
// off.
var qttPosRE = regexp.MustCompile(`(Failed to prepare statement: )?line (\d+):(\d+)`)

// expectedPos returns the expected line and 1-based column of the case's
// syntax error, or ok == false when the message gives none.
func (c qttCase) expectedPos() (line, col int, ok bool) {
	msg := ""
	if c.Exception != nil {
		msg = c.Exception.Message
	} else if c.ExpectedError != nil {
		msg = c.ExpectedError.Message
	}
	m := qttPosRE.FindStringSubmatch(msg)
	if m == nil {
		return 0, 0, false
	}
	line, _ = strconv.Atoi(m[2])
	col, _ = strconv.Atoi(m[3])
	if m[1] != "" {
		col--
	}
	return line, col, true
}

// TestQTTCorpus parses every statement of the shared ksqlDB test corpus
// (../shared/qtt, third-party data read in place):
//
//   - at least qttFloor of the statements of cases that do not expect a
//     syntax error parse;
//   - every statement that parses prints (ast.Format) to SQL that parses to
//     the same AST, positions and statement text aside;
//   - every case that expects a syntax error (see expectsSyntaxError) fails
//     with a *Error that says what was expected, at the line and column of
//     the expected message when it gives one. Lines count over the case's
//     statements joined by newlines, as the corpus counts them.
func TestQTTCorpus(t *testing.T) {
	corpus := loadQTT(t)
	total, ok, roundTrips := 0, 0, 0
	synCases, synFailed, synWithPos, synPosOK := 0, 0, 0, 0
	reasons := map[string]int{}
	examples := map[string]string{}
	names := make([]string, 0, len(corpus))
	for f := range corpus {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		for _, tc := range corpus[f] {
			stmts := tc.statements()
			if tc.expectsSyntaxError() {
				synCases++
				failed, posOK, hasPos := checkSyntaxCase(t, f, tc, stmts)
				if failed {
					synFailed++
				}
				if hasPos {
					synWithPos++
					if posOK {
						synPosOK++
					}
				}
				continue
			}
			for _, s := range stmts {
				total++
				sts, err := Parse(s)
				if err != nil {
					msg := err.Error()
					if i := strings.Index(msg, ": "); i >= 0 {
						msg = msg[i+2:]
					}
					if len(msg) > 70 {
						msg = msg[:70]
					}
					reasons[msg]++
					if _, seen := examples[msg]; !seen {
						examples[msg] = f + ": " + s + "\n    " + err.Error()
					}
					continue
				}
				ok++
				for _, st := range sts {
					if checkRoundTrip(t, f+": "+tc.Name, st) {
						roundTrips++
					}
				}
			}
		}
	}
	rate := float64(ok) / float64(total)
	type kv struct {
		k string
		n int
	}
	var rs []kv
	for k, n := range reasons {
		rs = append(rs, kv{k, n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].k < rs[j].k })
	for i, r := range rs {
		if i == 15 {
			break
		}
		t.Logf("%4d  %s\n    e.g. %s", r.n, r.k, examples[r.k])
	}
	if rate < qttFloor {
		t.Errorf("QTT parse rate %.3f fell below the floor %.3f", rate, qttFloor)
	}
	t.Logf("QTT summary: parsed %d of %d statements (%.1f%%) of cases not expecting a syntax error; %d round trips; "+
		"syntax-error cases failed %d of %d, at the expected position %d of %d",
		ok, total, 100*rate, roundTrips, synFailed, synCases, synPosOK, synWithPos)
}

// checkSyntaxCase runs a case that expects a syntax error: its statements in
// order until one fails. It reports whether one failed with a *Error, and,
// when the expected message gives a position, whether the error is there.
func checkSyntaxCase(t *testing.T, file string, tc qttCase, stmts []string) (failed, posOK, hasPos bool) {
	t.Helper()
	wantLine, wantCol, hasPos := tc.expectedPos()
	line0 := 0 // lines before the current statement in the joined text
	for _, s := range stmts {
		sts, err := Parse(s)
		if err == nil {
			for _, st := range sts {
				checkRoundTrip(t, file+": "+tc.Name, st)
			}
			line0 += strings.Count(s, "\n") + 1
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: %s: error is %T, not *parser.Error: %v", file, tc.Name, err, err)
			return false, false, hasPos
		}
		if !strings.Contains(strings.ToLower(pe.Msg+"\n"+pe.Hint), "expected") {
			t.Errorf("%s: %s: the message does not say what was expected: %v", file, tc.Name, err)
		}
		if !hasPos {
			return true, false, false
		}
		if line0+pe.Line != wantLine || pe.Col != wantCol {
			t.Errorf("%s: %s: syntax error at %d:%d, want %d:%d: %v", file, tc.Name, line0+pe.Line, pe.Col, wantLine, wantCol, err)
			return true, false, true
		}
		return true, true, true
	}
	t.Errorf("%s: %s: expected a syntax error, but every statement parsed:\n  %s", file, tc.Name, strings.Join(stmts, "\n  "))
	return false, false, hasPos
}

// checkRoundTrip prints st and parses the result again; the two ASTs must be
// the same, positions and statement text aside.
func checkRoundTrip(t testing.TB, where string, st ast.Statement) bool {
	t.Helper()
	text := ast.Format(st)
	again, err := ParseOne(text)
	if err != nil {
		t.Errorf("%s: printed statement does not parse: %v\n  original: %s\n  printed:  %s", where, err, st.SQL(), text)
		return false
	}
	if a, b := stripped(st), stripped(again); !reflect.DeepEqual(a, b) {
		t.Errorf("%s: printed statement parses to another AST\n  original: %s\n  printed:  %s\n  diff: %s",
			where, st.SQL(), text, strings.Join(pretty.Diff(a, b), "\n        "))
		return false
	}
	return true
}
