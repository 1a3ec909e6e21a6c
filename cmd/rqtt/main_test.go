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
    "name": "push",
    "statements": [
      "CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='JSON');",
      "SELECT * FROM INPUT EMIT CHANGES LIMIT 1;"
    ],
    "inputs": [{"topic": "test_topic", "timestamp": 1, "key": "a", "value": {"ID": 1}}],
    "responses": [
      {"admin": {"@type": "currentStatus"}},
      {"query": [{"header": {"schema": "` + "`K` STRING, `ID` INTEGER" + `"}}, {"row": {"columns": ["a", 1]}}, {"finalMessage": "Limit Reached"}]}
    ]
  },
  {
    "name": "wrong number",
    "statements": [
      "CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='JSON');",
      "SELECT * FROM INPUT EMIT CHANGES LIMIT 1;"
    ],
    "inputs": [{"topic": "test_topic", "timestamp": 1, "key": "a", "value": {"ID": 1}}],
    "outputConditions": {"verifyOrder": true},
    "responses": [
      {"admin": {"@type": "currentStatus"}},
      {"query": [{"header": {"schema": "` + "`K` STRING, `ID` INTEGER" + `"}}, {"row": {"columns": ["a", 1.0]}}, {"finalMessage": "Limit Reached"}]}
    ]
  },
  {
    "name": "off",
    "enabled": false,
    "statements": ["SELECT * FROM NOPE;"]
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
	code := run(context.Background(), []string{"-v", "--workers", "1", "--json", jsonOut, path}, &out, &errOut)
	if code != exitFailed {
		t.Errorf("exit status %d, want %d; stderr: %s", code, exitFailed, errOut.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if lines[0] != "one: 2 runnable, 1 passed, 1 failed, 1 skipped" || lines[len(lines)-1] != "rqtt: 1 passed, 1 failed, 1 skipped" {
		t.Errorf("output:\n%s", out.String())
	}
	for _, want := range []string{
		"  SKIP one - off: disabled in the corpus (enabled: false)",
		"  FAIL one - wrong number",
		`responses[1]->query[1]->row->columns: value differs: expected ["a",1.0], got ["a",1]`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(jsonOut)
	if err != nil || !strings.Contains(string(b), `"id": "one - wrong number"`) {
		t.Errorf("--json file: %v\n%s", err, b)
	}

	out.Reset()
	code = run(context.Background(), []string{"--run", "push$", path}, &out, &errOut)
	if code != exitOK || !strings.HasSuffix(out.String(), "rqtt: 1 passed, 0 failed, 0 skipped\n") {
		t.Errorf("--run push$: exit %d\n%s", code, out.String())
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != exitUsage {
		t.Errorf("no arguments: exit %d, want %d", code, exitUsage)
	}
	if code := run(context.Background(), []string{"--run", "(", "x"}, &out, &errOut); code != exitUsage {
		t.Errorf("bad --run: exit %d, want %d", code, exitUsage)
	}
}

func TestAbsentCorpus(t *testing.T) {
	t.Setenv("CI", "")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{filepath.Join(t.TempDir(), "nothing-here")}, &out, &errOut)
	if code != exitOK || !strings.Contains(out.String(), "is absent") {
		t.Errorf("absent path: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
