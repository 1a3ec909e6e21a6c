package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
)

// repartitionGraph is SELECT NAME, COUNT(*) FROM ORDERS GROUP BY NAME over
// a stream keyed by ID: rekey by NAME, repartition, aggregate.
func repartitionGraph(t testing.TB) *topology.Graph {
	g := testGraph(t)
	g.Source.Partitions = 4
	in := g.Source.Schema()
	rekey := topology.Step{Kind: topology.Rekey, Keys: 1}
	for i, c := range in {
		if i == topology.PseudoColumns {
			rekey.Exprs = append(rekey.Exprs, expr.Column(4, "NAME", types.StringType))
			rekey.Schema = append(rekey.Schema, types.Column{Name: "KSQL_GROUP_KEY_0", Type: types.StringType})
		}
		rekey.Exprs = append(rekey.Exprs, expr.Column(i, c.Name, c.Type))
		rekey.Schema = append(rekey.Schema, c)
	}
	rep := topology.Step{Kind: topology.Repartition, Schema: rekey.Schema, Keys: 1, Topic: "_q-repartition", Partitions: 4}
	aggSchema := append(append([]types.Column(nil), in[:topology.PseudoColumns]...),
		types.Column{Name: "NAME", Type: types.StringType}, types.Column{Name: "N", Type: types.BigintType})
	agg := topology.Step{
		Kind: topology.Aggregate, StateTable: "aggregate", Keys: 1, Schema: aggSchema,
		GroupBy: []*expr.Expr{expr.Column(topology.PseudoColumns, "KSQL_GROUP_KEY_0", types.StringType)},
		Aggs:    []topology.AggCall{{Func: "COUNT", Star: true}},
	}
	out := []types.Column{{Name: "NAME", Type: types.StringType}, {Name: "N", Type: types.BigintType}}
	proj := topology.Step{Kind: topology.Project, Schema: out, Exprs: []*expr.Expr{
		expr.Column(3, "NAME", types.StringType), expr.Column(4, "N", types.BigintType),
	}}
	g.Steps = []topology.Step{rekey, rep, agg, proj}
	g.Output, g.KeyColumns = out, 1
	g.OffsetReset = "latest"
	return g
}

