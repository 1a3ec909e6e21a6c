package exec

import (
	"context"
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
)

// TestSinkRecycle: a sink never recycled keeps no record slab (a task
// without state lets the collector have them); once recycled it reuses
// its slabs for later records, keeping at most maxSpareSlabs.
func TestSinkRecycle(t *testing.T) {
	cols := []types.Column{{Name: "K", Type: types.IntType}, {Name: "N", Type: types.BigintType}}
	g := &topology.Graph{QueryID: "CSAS_R_1", KeyColumns: 1, Output: cols,
		Sink: &topology.Sink{Name: "R", Topic: "r", Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON"}}
	s, err := newSink(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut := func(n int) []*kafka.Record {
		t.Helper()
		out := make([]*kafka.Record, n)
		for i := range out {
			r, err := s.record([]any{int32(i), int64(i)}, int64(i), false, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = r
		}
		return out
	}
	cut(3 * sinkRecords)
	if len(s.used) != 0 || len(s.spare) != 0 {
		t.Fatalf("a sink never recycled keeps %d used and %d spare slabs", len(s.used), len(s.spare))
	}
	s.recycle()
	first := cut(3 * sinkRecords)
	if len(s.used) != 3 {
		t.Fatalf("%d used slabs after 3 slabs of records, want 3", len(s.used))
	}
	s.recycle()
	if len(s.spare) != 3 || len(s.used) != 0 {
		t.Fatalf("recycle left %d spare and %d used slabs, want 3 and 0", len(s.spare), len(s.used))
	}
	if first[0].Key != nil || first[0].Topic != "" {
		t.Fatal("a recycled record still references its bytes")
	}
	again := cut(3 * sinkRecords)
	seen := map[*kafka.Record]bool{}
	for _, r := range first {
		seen[r] = true
	}
	for i, r := range again {
		if !seen[r] {
			t.Fatalf("record %d after the recycle is new memory, not a recycled slab's", i)
		}
	}
	cut((maxSpareSlabs + 10) * sinkRecords)
	s.recycle()
	if len(s.spare) != maxSpareSlabs {
		t.Fatalf("%d spare slabs kept, want at most %d", len(s.spare), maxSpareSlabs)
	}
}

// TestCommitReusesBuffers: a stateful task's commits reuse the changelog
// slices of the commit before, referencing nothing once a commit is done,
// and its outputs stay what the producer was given.
func TestCommitReusesBuffers(t *testing.T) {
	g := planQuery(t, bidsByBidder, `CREATE TABLE c AS SELECT bidder, COUNT(*) AS n FROM bid GROUP BY bidder EMIT CHANGES;`)
	tk := engineTask(t, g)
	p := &fakeProducer{}
	tk.producer = p
	ctx := context.Background()
	recs := bidRecords(2_000, true)
	if err := tk.process(ctx, recs[:1_000]); err != nil {
		t.Fatal(err)
	}
	slab := &tk.logBufs.slab[:1][0]
	for _, r := range tk.logBufs.slab[:cap(tk.logBufs.slab)] {
		if r.Key != nil || r.Topic != "" {
			t.Fatal("a committed changelog record is still referenced")
		}
	}
	if err := tk.process(ctx, recs[1_000:]); err != nil {
		t.Fatal(err)
	}
	if &tk.logBufs.slab[:1][0] != slab {
		t.Fatal("the second commit did not reuse the changelog slab")
	}
	counts := map[string]int{}
	for _, r := range p.recs {
		counts[r.Topic]++
		if r.Topic == "C" && len(r.Value) == 0 {
			t.Fatalf("output record %d has no value: its memory was reused under it", r.Offset)
		}
	}
	if counts["C"] != 2_000 {
		t.Fatalf("%d output records, want 2000 (%v)", counts["C"], counts)
	}
}
