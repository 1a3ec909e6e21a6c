package engine

import (
	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/funcdoc"
	"github.com/sluice-sql/sluice/parser/ast"
)

// functionList lists the scalar, aggregate and table functions, as ksqlDB
// lists them: by name within each type, with their categories.
func functionList() []api.FunctionInfo {
	all, _ := funcdoc.All()
	out := make([]api.FunctionInfo, 0, len(all))
	for _, f := range all {
		out = append(out, api.FunctionInfo{Name: f.Name, Type: f.Type, Category: f.Category, Description: f.Description})
	}
	return out
}

func describeFunction(st *ast.DescribeFunction) (Result, error) {
	f, ok := funcdoc.Lookup(st.Name)
	if !ok {
		return Result{}, userError(st.Pos, "Can't find any functions with the name '%s'\nSHOW FUNCTIONS lists the functions.", st.Name)
	}
	return entity(&api.FunctionDescription{Function: api.FunctionInfo{
		Name: f.Name, Type: f.Type, Category: f.Category, Description: f.Description, Variations: f.Signatures,
	}}), nil
}
