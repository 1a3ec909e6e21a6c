package wire

import (
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
)

// TestEncodeQueryFigures checks that a query's description carries all of
// its figures and its schema's key columns.
func TestEncodeQueryFigures(t *testing.T) {
	last := time.UnixMilli(1_700_000_000_123)
	d := EncodeQuery(&api.QueryInfo{ID: "CSAS_BIG_1", Running: true, KeyColumns: 1,
		Columns: []types.Column{{Name: "K", Type: types.StringType}, {Name: "V", Type: types.BigintType}},
		Stats: api.Stats{RecordsIn: 10, RecordsOut: 4, Filtered: 3, Errors: 1, Late: 5, NullsDropped: 2,
			LagMeasured: true, LagRecords: 7, LagSeconds: 1.5, LastRecord: last}})
	if d.GetRecordsIn() != 10 || d.GetRecordsOut() != 4 || d.GetFiltered() != 3 || d.GetErrors() != 1 || d.GetLate() != 5 || d.GetNullsDropped() != 2 ||
		!d.GetLagMeasured() || d.GetLagRecords() != 7 || d.GetLagSeconds() != 1.5 || d.GetLastRecordMillis() != last.UnixMilli() || !d.GetRunning() {
		t.Errorf("description = %v", d)
	}
	if cols := d.GetColumns(); len(cols) != 2 || cols[0].GetRole().String() != "COLUMN_ROLE_KEY" || cols[1].GetRole().String() != "COLUMN_ROLE_UNSPECIFIED" || d.GetKeyColumns() != 1 {
		t.Errorf("columns = %v", cols)
	}
}
