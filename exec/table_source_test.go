package exec

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
)

type nopErrors struct{}

func (nopErrors) RowError(string, []any) {}

// collect is an Emitter that prints each row it gets as kind, row and old
// row.
type collect struct{ got []string }

func (c *collect) Emit(_ context.Context, b *Batch) error {
	for i := 0; i < b.Len(); i++ {
		old, known := b.Old(i)
		s := fmt.Sprintf("%d %v", b.Kind(i).Base(), b.Row(i))
		if known {
			s += fmt.Sprintf(" old=%v", old)
		}
		c.got = append(c.got, s)
	}
	return nil
}

func TestRetractingFilterFollowsOldRow(t *testing.T) {
	// Rows are [K, V]; the filter keeps V > 10.
	pred := &expr.Expr{Op: expr.OpGt, Type: types.BooleanType, Args: []*expr.Expr{
		{Op: expr.OpColumn, Type: types.IntType, Col: 1, Name: "V"},
		{Op: expr.OpLiteral, Type: types.IntType, Value: int32(10)},
	}}
	f, err := newFilterOp(pred, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Open(context.Background(), &OpContext{Errors: nopErrors{}}); err != nil {
		t.Fatal(err)
	}
	var b Batch
	b.AppendChange([]any{"a", int32(5)}, []any{"a", int32(20)}, 1, Insert) // passed, fails now: delete
	b.AppendChange([]any{"b", int32(5)}, []any{"b", int32(1)}, 2, Insert)  // never passed: dropped
	b.AppendChange([]any{"c", int32(5)}, nil, 3, Insert)                   // new key failing: dropped
	b.Append([]any{"d", int32(5)}, 4, Insert)                              // old unknown: delete
	b.AppendChange([]any{"e", nil}, []any{"e", int32(30)}, 5, NullValue)   // delete of a passing row
	b.AppendChange([]any{"f", nil}, []any{"f", int32(3)}, 6, NullValue)    // delete of a failing row: dropped
	b.AppendChange([]any{"g", int32(50)}, []any{"g", int32(3)}, 7, Insert) // enters: no old row
	b.AppendChange([]any{"h", int32(50)}, []any{"h", int32(40)}, 8, Insert)
	b.Append([]any{"i", nil}, 9, NullValue) // unknown delete goes on
	var c collect
	if err := f.OnBatch(context.Background(), 0, &b, &c); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"4 [a 5] old=[a 20]",
		"4 [d 5]",
		"4 [e <nil>] old=[e 30]",
		"0 [g 50] old=[]",
		"0 [h 50] old=[h 40]",
		"4 [i <nil>]",
	}
	if fmt.Sprint(c.got) != fmt.Sprint(want) {
		t.Fatalf("got\n%v\nwant\n%v", c.got, want)
	}
}

func TestBatchAppendForgetsOldRow(t *testing.T) {
	var b Batch
	b.AppendChange([]any{1}, []any{0}, 1, Insert)
	b.Append(b.Row(0), b.Time(0), b.Kind(0))
	if _, known := b.Old(1); known {
		t.Fatal("Append kept OldKnown")
	}
	if old, known := b.Old(0); !known || fmt.Sprint(old) != "[0]" {
		t.Fatalf("Old(0) = %v, %v", old, known)
	}
	b.Reset()
	b.AppendChange([]any{1}, nil, 1, Insert)
	if old, known := b.Old(0); !known || old != nil {
		t.Fatalf("after Reset: Old(0) = %v, %v", old, known)
	}
}

// tableAggGraph is SELECT REGION, COUNT(*), SUM(AMOUNT) FROM ORDERS GROUP
// BY REGION with ORDERS a table, as a persistent-like graph without sink.
func tableAggGraph() *topology.Graph {
	g := aggGraph("REGION")
	in := g.Source.Schema()
	mat := topology.Step{Kind: topology.Materialize, StateTable: "source", Changelog: "source-changelog", Keys: 1, Schema: in}
	g.Steps = append([]topology.Step{mat}, g.Steps...)
	return g
}

func tableRec(off int64, key, value string) *kafka.Record {
	r := &kafka.Record{Topic: "orders", Offset: off, Timestamp: time.UnixMilli(1000 + off), Key: []byte(key)}
	if value != "" {
		r.Value = []byte(value)
	}
	return r
}