func TestStages(t *testing.T) {
	g := complete(t, repartitionGraph(t))
	plan, err := planStages(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 2 {
		t.Fatalf("got %d stages, want 2", len(plan))
	}
	if plan[0].Sink != "_q-repartition" || plan[1].Source != "_q-repartition" || !plan[1].TableRows || plan[0].TableRows {
		t.Errorf("physical stages %+v, %+v", plan[0].Stage, plan[1].Stage)
	}
	first, second := plan[0].g, plan[1].g
	if first.Source != g.Source || len(first.Steps) != 2 || first.Steps[1].Kind != topology.Repartition {
		t.Errorf("stage 1 reads %s with %d steps; want the source, rekey and repartition", first.Source.Topic, len(first.Steps))
	}
	if first.Sink.Topic != "_q-repartition" || first.Sink.KeyFormat != internalFormat || first.KeyColumns != 1 || len(first.Output) != 4 {
		t.Errorf("stage 1 sink %+v, output %v", first.Sink, first.Output)
	}
	if first.OffsetReset != "latest" || second.OffsetReset != "earliest" {
		t.Errorf("offset resets %s, %s; want the query's, then earliest", first.OffsetReset, second.OffsetReset)
	}
	src := second.Source
	if src.Topic != "_q-repartition" || src.Partitions != 4 || len(src.Key) != 1 || src.Key[0].Name != "KSQL_GROUP_KEY_0" || len(src.Value) != 3 {
		t.Errorf("stage 2 source %+v", src)
	}
	if second.Sink != g.Sink || len(second.Steps) != 2 || second.Steps[0].Kind != topology.Aggregate {
		t.Errorf("stage 2 should aggregate into the query's sink")
	}
	if one, err := planStages(complete(t, testGraph(t))); err != nil || len(one) != 1 || one[0].g.Sink.Topic != "BIG" {
		t.Errorf("a graph without a repartition should be its only stage")
	}
}

// TestRepartitionStage runs stage 1 offline: rows leave keyed by the group,
// without pseudo-columns, and rows without a value or with a null group
// are dropped.
func TestRepartitionStage(t *testing.T) {
	tk := offlineStage(t, testStage(t, repartitionGraph(t), 0))
	recs := testRecords(4)
	recs[1].Value = nil
	recs[2].Value = []byte(`{"name":null,"amount":5}`)
	tk.polled = recs
	tk.decode(recs)
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tk.pending {
		if r.Topic != "_q-repartition" || r.Partition != -1 {
			t.Errorf("record to %s[%d]; want the repartition topic, partitioned by key", r.Topic, r.Partition)
		}
		got = append(got, string(r.Key)+" "+string(r.Value))
	}
	want := []string{`["item-0"] ["o0","item-0",0]`, `["item-3"] ["o3","item-3",3]`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("repartition records\n got %q\nwant %q", got, want)
	}
}

// TestInternalRecordFailsQuery: a record of a repartition topic that
// cannot be read is a bug: the task fails instead of logging it.
func TestInternalRecordFailsQuery(t *testing.T) {
	s := testStage(t, repartitionGraph(t), 1)
	g := s.g
	g.Steps = g.Steps[1:] // the aggregate needs a state store; decoding is what is tested
	g.Steps[0].Exprs = []*expr.Expr{expr.Column(3, "KSQL_GROUP_KEY_0", types.StringType), expr.Column(5, "NAME", types.StringType)}
	s.stores = nil
	tk := offlineStage(t, s)
	if !tk.internal {
		t.Fatal("a task reading a repartition topic should be internal")
	}
	recs := []*kafka.Record{
		{Topic: "_q-repartition", Offset: 7, Key: []byte(`["a"]`), Value: []byte(`["o1","a",1]`)},
		{Topic: "_q-repartition", Offset: 8, Key: []byte(`["a"]`), Value: []byte(`{"bad"`)},
	}
	tk.polled = recs
	tk.decode(recs)
	if tk.fatal == nil || !strings.Contains(tk.fatal.Error(), "record 8 of internal topic _q-repartition") {
		t.Fatalf("fatal = %v; want the undecodable record named", tk.fatal)
	}
	for _, r := range tk.pending {
		if r.Topic == "plog" {
			t.Errorf("an internal record went to the processing log: %s", r.Value)
		}
	}
}

func TestInternalCodecRoundTrip(t *testing.T) {
	dec, err := types.ParseDec("12.50")
	if err != nil {
		t.Fatal(err)
	}
	cols := []types.Column{
		{Name: "S", Type: types.StringType}, {Name: "I", Type: types.IntType}, {Name: "B", Type: types.BigintType},
		{Name: "D", Type: types.DoubleType}, {Name: "X", Type: types.DecimalOf(4, 2)}, {Name: "Y", Type: types.BytesType},
		{Name: "A", Type: types.ArrayOf(types.IntType)}, {Name: "M", Type: types.MapOf(types.IntType, types.StringType)},
		{Name: "T", Type: types.StructOf(types.Field{Name: "F", Type: types.BooleanType})}, {Name: "N", Type: types.StringType},
	}
	row := []any{"a,\"b", int32(-3), int64(1) << 40, 0.1, dec, []byte{0, 1, 2},
		[]any{int32(1), nil}, &types.MapValue{Keys: []any{int32(2)}, Values: []any{"two"}},
		types.StructValue{true}, nil}
	c := newInternalCodec(cols)
	b, err := c.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]any, len(cols))
	if err := c.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	for i := range row {
		if !types.Equal(row[i], got[i]) {
			t.Errorf("column %s: got %#v, want %#v", cols[i].Name, got[i], row[i])
		}
	}
}

