package exec

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// A stream's record without a value goes on through a projection, which
// writes it with its key and a null value; every step that has no row to
// make of it drops it and counts it in NullsDropped, apart from the rows
// a WHERE rejects.

func TestNullValueFilterCounted(t *testing.T) {
	tk := offlineTask(t, testGraph(t))
	recs := testRecords(4) // amounts 0..3: all below the filter's 10
	recs[1].Value, recs[2].Value = nil, nil
	tk.polled = recs
	tk.decode(recs)
	tk.stats.in.Add(int64(len(recs)))
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	tk.q.tasks = []*task{tk}
	s := tk.q.Stats()
	if s.NullsDropped != 2 || s.Filtered != 2 || s.RecordsOut != 0 {
		t.Errorf("stats = %+v, want 2 null values dropped and 2 rows filtered", s)
	}
	if s.RecordsIn != s.RecordsOut+s.Filtered+s.Errors+s.NullsDropped {
		t.Errorf("in %d != out %d + filtered %d + errored %d + nulls dropped %d", s.RecordsIn, s.RecordsOut, s.Filtered, s.Errors, s.NullsDropped)
	}
}

func TestNullValueProjectionWritten(t *testing.T) {
	g := testGraph(t)
	g.Steps = g.Steps[1:] // the projection alone
	tk := offlineTask(t, g)
	recs := testRecords(3)
	recs[1].Value = nil
	tk.polled = recs
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	if len(tk.pending) != 3 {
		t.Fatalf("%d records written, want 3", len(tk.pending))
	}
	if r := tk.pending[1]; string(r.Key) != "o1" || r.Value != nil {
		t.Errorf("null value written as key %q value %q, want key o1 and no value", r.Key, r.Value)
	}
	if n, out := tk.stats.nulls.Load(), tk.stats.out.Load(); n != 0 || out != 3 {
		t.Errorf("nulls dropped %d, out %d: want 0 and 3", n, out)
	}
}

func TestNullValuePushOutputCounted(t *testing.T) {
	for _, table := range []bool{false, true} {
		g := testGraph(t)
		g.Steps, g.Sink = g.Steps[1:], nil
		if table {
			g.Source.Kind = topology.Table
		}
		tk := offlineTask(t, g)
		shown := 0
		tk.out = func(context.Context, []any) (bool, error) { shown++; return true, nil }
		recs := testRecords(3)
		recs[0].Value = nil
		tk.polled = recs
		tk.decode(recs)
		if err := tk.push(context.Background(), 0, &tk.in); err != nil {
			t.Fatal(err)
		}
		// A table's record without a value deletes its key: it is not a
		// stream's null value.
		want := int64(1)
		if table {
			want = 0
		}
		if n := tk.stats.nulls.Load(); shown != 2 || n != want {
			t.Errorf("table=%v: %d rows shown, %d null values dropped: want 2 and %d", table, shown, n, want)
		}
	}
}

func TestNullValueAggregateCounted(t *testing.T) {
	recs := []*kafka.Record{
		orderRec(0, `{"region":"eu","city":"paris","amount":10}`),
		orderRec(1, ""),
		orderRec(2, `{"region":"eu","city":"rome","amount":7}`),
		orderRec(3, ""),
	}
	for name, g := range map[string]*topology.Graph{
		"plain":    aggGraph("REGION"),
		"on key":   aggGraph("ID"),
		"windowed": windowGraph(topology.Window{Type: topology.Tumbling, Size: 1000, Advance: 1000, Grace: 1000, Retention: 2000}),
	} {
		q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: time.Now, State: openStore(t, t.TempDir()), Logger: discardLogger()}}
		tk := &task{q: q, nKey: len(g.Source.Key), nValue: len(g.Source.Value), tsCol: -1}
		if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
			t.Fatal(err)
		}
		rows := 0
		tk.out = func(context.Context, []any) (bool, error) { rows++; return true, nil }
		tk.polled = recs
		tk.decode(recs)
		if err := tk.push(context.Background(), 0, &tk.in); err != nil {
			t.Fatal(err)
		}
		if n := tk.stats.nulls.Load(); rows != 2 || n != 2 {
			t.Errorf("%s: %d rows, %d null values dropped: want 2 and 2", name, rows, n)
		}
		tk.close()
	}
}

