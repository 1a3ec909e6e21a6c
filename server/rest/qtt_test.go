package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/kafka"
)

// qttDir is ksqlDB's conformance corpus beside the repository, read at
// test time.
var qttDir = filepath.Join("..", "..", "..", "shared", "qtt")

// needCorpus skips a test when the corpus is absent, except under CI.
func needCorpus(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the ksqlDB corpus is missing under CI: %v", err)
		}
		t.Skipf("the ksqlDB corpus is absent (%v); it lives in ../shared/qtt beside the repository", err)
	}
}

// TestInsertValuesResponses runs the cases of insert-values.json that list
// the REST responses ksqlDB gives: their statements go through /ksql in
// one request, and each expected "admin" entity must match the entity
// at its place (the fields the case names, with equal values).
func TestInsertValuesResponses(t *testing.T) {
	path := filepath.Join(qttDir, "insert-values.json")
	needCorpus(t, path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Tests []struct {
			Name       string           `json:"name"`
			Statements []string         `json:"statements"`
			Responses  []map[string]any `json:"responses"`
			Inputs     []struct {
				Topic string `json:"topic"`
			} `json:"inputs"`
			Outputs []struct {
				Topic string `json:"topic"`
			} `json:"outputs"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, tc := range file.Tests {
		if tc.Responses == nil {
			continue
		}
		ran++
		t.Run(tc.Name, func(t *testing.T) {
			e := newEnv(t)
			// As ksqlDB's test runner does, the topics the case reads and
			// writes exist before its statements run.
			for _, rec := range append(tc.Inputs, tc.Outputs...) {
				if err := e.client.CreateTopic(context.Background(), kafka.TopicSpec{Name: rec.Topic, Partitions: 1}); err != nil && !errors.Is(err, kafka.ErrTopicExists) {
					t.Fatal(err)
				}
			}
			sql := ""
			for _, s := range tc.Statements {
				sql += s + "\n"
			}
			status, body, _ := e.post(t, e.h1, "/ksql", "", map[string]any{"ksql": sql})
			if status != http.StatusOK {
				if msg := string(body); strings.Contains(msg, "is not supported yet") {
					t.Skipf("Sluice does not support this case's statements yet: %s", msg)
				}
				t.Fatalf("/ksql: status %d: %s", status, body)
			}
			var got []map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			if len(got) != len(tc.Responses) {
				t.Fatalf("%d entities, want %d: %s", len(got), len(tc.Responses), body)
			}
			for i, want := range tc.Responses {
				admin, ok := want["admin"].(map[string]any)
				if !ok {
					t.Fatalf("response %d is not an admin response: %v", i, want)
				}
				if !matches(got[i], admin) {
					t.Errorf("entity %d = %v, want the fields of %v", i, got[i], admin)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("insert-values.json has no case with responses")
	}
}

// matches reports whether got has every field of want with an equal value,
// recursively for objects.
func matches(got, want map[string]any) bool {
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		wm, wok := w.(map[string]any)
		gm, gok := g.(map[string]any)
		if wok && gok {
			if !matches(gm, wm) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			return false
		}
	}
	return true
}