// TestRepartitionTwoStages runs a repartitioning aggregate against the
// playground broker over three partitions: every group's rows meet on one
// task, both stages commit their input under the query's group, a restart
// resumes both, and a record of the repartition topic that cannot be read
// fails the query.
func TestRepartitionTwoStages(t *testing.T) {
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

	g := repartitionGraph(t)
	g.QueryID, g.OffsetReset = "CTAS_COUNTS_1", "earliest"
	g.Source.Partitions = 3
	g.Steps[1].Partitions = 3
	g.Steps[2].Changelog = "_q-changelog"
	g.Sink = &topology.Sink{Name: "COUNTS", Topic: "counts", Partitions: 3, KeyFormat: "KAFKA", ValueFormat: "JSON"}
	for _, name := range []string{"orders", "counts", "_q-repartition", "_q-changelog"} {
		if err := client.CreateTopic(ctx, kafka.TopicSpec{Name: name, Partitions: 3}); err != nil {
			t.Fatal(err)
		}
	}
	prod, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	send := func(topic string, p int32, values ...string) {
		recs := make([]*kafka.Record, len(values))
		for i, v := range values {
			recs[i] = &kafka.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("o%d-%d", p, i)), Value: []byte(v), Timestamp: time.UnixMilli(1000)}
		}
		if err := prod.Produce(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	ends := func(topic string) []int64 {
		bounds, err := client.ListOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, len(bounds))
		for i, b := range bounds {
			out[i] = b.End
		}
		return out
	}
	store := openStore(t, t.TempDir())
	start := func() (*Query, chan struct{}) {
		progress := make(chan struct{}, 1)
		deps := Deps{Kafka: client, Group: "rep-test", State: store, Logger: discardLogger(), Progress: func() {
			select {
			case progress <- struct{}{}:
			default:
			}
		}}
		q, err := Start(ctx, complete(t, g), deps, nil)
		if err != nil {
			t.Fatal(err)
		}
		return q, progress
	}
	// settle waits until both stages have read their topics to the end,
	// the second one after the first one's output arrived.
	settle := func(q *Query, progress chan struct{}) {
		for {
			behind := false
			for _, topic := range inputTopics(g) {
				pos := q.PositionsOf(topic)
				for p, end := range ends(topic) {
					if pos[p] < end {
						behind = true
					}
				}
			}
			if !behind {
				return
			}
			select {
			case <-progress:
			case <-q.Done():
				t.Fatalf("query ended: %v", q.Err())
			case <-ctx.Done():
				t.Fatal("query did not catch up")
			}
		}
	}

	send("orders", 0, `{"name":"a","amount":1}`, `{"name":"b","amount":1}`)
	send("orders", 1, `{"name":"a","amount":1}`)
	send("orders", 2, `{"name":"a","amount":1}`, `{"name":"b","amount":1}`)
	q, progress := start()
	settle(q, progress)
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, topic := range inputTopics(g) {
		committed, err := client.FetchOffsets(ctx, "rep-test", topic)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(committed) != fmt.Sprint(ends(topic)) {
			t.Errorf("%s: committed %v, want its ends %v", topic, committed, ends(topic))
		}
	}

	send("orders", 1, `{"name":"a","amount":1}`, `{"name":"b","amount":1}`)
	q, progress = start()
	settle(q, progress)
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	cons, err := client.NewConsumer(kafka.ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	assign := map[int32]int64{}
	for p := range ends("counts") {
		assign[int32(p)] = kafka.OffsetStart
	}
	cons.Assign(map[string]map[int32]int64{"counts": assign})
	last := map[string]string{}
	for n := 0; n < 7; {
		recs, err := cons.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			last[string(r.Key)] = string(r.Value)
			n++
		}
	}
	if last["a"] != `{"N":4}` || last["b"] != `{"N":3}` {
		t.Errorf("final counts a=%s b=%s, want 4 and 3", last["a"], last["b"])
	}

	send("_q-repartition", 0, `not an internal record`)
	q, _ = start()
	select {
	case <-q.Done():
	case <-ctx.Done():
		t.Fatal("a bad repartition record did not fail the query")
	}
	if err := q.Err(); err == nil || !strings.Contains(err.Error(), "internal topic _q-repartition") {
		t.Fatalf("query error %v; want the unreadable repartition record named", err)
	}
}

// TestStagesRenamedRepartition: the owner of a push query names its
// repartition topics after planning; both stages take the step's name.
func TestStagesRenamedRepartition(t *testing.T) {
	g := complete(t, repartitionGraph(t))
	for i := range g.Steps {
		if g.Steps[i].Kind == topology.Repartition {
			g.Steps[i].Topic = "_push-repartition"
		}
	}
	plan, err := planStages(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 2 || plan[0].g.Sink.Topic != "_push-repartition" || plan[1].g.Source.Topic != "_push-repartition" {
		t.Errorf("stages write and read %s and %s, want the renamed topic", plan[0].g.Sink.Topic, plan[1].g.Source.Topic)
	}
}