func TestNullValueJoinCounted(t *testing.T) {
	for name, g := range map[string]func() *topology.Graph{
		"stream-table": func() *topology.Graph { return joinGraph(topology.LeftJoin, false, true, nil, false) },
		"stream-stream": func() *topology.Graph {
			return joinGraph(topology.OuterJoin, false, false, &topology.JoinWindow{Before: 10, After: 10}, false)
		},
	} {
		r := newJoinRun(t, g())
		r.send(`right a {"R1":"ra"}@1`)
		r.send(`left a -@2`)
		r.send(`right a -@3`)
		r.send(`left a {"L1":"la"}@4`)
		r.tk.close()
		// The table side's null value deletes its key; the stream sides'
		// are dropped.
		want := int64(1)
		if name == "stream-stream" {
			want = 2
		}
		if n := r.tk.stats.nulls.Load(); n != want {
			t.Errorf("%s: %d null values dropped, want %d (output %q)", name, n, want, r.output())
		}
	}
}

func TestNullValueFlatMapAndRepartitionCounted(t *testing.T) {
	var b Batch
	b.Append([]any{nil, nil, nil, "k"}, 1, NullValue)
	b.Append([]any{nil, nil, nil, "k"}, 2, Insert)
	b.Append([]any{nil, nil, nil, "j"}, 3, NullValue)
	none := emitterFunc(func(context.Context, *Batch) error { return nil })
	var c counters
	oc := &OpContext{Errors: discardErrors{}, counts: &c}

	f, err := newFlatMapOp(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Open(context.Background(), oc); err != nil {
		t.Fatal(err)
	}
	if err := f.OnBatch(context.Background(), 0, &b, none); err != nil {
		t.Fatal(err)
	}
	if n := c.nulls.Swap(0); n != 2 {
		t.Errorf("table function: %d null values dropped, want 2", n)
	}

	for _, table := range []bool{false, true} {
		r, _ := newRepartitionOp(topology.Step{Keys: 1, Table: table})
		if err := r.Open(context.Background(), oc); err != nil {
			t.Fatal(err)
		}
		passed := 0
		err := r.OnBatch(context.Background(), 0, &b, emitterFunc(func(_ context.Context, out *Batch) error {
			passed = out.Len()
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		// A table's repartition passes a null value on as a tombstone.
		wantPassed, wantNulls := 1, int64(2)
		if table {
			wantPassed, wantNulls = 3, 0
		}
		if n := c.nulls.Swap(0); passed != wantPassed || n != wantNulls {
			t.Errorf("repartition table=%v: %d rows passed, %d null values dropped: want %d and %d", table, passed, n, wantPassed, wantNulls)
		}
	}
}

// TestTableDeletesToPushOutput checks that a push query over a table hands
// the deletes of its source's keys to Deletes, with the key columns alone
// projected, and not the deletes its WHERE sends for the rows it drops.
func TestTableDeletesToPushOutput(t *testing.T) {
	g := testGraph(t)
	g.Sink = nil
	g.Source.Kind = topology.Table
	g.Steps[0].Retract = true
	tk := offlineTask(t, g)
	shown := 0
	tk.out = func(context.Context, []any) (bool, error) { shown++; return true, nil }
	var deleted [][]any
	tk.q.deps.Deletes = func(_ context.Context, row []any) (bool, error) {
		deleted = append(deleted, append([]any(nil), row...))
		return true, nil
	}
	recs := testRecords(4) // amounts 0..3: all below the filter's 10
	recs[2].Value = nil
	tk.polled = recs
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	if shown != 0 || len(deleted) != 1 {
		t.Fatalf("%d rows shown, deletes %v: want none shown and the delete of o2", shown, deleted)
	}
	if d := deleted[0]; d[0] != "o2" || d[1] != nil || d[2] != nil {
		t.Errorf("delete = %v, want [o2 <nil> <nil>]", d)
	}
	tk.q.tasks = []*task{tk}
	if s := tk.q.Stats(); s.RecordsOut != 1 || s.Filtered != 3 {
		t.Errorf("stats = %+v, want 1 out (the delete) and 3 filtered", s)
	}
}
