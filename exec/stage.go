package exec

import (
	"github.com/sluice-sql/sluice/internal/topology"
)

// internalFormat names the key and value format of repartition topics: a
// lossless encoding of the row's columns that only Sluice reads back (see
// internalCodec).
const internalFormat = "SLUICE_INTERNAL"

// stages splits g at its Repartition steps into the graphs that run as
// the query's stages, in order. A graph without one is its only stage.
// Every stage but the last ends with its Repartition step and writes the
// repartition topic as its sink; every stage but the first reads the
// previous one's repartition topic as its source, from the beginning. All
// stages keep g's query id, so they share its consumer group and state
// namespace.
//
//	source ─▶ steps ─▶ Repartition ─▶ repartition topic ─▶ steps ─▶ sink
//	└────────────── stage 1 ─────────────┘ └───────────── stage 2 ───────┘
func stages(g *topology.Graph) []*topology.Graph {
	var out []*topology.Graph
	src := g.Source
	offsetReset := g.OffsetReset
	from := 0
	for i, st := range g.Steps {
		if st.Kind != topology.Repartition {
			continue
		}
		keys := st.Schema[topology.PseudoColumns : topology.PseudoColumns+st.Keys]
		values := st.Schema[topology.PseudoColumns+st.Keys:]
		out = append(out, &topology.Graph{
			QueryID: g.QueryID, Source: src, Steps: g.Steps[from : i+1],
			Sink: &topology.Sink{
				Name: st.Topic, Topic: st.Topic, Partitions: st.Partitions,
				KeyFormat: internalFormat, ValueFormat: internalFormat,
				PlaceBy: st.PlaceBy, PlaceProps: st.PlaceProps,
			},
			Output:      st.Schema[topology.PseudoColumns:],
			KeyColumns:  st.Keys,
			OffsetReset: offsetReset,
		})
		src = &topology.Source{
			Name: src.Name, Topic: st.Topic, Partitions: st.Partitions,
			KeyFormat: internalFormat, ValueFormat: internalFormat,
			Key: keys, Value: values,
		}
		// The topic holds only this query's rows: read all of them.
		offsetReset = "earliest"
		from = i + 1
	}
	return append(out, &topology.Graph{
		QueryID: g.QueryID, Source: src, Steps: g.Steps[from:], Sink: g.Sink,
		Output: g.Output, KeyColumns: g.KeyColumns, Limit: g.Limit, OffsetReset: offsetReset,
	})
}

// RepartitionTopics returns the internal topics g's Repartition steps
// write, which the query's owner creates with the source's partition
// count before it starts and deletes when the query is dropped.
// Those of its joins' right inputs are JoinRepartitionTopics.
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
func InputTopics(g *topology.Graph) []string {
	out := []string{g.Source.Topic}
	for _, st := range RepartitionTopics(g) {
		out = append(out, st.Topic)
	}
	return out
}

// rightGraph is the right input of a join step of g as a graph of the
// query: g's query id, and g's offset reset unless it names its own.
func rightGraph(g *topology.Graph, spec *topology.JoinSpec) *topology.Graph {
	r := *spec.Right
	r.QueryID = g.QueryID
	if r.OffsetReset == "" {
		r.OffsetReset = g.OffsetReset
	}
	r.Sink = nil
	return &r
}

// streamRows reports whether the rows leaving the last step of g, a stage,
// are a stream's: its source is a stream and no step before makes a table
// of them (an aggregate, a materialization, a repartition of a table's
// changes, a join of two tables). A row without a value there is then a
// record of a stream whose value is null, not the delete of a key.
func streamRows(g *topology.Graph) bool {
	if g.Source.IsTable() {
		return false
	}
	for _, st := range g.Steps {
		switch st.Kind {
		case topology.Aggregate, topology.Materialize:
			return false
		case topology.Repartition:
			if st.Table {
				return false
			}
		case topology.Join:
			if st.Join != nil && st.Join.LeftTable {
				return false
			}
		}
	}
	return true
}
