package planner_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
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
//	materialize  CREATE TABLE ... AS SELECT statements, planned and added
//	         to the catalog with their queries
//	pull     a pull query: prints the keys it reads and its plan, or the
//	         error
//	unused   a SELECT or CREATE ... AS SELECT: prints the value columns of
//	         each source the plan never reads (Source.Unused), or the error
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
				case "materialize":
					out += materialize(t, cat, st)
				case "pull":
					out += pull(t, cat, st)
				case "unused":
					out += unused(t, cat, st)
				default:
					t.Fatalf("unknown directive %q", d.Cmd)
				}
			}
			return out
		})
	})
}

func plan(t *testing.T, cat *catalog.Catalog, st ast.Statement) string {
	g, errText := planGraph(t, cat, st)
	if g == nil {
		return errText
	}
	return fmt.Sprint(g)
}

// unused prints the unread value columns of the sources of st's plan: its
// own and those of its joins' right inputs.
func unused(t *testing.T, cat *catalog.Catalog, st ast.Statement) string {
	g, errText := planGraph(t, cat, st)
	if g == nil {
		return errText
	}
	var out string
	var walk func(g *topology.Graph)
	walk = func(g *topology.Graph) {
		out += fmt.Sprintf("%s: %s\n", g.Source.Name, strings.Join(g.Source.Unused, ", "))
		for _, s := range g.Steps {
			if s.Join != nil && s.Join.Right != nil {
				walk(s.Join.Right)
			}
		}
	}
	walk(g)
	return out
}

func planGraph(t *testing.T, cat *catalog.Catalog, st ast.Statement) (*topology.Graph, string) {
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
		return nil, "error: " + err.Error() + "\n"
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
	return p.Graph, ""
}

func materialize(t *testing.T, cat *catalog.Catalog, st ast.Statement) string {
	cas, ok := st.(*ast.CreateAsSelect)
	if !ok || cas.Kind != ast.Table {
		t.Fatalf("materialize takes CREATE TABLE ... AS SELECT, got %T", st)
	}
	id := cat.NextQueryID("CTAS", cas.Name)
	p, err := planner.PlanSelect(cat, cas.Query, planner.QueryOptions{
		QueryID: id, Sink: cas.Name, SinkPos: cas.NamePos, SinkProps: cas.Props,
		SinkKind: catalog.Table, OffsetReset: "earliest", InternalPrefix: "_sluice-test-",
	})
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	if err := cat.Apply(&catalog.Command{Kind: catalog.CreateQuery, Source: p.Sink, Query: &catalog.Query{ID: id, Sink: cas.Name, State: catalog.Running, Plan: p.Graph}}); err != nil {
		t.Fatal(err)
	}
	return ""
}

// stateful stands for exec.Materialized, which the planner cannot import:
// a query keeping state materializes its table.
func stateful(g *topology.Graph) bool {
	for _, st := range g.Steps {
		if st.StateTable != "" {
			return true
		}
	}
	return false
}

func pull(t *testing.T, cat *catalog.Catalog, st ast.Statement) string {
	sel, ok := st.(*ast.Select)
	if !ok {
		t.Fatalf("pull takes a SELECT, got %T", st)
	}
	p, err := planner.PlanPull(cat, sel.Query, planner.PullOptions{Materialized: stateful})
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	if p.Query == nil {
		return "stream scan\n" + p.Graph.String()
	}
	return "table " + p.Source.Name + " from " + p.Query.ID + ": " + p.Lookup.String() + "\n" + p.Graph.String()
}
