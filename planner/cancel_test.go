package planner_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// TestPlanCancelled checks that planning stops with the context's cause
// once the context has ended, and plans as before without one.
func TestPlanCancelled(t *testing.T) {
	cat := catalog.New()
	stmts, err := parser.Parse(`CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE t (id VARCHAR PRIMARY KEY, w INT) WITH (KAFKA_TOPIC='t', VALUE_FORMAT='JSON', PARTITIONS=1);
SELECT id, v + 1 AS x FROM s WHERE v > 0 EMIT CHANGES;
SELECT s.id, v, w FROM s JOIN t ON s.id = t.id EMIT CHANGES;
SELECT * FROM s;`)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts[:2] {
		spec, err := planner.PlanCreateSource(cat, st.(*ast.CreateSource), planner.Defaults{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.Apply(&catalog.Command{Kind: catalog.CreateSource, Source: spec.Source}); err != nil {
			t.Fatal(err)
		}
	}
	cause := errors.New("the client went away")
	ended, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	for _, st := range stmts[2:] {
		q := st.(*ast.Select).Query
		plan := func(ctx context.Context) error {
			if q.Emit == ast.EmitChanges {
				_, err := planner.PlanSelect(cat, q, planner.QueryOptions{OffsetReset: "latest", Ctx: ctx})
				return err
			}
			_, err := planner.PlanPull(cat, q, planner.PullOptions{Ctx: ctx})
			return err
		}
		if err := plan(context.Background()); err != nil {
			t.Fatalf("%s: %v", st.SQL(), err)
		}
		if err := plan(nil); err != nil {
			t.Fatalf("%s without a context: %v", st.SQL(), err)
		}
		if err := plan(ended); !errors.Is(err, cause) {
			t.Fatalf("%s with an ended context: %v, want %v", st.SQL(), err, cause)
		}
	}
}
