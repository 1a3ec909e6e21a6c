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

func TestEncodeConnectorEntities(t *testing.T) {
	d := &api.ConnectorDescription{Name: "PG", Class: "C", Type: "source",
		Connector: api.ConnectorState{State: "RUNNING", WorkerID: "w"},
		Tasks:     []api.ConnectorTask{{ID: 2, ConnectorState: api.ConnectorState{State: "FAILED", WorkerID: "w", Trace: "t"}}},
		Topics:    []string{"a"}, Sources: []api.SourceInfo{{Name: "S", Kind: api.SourceTable, Topic: "a"}},
		Config: map[string]string{"k": "v"}, Warnings: []string{"w1"}}
	e := EncodeEntity("DESCRIBE CONNECTOR PG", d).GetConnectorDescription()
	if e.GetName() != "PG" || e.GetConnector().GetWorkerId() != "w" || e.GetTasks()[0].GetId() != 2 || e.GetTasks()[0].GetState().GetTrace() != "t" ||
		e.GetSources()[0].GetName() != "S" || e.GetConfig()["k"] != "v" || e.GetWarnings()[0] != "w1" || e.GetTopics()[0] != "a" {
		t.Errorf("description %v", e)
	}
	i := EncodeEntity("", &api.ConnectorInfo{Name: "PG", Type: "sink", Config: map[string]string{"a": "b"}, Tasks: []int{0, 1}}).GetConnector()
	if i.GetName() != "PG" || i.GetType() != "sink" || len(i.GetTasks()) != 2 || i.GetConfig()["a"] != "b" {
		t.Errorf("info %v", i)
	}
	l := EncodeEntity("", &api.ConnectorList{Connectors: []api.ConnectorSummary{{Name: "PG", Type: "source", Class: "C", State: "RUNNING"}}, Warnings: []string{"x"}}).GetConnectors()
	if len(l.GetConnectors()) != 1 || l.GetConnectors()[0].GetClass() != "C" || l.GetWarnings()[0] != "x" {
		t.Errorf("list %v", l)
	}
	if EncodeEntity("", &api.ConnectorDropped{Name: "PG"}).GetDroppedConnector().GetName() != "PG" ||
		EncodeEntity("", &api.Warning{Message: "m"}).GetWarning().GetMessage() != "m" {
		t.Error("dropped or warning")
	}
}
