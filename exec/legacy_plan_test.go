package exec

import (
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
)

// The helpers of legacy_plan.go, until the engine reads the physical plan.

func TestJoinTopics(t *testing.T) {
	right := &topology.Graph{
		Source: &topology.Source{Name: "R", Topic: "r"},
		Steps: []topology.Step{
			{Kind: topology.Rekey, Keys: 1},
			{Kind: topology.Repartition, Topic: "q-join-right-repartition", Keys: 1},
			{Kind: topology.Materialize, StateTable: "join-right", Changelog: "q-join-right-changelog"},
		},
	}
	g := &topology.Graph{
		Source: &topology.Source{Name: "L", Topic: "l"},
		Steps: []topology.Step{
			{Kind: topology.Materialize, StateTable: "join-left", Changelog: "q-join-left-changelog"},
			{Kind: topology.Join, Join: &topology.JoinSpec{
				Type: topology.InnerJoin, LeftTable: true, RightTable: true, Right: right,
				LeftState: "join-left", LeftChangelog: "q-join-left-changelog",
				RightState: "join-right", RightChangelog: "q-join-right-changelog",
			}},
			{Kind: topology.Project},
		},
	}
	if !HasJoinState(g) || HasJoinState(right) {
		t.Errorf("HasJoinState: want true for the join, false for its right input")
	}
	// The left side's Materialize is a main step: Changelogs lists it.
	if got, want := JoinChangelogs(g), []string{"q-join-right-changelog"}; !slices.Equal(got, want) {
		t.Errorf("JoinChangelogs = %v, want %v", got, want)
	}
	reps := JoinRepartitionTopics(g)
	if len(reps) != 1 || reps[0].Topic != "q-join-right-repartition" {
		t.Errorf("JoinRepartitionTopics = %v", reps)
	}
	if got, want := JoinInputTopics(g), []string{"r", "q-join-right-repartition"}; !slices.Equal(got, want) {
		t.Errorf("JoinInputTopics = %v, want %v", got, want)
	}
	steps := RepartitionSteps(g)
	if len(steps) != 1 {
		t.Fatalf("RepartitionSteps = %d steps, want 1", len(steps))
	}
	steps[0].Topic = "renamed"
	if right.Steps[1].Topic != "renamed" {
		t.Errorf("RepartitionSteps does not return the right input's step itself")
	}
}

func TestWindowedChangelogConfig(t *testing.T) {
	g := windowGraph(topology.Window{Type: topology.Tumbling, Size: 60_000, Advance: 60_000, Grace: 0, Retention: 60_000})
	got := ChangelogConfig(g, "agg-changelog")
	if got["cleanup.policy"] != "compact,delete" || got["retention.ms"] != "86460000" {
		t.Errorf("windowed changelog configs %v", got)
	}
	if got := ChangelogConfig(aggGraph("REGION"), "agg-changelog"); got["cleanup.policy"] != "compact" || got["retention.ms"] != "" {
		t.Errorf("changelog configs %v", got)
	}
}
