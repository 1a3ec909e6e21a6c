package exec

import (
	"context"
	"reflect"
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
)

type loggedErrors struct{ msgs []string }

func (l *loggedErrors) RowError(msg string, _ []any) { l.msgs = append(l.msgs, msg) }

// TestRegroupRecords checks the change records a regrouping Repartition
// writes for a table's rekeyed changes, rows [pseudo..., GROUP, ID, V]: a
// move within a group is one record carrying both rows, a move between
// groups a retraction then an addition, a delete a retraction, and a row
// without a group only the retraction of its old row.
func TestRegroupRecords(t *testing.T) {
	rekeyed := []types.Column{
		{Name: topology.RowTime, Type: types.BigintType}, {Name: topology.RowPartition, Type: types.IntType}, {Name: topology.RowOffset, Type: types.BigintType},
		{Name: "KSQL_GROUP_KEY_0", Type: types.StringType}, {Name: "ID", Type: types.StringType}, {Name: "V", Type: types.IntType},
	}
	st := topology.Step{Kind: topology.Repartition, Keys: 1, Regroup: true, Schema: topology.RegroupSchema(rekeyed, 1), Topic: "_q-Aggregate-GroupBy-repartition"}
	r, err := newRepartitionOp(st)
	if err != nil {
		t.Fatal(err)
	}
	errs := &loggedErrors{}
	r.errs, r.counts = errs, &counters{}
	row := func(group any, id string, v int32) []any { return []any{int64(0), int32(0), int64(0), group, id, v} }
	var in Batch
	in.AppendChange(row("east", "a1", 10), nil, 1, Insert)
	in.AppendChange(row("east", "a1", 15), row("east", "a1", 10), 2, Insert)
	in.AppendChange(row("west", "a1", 20), row("east", "a1", 15), 3, Insert)
	in.AppendChange(row(nil, "a1", 0), row("west", "a1", 20), 4, NullValue)
	in.AppendChange(row(nil, "a2", 5), nil, 5, Insert)
	in.AppendChange(row(nil, "a2", 6), row(nil, "a2", 5), 6, Insert)
	in.AppendChange(row(nil, "a3", 0), nil, 7, NullValue)
	out := &collect{}
	if err := r.OnBatch(context.Background(), 0, &in, out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"0 [east a1 10 <nil> <nil> 1]",
		"0 [east a1 15 a1 10 3]",
		"0 [east <nil> <nil> a1 15 2]",
		"0 [west a1 20 <nil> <nil> 1]",
		"0 [west <nil> <nil> a1 20 2]",
	}
	if !reflect.DeepEqual(out.got, want) {
		t.Errorf("records\n got %q\nwant %q", out.got, want)
	}
	if len(errs.msgs) != 2 || errs.msgs[0] != nullGroupKey(0) {
		t.Errorf("logged %q, want the null group key of a2's two rows", errs.msgs)
	}
	if w, ok := topology.RegroupWidth(st.Schema, 1); !ok || w != 2 {
		t.Errorf("RegroupWidth = %d, %v; want 2", w, ok)
	}
}
