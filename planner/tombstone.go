package planner

import "github.com/sluice-sql/sluice/internal/expr"

// tombstoneColumns says, per output column of a push query, whether a
// delete keeps its value: as ksqlDB's tombstones do, a delete holds the
// key columns the projection selects under their own names, and the
// window bounds of windowed rows; every other column is null, whatever
// the projection would compute from the key alone.
func tombstoneColumns(items []item) []bool {
	keep := make([]bool, len(items))
	for i, it := range items {
		plain := it.e.Op == expr.OpColumn && it.e.Name == it.name
		keep[i] = plain && (it.keyCol == it.name || windowBound(it.name))
	}
	return keep
}
