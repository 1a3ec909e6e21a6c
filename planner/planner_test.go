package planner_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// TestPlanner runs planner/testdata. Directives:
//
//	create   CREATE STREAM/TABLE statements, added to the catalog
//	plan     a SELECT or CREATE ... AS SELECT: prints the plan as EXPLAIN
//	         does, or the error
func TestPlanner(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		cat := catalog.New()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			stmts, err := parser.Parse(d.Input)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var out string
			for _, st := range stmts {
				switch d.Cmd {
				case "create":
					cs, ok := st.(*ast.CreateSource)
					if !ok {
						t.Fatalf("create takes CREATE STREAM/TABLE, got %T", st)
					}
					spec, err := planner.PlanCreateSource(cat, cs, planner.Defaults{})
					if err != nil {
						out += "error: " + err.Error() + "\n"
						continue
					}
					if spec.Source.Partitions == 0 {
						spec.Source.Partitions = 1
					}
					if err := cat.Apply(&catalog.Command{Kind: catalog.CreateSource, Source: spec.Source}); err != nil {
						t.Fatal(err)
					}
				case "plan":
					out += plan(t, cat, st)
				default:
					t.Fatalf("unknown directive %q", d.Cmd)
				}
			}
			return out
		})
	})
}

func plan(t *testing.T, cat *catalog.Catalog, st ast.Statement) string {
	opts := planner.QueryOptions{OffsetReset: "latest"}
	var q *ast.Query
	switch st := st.(type) {
	case *ast.Select:
		q = st.Query
	case *ast.CreateAsSelect:
		q = st.Query
		opts.QueryID = cat.NextQueryID("CSAS", st.Name)
		if st.Kind == ast.Table {
			opts.QueryID = cat.NextQueryID("CTAS", st.Name)
			opts.SinkKind = catalog.Table
		}
		opts.InternalPrefix = "_sluice-test-"
		opts.Sink, opts.SinkPos, opts.SinkProps = st.Name, st.NamePos, st.Props
	default:
		t.Fatalf("plan takes a query, got %T", st)
	}
	p, err := planner.PlanSelect(cat, q, opts)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	// The plan is stored in the command log: it must read back unchanged.
	b, err := json.Marshal(p.Graph)
	if err != nil {
		t.Fatal(err)
	}
	var back topology.Graph
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.String() != p.Graph.String() {
		t.Fatalf("plan changed through JSON:\n%s\nvs\n%s", p.Graph, &back)
	}
	b2, _ := json.Marshal(&back)
	if !reflect.DeepEqual(b, b2) {
		t.Fatalf("plan JSON is not stable:\n%s\n%s", b, b2)
	}
	return fmt.Sprint(p.Graph)
}
