package parser

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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

type qttFile struct {
	Tests []struct {
		Name       string   `json:"name"`
		Statements []string `json:"statements"`
		Format     []string `json:"format"`
		Expected   any      `json:"expectedException"`
	} `json:"tests"`
}

// TestQTTCorpus parses every statement of the shared ksqlDB test corpus.
func TestQTTCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "qtt")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("QTT corpus not found in %s", dir)
		}
		t.Skipf("QTT corpus not found in %s", dir)
	}
	total, ok, expectedFail := 0, 0, 0
	reasons := map[string]int{}
	examples := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var qf qttFile
		if err := json.Unmarshal([]byte(stripJSONComments(string(b))), &qf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range qf.Tests {
			format := "JSON"
			if len(tc.Format) > 0 {
				format = tc.Format[0]
			}
			for _, s := range tc.Statements {
				total++
				s = strings.ReplaceAll(s, "{FORMAT}", format)
				if _, err := Parse(s); err != nil {
					if tc.Expected != nil {
						expectedFail++
					}
					msg := err.Error()
					if i := strings.Index(msg, ": "); i >= 0 {
						msg = msg[i+2:]
					}
					if len(msg) > 70 {
						msg = msg[:70]
					}
					reasons[msg]++
					if _, seen := examples[msg]; !seen {
						examples[msg] = filepath.Base(f) + ": " + s + "\n    " + err.Error()
					}
					continue
				}
				ok++
			}
		}
	}
	rate := float64(ok) / float64(total)
	t.Logf("QTT statements parsed: %d of %d (%.1f%%); %d of the failures are in cases that expect an error", ok, total, 100*rate, expectedFail)
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
}
