//go:build !race

package qtt

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// corpusDir is the shared QTT corpus, ../shared/qtt from the repository
// root. It is third-party data, read where it lies.
var corpusDir = filepath.Join("..", "..", "..", "shared", "qtt")

// TestCorpus runs each family of the corpus through the engine and fails
// when a family's passes fall below its floor in floors.json. Raise a floor
// when passes grow. Without the corpus the test is skipped, except under
// CI=true, where that is a failure. It does not run under the race
// detector (CI runs it in a separate pass without it).
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(filepath.Join(corpusDir, "families")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the QTT corpus is absent (%s): %v", corpusDir, err)
		}
		t.Skipf("the QTT corpus is absent (%s); skipping the conformance run", corpusDir)
	}
	b, err := os.ReadFile("floors.json")
	if err != nil {
		t.Fatal(err)
	}
	var floors map[string]int
	if err := json.Unmarshal(b, &floors); err != nil {
		t.Fatalf("floors.json: %v", err)
	}
	for _, family := range []string{"stateless", "stateful", "joins"} {
		t.Run(family, func(t *testing.T) {
			floor, ok := floors[family]
			if !ok {
				t.Fatalf("floors.json has no floor for %s", family)
			}
			paths, err := Family(corpusDir, family)
			if err != nil {
				t.Fatal(err)
			}
			files, err := LoadPaths(paths)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rep := RunFiles(context.Background(), files, Options{Out: &out})
			rep.WriteSummary(&out)
			t.Logf("%s family (%s):\n%s", family, rep.Elapsed.Round(1e6), out.String())
			if rep.Passed < floor {
				t.Errorf("%s: %d runs passed, below the floor of %d in floors.json", family, rep.Passed, floor)
			} else if rep.Passed > floor {
				t.Logf("%s: %d runs passed, above the floor of %d: raise it in floors.json", family, rep.Passed, floor)
			}
		})
	}
}
