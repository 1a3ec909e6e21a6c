package exec

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
)

// windowGraph is SELECT REGION, COUNT(*), SUM(AMOUNT) FROM ORDERS WINDOW w
// GROUP BY REGION, as a push query emitting the aggregate step's rows.
func windowGraph(w topology.Window) *topology.Graph {
	g := aggGraph("REGION")
	st := &g.Steps[0]
	st.Window = &w
	schema := append([]types.Column(nil), st.Schema[:topology.PseudoColumns+1]...)
	schema = append(schema, topology.WindowColumns()...)
	st.Schema = append(schema, st.Schema[topology.PseudoColumns+1:]...)
	g.Output = st.Schema
	return g
}

// runWindow runs records given as (time, region, amount) through the
// windowed aggregate of g, one batch per record, and returns its rows from
// the key columns on, tombstones marked.
func runWindow(t *testing.T, g *topology.Graph, recs ...string) []string {
	store := openStore(t, t.TempDir())
	q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: time.Now, State: store}}
	q.deps.Logger = discardLogger()
	tk := &task{q: q, nKey: len(g.Source.Key), nValue: len(g.Source.Value), tsCol: -1}
	if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
		t.Fatal(err)
	}
	var got []string
	emit := emitterFunc(func(_ context.Context, b *Batch) error {
		for i := 0; i < b.Len(); i++ {
			row := b.Row(i)
			line := fmt.Sprintf("@%d %v", b.Time(i), row[topology.PseudoColumns:topology.PseudoColumns+3])
			if b.Kind(i) == NullValue {
				line += " tombstone"
			} else {
				line += fmt.Sprint(" ", row[topology.PseudoColumns+3:])
			}
			got = append(got, line)
		}
		return nil
	})
	for i, r := range recs {
		var ts int64
		var region string
		var amount int64
		if _, err := fmt.Sscanf(r, "%d %s %d", &ts, &region, &amount); err != nil {
			t.Fatalf("record %q: %v", r, err)
		}
		rec := &kafka.Record{Topic: "orders", Offset: int64(i), Timestamp: time.UnixMilli(ts), Key: []byte("o"),
			Value: fmt.Appendf(nil, `{"region":%q,"amount":%d}`, region, amount)}
		tk.in.Reset()
		tk.polled = []*kafka.Record{rec}
		tk.decode(tk.polled)
		if err := tk.ops[0].OnBatch(context.Background(), 0, &tk.in, emit); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

func check(t *testing.T, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n  %q\nwant\n  %q", got, want)
	}
}

func TestTumblingWindowLateness(t *testing.T) {
	g := windowGraph(topology.Window{Type: topology.Tumbling, Size: 10, Advance: 10, Grace: 5, Retention: 15})
	got := runWindow(t, g,
		"1 eu 1",
		"12 eu 2",  // [10, 20)
		"3 eu 3",   // stream time 12: [0, 10) is open until 15
		"15 us 4",  // stream time 15: [0, 10) closes
		"4 eu 5",   // late: dropped
		"14 eu 6",  // [10, 20) is open until 25
		"-5 eu 7",  // before any window: dropped
		"25 eu 8",  // stream time 25: [10, 20) closes
		"19 eu 10", // late
	)
	check(t, got,
		"@1 [eu 0 10] [1 1]",
		"@12 [eu 10 20] [1 2]",
		"@3 [eu 0 10] [2 4]",
		"@15 [us 10 20] [1 4]",
		"@14 [eu 10 20] [2 8]",
		"@25 [eu 20 30] [1 8]",
	)
}

func TestHoppingWindowAssignment(t *testing.T) {
	g := windowGraph(topology.Window{Type: topology.Hopping, Size: 10, Advance: 4, Grace: 100, Retention: 110})
	got := runWindow(t, g, "9 eu 1", "2 eu 2")
	check(t, got,
		"@9 [eu 0 10] [1 1]",
		"@9 [eu 4 14] [1 1]",
		"@9 [eu 8 18] [1 1]",
		"@9 [eu 0 10] [2 3]",
	)
}

func TestSessionWindowMerge(t *testing.T) {
	g := windowGraph(topology.Window{Type: topology.Session, Size: 15, Grace: 20, Retention: 35})
	got := runWindow(t, g,
		"0 eu 1",
		"30 eu 2",
		"15 eu 4", // bridges [0, 0] and [30, 30]
		"18 eu 8", // inside [0, 30]: the session is rewritten
		"31 us 1", // stream time 31
		"70 us 1", // stream time 70: [0, 30] ends 30 + 15 + 20 < 70, so...
		"5 eu 16", // ...a record within it is late
	)
	check(t, got,
		"@0 [eu 0 0] [1 1]",
		"@30 [eu 30 30] [1 2]",
		"@0 [eu 0 0] tombstone",
		"@30 [eu 30 30] tombstone",
		"@30 [eu 0 30] [3 7]",
		"@30 [eu 0 30] tombstone",
		"@30 [eu 0 30] [4 15]",
		"@31 [us 31 31] [1 1]",
		"@70 [us 70 70] [1 1]",
	)
}

