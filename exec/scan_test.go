package exec

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/state"
)

// totalsGraph is CREATE TABLE TOTALS AS SELECT REGION, COUNT(*) AS N,
// SUM(AMOUNT) AS TOTAL FROM ORDERS GROUP BY REGION HAVING COUNT(*) > 1
// when having is set.
func totalsGraph(having bool) *topology.Graph {
	g := aggGraph("REGION")
	g.QueryID = "CTAS_TOTALS_1"
	agg := g.Steps[0]
	if having {
		n := col(agg.Schema, "N")
		pred := &expr.Expr{Op: expr.OpGt, Type: types.BooleanType, Args: []*expr.Expr{n, expr.Literal(int64(1), types.BigintType)}}
		g.Steps = append(g.Steps, topology.Step{Kind: topology.Filter, Predicate: pred, Schema: agg.Schema, Retract: true})
	}
	out := []types.Column{{Name: "REGION", Type: types.StringType}, {Name: "N", Type: types.BigintType}, {Name: "TOTAL", Type: types.BigintType}}
	g.Steps = append(g.Steps, topology.Step{Kind: topology.Project, Schema: out, Exprs: []*expr.Expr{col(agg.Schema, "REGION"), col(agg.Schema, "N"), col(agg.Schema, "TOTAL")}})
	g.Output, g.KeyColumns = out, 1
	g.Sink = &topology.Sink{Name: "TOTALS", Topic: "totals", Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON"}
	return g
}

// aggTask runs recs through an offline task of g over store and leaves
// its state in the task cache, uncommitted.
func aggTask(t *testing.T, g *topology.Graph, store *state.Store, recs []*kafka.Record) *task {
	q := &Query{graph: g, deps: Deps{Now: time.Now, State: store, Logger: discardLogger(), StateNamespace: g.QueryID}}
	tk := &task{q: q, nKey: 1, nValue: 3, tsCol: -1}
	if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
		t.Fatal(err)
	}
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	tk.in.Reset()
	return tk
}

func commitTask(t *testing.T, tk *task, store *state.Store) {
	if err := tk.stageCommit(context.Background()); err != nil {
		t.Fatal(err)
	}
	tk.cache.Flush(nil)
	tk.cache.Commit(nil)
	if err := tk.cache.Persist(); err != nil {
		t.Fatal(err)
	}
}

