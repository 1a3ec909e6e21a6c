package integration

import (
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/render"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// table is a listing drawn as the shell draws it, its cells as text.
type table struct {
	Columns []string
	Rows    [][]string
}

// entityTable draws an Execute response's entity; nil for another payload.
func entityTable(e *sluicev1.Entity) *table {
	if e == nil {
		return nil
	}
	rt := render.Entity(e)
	tb := &table{Columns: rt.Columns}
	for _, row := range rt.Rows {
		tb.Rows = append(tb.Rows, rt.Cells(row))
	}
	return tb
}

// resultTable draws an engine's listing result; nil for another result.
func resultTable(r engine.Result) *table {
	if r.Kind != engine.ResultEntity {
		return nil
	}
	return entityTable(wire.EncodeEntity(r.Statement, r.Entity))
}
