package engine

import (
	"encoding/json"
	"testing"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
)

// TestFlatChains: a GROUP BY stored as nested binary nodes, as plans were
// written before chains became one node, compares equal to the chain the
// binder builds now, and a different tree does not.
func TestFlatChains(t *testing.T) {
	col := func(i int, n string) *expr.Expr { return expr.Column(i, n, types.IntType) }
	add := func(args ...*expr.Expr) *expr.Expr {
		return &expr.Expr{Op: expr.OpAdd, Type: types.IntType, Args: args}
	}
	step := func(e *expr.Expr) []byte {
		b, err := json.Marshal(topology.Step{Kind: topology.Aggregate, GroupBy: []*expr.Expr{e}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c, d := col(3, "A"), col(4, "B"), col(5, "C"), col(6, "D")
	nested := step(add(add(add(a, b), c), d))
	chain := step(add(a, b, c, d))
	if flatChains(nested) != flatChains(chain) {
		t.Errorf("a nested chain and its node differ:\n%s\n%s", flatChains(nested), flatChains(chain))
	}
	if right := step(add(a, add(b, c), d)); flatChains(right) == flatChains(chain) {
		t.Error("a + (b + c) + d compares equal to a + b + c + d")
	}
}
