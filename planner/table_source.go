package planner

import (
	"slices"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/parser/ast"
)

// checkRetractable refuses aggregates of a table source that cannot take a
// row back out when the table updates or deletes it, in ksqlDB's words.
func checkRetractable(calls []*ast.FuncCall) error {
	var names []string
	var pos ast.Pos
	for _, c := range calls {
		agg, _ := eval.LookupAggregate(c.Name)
		if agg.Retractable || slices.Contains(names, agg.Name) {
			continue
		}
		if names == nil {
			pos = c.Pos
		}
		names = append(names, agg.Name)
	}
	if len(names) == 0 {
		return nil
	}
	return errorf(pos, "%v", eval.TableSourceError(names))
}

// materializeSource puts a Materialize step first in g, whose source is a
// table with keys key columns: aggregating a table needs each key's old
// row to retract it from its group.
func materializeSource(g *topology.Graph, keys int, opts QueryOptions) {
	if g.Source.Window != nil {
		// Each window of a key is a row of its own: the bounds follow
		// the key columns.
		keys += 2
	}
	st := topology.Step{Kind: topology.Materialize, StateTable: "source", Keys: keys, Schema: g.Source.Schema()}
	if opts.QueryID != "" {
		st.Changelog = opts.InternalPrefix + opts.QueryID + "-source-changelog"
	}
	g.Steps = slices.Insert(g.Steps, 0, st)
}

// PlanMaterialization plans the query that CREATE SOURCE TABLE runs, as
// ksqlDB does, so that pull queries can read the table: it reads the
// table's topic from the start and keeps its rows in a state table with
// a changelog topic, writing no output.
func PlanMaterialization(src *catalog.Source, queryID, internalPrefix string) (*topology.Graph, error) {
	g := &topology.Graph{QueryID: queryID, Source: SourceNode(src), OffsetReset: "earliest"}
	materializeSource(g, len(src.Key), QueryOptions{QueryID: queryID, InternalPrefix: internalPrefix})
	g.Output = src.Columns()
	g.KeyColumns = len(src.Key)
	if err := topology.Complete(g); err != nil {
		return nil, err
	}
	return g, nil
}

// materializeSink puts a Materialize step last in g, a CREATE TABLE AS
// SELECT over a table, so that its rows stay in the state store for pull
// queries to read. It passes every row on as it comes.
func materializeSink(g *topology.Graph, opts QueryOptions) {
	st := topology.Step{Kind: topology.Materialize, StateTable: "sink", Keys: g.KeyColumns, Schema: g.Output}
	if opts.QueryID != "" {
		st.Changelog = opts.InternalPrefix + opts.QueryID + "-sink-changelog"
	}
	g.Steps = append(g.Steps, st)
}
