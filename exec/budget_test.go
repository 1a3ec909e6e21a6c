package exec

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/state"
)

// budgetTask returns a task of query over bidsByBidder whose state store
// has a memory budget of budget bytes.
func budgetTask(t *testing.T, query string, budget int64) (*task, *state.Store) {
	t.Helper()
	g := planQuery(t, bidsByBidder, query)
	store, err := state.Open(t.TempDir(), state.Options{CacheSize: 1 << 20, MemoryBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	now := time.UnixMilli(1_000_000)
	q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: func() time.Time { return now }, Logger: discardLogger(), State: store, StateNamespace: g.QueryID, PersistInterval: time.Hour}}
	tk := &task{q: q, nKey: len(g.Source.Key), nValue: len(g.Source.Value), tsCol: -1}
	if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
		t.Fatal(err)
	}
	q.tasks = []*task{tk}
	tk.producer = &fakeProducer{}
	tk.mode = newAtLeastOnce(tk)
	return tk, store
}

// TestBudgetHeldAndReleased: what an aggregation keeps in memory (its
// cache entries, its decoded groups or windows) is counted in the store's
// budget, and all of it is given back when the task stops.
func TestBudgetHeldAndReleased(t *testing.T) {
	for name, query := range map[string]string{
		"groups":  `CREATE TABLE counts AS SELECT bidder, COUNT(*) AS n, LATEST_BY_OFFSET(url) AS url FROM bid GROUP BY bidder;`,
		"windows": `CREATE TABLE counts AS SELECT bidder, MAX(price) AS top FROM bid WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY bidder;`,
	} {
		t.Run(name, func(t *testing.T) {
			tk, store := budgetTask(t, query, -1)
			recs := bidRecords(500, true)
			for i, r := range recs {
				r.Offset = int64(i)
			}
			if err := tk.process(context.Background(), recs); err != nil {
				t.Fatal(err)
			}
			held := store.Budget().Used()
			if held <= tk.cache.Bytes() {
				t.Fatalf("budget counts %d bytes, the cache alone %d: the decoded state is not counted", held, tk.cache.Bytes())
			}
			tk.close()
			if u := store.Budget().Used(); u != 0 {
				t.Fatalf("after the task stopped the budget still counts %d of %d bytes", u, held)
			}
		})
	}
}

// TestBudgetOverDropsDecoded: past the budget, a commit forgets the
// decoded groups and the cache's entries once Pebble has them; the
// results stay right, read back from the store.
func TestBudgetOverDropsDecoded(t *testing.T) {
	tk, store := budgetTask(t, `CREATE TABLE counts AS SELECT bidder, COUNT(*) AS n FROM bid GROUP BY bidder;`, 16<<10)
	batch := (&cycler{recs: bidRecords(400, true)}).batch
	ctx := context.Background()
	for range 3 {
		if err := tk.process(ctx, batch(400)); err != nil {
			t.Fatal(err)
		}
	}
	var agg *aggregateOp
	for _, op := range tk.ops {
		if a, ok := op.(*aggregateOp); ok {
			agg = a
		}
	}
	if agg == nil {
		t.Fatal("no aggregate operator")
	}
	if len(agg.live) != 0 || agg.liveBytes != 0 {
		t.Fatalf("over the budget, the aggregate keeps %d groups decoded (%d bytes)", len(agg.live), agg.liveBytes)
	}
	if tk.cache.Unpersisted() != 0 {
		t.Fatalf("over the budget, the cache holds %d entries Pebble lacks", tk.cache.Unpersisted())
	}
	tk.close()
	var total int64
	for _, at := range AggregateTables(tk.q.graph) {
		if err := at.ScanRows(store, 0, func(row []any) bool {
			total += row[len(row)-1].(int64)
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	if total != 1200 {
		t.Fatalf("the stored counts add up to %d, want 1200", total)
	}
}

// joinBudgetRun is a stream-table join's run over a store whose memory
// budget is budget bytes, with its join operator.
func joinBudgetRun(t *testing.T, budget int64) (*joinRun, *joinOp) {
	t.Helper()
	store, err := state.Open(t.TempDir(), state.Options{CacheSize: 1 << 20, MemoryBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	r := &joinRun{t: t, g: joinGraph(topology.InnerJoin, false, true, nil, false), store: store, prod: &fakeProducer{}, off: map[string]int64{}}
	r.start()
	for _, op := range r.tk.ops {
		if j, ok := op.(*joinOp); ok {
			return r, j
		}
	}
	t.Fatal("no join operator")
	return nil, nil
}

// joinBudgetInputs are n table rows, then one stream row for each.
func joinBudgetInputs(n int, round int) []string {
	var in []string
	for i := range n {
		in = append(in, fmt.Sprintf(`right k%d {"R1":"right%d-%d"}@%d`, i, i, round, 2*i))
	}
	for i := range n {
		in = append(in, fmt.Sprintf(`left k%d {"L1":"left%d"}@%d`, i, i, 2*i+1))
	}
	return in
}

// TestBudgetJoinRows: the table rows a stream-table join keeps decoded
// are counted in the budget and given back when the task stops.
func TestBudgetJoinRows(t *testing.T) {
	r, j := joinBudgetRun(t, -1)
	r.send(joinBudgetInputs(300, 0)...)
	if len(j.decoded) != 300 || j.decodedBytes <= 0 {
		t.Fatalf("the join keeps %d rows decoded (%d bytes), want 300", len(j.decoded), j.decodedBytes)
	}
	if held := r.store.Budget().Used(); held < r.tk.cache.Bytes()+j.decodedBytes {
		t.Fatalf("the budget counts %d bytes, the cache %d and the decoded rows %d", held, r.tk.cache.Bytes(), j.decodedBytes)
	}
	r.tk.close()
	if u := r.store.Budget().Used(); u != 0 {
		t.Fatalf("after the task stopped the budget still counts %d bytes", u)
	}
}

// TestBudgetOverDropsJoinRows: past the budget, a commit forgets the
// decoded table rows, and later stream rows read the table rows back
// (new ones included) with the same results.
func TestBudgetOverDropsJoinRows(t *testing.T) {
	r, j := joinBudgetRun(t, 16<<10)
	const n = 300
	for round := range 2 {
		r.send(joinBudgetInputs(n, round)...)
		if len(j.decoded) != 0 || j.decodedBytes != 0 {
			t.Fatalf("round %d: over the budget the join keeps %d rows decoded (%d bytes)", round, len(j.decoded), j.decodedBytes)
		}
	}
	got := r.output()
	if len(got) != 2*n {
		t.Fatalf("%d join results, want %d", len(got), 2*n)
	}
	for round := range 2 {
		for i := range n {
			want := fmt.Sprintf(`k%d {"L1":"left%d","R1":"right%d-%d"}@%d`, i, i, i, round, 2*i+1)
			if g := got[round*n+i]; g != want {
				t.Fatalf("result %d: got %s, want %s", round*n+i, g, want)
			}
		}
	}
	r.tk.close()
	if u := r.store.Budget().Used(); u != 0 {
		t.Fatalf("after the task stopped the budget still counts %d bytes", u)
	}
}
