package exec

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/state"
)

// aggSource is ORDERS (ID STRING KEY, REGION STRING, CITY STRING, AMOUNT
// BIGINT) in JSON.
func aggSource() *topology.Source {
	return &topology.Source{
		Name: "ORDERS", Topic: "orders", Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON",
		Key: []types.Column{{Name: "ID", Type: types.StringType}},
		Value: []types.Column{
			{Name: "REGION", Type: types.StringType},
			{Name: "CITY", Type: types.StringType},
			{Name: "AMOUNT", Type: types.BigintType},
		},
	}
}

func col(cols []types.Column, name string) *expr.Expr {
	for i, c := range cols {
		if c.Name == name {
			return &expr.Expr{Op: expr.OpColumn, Type: c.Type, Col: i, Name: name}
		}
	}
	panic("no column " + name)
}

// aggGraph is SELECT <keys>, COUNT(*), SUM(AMOUNT) FROM ORDERS GROUP BY
// <keys>, as a push query emitting the aggregate step's rows.
func aggGraph(keys ...string) *topology.Graph {
	src := aggSource()
	in := src.Schema()
	schema := append([]types.Column(nil), in[:topology.PseudoColumns]...)
	var groupBy []*expr.Expr
	for _, k := range keys {
		e := col(in, k)
		groupBy = append(groupBy, e)
		schema = append(schema, types.Column{Name: k, Type: e.Type})
	}
	schema = append(schema, types.Column{Name: "N", Type: types.BigintType}, types.Column{Name: "TOTAL", Type: types.BigintType})
	step := topology.Step{
		Kind: topology.Aggregate, Schema: schema, Keys: len(keys), GroupBy: groupBy,
		Aggs: []topology.AggCall{
			{Func: "COUNT", Star: true},
			{Func: "SUM", Args: []*expr.Expr{col(in, "AMOUNT")}},
		},
		StateTable: "Aggregate-state", Changelog: "agg-changelog",
	}
	return &topology.Graph{QueryID: "transient_ORDERS_1", Source: src, OffsetReset: "earliest", Steps: []topology.Step{step}, Output: schema, KeyColumns: topology.PseudoColumns + len(keys)}
}

func openStore(t testing.TB, dir string) *state.Store {
	s, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// runAgg runs recs through an offline task of g over store and returns the
// emitted rows, printed from the key columns on.
func runAgg(t *testing.T, g *topology.Graph, store *state.Store, recs []*kafka.Record) []string {
	q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: time.Now, State: store}}
	q.deps.Logger = discardLogger()
	tk := &task{q: q, nKey: len(g.Source.Key), nValue: len(g.Source.Value), tsCol: -1}
	if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
		t.Fatal(err)
	}
	var got []string
	tk.out = func(_ context.Context, row []any) (bool, error) {
		got = append(got, fmt.Sprint(row[topology.PseudoColumns:]))
		return true, nil
	}
	tk.polled = recs
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	return got
}

func orderRec(off int64, value string) *kafka.Record {
	r := &kafka.Record{Topic: "orders", Offset: off, Timestamp: time.UnixMilli(1000 + off), Key: []byte(fmt.Sprintf("o%d", off))}
	if value != "" {
		r.Value = []byte(value)
	}
	return r
}

