package houserules

import (
	"strings"
	"testing"
)

// TestPlansRunWithoutParser checks that what runs a query plan needs no
// SQL parser: exec, state, format and internal/topology, and the
// expression data and evaluator they run (internal/expr, internal/eval),
// take expressions bound, from the planner or from a stored plan, and
// depend on no package of parser/, not even through another package.
// Binding from the AST is planner/bind's.
func TestPlansRunWithoutParser(t *testing.T) {
	for _, pkg := range []string{"exec", "state", "format", "internal/topology", "internal/expr", "internal/eval"} {
		for _, rel := range moduleDeps(t, "./"+pkg) {
			if rel == "parser" || strings.HasPrefix(rel, "parser/") {
				t.Errorf("%s depends on %s%s: it runs bound expressions, and binding them from the AST is planner/bind's", pkg, module, rel)
			}
		}
	}
}
