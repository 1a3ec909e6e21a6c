package engine

import (
	"sort"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// functionList lists the scalar and table functions by name.
func functionList() []api.FunctionInfo {
	names := eval.FuncNames()
	tf := planner.TableFunctions()
	for n := range tf {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]api.FunctionInfo, 0, len(names))
	for _, n := range names {
		if d, ok := tf[n]; ok {
			out = append(out, api.FunctionInfo{Name: n, Type: "TABLE", Description: d})
			continue
		}
		f, _ := eval.LookupFunc(n)
		out = append(out, api.FunctionInfo{Name: n, Type: "SCALAR", Description: f.Description})
	}
	return out
}

func describeFunction(st *ast.DescribeFunction) (Result, error) {
	if d, ok := planner.TableFunctions()[st.Name]; ok {
		return entity(&api.FunctionDescription{Function: api.FunctionInfo{Name: st.Name, Type: "TABLE", Description: d}}), nil
	}
	f, ok := eval.LookupFunc(st.Name)
	if !ok {
		return Result{}, userError(st.Pos, "Can't find any functions with the name '%s'\nSHOW FUNCTIONS lists the functions.", st.Name)
	}
	return entity(&api.FunctionDescription{Function: api.FunctionInfo{Name: f.Name, Type: "SCALAR", Description: f.Description}}), nil
}