func TestAggregateOneKey(t *testing.T) {
	store := openStore(t, t.TempDir())
	recs := []*kafka.Record{
		orderRec(0, `{"region":"eu","city":"paris","amount":10}`),
		orderRec(1, `{"region":"us","city":"nyc","amount":5}`),
		orderRec(2, ""), // no value: skipped
		orderRec(3, `{"region":"eu","city":"rome","amount":7}`),
		orderRec(4, `{"city":"rome","amount":7}`), // null key: dropped
		orderRec(5, `{"region":"eu","city":"oslo"}`),
	}
	got := runAgg(t, aggGraph("REGION"), store, recs)
	want := []string{"[eu 1 10]", "[us 1 5]", "[eu 2 17]", "[eu 3 17]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestAggregateTwoKeys(t *testing.T) {
	store := openStore(t, t.TempDir())
	recs := []*kafka.Record{
		orderRec(0, `{"region":"eu","city":"paris","amount":10}`),
		orderRec(1, `{"region":"eu","city":"rome","amount":5}`),
		orderRec(2, `{"region":"eu","city":"paris","amount":1}`),
		orderRec(3, `{"region":"eu","amount":1}`), // null key column: dropped
		orderRec(4, `{"region":"e","city":"uparis","amount":2}`),
	}
	got := runAgg(t, aggGraph("REGION", "CITY"), store, recs)
	want := []string{"[eu paris 1 10]", "[eu rome 1 5]", "[eu paris 2 11]", "[e uparis 1 2]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestAggregateRowTime checks that a group's rows have the largest time
// of its records, as Kafka Streams gives them: a record older than the
// group's latest leaves its time as it is.
func TestAggregateRowTime(t *testing.T) {
	store := openStore(t, t.TempDir())
	g := aggGraph("REGION")
	q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: time.Now, State: store, Logger: discardLogger()}}
	tk := &task{q: q, nKey: 1, nValue: 3, tsCol: -1}
	if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
		t.Fatal(err)
	}
	var got []string
	tk.out = func(_ context.Context, row []any) (bool, error) {
		got = append(got, fmt.Sprint(row[0], row[topology.PseudoColumns:]))
		return true, nil
	}
	late := orderRec(2, `{"region":"eu","amount":5}`)
	late.Timestamp = time.UnixMilli(900)
	recs := []*kafka.Record{orderRec(0, `{"region":"eu","amount":3}`), orderRec(1, `{"region":"us","amount":4}`), late, orderRec(3, `{"region":"eu","amount":1}`)}
	tk.polled = recs
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	want := []string{"1000 [eu 1 3]", "1001 [us 1 4]", "1000 [eu 2 8]", "1003 [eu 3 9]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestAggregateStateKept checks that state written by one batch, flushed
// and committed, is read back by a later task.
func TestAggregateStateKept(t *testing.T) {
	store := openStore(t, t.TempDir())
	g := aggGraph("REGION")
	q := &Query{graph: g, deps: Deps{Now: time.Now, State: store, Logger: discardLogger()}}
	tk := &task{q: q, nKey: 1, nValue: 3, tsCol: -1}
	if _, err := newTaskParts(tk, testStage(t, g, 0)); err != nil {
		t.Fatal(err)
	}
	tk.out = func(context.Context, []any) (bool, error) { return true, nil }
	recs := []*kafka.Record{orderRec(0, `{"region":"eu","amount":3}`), orderRec(1, `{"region":"eu","amount":4}`)}
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	if err := tk.stageCommit(context.Background()); err != nil {
		t.Fatal(err)
	}
	changes := tk.cache.Flush(nil)
	if len(changes) != 1 {
		t.Fatalf("got %d changes, want 1", len(changes))
	}
	tk.cache.Commit(nil)
	if err := tk.cache.Persist(); err != nil {
		t.Fatal(err)
	}
	got := runAgg(t, g, store, []*kafka.Record{orderRec(2, `{"region":"eu","amount":1}`)})
	if want := "[[eu 3 8]]"; fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestAggregateRestoreFromChangelog runs a persistent aggregate against the
// playground broker, deletes its local state, and checks that a restart
// rebuilds it from the changelog.
func TestAggregateRestoreFromChangelog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	g := aggGraph("REGION")
	g.QueryID = "CTAS_TOTALS_1"
	agg := g.Steps[0]
	out := []types.Column{{Name: "REGION", Type: types.StringType}, {Name: "N", Type: types.BigintType}, {Name: "TOTAL", Type: types.BigintType}}
	proj := topology.Step{Kind: topology.Project, Schema: out, Exprs: []*expr.Expr{col(agg.Schema, "REGION"), col(agg.Schema, "N"), col(agg.Schema, "TOTAL")}}
	g.Steps = append(g.Steps, proj)
	g.Output, g.KeyColumns = out, 1
	g.Sink = &topology.Sink{Name: "TOTALS", Topic: "totals", Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON"}
	for _, name := range []string{"orders", "totals", agg.Changelog} {
		if err := client.CreateTopic(ctx, kafka.TopicSpec{Name: name, Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	prod, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	send := func(values ...string) {
		recs := make([]*kafka.Record, len(values))
		for i, v := range values {
			recs[i] = &kafka.Record{Topic: "orders", Partition: 0, Key: []byte("k"), Value: []byte(v), Timestamp: time.UnixMilli(1000)}
		}
		if err := prod.Produce(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	run := func(store *state.Store, upTo int64) *Query {
		progress := make(chan struct{}, 1)
		deps := Deps{Kafka: client, Group: "agg-test", State: store, Logger: discardLogger(), Progress: func() {
			select {
			case progress <- struct{}{}:
			default:
			}
		}}
		q, err := Start(ctx, complete(t, g), deps, nil)
		if err != nil {
			t.Fatal(err)
		}
		for q.Positions()[0] < upTo {
			select {
			case <-progress:
			case <-q.Done():
				t.Fatalf("query ended: %v", q.Err())
			case <-ctx.Done():
				t.Fatal("query did not catch up")
			}
		}
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
		return q
	}

	dir := t.TempDir()
	first, err := state.Open(filepath.Join(dir, "a"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	send(`{"region":"eu","amount":1}`, `{"region":"eu","amount":2}`, `{"region":"us","amount":4}`)
	run(first, 3)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	second := openStore(t, filepath.Join(dir, "b"))
	send(`{"region":"eu","amount":10}`)
	q := run(second, 4)
	if restoring, pct := q.Restoring(); restoring || pct != 100 {
		t.Fatalf("after the restore: Restoring() = %v, %d", restoring, pct)
	}
	if done, total := q.tasks[0].restored.Load(), q.tasks[0].toRestore.Load(); total == 0 || done != total {
		t.Fatalf("restored %d of %d changelog records; want all of a non-empty changelog", done, total)
	}

	cons, err := client.NewConsumer(kafka.ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	cons.Assign(map[string]map[int32]int64{"totals": {0: kafka.OffsetStart}})
	var values []string
	for len(values) < 4 {
		recs, err := cons.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			values = append(values, string(r.Key)+" "+string(r.Value))
		}
	}
	if want := `eu {"N":3,"TOTAL":13}`; values[3] != want {
		t.Fatalf("last output %q, want %q (all: %q)", values[3], want, values)
	}
	offs, err := second.Offsets(g.QueryID, 0)
	if err != nil {
		t.Fatal(err)
	}
	bounds, err := client.ListOffsets(ctx, agg.Changelog)
	if err != nil {
		t.Fatal(err)
	}
	if offs[agg.StateTable] != bounds[0].End {
		t.Fatalf("stored changelog offset %d, want the changelog end %d", offs[agg.StateTable], bounds[0].End)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestRestoringPercent(t *testing.T) {
	q := &Query{tasks: []*task{{}, {}}}
	if restoring, pct := q.Restoring(); restoring || pct != 100 {
		t.Fatalf("idle query: Restoring() = %v, %d", restoring, pct)
	}
	q.tasks[0].restoring.Store(true)
	q.tasks[0].toRestore.Store(300)
	q.tasks[0].restored.Store(150)
	q.tasks[1].toRestore.Store(100)
	q.tasks[1].restored.Store(100)
	if restoring, pct := q.Restoring(); !restoring || pct != 62 {
		t.Fatalf("restoring 250 of 400: Restoring() = %v, %d; want true, 62", restoring, pct)
	}
}
