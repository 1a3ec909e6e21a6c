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
	"github.com/sluice-sql/sluice/state"
)

// joinSource is a source named name on topic with a STRING key ID and the
// STRING value columns values, KAFKA keys and JSON values.
func joinSource(name, topic string, values ...string) *topology.Source {
	src := &topology.Source{
		Name: name, Topic: topic, Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON",
		Key: []types.Column{{Name: "ID", Type: types.StringType}},
	}
	for _, v := range values {
		src.Value = append(src.Value, types.Column{Name: v, Type: types.StringType})
	}
	return src
}

// joinGraph is SELECT ID, <left values>, <right values> FROM LEFT <typ>
// JOIN RIGHT ON LEFT.ID = RIGHT.ID (on LEFT.FK = RIGHT.ID for a foreign
// key join), written as JSON to topic out.
func joinGraph(typ topology.JoinType, leftTable, rightTable bool, within *topology.JoinWindow, fk bool) *topology.Graph {
	left := joinSource("L", "left", "L1")
	if fk {
		left = joinSource("L", "left", "L1", "FK")
	}
	right := joinSource("R", "right", "R1")
	lin, rin := left.Schema(), right.Schema()
	schema := append([]types.Column(nil), lin[:topology.PseudoColumns]...)
	schema = append(schema, types.Column{Name: "ID", Type: types.StringType})
	for _, c := range lin[topology.PseudoColumns:] {
		schema = append(schema, types.Column{Name: "L_" + c.Name, Type: c.Type})
	}
	for _, c := range rin[topology.PseudoColumns:] {
		schema = append(schema, types.Column{Name: "R_" + c.Name, Type: c.Type})
	}
	spec := &topology.JoinSpec{
		Type: typ, LeftTable: leftTable, RightTable: rightTable, Within: within,
		Right:     &topology.Graph{Source: right, Output: rin, KeyColumns: 1},
		LeftKey:   []*expr.Expr{col(lin, "ID")},
		RightKey:  []*expr.Expr{col(rin, "ID")},
		LeftState: "join-left", RightState: "join-right",
		LeftChangelog: "q-left-changelog", RightChangelog: "q-right-changelog",
	}
	if fk {
		spec.ForeignKey = col(lin, "FK")
		spec.LeftKey, spec.RightKey = nil, nil
	}
	join := topology.Step{Kind: topology.Join, Schema: schema, Keys: 1, Join: spec}
	out := []types.Column{{Name: "ID", Type: types.StringType}, {Name: "L1", Type: types.StringType}, {Name: "R1", Type: types.StringType}}
	proj := topology.Step{Kind: topology.Project, Schema: out, Exprs: []*expr.Expr{
		col(schema, "ID"), col(schema, "L_L1"), col(schema, "R_R1"),
	}}
	return &topology.Graph{
		QueryID: "CSAS_OUT_1", Source: left, Steps: []topology.Step{join, proj},
		Sink:   &topology.Sink{Name: "OUT", Topic: "out", Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON"},
		Output: out, KeyColumns: 1, OffsetReset: "earliest",
	}
}

// fakeProducer keeps what a task produces, numbering each topic's records.
type fakeProducer struct {
	recs []*kafka.Record
	next map[string]int64
}

func (p *fakeProducer) Produce(_ context.Context, recs []*kafka.Record) error {
	if p.next == nil {
		p.next = map[string]int64{}
	}
	for _, r := range recs {
		r.Partition = 0
		r.Offset = p.next[r.Topic]
		p.next[r.Topic]++
		p.recs = append(p.recs, r)
	}
	return nil
}

func (p *fakeProducer) Close() {}

// joinRun runs a join graph's task offline over a state store, one input
// record at a time as the conformance tests do, with commits.
type joinRun struct {
	t     testing.TB
	g     *topology.Graph
	store *state.Store
	prod  *fakeProducer
	tk    *task
	off   map[string]int64
}

func newJoinRun(t testing.TB, g *topology.Graph) *joinRun {
	r := &joinRun{t: t, g: g, store: openStore(t, t.TempDir()), prod: &fakeProducer{}, off: map[string]int64{}}
	r.start()
	return r
}

// start (re)creates the task over the store, as a restart does.
func (r *joinRun) start() {
	if r.tk != nil {
		r.tk.close()
	}
	q := &Query{graph: r.g, deps: Deps{ProcessingLog: "plog", Now: time.Now, State: r.store, StateNamespace: r.g.QueryID, Logger: discardLogger()}}
	tk := &task{q: q, nKey: len(r.g.Source.Key), nValue: len(r.g.Source.Value), tsCol: -1}
	if _, err := newTaskParts(tk, r.g); err != nil {
		r.t.Fatal(err)
	}
	starts := make([]sideStart, len(joinSteps(r.g)))
	for k, i := range joinSteps(r.g) {
		starts[k] = sideStart{global: r.g.Steps[i].Join.ForeignKey != nil, parts: []int32{0}, offsets: []int64{r.off["right"]}, catchUp: []int64{0}}
	}
	if err := tk.addSides(starts); err != nil {
		r.t.Fatal(err)
	}
	tk.producer = r.prod
	tk.pos.Store(r.off["left"])
	r.tk = tk
}

// send processes records given as "topic key value@time" (value "-" for
// none), in one poll.
func (r *joinRun) send(lines ...string) {
	var recs []*kafka.Record
	for _, l := range lines {
		var topic, key, value string
		var ts int64
		at := strings.LastIndexByte(l, '@')
		fmt.Sscan(l[at+1:], &ts)
		f := strings.SplitN(l[:at], " ", 3)
		topic, key, value = f[0], f[1], f[2]
		rec := &kafka.Record{Topic: topic, Offset: r.off[topic], Key: []byte(key), Timestamp: time.UnixMilli(ts)}
		if value != "-" {
			rec.Value = []byte(value)
		}
		r.off[topic]++
		recs = append(recs, rec)
	}
	if err := r.tk.process(context.Background(), recs); err != nil {
		r.t.Fatal(err)
	}
}

// output returns the sink records as "key value@time".
func (r *joinRun) output() []string {
	var out []string
	for _, rec := range r.prod.recs {
		if rec.Topic != "out" {
			continue
		}
		v := "-"
		if rec.Value != nil {
			v = string(rec.Value)
		}
		out = append(out, fmt.Sprintf("%s %s@%d", rec.Key, v, rec.Timestamp.UnixMilli()))
	}
	return out
}

// checkJoin runs inputs, one record per poll, through g uninterrupted and
// again with a restart after each input, and checks both give want.
func checkJoin(t *testing.T, g func() *topology.Graph, inputs []string, want []string) {
	t.Helper()
	for _, restart := range []bool{false, true} {
		r := newJoinRun(t, g())
		for _, in := range inputs {
			r.send(in)
			if restart {
				r.start()
			}
		}
		r.tk.close()
		got := r.output()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("restart=%v:\n got %s\nwant %s", restart, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
	}
}

func TestStreamTableJoin(t *testing.T) {
	inputs := []string{
		`right a {"R1":"ra"}@1`,
		`left a {"L1":"la"}@2`,
		`left b {"L1":"lb"}@3`,
		`right a {"R1":"ra2"}@4`,
		`left a {"L1":"la2"}@5`,
		`right a -@6`,
		`left a {"L1":"la3"}@7`,
		`left a -@8`,
	}
	checkJoin(t, func() *topology.Graph { return joinGraph(topology.InnerJoin, false, true, nil, false) }, inputs, []string{
		`a {"L1":"la","R1":"ra"}@2`,
		`a {"L1":"la2","R1":"ra2"}@5`,
	})
	checkJoin(t, func() *topology.Graph { return joinGraph(topology.LeftJoin, false, true, nil, false) }, inputs, []string{
		`a {"L1":"la","R1":"ra"}@2`,
		`b {"L1":"lb","R1":null}@3`,
		`a {"L1":"la2","R1":"ra2"}@5`,
		`a {"L1":"la3","R1":null}@7`,
	})
}

func TestTableTableJoin(t *testing.T) {
	inputs := []string{
		`left a {"L1":"la"}@1`,
		`right a {"R1":"ra"}@2`,
		`left a {"L1":"la2"}@3`,
		`right a -@4`,
		`left a -@5`,
		`right b {"R1":"rb"}@6`,
		`right b -@7`,
		`right c -@8`,
	}
	g := func(typ topology.JoinType) func() *topology.Graph {
		return func() *topology.Graph { return joinGraph(typ, true, true, nil, false) }
	}
	checkJoin(t, g(topology.InnerJoin), inputs, []string{
		`a {"L1":"la","R1":"ra"}@2`,
		`a {"L1":"la2","R1":"ra"}@3`,
		`a -@4`,
	})
	checkJoin(t, g(topology.LeftJoin), inputs, []string{
		`a {"L1":"la","R1":null}@1`,
		`a {"L1":"la","R1":"ra"}@2`,
		`a {"L1":"la2","R1":"ra"}@3`,
		`a {"L1":"la2","R1":null}@4`,
		`a -@5`,
	})
	checkJoin(t, g(topology.RightJoin), inputs, []string{
		`a {"L1":"la","R1":"ra"}@2`,
		`a {"L1":"la2","R1":"ra"}@3`,
		`a -@4`,
		`b {"L1":null,"R1":"rb"}@6`,
		`b -@7`,
	})
	checkJoin(t, g(topology.OuterJoin), inputs, []string{
		`a {"L1":"la","R1":null}@1`,
		`a {"L1":"la","R1":"ra"}@2`,
		`a {"L1":"la2","R1":"ra"}@3`,
		`a {"L1":"la2","R1":null}@4`,
		`a -@5`,
		`b {"L1":null,"R1":"rb"}@6`,
		`b -@7`,
	})
}

func TestStreamStreamJoin(t *testing.T) {
	g := func(typ topology.JoinType, grace int64) func() *topology.Graph {
		return func() *topology.Graph {
			return joinGraph(typ, false, false, &topology.JoinWindow{Before: 10, After: 10, Grace: grace}, false)
		}
	}
	inputs := []string{
		`left a {"L1":"x"}@100`,
		`right a {"R1":"y"}@105`,
		`right a {"R1":"z"}@120`,
		`left a {"L1":"w"}@115`,
		`left b {"L1":"q"}@121`,
		`right c {"R1":"r"}@122`,
		`left a {"L1":"late"}@50`,
		`right d {"R1":"s"}@200`,
	}
	checkJoin(t, g(topology.InnerJoin, 0), inputs, []string{
		`a {"L1":"x","R1":"y"}@105`,
		`a {"L1":"w","R1":"y"}@115`,
		`a {"L1":"w","R1":"z"}@120`,
	})
	// With a grace period unmatched rows wait for their window to close;
	// a row whose window closed already goes out at once.
	checkJoin(t, g(topology.LeftJoin, 0), inputs, []string{
		`a {"L1":"x","R1":"y"}@105`,
		`a {"L1":"w","R1":"y"}@115`,
		`a {"L1":"w","R1":"z"}@120`,
		`a {"L1":"late","R1":null}@50`,
		`b {"L1":"q","R1":null}@121`,
	})
	checkJoin(t, g(topology.OuterJoin, 0), inputs, []string{
		`a {"L1":"x","R1":"y"}@105`,
		`a {"L1":"w","R1":"y"}@115`,
		`a {"L1":"w","R1":"z"}@120`,
		`a {"L1":"late","R1":null}@50`,
		`b {"L1":"q","R1":null}@121`,
		`c {"L1":null,"R1":"r"}@122`,
	})
	// Without one (ksqlDB's default) they go out at once, and the late row
	// is still within the default grace.
	checkJoin(t, g(topology.LeftJoin, -1), inputs, []string{
		`a {"L1":"x","R1":null}@100`,
		`a {"L1":"x","R1":"y"}@105`,
		`a {"L1":"w","R1":"y"}@115`,
		`a {"L1":"w","R1":"z"}@120`,
		`b {"L1":"q","R1":null}@121`,
		`a {"L1":"late","R1":null}@50`,
	})
}

func TestForeignKeyJoin(t *testing.T) {
	inputs := []string{
		`right x {"R1":"rx"}@1`,
		`left a {"L1":"la","FK":"x"}@2`,
		`left b {"L1":"lb","FK":"x"}@3`,
		`left c {"L1":"lc","FK":"y"}@4`,
		`right x {"R1":"rx2"}@5`,
		`left a {"L1":"la2","FK":"y"}@6`,
		`right x -@7`,
		`right y {"R1":"ry"}@8`,
		`left c -@9`,
	}
	g := func(typ topology.JoinType) func() *topology.Graph {
		return func() *topology.Graph { return joinGraph(typ, true, true, nil, true) }
	}
	checkJoin(t, g(topology.InnerJoin), inputs, []string{
		`a {"L1":"la","R1":"rx"}@2`,
		`b {"L1":"lb","R1":"rx"}@3`,
		`a {"L1":"la","R1":"rx2"}@5`,
		`b {"L1":"lb","R1":"rx2"}@5`,
		`a -@6`,
		`b -@7`,
		`c {"L1":"lc","R1":"ry"}@8`,
		`a {"L1":"la2","R1":"ry"}@8`,
		`c -@9`,
	})
	checkJoin(t, g(topology.LeftJoin), inputs, []string{
		`a {"L1":"la","R1":"rx"}@2`,
		`b {"L1":"lb","R1":"rx"}@3`,
		`c {"L1":"lc","R1":null}@4`,
		`a {"L1":"la","R1":"rx2"}@5`,
		`b {"L1":"lb","R1":"rx2"}@5`,
		`a {"L1":"la2","R1":null}@6`,
		`b {"L1":"lb","R1":null}@7`,
		`c {"L1":"lc","R1":"ry"}@8`,
		`a {"L1":"la2","R1":"ry"}@8`,
		`c -@9`,
	})
}

// TestJoinTimeOrder: rows polled together from both inputs are joined in
// record time order, the left input first on a tie.
func TestJoinTimeOrder(t *testing.T) {
	r := newJoinRun(t, joinGraph(topology.LeftJoin, false, true, nil, false))
	r.send(
		`left a {"L1":"l5"}@5`,
		`left a {"L1":"l9"}@9`,
		`right a {"R1":"r1"}@1`,
		`right a {"R1":"r7"}@7`,
		`right a {"R1":"r9"}@9`,
	)
	want := []string{`a {"L1":"l5","R1":"r1"}@5`, `a {"L1":"l9","R1":"r7"}@9`}
	if got := r.output(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := r.tk.sides[0].pos[0].Load(); got != 3 {
		t.Errorf("right position %d, want 3", got)
	}
}

// TestStreamTableJoinLive runs a stream-table LEFT JOIN against the
// playground broker over three partitions. The table topic is filled
// before the query starts, with later record times than stream rows
// already waiting: the table side catches up first, so every stream row
// finds its table row. A restart resumes both inputs from their committed
// offsets with the table kept in state.
func TestStreamTableJoinLive(t *testing.T) {
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

	const parts = 3
	g := joinGraph(topology.LeftJoin, false, true, nil, false)
	g.Source.Partitions, g.Steps[0].Join.Right.Source.Partitions, g.Sink.Partitions = parts, parts, parts
	for _, name := range append([]string{"left", "right", "out"}, Changelogs(g)...) {
		if err := client.CreateTopic(ctx, kafka.TopicSpec{Name: name, Partitions: parts}); err != nil {
			t.Fatal(err)
		}
	}
	prod, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	send := func(topic, field string, from, to int, ts int64) {
		var recs []*kafka.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kafka.Record{Topic: topic, Partition: -1, Key: []byte(fmt.Sprintf("k%d", i)),
				Value: []byte(fmt.Sprintf(`{%q:"%s%d"}`, field, topic, i)), Timestamp: time.UnixMilli(ts)})
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
	run := func() {
		progress := make(chan struct{}, 1)
		deps := Deps{Kafka: client, Group: "join-test", State: store, Logger: discardLogger(), Progress: func() {
			select {
			case progress <- struct{}{}:
			default:
			}
		}}
		q, err := Start(ctx, g, deps, nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			behind := false
			for _, topic := range InputTopics(g) {
				pos := q.PositionsOf(topic)
				for p, end := range ends(topic) {
					if pos[p] < end {
						behind = true
					}
				}
			}
			if !behind {
				break
			}
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
	}

	const n = 200
	send("right", "R1", 0, n, 5000)
	send("left", "L1", 0, n/2, 1000)
	run()
	send("left", "L1", n/2, n, 2000)
	run()

	cons, err := client.NewConsumer(kafka.ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	cons.Assign(map[string]map[int32]int64{"out": {0: kafka.OffsetStart, 1: kafka.OffsetStart, 2: kafka.OffsetStart}})
	got := map[string]string{}
	for len(got) < n {
		recs, err := cons.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if _, dup := got[string(r.Key)]; dup {
				t.Errorf("%s joined twice", r.Key)
			}
			got[string(r.Key)] = string(r.Value)
		}
	}
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		if want := fmt.Sprintf(`{"L1":"left%d","R1":"right%d"}`, i, i); got[k] != want {
			t.Errorf("%s: got %s, want %s", k, got[k], want)
		}
	}
}