func TestEmitFinal(t *testing.T) {
	g := windowGraph(topology.Window{Type: topology.Tumbling, Size: 10, Advance: 10, Grace: 2, Retention: 100, Final: true})
	got := runWindow(t, g,
		"1 eu 1",
		"5 us 2",
		"3 eu 4",
		"11 eu 8", // stream time 11: nothing closed yet
		"12 us 1", // stream time 12: [0, 10) closes for both keys
		"9 eu 1",  // late
		"40 eu 1", // [10, 20) closes
	)
	check(t, got,
		"@3 [eu 0 10] [2 5]",
		"@5 [us 0 10] [1 2]",
		"@11 [eu 10 20] [1 8]",
		"@12 [us 10 20] [1 1]",
	)
}

func TestSessionEmitFinal(t *testing.T) {
	g := windowGraph(topology.Window{Type: topology.Session, Size: 5, Grace: 0, Retention: 5, Final: true})
	got := runWindow(t, g, "0 eu 1", "4 eu 2", "9 eu 4", "15 eu 8", "21 eu 16")
	check(t, got, "@9 [eu 0 9] [3 7]", "@15 [eu 15 15] [1 8]")
}

func TestDueHeapOrder(t *testing.T) {
	var h dueHeap
	ats := []int64{5, 3, 9, 1, 1, 7, 2, 8, 6, 4, 0}
	for _, at := range ats {
		h.push(dueEntry{at: at})
	}
	prev := int64(-1)
	for range ats {
		e := h.pop()
		if e.at < prev {
			t.Fatalf("popped %d after %d", e.at, prev)
		}
		prev = e.at
	}
	if len(h) != 0 {
		t.Fatalf("%d entries left", len(h))
	}
}

// runWindowCommitted is runWindow committing the task's state after every
// each records, and starting a new task over the same store (as a restart
// does) every reopen records (a multiple of each).
func runWindowCommitted(t *testing.T, g *topology.Graph, each, reopen int, recs ...string) []string {
	store := openStore(t, t.TempDir())
	var got []string
	emit := emitterFunc(func(_ context.Context, b *Batch) error {
		for i := 0; i < b.Len(); i++ {
			row := b.Row(i)
			got = append(got, fmt.Sprintf("@%d %v %v", b.Time(i), row[topology.PseudoColumns:topology.PseudoColumns+3], row[topology.PseudoColumns+3:]))
		}
		return nil
	})
	var tk *task
	for i, r := range recs {
		if tk == nil || i%reopen == 0 {
			q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: time.Now, State: store, Logger: discardLogger()}}
			tk = &task{q: q, nKey: len(g.Source.Key), nValue: len(g.Source.Value), tsCol: -1}
			if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
				t.Fatal(err)
			}
		}
		var ts int64
		var region string
		var amount int64
		if _, err := fmt.Sscanf(r, "%d %s %d", &ts, &region, &amount); err != nil {
			t.Fatalf("record %q: %v", r, err)
		}
		rec := &kafka.Record{Topic: "orders", Offset: int64(i), Timestamp: time.UnixMilli(ts), Key: []byte("o"),
			Value: fmt.Appendf(nil, `{"region":%q,"amount":%d}`, region, amount)}
		tk.in.Reset()
		tk.polled = []*kafka.Record{rec}
		tk.decode(tk.polled)
		if err := tk.ops[0].OnBatch(context.Background(), 0, &tk.in, emit); err != nil {
			t.Fatal(err)
		}
		if (i+1)%each != 0 && i+1 < len(recs) {
			continue
		}
		if err := tk.stageCommit(context.Background()); err != nil {
			t.Fatal(err)
		}
		tk.cache.Flush(nil)
		tk.cache.Commit(nil)
		if err := tk.cache.Persist(); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// TestWindowLiveBound checks that time windows give the same rows whether
// they stay decoded between records or are forgotten after each commit
// (a bound of one live window), read back from the task cache or, after
// a restart, from the store.
func TestWindowLiveBound(t *testing.T) {
	var recs []string
	for i := range 120 {
		// Times mostly rising, every seventh record late by 9 ms.
		ts := 2*i - 9*min(1, i%7/6)
		recs = append(recs, fmt.Sprintf("%d r%d %d", max(0, ts), i*7%5, i))
	}
	for _, w := range []topology.Window{
		{Type: topology.Tumbling, Size: 10, Advance: 10, Grace: 5, Retention: 30},
		{Type: topology.Hopping, Size: 10, Advance: 4, Grace: 3, Retention: 13},
		{Type: topology.Tumbling, Size: 10, Advance: 10, Grace: 4, Retention: 14, Final: true},
		{Type: topology.Hopping, Size: 12, Advance: 4, Grace: 2, Retention: 40, Final: true},
	} {
		t.Run(w.String(), func(t *testing.T) {
			want := runWindowCommitted(t, windowGraph(w), 1, len(recs), recs...)
			if len(want) < 50 {
				t.Fatalf("only %d rows", len(want))
			}
			defer func(n int) { maxLiveWindows = n }(maxLiveWindows)
			maxLiveWindows = 1
			check(t, runWindowCommitted(t, windowGraph(w), 1, len(recs), recs...), want...)
			check(t, runWindowCommitted(t, windowGraph(w), 5, len(recs), recs...), want...)
			got := runWindowCommitted(t, windowGraph(w), 1, 17, recs...)
			if w.Final {
				// A restart rebuilds the schedule from the store, in key
				// order: the windows that close together come in that
				// order then, not in the order they were created.
				slices.Sort(got)
				want = slices.Sorted(slices.Values(want))
			}
			check(t, got, want...)
		})
	}
}
