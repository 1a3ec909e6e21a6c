package exec

import (
	"context"
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
)

// complete gives the hand-built graph g its operator settings and
// physical plan, as the planner's last pass does, and returns it.
func complete(t testing.TB, g *topology.Graph) *topology.Graph {
	t.Helper()
	if err := topology.Complete(g); err != nil {
		t.Fatal(err)
	}
	return g
}

// testStage completes g and returns its stage i (0: the first of the
// query's own graph).
func testStage(t testing.TB, g *topology.Graph, i int) *stage {
	t.Helper()
	plan, err := planStages(complete(t, g))
	if err != nil {
		t.Fatal(err)
	}
	if i >= len(plan) {
		t.Fatalf("query %s has %d stages, not %d", g.QueryID, len(plan), i+1)
	}
	return plan[i]
}

// TestStartNeedsPhysicalPlan: exec runs the physical plan the planner
// completes, and refuses a plan without it.
func TestStartNeedsPhysicalPlan(t *testing.T) {
	g := testGraph(t)
	want := "exec: plan of query " + g.QueryID + " is version 0; it needs topology.Upgrade"
	if _, err := Start(context.Background(), g, Deps{}, nil); err == nil || err.Error() != want {
		t.Errorf("Start of a plan without its physical part: %v, want %q", err, want)
	}
	if err := Replayable(g); err == nil || err.Error() != want {
		t.Errorf("Replayable of a plan without its physical part: %v, want %q", err, want)
	}
	if _, ok := KeyPartitioner(g); ok {
		t.Errorf("KeyPartitioner of a plan without its physical part")
	}
	if err := Replayable(complete(t, g)); err != nil {
		t.Errorf("Replayable of the completed plan: %v", err)
	}
}

// inputTopics returns the topics the stages of g, completed, read.
func inputTopics(g *topology.Graph) []string {
	var out []string
	for _, s := range g.Physical.Stages {
		if !slices.Contains(out, s.Source) {
			out = append(out, s.Source)
		}
	}
	return out
}
