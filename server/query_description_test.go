package server

import (
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
)

// TestQueryDescriptionFigures checks that a query's description carries
// all of its counters.
func TestQueryDescriptionFigures(t *testing.T) {
	d := queryDescription(engine.QueryInfo{ID: "CSAS_BIG_1", Stats: exec.Stats{RecordsIn: 10, RecordsOut: 4, Filtered: 3, Errors: 1, Late: 0, NullsDropped: 2}})
	if d.GetRecordsIn() != 10 || d.GetRecordsOut() != 4 || d.GetFiltered() != 3 || d.GetErrors() != 1 || d.GetLate() != 0 || d.GetNullsDropped() != 2 {
		t.Errorf("description = %v", d)
	}
}
