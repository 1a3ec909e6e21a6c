package exec

import (
	"slices"

	"github.com/sluice-sql/sluice/internal/topology"
)

// joinSpecs returns the descriptions of g's Join steps, in order.
func joinSpecs(g *topology.Graph) []*topology.JoinSpec {
	var out []*topology.JoinSpec
	for _, st := range g.Steps {
		if st.Kind == topology.Join && st.Join != nil {
			out = append(out, st.Join)
		}
	}
	return out
}

// HasJoinState reports whether g joins: a join keeps each side's rows (a
// table's, or a stream's within the window) in state tables.
func HasJoinState(g *topology.Graph) bool { return len(joinSpecs(g)) > 0 }

// JoinChangelogs returns the changelog topics of g's joins that
// Changelogs does not list: those of the join's state tables (see
// joinStateTables) and of the state steps of each right input, once each.
func JoinChangelogs(g *topology.Graph) []string {
	seen := Changelogs(g)
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(seen, name) {
			seen = append(seen, name)
			out = append(out, name)
		}
	}
	for _, j := range joinSpecs(g) {
		for _, st := range joinStateTables(j) {
			add(st.Changelog)
		}
		if j.Right != nil {
			for _, name := range Changelogs(j.Right) {
				add(name)
			}
			for _, name := range JoinChangelogs(j.Right) {
				add(name)
			}
		}
	}
	return out
}

// JoinRepartitionTopics returns the Repartition steps of the right inputs
// of g's joins, whose topics the query's owner creates and deletes like
// those RepartitionTopics returns.
func JoinRepartitionTopics(g *topology.Graph) []topology.Step {
	var out []topology.Step
	for _, j := range joinSpecs(g) {
		if j.Right != nil {
			out = append(out, RepartitionTopics(j.Right)...)
			out = append(out, JoinRepartitionTopics(j.Right)...)
		}
	}
	return out
}

// JoinInputTopics returns the topics the right inputs of g's joins read:
// their sources, then their repartition topics.
func JoinInputTopics(g *topology.Graph) []string {
	var out []string
	for _, j := range joinSpecs(g) {
		if j.Right != nil {
			out = append(out, InputTopics(j.Right)...)
			out = append(out, JoinInputTopics(j.Right)...)
		}
	}
	return out
}

// RepartitionSteps returns every Repartition step of g, those of its
// joins' right inputs included, for a push query's owner to name their
// topics.
func RepartitionSteps(g *topology.Graph) []*topology.Step {
	var out []*topology.Step
	for i := range g.Steps {
		st := &g.Steps[i]
		switch {
		case st.Kind == topology.Repartition:
			out = append(out, st)
		case st.Kind == topology.Join && st.Join != nil && st.Join.Right != nil:
			out = append(out, RepartitionSteps(st.Join.Right)...)
		}
	}
	return out
}
