package exec

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/state"
)

// eosRun is a query run exactly-once against the playground broker.
type eosRun struct {
	t      *testing.T
	ctx    context.Context
	client kafka.Client
	prod   kafka.Producer
	g      *topology.Graph
	// progress receives a value after the running query moved or ended.
	progress chan struct{}
}

func newEOSRun(t *testing.T, g *topology.Graph, topics ...string) *eosRun {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	for _, name := range append(topics, "positions") {
		if err := client.CreateTopic(ctx, kafka.TopicSpec{Name: name, Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	prod, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return &eosRun{t: t, ctx: ctx, client: client, prod: prod, g: g}
}

func (r *eosRun) send(values ...string) {
	recs := make([]*kafka.Record, len(values))
	for i, v := range values {
		recs[i] = &kafka.Record{Topic: r.g.Source.Topic, Partition: 0, Key: []byte("k"), Value: []byte(v), Timestamp: time.UnixMilli(1000)}
	}
	if err := r.prod.Produce(r.ctx, recs); err != nil {
		r.t.Fatal(err)
	}
}

func (r *eosRun) deps(store *state.Store) Deps {
	return Deps{Kafka: r.client, Group: "eos-test", State: store, Logger: discardLogger(), ExactlyOnce: true, PositionsTopic: "positions", ServiceID: "test", CommitInterval: 20 * time.Millisecond}
}

// start starts the query; wait waits until it read its source to the end.
func (r *eosRun) start(deps Deps) *Query {
	progress := make(chan struct{}, 1)
	deps.Progress = func() {
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	q, err := Start(r.ctx, complete(r.t, r.g), deps, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = q.Stop() })
	go func() {
		<-q.Done()
		deps.Progress()
	}()
	r.progress = progress
	return q
}

func (r *eosRun) wait(q *Query, upTo int64) {
	for q.Positions()[0] < upTo {
		select {
		case <-r.progress:
		case <-q.Done():
			r.t.Fatalf("query ended: %v", q.Err())
		case <-r.ctx.Done():
			r.t.Fatalf("query did not catch up: positions %v, want %d", q.Positions(), upTo)
		}
	}
}

// read reads topic from the start until it has n records, with
// read_committed or not, and then whatever else a last poll returns.
func (r *eosRun) read(topic string, committed bool, n int) []string {
	cons, err := r.client.NewConsumer(kafka.ConsumerOptions{ReadCommitted: committed})
	if err != nil {
		r.t.Fatal(err)
	}
	defer cons.Close()
	cons.Assign(map[string]map[int32]int64{topic: {0: kafka.OffsetStart}})
	var got []string
	for len(got) < n {
		recs, err := cons.Poll(r.ctx)
		if err != nil {
			r.t.Fatalf("read %s: %v (read %q)", topic, err, got)
		}
		for _, rec := range recs {
			got = append(got, string(rec.Key)+" "+string(rec.Value))
		}
	}
	return got
}

// eosTotalsGraph is SELECT REGION, COUNT(*) N, SUM(AMOUNT) TOTAL FROM ORDERS
// GROUP BY REGION into the topic totals.
func eosTotalsGraph() *topology.Graph {
	g := aggGraph("REGION")
	g.QueryID = "CTAS_TOTALS_1"
	agg := g.Steps[0]
	out := []types.Column{{Name: "REGION", Type: types.StringType}, {Name: "N", Type: types.BigintType}, {Name: "TOTAL", Type: types.BigintType}}
	proj := topology.Step{Kind: topology.Project, Schema: out, Exprs: []*expr.Expr{col(agg.Schema, "REGION"), col(agg.Schema, "N"), col(agg.Schema, "TOTAL")}}
	g.Steps = append(g.Steps, proj)
	g.Output, g.KeyColumns = out, 1
	g.Sink = &topology.Sink{Name: "TOTALS", Topic: "totals", Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON"}
	return g
}

// TestExactlyOnceCrashAfterCommit stops a query as a crash would between
// its transaction's commit and the write of its local state: the next run
// takes its positions from the positions topic and its state from the
// changelog, and the output has every update once.
func TestExactlyOnceCrashAfterCommit(t *testing.T) {
	g := eosTotalsGraph()
	r := newEOSRun(t, g, "orders", "totals", g.Steps[0].Changelog)
	store := openStore(t, filepath.Join(t.TempDir(), "s"))
	r.send(`{"region":"eu","amount":1}`, `{"region":"eu","amount":2}`)

	deps := r.deps(store)
	deps.afterCommit = func() error { return errors.New("crash") }
	q := r.start(deps)
	<-q.Done()
	if err := q.Err(); err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run ended with %v, want the crash", err)
	}
	if offs, err := store.Offsets(g.QueryID, 0); err != nil || len(offs) != 0 {
		t.Fatalf("the crash left state offsets %v (%v); want none written", offs, err)
	}

	r.send(`{"region":"eu","amount":10}`)
	q = r.start(r.deps(store))
	r.wait(q, 3)
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	got := r.read("totals", true, 3)
	want := []string{`eu {"N":1,"TOTAL":1}`, `eu {"N":2,"TOTAL":3}`, `eu {"N":3,"TOTAL":13}`}
	if len(got) == 2 {
		// One poll may carry both first records: one update.
		want = want[1:]
	}
	if !slices.Equal(got[len(got)-1:], want[len(want)-1:]) || slices.Contains(got[:len(got)-1], want[len(want)-1]) {
		t.Fatalf("read_committed output %q, want %q", got, want)
	}
	offs, err := store.Offsets(g.QueryID, 0)
	if err != nil {
		t.Fatal(err)
	}
	bounds, err := r.client.ListStableOffsets(r.ctx, g.Steps[0].Changelog)
	if err != nil {
		t.Fatal(err)
	}
	// The stored offset is after the last changelog record; the end is
	// after its commit marker.
	if stored := offs[g.Steps[0].StateTable]; stored != bounds[0].End-1 {
		t.Fatalf("stored changelog offset %d, want %d (the changelog's last record + 1)", stored, bounds[0].End-1)
	}
}

// TestExactlyOnceAbortedInvisible fails a task's first transaction: what
// it produced is aborted and never read with read_committed, and the task
// processes the batch again.
func TestExactlyOnceAbortedInvisible(t *testing.T) {
	g := eosTotalsGraph()
	r := newEOSRun(t, g, "orders", "totals", g.Steps[0].Changelog)
	store := openStore(t, filepath.Join(t.TempDir(), "s"))
	r.send(`{"region":"eu","amount":1}`)
	deps := r.deps(store)
	var fails atomic.Int32
	deps.beforeCommit = func() error {
		if fails.Add(1) == 1 {
			return errors.New("broker went away")
		}
		return nil
	}
	q := r.start(deps)
	r.wait(q, 1)
	r.send(`{"region":"eu","amount":2}`)
	r.wait(q, 2)
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	if got, want := r.read("totals", true, 2), []string{`eu {"N":1,"TOTAL":1}`, `eu {"N":2,"TOTAL":3}`}; !slices.Equal(got, want) {
		t.Fatalf("read_committed output %q, want %q", got, want)
	}
	// The aborted records are in the log, before the ones committed.
	if got := r.read("totals", false, 3); got[0] != `eu {"N":1,"TOTAL":1}` || len(got) != 3 {
		t.Fatalf("read_uncommitted output %q, want the aborted update first", got)
	}
}

// TestExactlyOnceZombieFenced runs two instances of the same query: the
// second one's tasks fence the first one's, which ends in ERROR without
// writing; the output has each row once.
func TestExactlyOnceZombieFenced(t *testing.T) {
	g := testGraph(t)
	r := newEOSRun(t, g, "orders", "BIG")
	row := func(i int) string { return fmt.Sprintf(`{"name":"n%d","amount":%d}`, i, 100+i) }
	r.send(row(0), row(1))
	deps := r.deps(nil)
	zombie := r.start(deps)
	r.wait(zombie, 2)
	successor := r.start(deps)
	// Ready once its producer fenced the older one's.
	if err := successor.WaitRestored(r.ctx); err != nil {
		t.Fatal(err)
	}
	r.wait(successor, 2)
	r.send(row(2))
	r.wait(successor, 3)
	select {
	case <-zombie.Done():
	case <-r.ctx.Done():
		t.Fatal("the fenced instance did not stop")
	}
	if err := zombie.Err(); err == nil || !strings.Contains(err.Error(), "fenced by a newer instance of task orders[0]") {
		t.Fatalf("the older instance ended with %v, want it fenced", err)
	}
	if err := successor.Stop(); err != nil {
		t.Fatal(err)
	}
	got := r.read("BIG", true, 3)
	slices.Sort(got)
	if want := []string{`k {"NAME":"n0","DOUBLED":200}`, `k {"NAME":"n1","DOUBLED":202}`, `k {"NAME":"n2","DOUBLED":204}`}; !slices.Equal(got, want) {
		t.Fatalf("read_committed output %q, want %q", got, want)
	}
}

// TestExactlyOnceOtherTaskOpenTransaction restarts a query while another
// producer's transaction, opened before the task's last commit, is still
// open on the positions topic (a task of the query that died in a
// transaction): the task must still resume from its last commit, not
// from the last stable offset's view, which would repeat output.
func TestExactlyOnceOtherTaskOpenTransaction(t *testing.T) {
	g := testGraph(t)
	r := newEOSRun(t, g, "orders", "BIG")
	row := func(i int) string { return fmt.Sprintf(`{"name":"n%d","amount":%d}`, i, 100+i) }
	deps := r.deps(nil)

	first := r.start(deps)
	r.send(row(0))
	r.wait(first, 1)
	p, err := r.client.NewProducer(kafka.ProducerOptions{TransactionalID: "test-other-task"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dead := p.(kafka.TxnProducer)
	if err := dead.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := dead.Produce(r.ctx, []*kafka.Record{{Topic: "positions", Partition: 0, Key: []byte("orders/1"), Value: []byte(`{"orders":0}`)}}); err != nil {
		t.Fatal(err)
	}
	r.send(row(1))
	r.wait(first, 2)
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	// The open transaction ends (its task's next instance would abort
	// it) once the second instance knows how far to read the positions.
	deps.positionsEnd = func() {
		if err := dead.Abort(r.ctx); err != nil {
			t.Error(err)
		}
	}
	second := r.start(deps)
	if err := second.WaitRestored(r.ctx); err != nil {
		t.Fatal(err)
	}
	r.send(row(2))
	r.wait(second, 3)
	if err := second.Stop(); err != nil {
		t.Fatal(err)
	}
	got := r.read("BIG", true, 3)
	slices.Sort(got)
	if want := []string{`k {"NAME":"n0","DOUBLED":200}`, `k {"NAME":"n1","DOUBLED":202}`, `k {"NAME":"n2","DOUBLED":204}`}; !slices.Equal(got, want) {
		t.Fatalf("read_committed output %q, want %q", got, want)
	}
}

// TestAtLeastOnceCommitInterval runs the totals at-least-once with a
// commit interval: the records of several produces are gathered, their
// outputs and changelog records acknowledged, and then the group's
// offsets and the local state committed up to the end of the input.
func TestAtLeastOnceCommitInterval(t *testing.T) {
	g := eosTotalsGraph()
	r := newEOSRun(t, g, "orders", "totals", g.Steps[0].Changelog)
	store := openStore(t, filepath.Join(t.TempDir(), "s"))
	r.send(`{"region":"eu","amount":1}`)
	r.send(`{"region":"eu","amount":2}`)
	deps := r.deps(store)
	deps.ExactlyOnce, deps.PositionsTopic = false, ""
	q := r.start(deps)
	r.wait(q, 2)
	r.send(`{"region":"eu","amount":10}`)
	r.wait(q, 3)
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	got := r.read("totals", false, 2)
	if last := got[len(got)-1]; last != `eu {"N":3,"TOTAL":13}` {
		t.Fatalf("output %q, want it to end with the total of the three records", got)
	}
	offs, err := r.client.FetchOffsets(r.ctx, "eos-test", "orders")
	if err != nil || len(offs) != 1 || offs[0] != 3 {
		t.Fatalf("group offsets %v (%v), want [3]", offs, err)
	}
	stored, err := store.Offsets(g.QueryID, 0)
	if err != nil {
		t.Fatal(err)
	}
	bounds, err := r.client.ListOffsets(r.ctx, g.Steps[0].Changelog)
	if err != nil {
		t.Fatal(err)
	}
	if s := stored[g.Steps[0].StateTable]; s != bounds[0].End {
		t.Fatalf("stored changelog offset %d, want the changelog's end %d", s, bounds[0].End)
	}
}

// lagClient reports the last stable offsets of one topic short of their
// end for its first lags calls, as Kafka does while a committed
// transaction's markers are on their way.
type lagClient struct {
	kafka.Client
	topic string
	lags  int
	calls int
}

func (c *lagClient) ListStableOffsets(ctx context.Context, topic string) ([]kafka.Offsets, error) {
	bounds, err := c.Client.ListStableOffsets(ctx, topic)
	if err != nil || topic != c.topic {
		return bounds, err
	}
	if c.calls++; c.calls <= c.lags {
		for i := range bounds {
			bounds[i].End = bounds[i].Start
		}
	}
	return bounds, nil
}

// TestExactlyOnceWaitCommitted has a query's positions reach its input's
// end while its last transaction is not readable yet: WaitCommitted
// returns only once the sink's last stable offset passes what the
// transaction wrote, and asks nothing for transactions it saw readable.
func TestExactlyOnceWaitCommitted(t *testing.T) {
	g := eosTotalsGraph()
	r := newEOSRun(t, g, "orders", "totals", g.Steps[0].Changelog)
	store := openStore(t, filepath.Join(t.TempDir(), "s"))
	r.send(`{"region":"eu","amount":1}`, `{"region":"us","amount":2}`)
	deps := r.deps(store)
	lag := &lagClient{Client: r.client, topic: "totals", lags: 3}
	deps.Kafka = lag
	q := r.start(deps)
	r.wait(q, 2)
	if err := q.WaitCommitted(r.ctx); err != nil {
		t.Fatal(err)
	}
	if lag.calls != lag.lags+1 {
		t.Fatalf("WaitCommitted listed the sink's stable offsets %d times, want %d (until they passed the transaction)", lag.calls, lag.lags+1)
	}
	if got := r.read("totals", true, 2); len(got) != 2 {
		t.Fatalf("read_committed output %q, want 2 records", got)
	}
	if err := q.WaitCommitted(r.ctx); err != nil {
		t.Fatal(err)
	}
	if lag.calls != lag.lags+1 {
		t.Fatalf("WaitCommitted listed offsets again (%d calls) for a transaction it saw readable", lag.calls)
	}
}
