package catalog

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
)

// fixtureLog returns the command log values of a testdata/replay file:
// records written before plans had a version.
func fixtureLog(t *testing.T, file string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "replay", file))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Commands []string `json:"commands"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(f.Commands))
	for i, c := range f.Commands {
		out[i] = []byte(c)
	}
	return out
}

// storedPlans returns the plans of the create_query and replace_query
// records of a log as they are stored, by query id (the last one's).
func storedPlans(t *testing.T, log [][]byte) map[string]*topology.Graph {
	t.Helper()
	out := map[string]*topology.Graph{}
	for _, v := range log {
		var c struct {
			Kind  CommandKind `json:"kind"`
			Query *struct {
				ID   string          `json:"id"`
				Plan json.RawMessage `json:"plan"`
			} `json:"query"`
		}
		if json.Unmarshal(v, &c) != nil || c.Query == nil || (c.Kind != CreateQuery && c.Kind != ReplaceQuery) {
			continue
		}
		var g topology.Graph
		if err := json.Unmarshal(c.Query.Plan, &g); err != nil {
			t.Fatal(err)
		}
		out[c.Query.ID] = &g
	}
	return out
}

// Replaying a command log whose plans were stored before the physical plan
// existed (version 0) gives the catalog upgraded plans: of the current
// version, with the physical plan and settings Complete derives, created
// and replaced queries alike.
func TestReplayUpgradesStoredPlans(t *testing.T) {
	for _, file := range []string{"joins.json", "aggregate.json", "replace.json", "repartition.json"} {
		t.Run(file, func(t *testing.T) {
			log := fixtureLog(t, file)
			stored := storedPlans(t, log)
			c := New()
			for i, v := range log {
				cmd, err := DecodeCommand(v)
				if err != nil {
					continue // a bad record some logs hold on purpose
				}
				if err := c.Apply(cmd); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
			}
			if len(c.Queries()) == 0 {
				t.Fatal("no query replayed")
			}
			for _, q := range c.Queries() {
				g := stored[q.ID]
				if g == nil {
					continue // a source table's materialization
				}
				if g.Version != 0 || g.Physical != nil {
					t.Fatalf("query %s: the fixture's plan is of version %d", q.ID, g.Version)
				}
				if err := topology.Complete(g); err != nil {
					t.Fatal(err)
				}
				if q.Plan.Version != topology.Version || q.Plan.Physical == nil {
					t.Errorf("query %s: replayed plan of version %d, physical %v", q.ID, q.Plan.Version, q.Plan.Physical != nil)
				}
				if !reflect.DeepEqual(q.Plan, g) {
					a, _ := json.Marshal(q.Plan)
					b, _ := json.Marshal(g)
					t.Errorf("query %s: replayed plan\n%s\nstored plan completed\n%s", q.ID, a, b)
				}
			}
		})
	}
}

// A stored plan that cannot be upgraded is refused: the query and the
// sink it declares are not created, and the error names the query and
// says what to do.
func TestApplyRefusesPlanThatCannotUpgrade(t *testing.T) {
	c := replay(t, []*Command{{Kind: CreateSource, Source: stream("A", "a")}})
	cmd := csas("CSAS_B_1", "A", "B")
	cmd.Query.Plan.Steps = []topology.Step{{Kind: topology.Aggregate, Keys: 2}}
	err := c.Apply(cmd)
	var up *UpgradeError
	if !errors.As(err, &up) || up.Query != "CSAS_B_1" {
		t.Fatalf("apply: %v", err)
	}
	for _, want := range []string{"CSAS_B_1", "run its statement again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if _, ok := c.Query("CSAS_B_1"); ok {
		t.Error("the query was created")
	}
	if _, ok := c.Source("B"); ok {
		t.Error("its sink was declared")
	}
	// The query with a plan Complete can derive from is created, its plan
	// upgraded.
	ok := csas("CSAS_B_1", "A", "B")
	if err := c.Apply(ok); err != nil {
		t.Fatal(err)
	}
	if q, _ := c.Query("CSAS_B_1"); q.Plan.Version != topology.Version || q.Plan.Physical == nil {
		t.Errorf("a plan of version 0 is applied as version %d", q.Plan.Version)
	}
}
