package exec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// windowJoin is a stream-stream join of rows within 10 ms of each other,
// without grace.
func windowJoin(typ topology.JoinType) func() *topology.Graph {
	return func() *topology.Graph {
		return joinGraph(typ, false, false, &topology.JoinWindow{Before: 10, After: 10, Grace: 0}, false)
	}
}

// knownEnds tells r's task where its inputs end, as syncStart does from
// the broker: left's partition at left, the side's at right.
func knownEnds(r *joinRun, left, right int64) {
	r.tk.srcFetched, r.tk.srcEnd = r.tk.pos.Load(), left
	s := r.tk.sides[0]
	s.fetched, s.ends = []int64{s.pos[0].Load()}, []int64{right}
}

// inTimeOrder runs inputs through a new run of g one record per poll, in
// the order given: what a join that keeps time order across its inputs
// must write whatever polls bring them in.
func inTimeOrder(t *testing.T, g func() *topology.Graph, inputs ...string) []string {
	r := newJoinRun(t, g())
	for _, in := range inputs {
		r.send(in)
	}
	r.tk.close()
	return r.output()
}

// TestJoinWaitsForInput polls a stream-stream LEFT JOIN's left rows
// before its right ones, as a fetch of the left topic returned first: the
// task runs nothing while the right input, known to hold a record, has
// delivered none, so the left row is not closed unmatched by the later
// left row's time before its right row arrives.
func TestJoinWaitsForInput(t *testing.T) {
	g := windowJoin(topology.LeftJoin)
	r := newJoinRun(t, g())
	knownEnds(r, 2, 1)
	r.send(`left a {"L1":"x"}@100`, `left b {"L1":"q"}@200`)
	if got := r.output(); len(got) != 0 || r.tk.pos.Load() != 0 || len(r.tk.held) != 2 {
		t.Fatalf("before the right input came: output %v, left position %d, %d held; want none, 0 and 2", got, r.tk.pos.Load(), len(r.tk.held))
	}
	r.send(`right a {"R1":"y"}@105`)
	if r.tk.pos.Load() != 2 || r.tk.sides[0].pos[0].Load() != 1 || r.tk.holding() {
		t.Errorf("positions %d and %d, holding %v; want 2, 1 and nothing held", r.tk.pos.Load(), r.tk.sides[0].pos[0].Load(), r.tk.holding())
	}
	r.tk.close()
	want := inTimeOrder(t, g, `left a {"L1":"x"}@100`, `right a {"R1":"y"}@105`, `left b {"L1":"q"}@200`)
	if got := r.output(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestJoinCarriesRows has one poll bring the left rows at 1, 5 and 9 with
// the right row at 2 only, the right input holding two more: the rows
// after the right input's last run, and the others wait decoded for the
// next polls, with the left position at the first row that waits. The
// output is that of the rows in time order, one per poll.
func TestJoinCarriesRows(t *testing.T) {
	g := windowJoin(topology.InnerJoin)
	r := newJoinRun(t, g())
	knownEnds(r, 3, 3)
	r.send(`left a {"L1":"l1"}@1`, `left a {"L1":"l5"}@5`, `left a {"L1":"l9"}@9`, `right a {"R1":"r2"}@2`)
	if n := len(r.tk.carriedRecs); r.tk.pos.Load() != 1 || n != 2 {
		t.Fatalf("left position %d with %d rows carried, want 1 and 2", r.tk.pos.Load(), n)
	}
	r.send(`right a {"R1":"r7"}@7`)
	if n := len(r.tk.carriedRecs); r.tk.pos.Load() != 2 || n != 1 {
		t.Fatalf("left position %d with %d rows carried, want 2 and 1", r.tk.pos.Load(), n)
	}
	r.send(`right a {"R1":"r20"}@20`)
	if r.tk.pos.Load() != 3 || r.tk.sides[0].pos[0].Load() != 3 || r.tk.holding() {
		t.Errorf("positions %d and %d, holding %v; want 3, 3 and nothing held", r.tk.pos.Load(), r.tk.sides[0].pos[0].Load(), r.tk.holding())
	}
	r.tk.close()
	want := inTimeOrder(t, g, `left a {"L1":"l1"}@1`, `right a {"R1":"r2"}@2`, `left a {"L1":"l5"}@5`,
		`right a {"R1":"r7"}@7`, `left a {"L1":"l9"}@9`, `right a {"R1":"r20"}@20`)
	if got := r.output(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestJoinCarriedBadRecord has a bad record among rows a round carries:
// it goes to the processing log once, in the round that read it.
func TestJoinCarriedBadRecord(t *testing.T) {
	r := newJoinRun(t, windowJoin(topology.InnerJoin)())
	knownEnds(r, 3, 2)
	r.send(`left a {"L1":"l1"}@1`, `left a not json@3`, `left a {"L1":"l9"}@9`, `right a {"R1":"r2"}@2`)
	r.send(`right a {"R1":"r8"}@8`)
	logged := 0
	for _, rec := range r.prod.recs {
		if rec.Topic == "plog" {
			logged++
		}
	}
	if logged != 1 {
		t.Errorf("%d processing-log records, want 1", logged)
	}
	if got := len(r.output()); got != 4 {
		t.Errorf("%d joined rows, want 4 (l1 and l9, each with r2 and r8)", got)
	}
}

// TestJoinStopsWaiting has an input known to hold a record deliver none:
// after syncWait the task runs what it holds and takes the input's end as
// reached, so that it does not wait for it again.
func TestJoinStopsWaiting(t *testing.T) {
	r := newJoinRun(t, windowJoin(topology.InnerJoin)())
	knownEnds(r, 1, 1)
	r.send(`left a {"L1":"x"}@1`)
	if r.tk.pos.Load() != 0 || r.tk.waitingSince.IsZero() {
		t.Fatalf("left position %d, waiting %v; want 0 and waiting", r.tk.pos.Load(), !r.tk.waitingSince.IsZero())
	}
	r.tk.waitingSince = time.Now().Add(-syncWait)
	if !r.tk.waitDue() {
		t.Fatal("the wait is not due after syncWait")
	}
	if err := r.tk.process(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if r.tk.pos.Load() != 1 || r.tk.holding() || !r.tk.sides[0].drained() || !r.tk.waitingSince.IsZero() {
		t.Errorf("left position %d, holding %v, right drained %v; want 1, nothing held, drained", r.tk.pos.Load(), r.tk.holding(), r.tk.sides[0].drained())
	}
}

// lateSide is a client whose consumers return a topic's records one poll
// after they were fetched, as when its fetch comes back after the other
// inputs'.
type lateSide struct {
	kafka.Client
	topic string
}

func (c *lateSide) NewConsumer(opts kafka.ConsumerOptions) (kafka.Consumer, error) {
	cons, err := c.Client.NewConsumer(opts)
	return &lateSideConsumer{Consumer: cons, topic: c.topic}, err
}

type lateSideConsumer struct {
	kafka.Consumer
	topic string
	mu    sync.Mutex
	late  []*kafka.Record
}

func (c *lateSideConsumer) Poll(ctx context.Context) ([]*kafka.Record, error) {
	c.mu.Lock()
	late := c.late
	c.late = nil
	c.mu.Unlock()
	if len(late) > 0 {
		return late, nil
	}
	recs, err := c.Consumer.Poll(ctx)
	var now []*kafka.Record
	c.mu.Lock()
	for _, r := range recs {
		if r.Topic == c.topic {
			c.late = append(c.late, r)
		} else {
			now = append(now, r)
		}
	}
	c.mu.Unlock()
	return now, err
}

func (c *lateSideConsumer) FetchedEnd(topic string, partition int32) (int64, bool) {
	if ew, ok := c.Consumer.(kafka.EndWatcher); ok {
		return ew.FetchedEnd(topic, partition)
	}
	return 0, false
}

// TestStreamStreamJoinLateFetch runs a stream-stream LEFT JOIN against
// the playground broker over topics loaded before it starts, each left
// row with its right row 10 ms later, the right topic's records reaching
// the task a poll after the left's: every left row still meets its right
// row, none goes out unmatched because later left rows ran first.
func TestStreamStreamJoinLateFetch(t *testing.T) {
	g := joinGraph(topology.LeftJoin, false, false, &topology.JoinWindow{Before: 100, After: 100, Grace: 0}, false)
	l := newLiveJoin(t, g, map[string]int32{"left": 2, "right": 2})
	l.client = &lateSide{Client: l.client, topic: "right"}
	const n = 40
	for i := range n {
		ts := int64(1000 * (i + 1))
		l.send("left", i, i+1, ts, func(i int) string { return fmt.Sprintf(`{"L1":"l%d"}`, i) })
		l.send("right", i, i+1, ts+10, func(i int) string { return fmt.Sprintf(`{"R1":"r%d"}`, i) })
	}
	l.run()
	got := l.output(n)
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		if want := fmt.Sprintf(`{"L1":"l%d","R1":"r%d"}`, i, i); got[k] != want {
			t.Errorf("%s: got %s, want %s", k, got[k], want)
		}
	}
	if ends := l.ends("out"); ends[0]+ends[1] != n {
		t.Errorf("%d output records, want %d: a left row went out unmatched before its right row", ends[0]+ends[1], n)
	}
}
