package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// testGraph is SELECT ID, NAME, AMOUNT * 2 AS DOUBLED FROM ORDERS WHERE
// AMOUNT > 10, into a sink.
func testGraph(t testing.TB) *topology.Graph {
	src := &topology.Source{
		Name: "ORDERS", Topic: "orders", Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON",
		Key:   []types.Column{{Name: "ID", Type: types.StringType}},
		Value: []types.Column{{Name: "NAME", Type: types.StringType}, {Name: "AMOUNT", Type: types.BigintType}},
	}
	in := src.Schema()
	sc := bind.ScopeOf("ORDERS", in)
	bound := func(e ast.Expr) *expr.Expr {
		b, err := bind.Bind(e, sc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	amount := &ast.ColumnRef{Name: "AMOUNT"}
	pred := bound(&ast.Binary{Op: ast.OpGt, L: amount, R: &ast.Literal{Kind: ast.IntLit, Text: "10"}})
	exprs := []*expr.Expr{
		bound(&ast.ColumnRef{Name: "ID"}),
		bound(&ast.ColumnRef{Name: "NAME"}),
		bound(&ast.Binary{Op: ast.OpMul, L: amount, R: &ast.Literal{Kind: ast.IntLit, Text: "2"}}),
	}
	out := []types.Column{{Name: "ID", Type: types.StringType}, {Name: "NAME", Type: types.StringType}, {Name: "DOUBLED", Type: types.BigintType}}
	return &topology.Graph{
		QueryID: "CSAS_BIG_1", Source: src, OffsetReset: "earliest",
		Steps: []topology.Step{
			{Kind: topology.Filter, Predicate: pred, Schema: in},
			{Kind: topology.Project, Exprs: exprs, Schema: out},
		},
		Sink:   &topology.Sink{Name: "BIG", Topic: "BIG", Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON"},
		Output: out, KeyColumns: 1,
	}
}

// offlineTask builds a task's decode, operators and sink without Kafka,
// for g's only stage.
func offlineTask(t testing.TB, g *topology.Graph) *task {
	return offlineStage(t, testStage(t, g, 0))
}

// offlineStage is offlineTask for a stage.
func offlineStage(t testing.TB, s *stage) *task {
	q := &Query{graph: s.g, deps: Deps{ProcessingLog: "plog", Now: time.Now}}
	q.deps.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	tk := &task{q: q, nKey: len(s.g.Source.Key), nValue: len(s.g.Source.Value), tsCol: -1}
	full, err := newTaskParts(tk, s)
	if err != nil {
		t.Fatal(err)
	}
	return full
}

func testRecords(n int) []*kafka.Record {
	recs := make([]*kafka.Record, n)
	for i := range recs {
		recs[i] = &kafka.Record{
			Topic: "orders", Offset: int64(i), Timestamp: time.UnixMilli(int64(1000 + i)),
			Key:   []byte(fmt.Sprintf("o%d", i)),
			Value: []byte(fmt.Sprintf(`{"name":"item-%d","amount":%d}`, i, i%20)),
		}
	}
	return recs
}

func TestPipelineFilterProject(t *testing.T) {
	tk := offlineTask(t, testGraph(t))
	recs := testRecords(20)
	recs[3].Value = []byte(`{"name":`)
	tk.polled = recs
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	var sink, plog []string
	for _, r := range tk.pending {
		line := fmt.Sprintf("%s %s @%d", r.Key, r.Value, r.Timestamp.UnixMilli())
		if r.Topic == "plog" {
			plog = append(plog, string(r.Value))
		} else {
			sink = append(sink, line)
		}
	}
	if len(sink) != 9 { // amounts 11..19
		t.Fatalf("got %d sink records, want 9: %v", len(sink), sink)
	}
	if want := `o11 {"NAME":"item-11","DOUBLED":22} @1011`; sink[0] != want {
		t.Errorf("first sink record %q, want %q", sink[0], want)
	}
	if len(plog) != 1 {
		t.Fatalf("got %d processing-log records, want 1", len(plog))
	}
	for _, want := range []string{`"offset":3`, `"topic":"orders"`, `"query_id":"CSAS_BIG_1"`, `"value":"eyJuYW1lIjo="`} {
		if !strings.Contains(plog[0], want) {
			t.Errorf("processing-log record %s lacks %s", plog[0], want)
		}
	}
}

// BenchmarkPipeline measures decode, filter, project and encode of a JSON
// stream, per record, without Kafka.
func BenchmarkPipeline(b *testing.B) {
	tk := offlineTask(b, testGraph(b))
	recs := testRecords(512)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(recs) {
		tk.polled = recs
		tk.decode(recs)
		if err := tk.push(ctx, 0, &tk.in); err != nil {
			b.Fatal(err)
		}
		tk.in.Reset()
		clear(tk.pending)
		tk.pending = tk.pending[:0]
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// failingProducer fails every produce after the first ok ones.
type failingProducer struct{ ok int }

func (p *failingProducer) Produce(context.Context, []*kafka.Record) error {
	if p.ok > 0 {
		p.ok--
		return nil
	}
	return errors.New("broker on fire")
}

func (p *failingProducer) Close() {}

// TestPipelinedProduce processes batches at-least-once without state: a
// batch's position moves once its flight (produce, then offsets) landed,
// and a failed flight fails the next batch and keeps its position.
func TestPipelinedProduce(t *testing.T) {
	tk := offlineTask(t, testGraph(t))
	tk.producer = &failingProducer{ok: 1}
	mode := newAtLeastOnce(tk)
	tk.mode = mode
	if !mode.pipelined {
		t.Fatal("a stateless at-least-once task is not pipelined")
	}
	recs := testRecords(60)
	ctx := context.Background()
	if err := tk.process(ctx, recs[:20]); err != nil {
		t.Fatal(err)
	}
	if err := tk.mode.land(); err != nil {
		t.Fatal(err)
	}
	if got := tk.pos.Load(); got != 20 {
		t.Fatalf("position %d after the first flight, want 20", got)
	}
	if err := tk.process(ctx, recs[20:40]); err != nil {
		t.Fatal(err)
	}
	if err := tk.process(ctx, recs[40:]); err == nil || !strings.Contains(err.Error(), "broker on fire") {
		t.Fatalf("the batch after a failed flight returned %v, want the flight's error", err)
	}
	if got := tk.pos.Load(); got != 20 {
		t.Fatalf("position %d after a failed flight, want 20", got)
	}
}

// heldProducer acknowledges a produce only once release is closed.
type heldProducer struct{ release chan struct{} }

func (p *heldProducer) Produce(ctx context.Context, _ []*kafka.Record) error {
	select {
	case <-p.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *heldProducer) Close() {}

// TestPipelinedMarksWaitForFlight reads a transaction's commit marker
// after the records of a batch whose flight is in the air: the position
// passes the marker only once the flight lands, so that the flush
// barrier never takes unacknowledged outputs for done.
func TestPipelinedMarksWaitForFlight(t *testing.T) {
	tk := offlineTask(t, testGraph(t))
	prod := &heldProducer{release: make(chan struct{})}
	tk.producer, tk.mode = prod, newAtLeastOnce(tk)
	recs := testRecords(20)
	mark := &kafka.Record{Topic: "orders", Offset: 20, Control: true}
	polled := tk.dropControl(append(recs, mark))
	if err := tk.process(context.Background(), polled); err != nil {
		t.Fatal(err)
	}
	tk.passMarks()
	if got := tk.pos.Load(); got != 0 {
		t.Fatalf("position %d with the batch's flight in the air, want 0", got)
	}
	close(prod.release)
	if err := tk.mode.land(); err != nil {
		t.Fatal(err)
	}
	if got := tk.pos.Load(); got != 21 {
		t.Fatalf("position %d once the flight landed, want 21 (past the marker)", got)
	}

	// A marker read with no flight in the air moves the position at once.
	tk.marks = append(tk.marks, &kafka.Record{Topic: "orders", Offset: 21, Control: true})
	tk.passMarks()
	if got := tk.pos.Load(); got != 22 {
		t.Fatalf("position %d after a marker with the flight landed, want 22", got)
	}
}

// bufferedConsumer is a kafka.Consumer whose fetched records are batches
// that PollBuffered hands out without waiting.
type bufferedConsumer struct{ fetched [][]*kafka.Record }

func (c *bufferedConsumer) Assign(map[string]map[int32]int64) {}

func (c *bufferedConsumer) Poll(ctx context.Context) ([]*kafka.Record, error) {
	if recs, _ := c.PollBuffered(); len(recs) > 0 {
		return recs, nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (c *bufferedConsumer) PollBuffered() ([]*kafka.Record, error) {
	if len(c.fetched) == 0 {
		return nil, nil
	}
	recs := c.fetched[0]
	c.fetched = c.fetched[1:]
	return recs, nil
}

func (c *bufferedConsumer) Close() {}

// countingProducer acknowledges the first produce once release is closed
// and the others at once, noting how many records each carried; it fails
// them all with fail set.
type countingProducer struct {
	release chan struct{}
	sizes   chan int
	fail    bool
}

func (p *countingProducer) Produce(ctx context.Context, recs []*kafka.Record) error {
	p.sizes <- len(recs)
	select {
	case <-p.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if p.fail {
		return errors.New("broker on fire")
	}
	return nil
}

func (p *countingProducer) Close() {}

// TestPipelinedCoalesce processes batches while a flight is in the air:
// they are held, with what the consumer has fetched meanwhile, and one
// flight carries them all once the first lands; the position (and a
// marker's move) waits for that flight.
func TestPipelinedCoalesce(t *testing.T) {
	recs := testRecords(80)
	cons := &bufferedConsumer{fetched: [][]*kafka.Record{recs[40:60]}}
	tk := offlineTask(t, testGraph(t))
	tk.consumer = cons
	prod := &countingProducer{release: make(chan struct{}), sizes: make(chan int, 10)}
	tk.producer, tk.mode = prod, newAtLeastOnce(tk)
	m := tk.mode.(*atLeastOnce)
	ctx := context.Background()
	if err := tk.process(ctx, recs[:20]); err != nil {
		t.Fatal(err)
	}
	if got := <-prod.sizes; got != 9 {
		t.Fatalf("the first flight carries %d records, want 9", got)
	}
	// The first flight is in the air: the next batch is held.
	if err := tk.process(ctx, recs[20:40]); err != nil {
		t.Fatal(err)
	}
	if !m.held || len(tk.pending) != 9 {
		t.Fatalf("held %v with %d pending records, want the batch's 9 held", m.held, len(tk.pending))
	}
	tk.marks = append(tk.marks, &kafka.Record{Topic: "orders", Offset: 60, Control: true})
	// What is fetched already comes next, without waiting.
	polled, err := m.pollHeld()
	if err != nil || len(polled) != 20 || polled[0].Offset != 40 {
		t.Fatalf("pollHeld returned %d records (%v), want the 20 fetched from offset 40", len(polled), err)
	}
	if err := tk.process(ctx, polled); err != nil {
		t.Fatal(err)
	}
	tk.passMarks()
	if got := tk.pos.Load(); got != 0 {
		t.Fatalf("position %d with records held and a flight in the air, want 0", got)
	}
	// Nothing more fetched: the held records go in one flight, after
	// the first landed.
	close(prod.release)
	if polled, err := m.pollHeld(); err != nil || len(polled) != 0 {
		t.Fatalf("pollHeld with nothing fetched returned %d records (%v), want none", len(polled), err)
	}
	if got := <-prod.sizes; got != 18 {
		t.Fatalf("the second flight carries %d records, want the two held batches' 18", got)
	}
	if err := tk.mode.land(); err != nil {
		t.Fatal(err)
	}
	if got := tk.pos.Load(); got != 61 {
		t.Fatalf("position %d once the flights landed, want 61 (past the marker)", got)
	}
	select {
	case n := <-prod.sizes:
		t.Fatalf("a third flight of %d records", n)
	default:
	}

	// Held records are bounded: past maxCoalesce a batch waits for the
	// flight in the air instead.
	m.flight = &flight{}
	m.flight.done, m.flight.finish = context.WithCancel(context.Background())
	tk.pending = make([]*kafka.Record, maxCoalesce)
	for i := range tk.pending {
		tk.pending[i] = &kafka.Record{Value: []byte("v")}
	}
	if m.coalescing() {
		t.Fatalf("coalescing with %d records held", maxCoalesce)
	}
	tk.pending = tk.pending[:maxCoalesce-1]
	m.heldBytes, m.counted = 0, 0
	if !m.coalescing() {
		t.Fatalf("not coalescing with %d records held", maxCoalesce-1)
	}
	// And by bytes: a few wide records fill a flight.
	wide := make([]byte, maxCoalesceBytes/4)
	tk.pending = tk.pending[:0]
	m.heldBytes, m.counted = 0, 0
	for i := range 4 {
		if !m.coalescing() {
			t.Fatalf("not coalescing with %d wide records held", i)
		}
		tk.pending = append(tk.pending, &kafka.Record{Key: []byte("k"), Value: wide[:len(wide)-2]})
	}
	if !m.coalescing() {
		t.Fatalf("not coalescing with %d bytes held", m.heldBytes)
	}
	tk.pending = append(tk.pending, &kafka.Record{Value: []byte("12345678")})
	if m.coalescing() {
		t.Fatalf("coalescing with %d bytes held", m.heldBytes)
	}
}

// TestPipelinedCoalesceFails: a flight failing while records are held
// fails the task with its error, the held records unsent and the
// position where it was.
func TestPipelinedCoalesceFails(t *testing.T) {
	recs := testRecords(40)
	tk := offlineTask(t, testGraph(t))
	tk.consumer = &bufferedConsumer{}
	prod := &countingProducer{release: make(chan struct{}), sizes: make(chan int, 10), fail: true}
	tk.producer, tk.mode = prod, newAtLeastOnce(tk)
	m := tk.mode.(*atLeastOnce)
	ctx := context.Background()
	if err := tk.process(ctx, recs[:20]); err != nil {
		t.Fatal(err)
	}
	<-prod.sizes
	if err := tk.process(ctx, recs[20:]); err != nil {
		t.Fatal(err)
	}
	close(prod.release)
	if polled, err := m.pollHeld(); err != nil || len(polled) != 0 {
		t.Fatalf("pollHeld returned %d records (%v)", len(polled), err)
	}
	if !tk.mode.failed() {
		t.Fatal("the task has not failed after its flight failed")
	}
	if err := tk.mode.land(); err == nil || !strings.Contains(err.Error(), "broker on fire") {
		t.Fatalf("land returned %v, want the flight's error", err)
	}
	select {
	case n := <-prod.sizes:
		t.Fatalf("the held records were sent (%d) after the flight failed", n)
	default:
	}
	if got := tk.pos.Load(); got != 0 {
		t.Fatalf("position %d after a failed flight, want 0", got)
	}
}
