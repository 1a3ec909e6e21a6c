package exec

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// brokenProducer fails every produce while fail is set, as a broker that
// went away does, and acknowledges like fakeProducer otherwise.
type brokenProducer struct {
	fakeProducer
	fail bool
}

func (p *brokenProducer) Produce(ctx context.Context, recs []*kafka.Record) error {
	if p.fail {
		return errors.New("broker gone")
	}
	return p.fakeProducer.Produce(ctx, recs)
}

// TestStateWrittenLater: a task's commits write the changelog at once and
// the store only once the persist interval passed or the task stops; a
// failed commit goes back to the last committed counts, which only the
// cache holds.
func TestStateWrittenLater(t *testing.T) {
	g := planQuery(t, bidsByBidder, `CREATE TABLE counts AS SELECT bidder, COUNT(*) AS n FROM bid GROUP BY bidder;`)
	store := openStore(t, t.TempDir())
	now := time.UnixMilli(1_000_000)
	q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: func() time.Time { return now }, Logger: discardLogger(), State: store, StateNamespace: g.QueryID, PersistInterval: time.Second}}
	tk := &task{q: q, nKey: len(g.Source.Key), nValue: len(g.Source.Value), tsCol: -1}
	if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
		t.Fatal(err)
	}
	q.tasks = []*task{tk}
	prod := &brokenProducer{}
	tk.producer = prod
	tk.mode = newAtLeastOnce(tk)
	cy := &cycler{recs: bidRecords(40, true)} // 40 distinct bidders
	batch := cy.batch
	ctx := context.Background()
	stored := func() (offsets int, groups int64) {
		t.Helper()
		off, err := store.Offsets(g.QueryID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range off {
			offsets += int(o)
		}
		for _, at := range AggregateTables(g) {
			if err := at.ScanRows(store, 0, func(row []any) bool {
				groups += row[len(row)-1].(int64)
				return true
			}); err != nil {
				t.Fatal(err)
			}
		}
		return offsets, groups
	}
	if err := tk.process(ctx, batch(40)); err != nil {
		t.Fatal(err)
	}
	if off, n := stored(); off != 0 || n != 0 {
		t.Fatalf("store after a commit within the interval: offsets %d, counted %d; want nothing", off, n)
	}
	if !tk.unpersisted.Load() || !q.Unpersisted() {
		t.Fatal("the task does not say it holds unpersisted state")
	}
	// A failed commit: the cache goes back to the first commit's counts.
	prod.fail = true
	if err := tk.process(ctx, batch(40)); err == nil {
		t.Fatal("process with a failing producer succeeded")
	}
	prod.fail = false
	// What rewind does after an aborted transaction.
	tk.cache.Reset()
	if err := tk.reopen(); err != nil {
		t.Fatal(err)
	}
	tk.pending = tk.pending[:0]
	cy.next -= 40
	if err := tk.process(ctx, batch(40)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if err := tk.process(ctx, batch(20)); err != nil {
		t.Fatal(err)
	}
	if _, n := stored(); n != 100 {
		t.Fatalf("store after the interval counted %d records, want 100 (40, 40 again after a failed commit, 20)", n)
	}
	if tk.unpersisted.Load() {
		t.Fatal("unpersisted still set after the write")
	}
	if err := tk.process(ctx, batch(10)); err != nil {
		t.Fatal(err)
	}
	if _, n := stored(); n != 100 {
		t.Fatalf("store counted %d records before the stop, want still 100", n)
	}
	tk.close()
	off, n := stored()
	if n != 110 {
		t.Fatalf("store after the stop counted %d records, want 110", n)
	}
	if logged := countTopic(prod.recs, changelogTopics(tk)); off != logged {
		t.Fatalf("stored changelog offsets sum to %d, the changelog has %d records", off, logged)
	}
}

// cycler hands out batches of copies of recs, cycling through them, at
// consecutive offsets from next.
type cycler struct {
	recs []*kafka.Record
	next int64
}

func (c *cycler) batch(n int) []*kafka.Record {
	out := make([]*kafka.Record, n)
	for i := range out {
		r := *c.recs[int(c.next)%len(c.recs)]
		r.Offset = c.next
		c.next++
		out[i] = &r
	}
	return out
}

func changelogTopics(tk *task) map[string]bool {
	out := map[string]bool{}
	for _, topic := range tk.changelogs {
		out[topic] = true
	}
	return out
}

func countTopic(recs []*kafka.Record, topics map[string]bool) int {
	n := 0
	for _, r := range recs {
		if topics[r.Topic] {
			n++
		}
	}
	return n
}
