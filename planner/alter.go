package planner

import (
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// PlanAlter checks ALTER STREAM|TABLE ... ADD COLUMN against the source it
// changes and returns the source with the new value columns appended.
func PlanAlter(cat *catalog.Catalog, st *ast.AlterSource) (*catalog.Source, error) {
	src, ok := cat.Source(st.Name)
	if !ok {
		return nil, errorf(st.Pos, "Source %s does not exist.\nSHOW STREAMS and SHOW TABLES list the sources.", st.Name)
	}
	if want := catalog.Kind(st.Kind.String()); src.Kind != want {
		return nil, errorf(st.Pos, "Incompatible data source type is %s, but statement was ALTER %s\n%s is a %s: use ALTER %s.", src.Kind, st.Kind.String(), st.Name, strings.ToLower(string(src.Kind)), src.Kind)
	}
	if len(cat.Writers(src.Name)) > 0 {
		return nil, errorf(st.Pos, "ALTER command is not supported for CREATE ... AS statements.\nA query writes %s: its schema is the query's; change the query with CREATE OR REPLACE.", src.Name)
	}
	out := *src
	out.Value = append([]types.Column(nil), src.Value...)
	names := map[string]bool{}
	for _, c := range src.Columns() {
		names[c.Name] = true
	}
	for _, c := range st.Columns {
		if c.Constraint != ast.ValueColumn {
			return nil, errorf(c.Pos, "ALTER can add value columns only; %s cannot be a key or header column", c.Name)
		}
		for _, r := range reservedColumns {
			if c.Name == r {
				return nil, errorf(c.Pos, "'%s' is a reserved column name; choose another name", c.Name)
			}
		}
		if names[c.Name] {
			return nil, errorf(c.Pos, "Cannot add column %s to schema. A column with the same name already exists.\n%s already has a column %s: choose another name.", c.Name, src.Name, c.Name)
		}
		names[c.Name] = true
		typ, err := types.Resolve(c.Type, cat.Type)
		if err != nil {
			return nil, errorf(c.Pos, "column %s: %v", c.Name, err)
		}
		out.Value = append(out.Value, types.Column{Name: c.Name, Type: typ})
	}
	if err := checkCodecs(st.Pos, out.KeyFormat, out.Key, out.KeyProps, out.ValueFormat, out.Value, out.ValueProps); err != nil {
		return nil, err
	}
	return &out, nil
}