func TestTableAggregateRetracts(t *testing.T) {
	store := openStore(t, t.TempDir())
	g := tableAggGraph()
	recs := []*kafka.Record{
		tableRec(0, "o1", `{"region":"eu","amount":10}`),
		tableRec(1, "o2", `{"region":"us","amount":5}`),
		tableRec(2, "o1", `{"region":"eu","amount":12}`), // same group: one row
		tableRec(3, "o2", `{"region":"eu","amount":1}`),  // moves: us, then eu
		tableRec(4, "o3", ""),                            // delete of nothing
		tableRec(5, "o1", ""),                            // delete
		tableRec(6, "o2", `{"amount":4}`),                // to a null group: only eu
		tableRec(7, "o2", `{"region":"us","amount":4}`),  // from a null group: only us
	}
	got := runAgg(t, g, store, recs)
	want := []string{
		"[eu 1 10]", "[us 1 5]", "[eu 1 12]", "[us 0 0]", "[eu 2 13]", "[eu 1 1]", "[eu 0 0]", "[us 1 4]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
}

func TestMaterializedTableReaders(t *testing.T) {
	store := openStore(t, t.TempDir())
	g := tableAggGraph()
	q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: time.Now, State: store, Logger: discardLogger()}}
	tk := &task{q: q, nKey: 1, nValue: len(g.Source.Value), tsCol: -1}
	if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
		t.Fatal(err)
	}
	tk.out = func(context.Context, []any) (bool, error) { return true, nil }
	recs := []*kafka.Record{
		tableRec(0, "o1", `{"region":"eu","city":"rome","amount":10}`),
		tableRec(1, "o2", `{"region":"us","amount":5}`),
		tableRec(2, "o3", `{"region":"us","amount":7}`),
		tableRec(3, "o2", ""),
	}
	tk.polled = recs
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	if err := tk.stageCommit(context.Background()); err != nil {
		t.Fatal(err)
	}
	tk.cache.Flush(nil)
	tk.cache.Commit(nil)
	if err := tk.cache.Persist(); err != nil {
		t.Fatal(err)
	}
	tables := MaterializedTables(g)
	if len(tables) != 1 {
		t.Fatalf("MaterializedTables = %v", tables)
	}
	mt := tables[0]
	var rows []string
	if err := mt.ScanRows(store, 0, func(row []any) bool {
		rows = append(rows, fmt.Sprint(row))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"[1000 0 0 o1 eu rome 10]", "[1002 0 2 o3 us <nil> 7]"}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("ScanRows: got %v, want %v", rows, want)
	}
	row, ok, err := mt.Lookup(store, 0, []any{"o3"})
	if err != nil || !ok || fmt.Sprint(row) != want[1] {
		t.Fatalf("Lookup(o3) = %v, %v, %v", row, ok, err)
	}
	if _, ok, err := mt.Lookup(store, 0, []any{"o2"}); err != nil || ok {
		t.Fatalf("Lookup(o2) found a deleted row (err %v)", err)
	}
	aggs := AggregateTables(g)
	if len(aggs) != 1 {
		t.Fatalf("AggregateTables = %v", aggs)
	}
	var groups []string
	if err := aggs[0].ScanRows(store, 0, func(row []any) bool {
		groups = append(groups, fmt.Sprint(row))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	wantGroups := []string{"[<nil> <nil> <nil> eu 1 10]", "[<nil> <nil> <nil> us 1 7]"}
	if fmt.Sprint(groups) != fmt.Sprint(wantGroups) {
		t.Fatalf("AggregateTable.ScanRows: got %v, want %v", groups, wantGroups)
	}
}

// BenchmarkTableAggregate updates 1,000 keys of a table, moving them
// between 10 groups, through materialize and aggregate (no commit).
func BenchmarkTableAggregate(b *testing.B) {
	store := openStore(b, b.TempDir())
	g := tableAggGraph()
	q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: time.Now, State: store, Logger: discardLogger()}}
	tk := &task{q: q, nKey: 1, nValue: len(g.Source.Value), tsCol: -1}
	if _, err := newTaskParts(tk, testStage(b, g, 0)); err != nil {
		b.Fatal(err)
	}
	tk.out = func(context.Context, []any) (bool, error) { return true, nil }
	recs := make([]*kafka.Record, 1000)
	for i := range recs {
		recs[i] = tableRec(int64(i), fmt.Sprintf("k%d", i), fmt.Sprintf(`{"region":"r%d","amount":%d}`, (i*7)%10, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		tk.polled = recs
		tk.decode(recs)
		if err := tk.push(context.Background(), 0, &tk.in); err != nil {
			b.Fatal(err)
		}
		clear(tk.arena)
		tk.in.Reset()
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
}

func TestRowCodecRoundTrip(t *testing.T) {
	schema := []types.Column{
		{Name: "K", Type: types.IntType},
		{Name: "B", Type: types.BooleanType},
		{Name: "L", Type: types.BigintType},
		{Name: "D", Type: types.DoubleType},
		{Name: "S", Type: types.StringType},
		{Name: "TS", Type: types.TimestampType},
		{Name: "BY", Type: types.BytesType},
		{Name: "A", Type: types.ArrayOf(types.StringType)},
		{Name: "M", Type: types.MapOf(types.StringType, types.BigintType)},
		{Name: "N", Type: types.StringType},
	}
	row := []any{int32(-7), true, int64(1) << 40, -0.5, "héllo", types.TimestampValue(1700000000000), []byte{0, 1, 2},
		[]any{"a", nil}, &types.MapValue{Keys: []any{"x"}, Values: []any{int64(3)}}, nil}
	c := newRowCodec(schema, 1)
	key, ok, err := c.appendKey(nil, row)
	if err != nil || !ok {
		t.Fatalf("appendKey: %v, %v", ok, err)
	}
	val, err := c.value(row)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]any, len(schema))
	if err := c.decode(key, val, got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, row) {
		t.Fatalf("round trip:\ngot  %#v\nwant %#v", got, row)
	}
	if err := c.decode(key, val[:len(val)-1], got); err == nil {
		t.Fatal("decode of a truncated value succeeded")
	}
}
