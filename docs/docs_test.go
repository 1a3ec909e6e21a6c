// Package docs holds Sluice's user documentation. Its tests keep the
// documentation true: the SQL examples parse, and the tutorial's
// statements and outputs are those of the datadriven tests in
// testdata/sql/tutorial_*.test, which run them.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
)

// block is a fenced code block of a Markdown file.
type block struct {
	lang string
	line int // of the opening fence
	text string
}

func blocks(t *testing.T, path string) []block {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &block{lang: strings.TrimPrefix(l, "```"), line: i + 1}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: code block not closed", path, cur.line)
	}
	return out
}

// TestExamplesParse parses every sql block of the documentation.
func TestExamplesParse(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	ref, _ := filepath.Glob("reference/*.md")
	for _, f := range append(files, ref...) {
		for _, b := range blocks(t, f) {
			if b.lang != "sql" {
				continue
			}
			if _, err := parser.Parse(substitute(b.text)); err != nil {
				t.Errorf("%s:%d: %v\n%s", f, b.line, err, b.text)
			}
		}
	}
}

var defineRE = regexp.MustCompile(`(?m)^DEFINE (\w+) = '([^']*)';`)

// substitute replaces ${name} by the value a DEFINE of the block gives it,
// as the engine does before parsing.
func substitute(text string) string {
	for _, m := range defineRE.FindAllStringSubmatch(text, -1) {
		text = strings.ReplaceAll(text, "${"+m[1]+"}", m[2])
	}
	return text
}

// datadriven is what the tutorial's test files hold: the statements they
// run and every line of their expected output.
type datadriven struct {
	statements map[string]bool
	output     []string
}

func readTests(t *testing.T, pattern string) datadriven {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s", pattern)
	}
	d := datadriven{statements: map[string]bool{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			cmd := strings.Fields(lines[i])
			if len(cmd) == 0 || strings.HasPrefix(cmd[0], "#") {
				continue
			}
			// A directive, its input up to ----, then its output up to a
			// blank line.
			j := i + 1
			for j < len(lines) && lines[j] != "----" {
				j++
			}
			if cmd[0] == "statement" || cmd[0] == "query" || cmd[0] == "subscribe" {
				for _, s := range statements(strings.Join(lines[i+1:j], "\n")) {
					d.statements[s] = true
				}
			}
			k := j + 1
			for k < len(lines) && lines[k] != "" {
				d.output = append(d.output, lines[k])
				k++
			}
			i = k
		}
	}
	return d
}

// statements splits SQL text at the semicolons that end lines, with
// comments left out and blanks collapsed.
func statements(text string) []string {
	var out []string
	var cur []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--") {
			continue
		}
		cur = append(cur, strings.Fields(l)...)
		if strings.HasSuffix(strings.TrimSpace(l), ";") {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

// shellOnly are lines of the tutorial's outputs that the shell prints
// around results, which the datadriven tests do not.
var shellOnly = map[string]bool{"Press CTRL-C to interrupt": true, "^C": true, "Query terminated": true, "Limit Reached": true}

// TestTutorialMatchesTests checks that every statement of docs/tutorial.md
// is run by testdata/sql/tutorial_*.test and that every line of output it
// shows is one those tests expect: a table row as the tests print it (a
// row the shell wrapped over several lines joined back), a message, or a
// record read with kcat ("key value").
func TestTutorialMatchesTests(t *testing.T) {
	checkDoc(t, "tutorial.md", "tutorial_*.test", true)
}

// TestQuickstartMatchesTests checks the statements of docs/quickstart.md
// (in sql blocks and after the shell's prompts) and its table rows against
// testdata/sql/quickstart.test. Its other lines (the server's logs, the
// shell's banner and errors) are not checked.
func TestQuickstartMatchesTests(t *testing.T) {
	checkDoc(t, "quickstart.md", "quickstart.test", false)
}

const (
	prompt       = "sluice> "
	promptMore   = "      > "
	maxWrapLines = 5
)

func checkDoc(t *testing.T, doc, tests string, messages bool) {
	d := readTests(t, filepath.Join("..", "testdata", "sql", tests))
	has := func(line string) bool {
		for _, o := range d.output {
			if o == line {
				return true
			}
		}
		return false
	}
	contains := func(s string) bool {
		for _, o := range d.output {
			if strings.Contains(o, s) {
				return true
			}
		}
		return false
	}
	checkStatements := func(line int, text string) {
		for _, s := range statements(text) {
			if !d.statements[s] {
				t.Errorf("%s:%d: no test runs %s", doc, line, s)
			}
		}
	}
	for _, b := range blocks(t, doc) {
		switch b.lang {
		case "sql":
			checkStatements(b.line, b.text)
		case "text":
			lines := strings.Split(strings.TrimSuffix(b.text, "\n"), "\n")
			var typed []string
			for i := 0; i < len(lines); i++ {
				l := lines[i]
				switch {
				case strings.HasPrefix(l, prompt):
					typed = append(typed, strings.TrimPrefix(l, prompt))
				case strings.HasPrefix(l, promptMore):
					typed = append(typed, strings.TrimPrefix(l, promptMore))
				case l == "" || shellOnly[l] || strings.HasPrefix(l, "+-"):
				case strings.HasPrefix(l, "|"):
					row := cells(l)
					n := 1
					for !has(strings.Join(row, " | ")) && i+n < len(lines) && strings.HasPrefix(lines[i+n], "|") && n < maxWrapLines {
						next := cells(lines[i+n])
						for c := range row {
							if c < len(next) {
								row[c] += next[c]
							}
						}
						n++
					}
					if !has(strings.Join(row, " | ")) {
						t.Errorf("%s:%d: no test expects the row %q", doc, b.line, l)
						continue
					}
					i += n - 1
				case !messages || has(l):
				default:
					key, value, ok := strings.Cut(l, " ")
					if !ok || !contains(`"`+key+`" `+value) {
						t.Errorf("%s:%d: no test expects %q", doc, b.line, l)
					}
				}
			}
			checkStatements(b.line, strings.Join(typed, "\n"))
		}
	}
}

// cells returns the trimmed cells of a boxed table row.
func cells(row string) []string {
	parts := strings.Split(strings.Trim(row, "|"), "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#+ (.+)$`)
	slugDrop  = regexp.MustCompile(`[^a-z0-9 _-]`)
)

// slug is the anchor GitHub gives a heading.
func slug(heading string) string {
	s := strings.ToLower(strings.ReplaceAll(heading, "`", ""))
	return strings.ReplaceAll(slugDrop.ReplaceAllString(s, ""), " ", "-")
}

// TestLinks checks that the documentation's relative links name files
// that exist, and headings that exist in them.
func TestLinks(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	ref, _ := filepath.Glob("reference/*.md")
	for _, f := range append(append(files, ref...), filepath.Join("..", "README.md")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
			}
			tb, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: link %s: %v", f, target, err)
				continue
			}
			if anchor == "" {
				continue
			}
			found := false
			for _, h := range headingRE.FindAllStringSubmatch(string(tb), -1) {
				if slug(h[1]) == anchor {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: link %s: no heading with that anchor in %s", f, target, file)
			}
		}
	}
}
