//go:build !race

package rqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// corpusDir is the shared RQTT corpus, ../shared/rqtt from the repository
// root. It is third-party data, read where it lies.
var corpusDir = filepath.Join("..", "..", "..", "shared", "rqtt")

// TestCorpus runs every file of the corpus through the REST API and fails
// when a file's passes fall below its floor in floors.json. Raise a floor
// when passes grow. Without the corpus the test is skipped, except under
// CI=true, where that is a failure. It does not run under the race
// detector (CI runs it in a separate pass without it).
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the RQTT corpus is absent (%s): %v", corpusDir, err)
		}
		t.Skipf("the RQTT corpus is absent (%s); skipping the conformance run", corpusDir)
	}
	b, err := os.ReadFile("floors.json")
	if err != nil {
		t.Fatal(err)
	}
	var floors map[string]int
	if err := json.Unmarshal(b, &floors); err != nil {
		t.Fatalf("floors.json: %v", err)
	}
	files, err := LoadPaths([]string{corpusDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no corpus files in %s", corpusDir)
	}
	var out bytes.Buffer
	rep := RunFiles(context.Background(), files, Options{Out: &out, Workers: 2})
	rep.WriteSummary(&out)
	var table bytes.Buffer
	rep.WriteTable(&table)
	t.Logf("RQTT corpus (%s):\n%s\n%s", rep.Elapsed.Round(1e6), table.String(), out.String())
	seen := map[string]bool{}
	for _, f := range rep.Files {
		seen[f.File] = true
		floor, ok := floors[f.File]
		switch {
		case !ok:
			t.Errorf("floors.json has no floor for %s (%d passed): add it", f.File, f.Passed)
		case f.Passed < floor:
			t.Errorf("%s: %d runs passed, below the floor of %d in floors.json", f.File, f.Passed, floor)
		case f.Passed > floor:
			t.Logf("%s: %d runs passed, above the floor of %d: raise it in floors.json", f.File, f.Passed, floor)
		}
	}
	for name := range floors {
		if !seen[name] {
			t.Errorf("floors.json has a floor for %s, which the corpus does not hold", name)
		}
	}
}
