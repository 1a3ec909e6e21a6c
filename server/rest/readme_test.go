package rest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeExample is a ```sh block of the README marked <!-- rest-example -->
// and the ```text block after it, its expected output.
type readmeExample struct {
	script string
	want   []string
}

// readmeExamples reads the marked examples of the README.
func readmeExamples(t *testing.T) []readmeExample {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeExample
	lines := strings.Split(string(raw), "\n")
	block := func(i int, fence string) (string, int) {
		for i < len(lines) && strings.TrimSpace(lines[i]) != fence {
			if strings.TrimSpace(lines[i]) == "<!-- rest-example -->" {
				return "", i
			}
			i++
		}
		if i == len(lines) {
			return "", i
		}
		var b strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			b.WriteString(lines[i] + "\n")
		}
		return b.String(), i
	}
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "<!-- rest-example -->" {
			continue
		}
		script, j := block(i+1, "```sh")
		if script == "" {
			t.Fatalf("README.md:%d: a rest-example marker not followed by a ```sh block", i+1)
		}
		want, k := block(j+1, "```text")
		if want == "" {
			t.Fatalf("README.md:%d: the example has no ```text block of its output after it", j+1)
		}
		out = append(out, readmeExample{script: script, want: strings.Split(strings.TrimRight(want, "\n"), "\n")})
		i = k
	}
	return out
}

// TestREADMEExamples runs the README's curl examples, in order, against a
// fresh server (their address replaced by the test server's) and compares
// their output with the README's; an expected line ending in "..." need
// only start the same.
func TestREADMEExamples(t *testing.T) {
	bash, err := exec.LookPath("bash")
	need(t, err == nil, "bash")
	_, err = exec.LookPath("curl")
	need(t, err == nil, "curl")
	examples := readmeExamples(t)
	if len(examples) < 3 {
		t.Fatalf("found %d marked examples in README.md, want the /ksql and /query-stream ones", len(examples))
	}
	e := newEnv(t)
	addr := strings.TrimPrefix(e.url, "http://")
	for i, ex := range examples {
		script := strings.ReplaceAll(ex.script, "127.0.0.1:8088", addr)
		out, err := exec.Command(bash, "-eo", "pipefail", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("example %d failed: %v\n%s\n%s", i+1, err, ex.script, out)
		}
		got := strings.Split(strings.TrimRight(maskQueryIDs(string(out)), "\n"), "\n")
		ok := len(got) == len(ex.want)
		for j := 0; ok && j < len(got); j++ {
			if w, prefix := strings.CutSuffix(ex.want[j], "..."); prefix {
				ok = strings.HasPrefix(got[j], w)
			} else {
				ok = got[j] == maskQueryIDs(ex.want[j])
			}
		}
		if !ok {
			t.Errorf("example %d:\n%s\nprinted:\n%s\nthe README says:\n%s", i+1, ex.script, out, strings.Join(ex.want, "\n"))
		}
	}
}