func scanAll(t *testing.T, store *state.Store, g *topology.Graph, b Bounds) []string {
	var got []string
	err := ScanTable(context.Background(), store, g, 1, b, func(_ context.Context, b *Batch) (bool, error) {
		for i := 0; i < b.Len(); i++ {
			got = append(got, fmt.Sprint(b.Row(i)[topology.PseudoColumns:]))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestScanTableCommittedOnly checks that a pull query reads what the
// task committed, never what its cache holds uncommitted.
func TestScanTableCommittedOnly(t *testing.T) {
	store := openStore(t, t.TempDir())
	g := totalsGraph(false)
	if !Materialized(g) {
		t.Fatal("an aggregate's table is not materialized")
	}
	tk := aggTask(t, g, store, []*kafka.Record{
		orderRec(0, `{"region":"eu","amount":3}`),
		orderRec(1, `{"region":"us","amount":4}`),
	})
	if got := scanAll(t, store, g, Bounds{}); len(got) != 0 {
		t.Fatalf("before the commit: got %v, want nothing", got)
	}
	commitTask(t, tk, store)
	if got, want := fmt.Sprint(scanAll(t, store, g, Bounds{})), "[[eu 1 3] [us 1 4]]"; got != want {
		t.Fatalf("scan: got %v, want %v", got, want)
	}
	// A later batch, not committed yet, is not seen.
	tk.decode([]*kafka.Record{orderRec(2, `{"region":"eu","amount":10}`)})
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(scanAll(t, store, g, Bounds{Keys: [][]any{{"eu"}}})), "[[eu 1 3]]"; got != want {
		t.Fatalf("uncommitted lookup: got %v, want %v", got, want)
	}
	commitTask(t, tk, store)
	if got, want := fmt.Sprint(scanAll(t, store, g, Bounds{Keys: [][]any{{"eu"}, {"nowhere"}}})), "[[eu 2 13]]"; got != want {
		t.Fatalf("lookup: got %v, want %v", got, want)
	}
	if got := scanAll(t, store, g, Bounds{Keys: [][]any{}}); len(got) != 0 {
		t.Fatalf("no keys: got %v", got)
	}
	key := Bounds{Key: func(k []any) bool { return k[0] == "us" }}
	if got, want := fmt.Sprint(scanAll(t, store, g, key)), "[[us 1 4]]"; got != want {
		t.Fatalf("key filter: got %v, want %v", got, want)
	}
}

// TestScanTableHaving checks that groups HAVING rejects are not rows of
// the table.
func TestScanTableHaving(t *testing.T) {
	store := openStore(t, t.TempDir())
	g := totalsGraph(true)
	tk := aggTask(t, g, store, []*kafka.Record{
		orderRec(0, `{"region":"eu","amount":3}`),
		orderRec(1, `{"region":"us","amount":4}`),
		orderRec(2, `{"region":"eu","amount":5}`),
	})
	commitTask(t, tk, store)
	if got, want := fmt.Sprint(scanAll(t, store, g, Bounds{})), "[[eu 2 8]]"; got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := scanAll(t, store, g, Bounds{Keys: [][]any{{"us"}}}); len(got) != 0 {
		t.Fatalf("lookup of a rejected group: got %v", got)
	}
}

// TestScanTableStops checks that fn returning false ends the scan.
func TestScanTableStops(t *testing.T) {
	store := openStore(t, t.TempDir())
	g := totalsGraph(false)
	var recs []*kafka.Record
	for i := 0; i < 600; i++ {
		recs = append(recs, orderRec(int64(i), fmt.Sprintf(`{"region":"r%d","amount":1}`, i)))
	}
	commitTask(t, aggTask(t, g, store, recs), store)
	calls, rows := 0, 0
	err := ScanTable(context.Background(), store, g, 1, Bounds{}, func(_ context.Context, b *Batch) (bool, error) {
		calls++
		rows += b.Len()
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || rows != scanBatch {
		t.Fatalf("got %d calls and %d rows, want 1 call of %d rows", calls, rows, scanBatch)
	}
}

// scanTimes scans the whole table of g and prints each row with its
// ROWTIME first.
func scanTimes(t *testing.T, store *state.Store, g *topology.Graph) string {
	var got []string
	err := ScanTable(context.Background(), store, g, 1, Bounds{}, func(_ context.Context, b *Batch) (bool, error) {
		for i := 0; i < b.Len(); i++ {
			row := b.Row(i)
			got = append(got, fmt.Sprint(append([]any{row[0]}, row[topology.PseudoColumns:]...)))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(got)
}

// TestScanTableAggregateRowTime checks that a group's ROWTIME is the
// largest time of its records, in its rows and its state, and that state
// written before groups kept their time reads with a null ROWTIME until
// the group takes its next record.
func TestScanTableAggregateRowTime(t *testing.T) {
	store := openStore(t, t.TempDir())
	g := totalsGraph(false)
	if !RowTime(g) {
		t.Fatal("an aggregate's state does not keep its rows' time")
	}
	late := orderRec(2, `{"region":"eu","amount":5}`)
	late.Timestamp = time.UnixMilli(900)
	tk := aggTask(t, g, store, []*kafka.Record{
		orderRec(0, `{"region":"eu","amount":3}`),
		orderRec(1, `{"region":"us","amount":4}`),
		late,
	})
	commitTask(t, tk, store)
	if got, want := scanTimes(t, store, g), "[[1000 eu 2 8] [1001 us 1 4]]"; got != want {
		t.Fatalf("scan: got %v, want %v", got, want)
	}

	// The state of eu as it was written before groups kept their time:
	// the aggregates' states alone.
	var key, v []byte
	err := store.Table(g.QueryID, 0, g.Steps[0].StateTable).Scan(nil, nil, func(k, val []byte) bool {
		key, v = append([]byte(nil), k...), append([]byte(nil), val[:len(val)-8]...)
		return false
	})
	if err != nil || v == nil {
		t.Fatalf("no state: %v", err)
	}
	if err := store.Restore(g.QueryID, 0, g.Steps[0].StateTable, []state.Entry{{Key: key, Value: v}}, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := scanTimes(t, store, g), "[[<nil> eu 2 8] [1001 us 1 4]]"; got != want {
		t.Fatalf("old state: got %v, want %v", got, want)
	}
	tk = aggTask(t, g, store, []*kafka.Record{late})
	commitTask(t, tk, store)
	if got, want := scanTimes(t, store, g), "[[900 eu 3 13] [1001 us 1 4]]"; got != want {
		t.Fatalf("old state updated: got %v, want %v", got, want)
	}
}
