package exec

// The helpers the engine reads a query's topics and state from until it
// reads them from the physical plan (topology.Physical). exec itself reads
// only the plan and uses none of them.

import (
	"slices"
	"strconv"

	"github.com/sluice-sql/sluice/internal/topology"
)

// ForeignKeyIndexTable names the state table of a foreign-key join's
// index from foreign keys to left keys: JoinSpec.ExtraState, by default
// named after the left state table.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func ForeignKeyIndexTable(spec *topology.JoinSpec) string {
	if spec.ExtraState != "" {
		return spec.ExtraState
	}
	return spec.LeftState + "-fk-index"
}

// ForeignKeyIndexChangelog names its changelog topic.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func ForeignKeyIndexChangelog(spec *topology.JoinSpec) string {
	if spec.ExtraChangelog != "" || spec.LeftChangelog == "" {
		return spec.ExtraChangelog
	}
	return spec.LeftChangelog + "-fk-index"
}

// OuterStateTable names the state table where a stream-stream join keeps
// unmatched rows waiting for their window to close: JoinSpec.ExtraState,
// by default named after the left state table.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func OuterStateTable(spec *topology.JoinSpec) string {
	if spec.ExtraState != "" {
		return spec.ExtraState
	}
	return spec.LeftState + "-outer"
}

// OuterChangelog names its changelog topic.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func OuterChangelog(spec *topology.JoinSpec) string {
	if spec.ExtraChangelog != "" || spec.LeftChangelog == "" {
		return spec.ExtraChangelog
	}
	return spec.LeftChangelog + "-outer"
}

// stateSteps returns the steps of g that keep state, each with its state
// table and changelog. A Join step counts once per state table it keeps
// (see joinStateTables), followed by the state steps of its right input.
func stateSteps(g *topology.Graph) []topology.Step {
	var out []topology.Step
	seen := map[string]bool{}
	add := func(st topology.Step) {
		if !seen[st.StateTable] {
			seen[st.StateTable] = true
			out = append(out, st)
		}
	}
	for _, st := range g.Steps {
		switch st.Kind {
		case topology.Aggregate, topology.Materialize:
			add(st)
		case topology.Join:
			if st.Join == nil || st.Join.Right == nil {
				continue
			}
			for _, rs := range stateSteps(st.Join.Right) {
				add(rs)
			}
			for _, js := range joinStateTables(st.Join) {
				add(js)
			}
		}
	}
	return out
}

// HasState reports whether g keeps state, and so needs a state store and,
// for a persistent query, changelog topics.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func HasState(g *topology.Graph) bool { return len(stateSteps(g)) > 0 }

// Changelogs returns the changelog topics of the state tables of g's
// Aggregate and Materialize steps. Those of its joins are JoinChangelogs.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func Changelogs(g *topology.Graph) []string {
	var out []string
	for _, st := range g.Steps {
		if (st.Kind == topology.Aggregate || st.Kind == topology.Materialize) && st.Changelog != "" {
			out = append(out, st.Changelog)
		}
	}
	return out
}

// changelogExtraRetention is how much longer than its window retention a
// windowed changelog keeps records, as Kafka Streams'
// windowstore.changelog.additional.retention.ms default (one day).
const changelogExtraRetention = 24 * 60 * 60 * 1000

// ChangelogConfig returns the topic configs of changelog, a changelog
// topic of g: compacted, and for a windowed table also deleted after
// the window retention.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func ChangelogConfig(g *topology.Graph, changelog string) map[string]string {
	for _, st := range stateSteps(g) {
		if st.Changelog != changelog || st.Window == nil {
			continue
		}
		return map[string]string{
			"cleanup.policy": "compact,delete",
			"retention.ms":   strconv.FormatInt(st.Window.Retention+changelogExtraRetention, 10),
		}
	}
	return map[string]string{"cleanup.policy": "compact"}
}

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
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func HasJoinState(g *topology.Graph) bool { return len(joinSpecs(g)) > 0 }

// JoinChangelogs returns the changelog topics of g's joins that
// Changelogs does not list: those of the join's state tables (see
// joinStateTables) and of the state steps of each right input, once each.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
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
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
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
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
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
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
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

// joinStateTables returns the state tables a Join step keeps, as state
// steps: each side's rows, the unmatched rows of a stream-stream join and
// the foreign-key index of a foreign-key join. The last two are named
// after the left state table and its changelog (see OuterStateTable and
// ForeignKeyIndexTable), so that Changelogs lists their changelog topics
// for the query's owner to create.
func joinStateTables(spec *topology.JoinSpec) []topology.Step {
	var out []topology.Step
	if spec.LeftState != "" {
		out = append(out, topology.Step{Kind: topology.Join, StateTable: spec.LeftState, Changelog: spec.LeftChangelog})
	}
	if spec.RightState != "" {
		out = append(out, topology.Step{Kind: topology.Join, StateTable: spec.RightState, Changelog: spec.RightChangelog})
	}
	switch {
	case spec.ForeignKey != nil:
		out = append(out, topology.Step{Kind: topology.Join, StateTable: ForeignKeyIndexTable(spec), Changelog: ForeignKeyIndexChangelog(spec)})
	case !spec.LeftTable && !spec.RightTable && spec.Type != topology.InnerJoin && spec.Within != nil && spec.Within.Grace >= 0:
		// Only an outer join with a grace period holds unmatched rows back.
		out = append(out, topology.Step{Kind: topology.Join, StateTable: OuterStateTable(spec), Changelog: OuterChangelog(spec)})
	}
	return out
}

// RepartitionTopics returns the internal topics g's Repartition steps
// write, which the query's owner creates with the source's partition
// count before it starts and deletes when the query is dropped.
// Those of its joins' right inputs are JoinRepartitionTopics.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func RepartitionTopics(g *topology.Graph) []topology.Step {
	var out []topology.Step
	for _, st := range g.Steps {
		if st.Kind == topology.Repartition {
			out = append(out, st)
		}
	}
	return out
}

// InputTopics returns the topics g's stages read: its source topic, then
// its repartition topics. Those its joins' right inputs read are
// JoinInputTopics.
//
// Deprecated: read g.Physical; kept until the engine stops calling it.
func InputTopics(g *topology.Graph) []string {
	out := []string{g.Source.Topic}
	for _, st := range RepartitionTopics(g) {
		out = append(out, st.Topic)
	}
	return out
}

// rightGraph is the right input of a join step of g as a graph of the
