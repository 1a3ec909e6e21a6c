package qtt

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// synthetic is a small corpus file written for the runner's own tests, in
// the corpus's shape (with a comment, as the corpus allows).
const synthetic = `{
  // comments are allowed, as in the corpus
  "comments": ["synthetic cases for the runner's self-tests"],
  "tests": [
    {
      "name": "filter and project",
      "format": ["JSON", "AVRO"],
      "statements": [
        "CREATE STREAM INPUT (ID INT KEY, NAME STRING, V DOUBLE) WITH (kafka_topic='in_topic', value_format='{FORMAT}');",
        "CREATE STREAM OUTPUT AS SELECT ID, NAME, V * 2 AS V2 FROM INPUT WHERE V > 1;"
      ],
      "inputs": [
        {"topic": "in_topic", "key": 1, "value": {"name": "a", "v": 0.5}, "timestamp": 10},
        {"topic": "in_topic", "key": 2, "value": {"NAME": "b", "V": 1.5}, "timestamp": 20},
        {"topic": "in_topic", "value": {"NAME": "c", "V": 3.0}, "timestamp": 30}
      ],
      "outputs": [
        {"topic": "OUTPUT", "key": 2, "value": {"NAME": "b", "V2": 3.0}, "timestamp": 20},
        {"topic": "OUTPUT", "value": {"name": "c", "v2": 6.0000001}}
      ],
      "post": {"sources": [{"name": "OUTPUT", "type": "stream", "schema": "ID INT KEY, NAME STRING, V2 DOUBLE", "keyFormat": {"format": "KAFKA"}}]}
    },
    {
      "name": "wrong expected value",
      "statements": [
        "CREATE STREAM INPUT (ID INT KEY, NAME STRING) WITH (kafka_topic='in_topic', value_format='JSON');",
        "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;"
      ],
      "inputs": [{"topic": "in_topic", "key": 1, "value": {"NAME": "a"}}],
      "outputs": [{"topic": "OUTPUT", "key": 1, "value": {"NAME": "b"}}]
    },
    {
      "name": "wrong expected schema",
      "statements": [
        "CREATE STREAM INPUT (ID INT KEY, NAME STRING) WITH (kafka_topic='in_topic', value_format='JSON');",
        "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;"
      ],
      "inputs": [{"topic": "in_topic", "key": 1, "value": {"NAME": "a"}}],
      "outputs": [{"topic": "OUTPUT", "key": 1, "value": {"NAME": "a"}}],
      "post": {"sources": [{"name": "OUTPUT", "type": "stream", "schema": "ID BIGINT KEY, NAME STRING"}]}
    },
    {
      "name": "expected syntax error",
      "statements": ["CREATE STREAM INPUT (ID INT KEY) WITH (kafka_topic='in_topic', value_format='JSON');", "SELEC * FROM INPUT;"],
      "expectedException": {"type": "io.confluent.ksql.parser.exception.ParseFailedException", "message": "mismatched input 'SELEC'"}
    },
    {
      "name": "expected error that does not happen",
      "statements": ["CREATE STREAM INPUT (ID INT KEY, V INT) WITH (kafka_topic='in_topic', value_format='JSON');"],
      "expectedException": {"type": "io.confluent.ksql.util.KsqlStatementException", "message": "something"}
    },
    {
      "name": "insert values",
      "statements": [
        "CREATE STREAM INPUT (ID INT KEY, V INT) WITH (kafka_topic='in_topic', value_format='JSON');",
        "INSERT INTO INPUT (ID, V) VALUES (7, 70);"
      ],
      "inputs": [],
      "outputs": [{"topic": "in_topic", "key": 7, "value": {"V": 70}, "timestamp": 0}]
    },
    {
      "name": "a join",
      "statements": [
        "CREATE STREAM A (ID INT KEY, V INT) WITH (kafka_topic='a', value_format='JSON');",
        "CREATE STREAM B (ID INT KEY, W INT) WITH (kafka_topic='b', value_format='JSON');",
        "CREATE STREAM C AS SELECT A.ID, V, W FROM A JOIN B WITHIN 1 SECOND ON A.ID = B.ID;"
      ],
      "inputs": [],
      "outputs": []
    }
  ]
}`

