package engine

import (
	"sort"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/parser/ast"
)

func showFunctions() Result {
	t := &Table{Columns: []string{"Function Name", "Type", "Description"}}
	names := expr.FuncNames()
	sort.Strings(names)
	for _, n := range names {
		f, _ := expr.LookupFunc(n)
		t.Rows = append(t.Rows, []string{n, "SCALAR", f.Description})
	}
	t.Footer = "For detailed information on a function run: DESCRIBE FUNCTION <Function Name>;"
	return Result{Kind: ResultTable, Table: t}
}

func describeFunction(st *ast.DescribeFunction) (Result, error) {
	f, ok := expr.LookupFunc(st.Name)
	if !ok {
		return Result{}, userError(st.Pos, "function %s does not exist; SHOW FUNCTIONS lists the functions", st.Name)
	}
	t := &Table{Title: "Name        : " + f.Name + "\nType        : SCALAR\nOverview    : " + f.Description}
	return Result{Kind: ResultTable, Table: t}, nil
}
