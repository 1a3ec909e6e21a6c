package exec

import (
	"context"
	"strings"
	"testing"

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
	g := repartitionGraph(t)
	st := stages(g)
	if len(st) != 2 {
		t.Fatalf("got %d stages, want 2", len(st))
	}
	first, second := st[0], st[1]
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
	if got := InputTopics(g); strings.Join(got, ",") != "orders,_q-repartition" {
		t.Errorf("InputTopics = %v", got)
	}
	if one := stages(testGraph(t)); len(one) != 1 || one[0].Sink.Topic != "BIG" {
		t.Errorf("a graph without a repartition should be its only stage")
	}
}

// TestRepartitionStage runs stage 1 offline: rows leave keyed by the group,
// without pseudo-columns, and rows without a value or with a null group
// are dropped.
func TestRepartitionStage(t *testing.T) {
	g := stages(repartitionGraph(t))[0]
	tk := offlineTask(t, g)
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
	g := stages(repartitionGraph(t))[1]
	g.Steps = g.Steps[1:] // the aggregate needs a state store; decoding is what is tested
	g.Steps[0].Exprs = []*expr.Expr{expr.Column(3, "KSQL_GROUP_KEY_0", types.StringType), expr.Column(5, "NAME", types.StringType)}
	tk := offlineTask(t, g)
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
