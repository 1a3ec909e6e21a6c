package rqtt

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/qtt"
)

// synthetic is a small corpus file written for the runner's own tests, in
// the corpus's shape (with a comment, as the corpus allows).
const synthetic = `{
  // comments are allowed, as in the corpus
  "comments": ["synthetic cases for the runner's self-tests"],
  "tests": [
    {
      "name": "push query",
      "statements": [
        "CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='JSON');",
        "SELECT K, ID FROM INPUT EMIT CHANGES LIMIT 2;"
      ],
      "inputs": [
        {"topic": "test_topic", "timestamp": 1, "key": "11", "value": {"id": 100}},
        {"topic": "test_topic", "timestamp": 2, "key": "12", "value": {"id": 101}}
      ],
      "responses": [
        {"admin": {"@type": "currentStatus", "statementText": "{STATEMENT}"}},
        {"query": [
          {"header": {"schema": "` + "`K` STRING, `ID` INTEGER" + `"}},
          {"row": {"columns": ["12", 101]}},
          {"row": {"columns": ["11", 100]}},
          {"finalMessage": "Limit Reached"}
        ]}
      ]
    },
    {
      "name": "push query in order",
      "topics": [{"name": "test_topic", "partitions": 1}],
      "statements": [
        "CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='JSON');",
        "SELECT K, ID FROM INPUT EMIT CHANGES LIMIT 2;"
      ],
      "inputs": [
        {"topic": "test_topic", "timestamp": 1, "key": "11", "value": {"id": 100}},
        {"topic": "test_topic", "timestamp": 2, "key": "12", "value": {"id": 101}}
      ],
      "outputConditions": {"verifyOrder": true},
      "responses": [
        {"admin": {"@type": "currentStatus"}},
        {"query": [
          {"header": {"schema": "` + "`K` STRING, `ID` INTEGER" + `"}},
          {"row": {"columns": ["12", 101]}},
          {"row": {"columns": ["11", 100]}},
          {"finalMessage": "Limit Reached"}
        ]}
      ]
    },
    {
      "name": "inputs once the push query runs",
      "statements": [
        "CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='JSON');",
        "SELECT K, ID FROM INPUT EMIT CHANGES LIMIT 1;"
      ],
      "properties": {"auto.offset.reset": "latest"},
      "inputConditions": {"waitForActivePushQuery": true},
      "inputs": [{"topic": "test_topic", "timestamp": 1, "key": "11", "value": {"id": 100}}],
      "responses": [
        {"admin": {"@type": "currentStatus"}},
        {"query": [
          {"header": {"schema": "` + "`K` STRING, `ID` INTEGER" + `"}},
          {"row": {"columns": ["11", 100]}},
          {"finalMessage": "Limit Reached"}
        ]}
      ]
    },
    {
      "name": "outputs",
      "statements": [
        "CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='JSON');",
        "CREATE STREAM OUTPUT AS SELECT K, ID * 2 AS ID2 FROM INPUT;"
      ],
      "inputs": [{"topic": "test_topic", "timestamp": 7, "key": "11", "value": {"id": 100}}],
      "outputs": [{"topic": "OUTPUT", "timestamp": 7, "key": "11", "value": {"ID2": 200}}]
    },
    {
      "name": "wrong output",
      "statements": [
        "CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='JSON');",
        "CREATE STREAM OUTPUT AS SELECT K, ID * 2 AS ID2 FROM INPUT;"
      ],
      "inputs": [{"topic": "test_topic", "timestamp": 7, "key": "11", "value": {"id": 100}}],
      "outputs": [{"topic": "OUTPUT", "timestamp": 7, "key": "11", "value": {"ID2": 201}}]
    },
    {
      "name": "failing query",
      "statements": ["SELECT * FROM NO_SUCH_STREAM EMIT CHANGES LIMIT 1;"],
      "expectedError": {"status": 400}
    },
    {
      "name": "expected error that does not come",
      "statements": ["CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='JSON');"],
      "expectedError": {"status": 400}
    },
    {
      "name": "disabled",
      "enabled": false,
      "statements": ["SELECT * FROM NO_SUCH_STREAM EMIT CHANGES LIMIT 1;"]
    },
    {
      "name": "old",
      "versions": {"max": "6.0.0"},
      "statements": ["SELECT * FROM NO_SUCH_STREAM EMIT CHANGES LIMIT 1;"]
    },
    {
      "name": "with protobuf responses",
      "format": ["JSON"],
      "testPullWithProtoFormat": true,
      "statements": ["CREATE STREAM INPUT (K STRING KEY, ID INT) WITH (kafka_topic='test_topic', value_format='{FORMAT}');"],
      "responses": [{"admin": {"@type": "currentStatus"}}]
    }
  ]
}`

func loadSynthetic(t *testing.T) *File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "synthetic.json")
	if err := os.WriteFile(path, []byte(synthetic), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestExpand(t *testing.T) {
	f := loadSynthetic(t)
	var ids []string
	for _, r := range Expand(f) {
		ids = append(ids, r.ID)
	}
	got := strings.Join(ids, "\n")
	for _, want := range []string{"synthetic - push query", "synthetic - with protobuf responses - JSON", "synthetic - with protobuf responses - JSON" + ProtoSuffix} {
		if !strings.Contains(got, want+"\n") && !strings.HasSuffix(got, want) {
			t.Errorf("no run %q among:\n%s", want, got)
		}
	}
	if len(ids) != len(f.Cases)+1 {
		t.Errorf("%d runs of %d cases, want one more for the protobuf responses:\n%s", len(ids), len(f.Cases), got)
	}
}

func TestRunFiles(t *testing.T) {
	f := loadSynthetic(t)
	var out bytes.Buffer
	rep := RunFiles(context.Background(), []*File{f}, Options{Out: &out, Verbose: true, Workers: 2})
	status := map[string]Result{}
	for _, r := range rep.Results {
		status[strings.TrimPrefix(r.ID, "synthetic - ")] = r
	}
	for name, want := range map[string]qtt.Status{
		"push query":                        qtt.Pass,
		"push query in order":               qtt.Fail,
		"inputs once the push query runs":   qtt.Pass,
		"outputs":                           qtt.Pass,
		"failing query":                     qtt.Pass,
		"expected error that does not come": qtt.Fail,
		"disabled":                          qtt.Skip,
		"old":                               qtt.Skip,
		"with protobuf responses - JSON":    qtt.Pass,
	} {
		if r := status[name]; r.Status != want {
			t.Errorf("%s: %s (%s), want %s\n%s", name, r.Status, r.Reason, want, r.Detail)
		}
	}
	if r := status["push query in order"]; !strings.Contains(r.Reason, "responses[1]->query[1]->row->columns: value differs") {
		t.Errorf("push query in order: reason %q", r.Reason)
	}
	if _, ok := status["with protobuf responses - JSON"+ProtoSuffix]; !ok {
		t.Errorf("no protobuf-responses run")
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "synthetic: 9 runnable, ") {
		t.Errorf("first line %q", lines[0])
	}
	for _, want := range []string{"  SKIP synthetic - disabled: disabled in the corpus", "  SKIP synthetic - old: for ksqlDB up to 6.0.0 only", "  FAIL synthetic - expected error that does not come"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var sum bytes.Buffer
	rep.WriteSummary(&sum)
	last := strings.Split(strings.TrimRight(sum.String(), "\n"), "\n")
	if l, want := last[len(last)-1], fmt.Sprintf("rqtt: %d passed, %d failed, 2 skipped", rep.Passed, rep.Failed); l != want {
		t.Errorf("last line %q", l)
	}
}
