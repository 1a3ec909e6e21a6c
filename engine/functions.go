package engine

import (
	"sort"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

func showFunctions() Result {
	t := &Table{Columns: []string{"Function Name", "Type", "Description"}}
	names := expr.FuncNames()
	tf := planner.TableFunctions()
	for n := range tf {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if d, ok := tf[n]; ok {
			t.Rows = append(t.Rows, []string{n, "TABLE", d})
			continue
		}
		f, _ := expr.LookupFunc(n)
		t.Rows = append(t.Rows, []string{n, "SCALAR", f.Description})
	}
	t.Footer = "For detailed information on a function run: DESCRIBE FUNCTION <Function Name>;"
	return Result{Kind: ResultTable, Table: t}
}

func describeFunction(st *ast.DescribeFunction) (Result, error) {
	if d, ok := planner.TableFunctions()[st.Name]; ok {
		t := &Table{Title: "Name        : " + st.Name + "\nType        : TABLE\nOverview    : " + d}
		return Result{Kind: ResultTable, Table: t}, nil
	}
	f, ok := expr.LookupFunc(st.Name)
	if !ok {
		return Result{}, userError(st.Pos, "function %s does not exist; SHOW FUNCTIONS lists the functions", st.Name)
	}
	t := &Table{Title: "Name        : " + f.Name + "\nType        : SCALAR\nOverview    : " + f.Description}
	return Result{Kind: ResultTable, Table: t}, nil
}
