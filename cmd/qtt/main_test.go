package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const oneCase = `{"tests": [
  {
    "name": "copy",
    "statements": [
      "CREATE STREAM INPUT (ID INT KEY, V STRING) WITH (kafka_topic='in_topic', value_format='JSON');",
      "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;"
    ],
    "inputs": [{"topic": "in_topic", "key": 1, "value": {"V": "a"}, "timestamp": 5}],
    "outputs": [{"topic": "OUTPUT", "key": 1, "value": {"V": "a"}, "timestamp": 5}]
  },
  {
    "name": "wrong timestamp",
    "statements": [
      "CREATE STREAM INPUT (ID INT KEY, V STRING) WITH (kafka_topic='in_topic', value_format='JSON');",
      "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;"
    ],
    "inputs": [{"topic": "in_topic", "key": 1, "value": {"V": "a"}, "timestamp": 5}],
    "outputs": [{"topic": "OUTPUT", "key": 1, "value": {"V": "a"}, "timestamp": 6}]
  }
]}`

func TestRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "one.json")
	if err := os.WriteFile(path, []byte(oneCase), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonOut := filepath.Join(dir, "results.json")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-v", "--json", jsonOut, path}, &out, &errOut)
	if code != exitFailed {
		t.Errorf("exit status %d, want %d; stderr: %s", code, exitFailed, errOut.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if lines[0] != "one: 1 passed, 1 failed, 0 skipped" || lines[len(lines)-1] != "qtt: 1 passed, 1 failed, 0 skipped" {
		t.Errorf("output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "FAIL one - wrong timestamp") || !strings.Contains(out.String(), "timestamp differs: expected 6, got 5") {
		t.Errorf("-v output lacks the failure:\n%s", out.String())
	}
	if _, err := os.Stat(jsonOut); err != nil {
		t.Errorf("--json wrote nothing: %v", err)
	}

	out.Reset()
	if code := run(context.Background(), []string{"--run", "copy$", path}, &out, &errOut); code != exitOK {
		t.Errorf("--run copy$: exit status %d\n%s", code, out.String())
	}
}

func TestAbsentCorpus(t *testing.T) {
	t.Setenv("CI", "")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{filepath.Join(t.TempDir(), "missing")}, &out, &errOut)
	if code != exitOK || !strings.Contains(out.String(), "is absent") || !strings.HasSuffix(out.String(), "qtt: 0 passed, 0 failed, 0 skipped\n") {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}
	t.Setenv("CI", "true")
	if code := run(context.Background(), []string{filepath.Join(t.TempDir(), "missing")}, &out, &errOut); code != exitFailed {
		t.Errorf("under CI a missing corpus exits %d", code)
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != exitUsage {
		t.Errorf("no arguments: exit %d", code)
	}
	if code := run(context.Background(), []string{"--run", "(", "x"}, &out, &errOut); code != exitUsage {
		t.Errorf("bad regexp: exit %d", code)
	}
}