func writeSynthetic(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "synthetic.json"), []byte(synthetic), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestExpand(t *testing.T) {
	f, err := LoadFile(filepath.Join(writeSynthetic(t), "synthetic.json"))
	if err != nil {
		t.Fatal(err)
	}
	runs := Expand(f)
	if len(runs) != 8 {
		t.Fatalf("got %d runs, want 8", len(runs))
	}
	if runs[0].ID != "synthetic - filter and project - JSON" || runs[1].ID != "synthetic - filter and project - AVRO" {
		t.Errorf("format runs are %q and %q", runs[0].ID, runs[1].ID)
	}
	if !strings.Contains(runs[1].Statements[0], "value_format='AVRO'") {
		t.Errorf("{FORMAT} not expanded: %s", runs[1].Statements[0])
	}
	if runs[2].ID != "synthetic - wrong expected value" {
		t.Errorf("plain run id %q", runs[2].ID)
	}
}

func TestExpandConfig(t *testing.T) {
	f := &File{Stem: "f", Cases: []*Case{{
		Name: "c", Statements: []string{"SHOW STREAMS;"},
		Config:     []json.RawMessage{json.RawMessage(`"true"`), json.RawMessage(`"false"`)},
		Properties: map[string]json.RawMessage{"ksql.new.query.planner.enabled": json.RawMessage(`"{CONFIG}"`), "other": json.RawMessage(`1`)},
	}}}
	runs := Expand(f)
	if len(runs) != 2 || runs[1].ID != "f - c - ksql.new.query.planner.enabled=false" {
		t.Fatalf("runs: %+v", runs)
	}
	if runs[1].Properties["ksql.new.query.planner.enabled"] != "false" || runs[1].Properties["other"] != "1" {
		t.Errorf("properties: %v", runs[1].Properties)
	}
}

// TestRunSynthetic runs the synthetic file through the real engine: the
// correct cases pass, the wrong ones fail, the AVRO and JOIN runs are
// skipped with their reasons, and the summary ends with the totals line.
func TestRunSynthetic(t *testing.T) {
	files, err := LoadPaths([]string{writeSynthetic(t)})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep := RunFiles(context.Background(), files, Options{Out: &out, Verbose: true})
	want := map[string]Status{
		"synthetic - filter and project - JSON":           Pass,
		"synthetic - filter and project - AVRO":           Pass,
		"synthetic - wrong expected value":                Fail,
		"synthetic - wrong expected schema":               Fail,
		"synthetic - expected syntax error":               Pass,
		"synthetic - expected error that does not happen": Fail,
		"synthetic - insert values":                       Pass,
		"synthetic - a join":                              Pass,
	}
	for _, r := range rep.Results {
		if w, ok := want[r.ID]; !ok {
			t.Errorf("unexpected run %q", r.ID)
		} else if r.Status != w {
			t.Errorf("%s: %s (%s), want %s\n%s", r.ID, r.Status, r.Reason, w, r.Detail)
		}
	}
	if len(rep.Skips) != 0 {
		t.Errorf("skips by reason: %v", rep.Skips)
	}
	rep.WriteSummary(&out)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if lines[0] != "synthetic: 5 passed, 3 failed, 0 skipped" {
		t.Errorf("file line %q", lines[0])
	}
	if last := lines[len(lines)-1]; last != "qtt: 5 passed, 3 failed, 0 skipped" {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(out.String(), "FAIL synthetic - wrong expected value") || !strings.Contains(out.String(), `expected {"NAME":"b"}, got {"NAME":"a"}`) {
		t.Errorf("verbose output lacks the failure's diff:\n%s", out.String())
	}
}

func TestRunSelects(t *testing.T) {
	files, err := LoadPaths([]string{writeSynthetic(t)})
	if err != nil {
		t.Fatal(err)
	}
	rep := RunFiles(context.Background(), files, Options{Run: regexp.MustCompile(`wrong expected value$`)})
	if len(rep.Results) != 1 || rep.Failed != 1 {
		t.Fatalf("selected %d runs, %d failed", len(rep.Results), rep.Failed)
	}
}
