package exec

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
)

// TestOperators: every step kind has its operator, and a Pipeline takes
// only the stateless ones.
func TestOperators(t *testing.T) {
	stateless := map[topology.StepKind]bool{topology.Filter: true, topology.Project: true, topology.FlatMap: true}
	for _, kind := range []topology.StepKind{
		topology.Filter, topology.Project, topology.Rekey, topology.FlatMap,
		topology.Aggregate, topology.Materialize, topology.Repartition, topology.Join,
	} {
		k, ok := operators[kind]
		if !ok {
			t.Errorf("no operator for %s steps", kind)
			continue
		}
		if k.stateless != stateless[kind] {
			t.Errorf("%s: stateless = %v", kind, k.stateless)
		}
	}
	_, err := NewPipeline([]topology.Step{{Kind: topology.Aggregate}}, nil, 0)
	if err == nil || !strings.Contains(err.Error(), "cannot run over a table's rows") {
		t.Errorf("NewPipeline of an aggregate: %v", err)
	}
}
