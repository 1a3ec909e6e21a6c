package planner_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// TestLongChainsPlan plans a CREATE STREAM AS SELECT with a 50,000-term sum,
// a 20,000-term OR, a 20,000-value IN list and a 10,000-term ||, and checks
// that its plan reads back from JSON unchanged (see planGraph) with each
// chain one node, however long.
func TestLongChainsPlan(t *testing.T) {
	cat := catalog.New()
	cs, err := parser.ParseOne("CREATE STREAM s (id VARCHAR KEY, a BOOLEAN, n INT, v VARCHAR) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1)")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := planner.PlanCreateSource(cat, cs.(*ast.CreateSource), planner.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Apply(&catalog.Command{Kind: catalog.CreateSource, Source: spec.Source}); err != nil {
		t.Fatal(err)
	}
	values := make([]string, 20000)
	for i := range values {
		values[i] = strconv.Itoa(i)
	}
	text := "CREATE STREAM out AS SELECT id, 1" + strings.Repeat(" + 1", 49999) + " AS total, v" + strings.Repeat(" || v", 9999) +
		" AS text FROM s WHERE (a" + strings.Repeat(" OR a", 19999) + ") AND n IN (" + strings.Join(values, ", ") + ")"
	st, err := parser.ParseOne(text)
	if err != nil {
		t.Fatal(err)
	}
	g, errText := planGraph(t, cat, st)
	if g == nil {
		t.Fatal(errText)
	}
	args := map[expr.Op][]int{}
	for _, s := range g.Steps {
		for _, e := range append([]*expr.Expr{s.Predicate}, s.Exprs...) {
			expr.Walk(e, func(n *expr.Expr) bool {
				if len(n.Args) > 2 {
					args[n.Op] = append(args[n.Op], len(n.Args))
				}
				return true
			})
		}
	}
	for op, want := range map[expr.Op]int{expr.OpAdd: 50000, expr.OpConcat: 10000, expr.OpOr: 20000, expr.OpIn: 20001} {
		if got := args[op]; len(got) != 1 || got[0] != want {
			t.Errorf("%s nodes of the plan with more than two arguments: %v, want one of %d", op, got, want)
		}
	}
}
