package exec

import (
	"context"
	"fmt"
	"strings"
	"sync"
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

// fakeProducer keeps copies of what a task produces (a Producer does not
// retain the records it is given), numbering each topic's records.
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
		kept := *r
		p.recs = append(p.recs, &kept)
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
	if _, err := newTaskParts(tk, testStage(r.t, r.g, 0)); err != nil {
		r.t.Fatal(err)
	}
	starts := make([]sideStart, len(joinSteps(r.g)))
	for k, i := range joinSteps(r.g) {
		starts[k] = sideStart{global: r.g.Steps[i].Join.ForeignKey != nil, parts: []int32{0}, offsets: []int64{r.off["right"]}, catchUp: []int64{0}}
	}
	if err := tk.addSides(starts); err != nil {
		r.t.Fatal(err)
	}
	tk.producer, tk.mode = r.prod, newAtLeastOnce(tk)
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
	r.tk.noteFetched(recs)
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
		`left d {"L1":"t"}@201`,
	}
	checkJoin(t, g(topology.InnerJoin, 0), inputs, []string{
		`a {"L1":"x","R1":"y"}@105`,
		`a {"L1":"w","R1":"y"}@115`,
		`a {"L1":"w","R1":"z"}@120`,
		`d {"L1":"t","R1":"s"}@201`,
	})
	// With a grace period unmatched rows wait for their window to close;
	// a row whose window closed already goes out at once.
	checkJoin(t, g(topology.LeftJoin, 0), inputs, []string{
		`a {"L1":"x","R1":"y"}@105`,
		`a {"L1":"w","R1":"y"}@115`,
		`a {"L1":"w","R1":"z"}@120`,
		`a {"L1":"late","R1":null}@50`,
		`b {"L1":"q","R1":null}@121`,
		`d {"L1":"t","R1":"s"}@201`,
	})
	checkJoin(t, g(topology.OuterJoin, 0), inputs, []string{
		`a {"L1":"x","R1":"y"}@105`,
		`a {"L1":"w","R1":"y"}@115`,
		`a {"L1":"w","R1":"z"}@120`,
		`a {"L1":"late","R1":null}@50`,
		`b {"L1":"q","R1":null}@121`,
		`c {"L1":null,"R1":"r"}@122`,
		`d {"L1":"t","R1":"s"}@201`,
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
		`d {"L1":"t","R1":"s"}@201`,
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

// liveJoin runs join graphs against the playground broker.
type liveJoin struct {
	t      *testing.T
	ctx    context.Context
	client kafka.Client
	prod   kafka.Producer
	g      *topology.Graph
	store  *state.Store
}

func newLiveJoin(t *testing.T, g *topology.Graph, partitions map[string]int32) *liveJoin {
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
	g.Source.Partitions = partitions["left"]
	g.Steps[0].Join.Right.Source.Partitions = partitions["right"]
	g.Sink.Partitions = partitions["left"]
	names := []string{"left", "right", "out"}
	for _, tp := range complete(t, g).Physical.Topics {
		if tp.Role == topology.ChangelogTopic {
			names = append(names, tp.Name)
		}
	}
	for _, name := range names {
		n, ok := partitions[name]
		if !ok {
			n = partitions["left"]
		}
		if err := client.CreateTopic(ctx, kafka.TopicSpec{Name: name, Partitions: n}); err != nil {
			t.Fatal(err)
		}
	}
	prod, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return &liveJoin{t: t, ctx: ctx, client: client, prod: prod, g: g, store: openStore(t, t.TempDir())}
}

// send produces records keyed k<from>..k<to-1> with value {field:
// "<topic><i>"} (or the value valueOf returns) at time ts.
func (l *liveJoin) send(topic string, from, to int, ts int64, valueOf func(i int) string) {
	var recs []*kafka.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kafka.Record{Topic: topic, Partition: -1, Key: []byte(fmt.Sprintf("k%d", i)),
			Value: []byte(valueOf(i)), Timestamp: time.UnixMilli(ts)})
	}
	if err := l.prod.Produce(l.ctx, recs); err != nil {
		l.t.Fatal(err)
	}
}

func (l *liveJoin) ends(topic string) []int64 {
	bounds, err := l.client.ListOffsets(l.ctx, topic)
	if err != nil {
		l.t.Fatal(err)
	}
	out := make([]int64, len(bounds))
	for i, b := range bounds {
		out[i] = b.End
	}
	return out
}

// run starts the query, waits until it read every input to its end, and
// stops it.
func (l *liveJoin) run() {
	t := l.t
	progress := make(chan struct{}, 1)
	deps := Deps{Kafka: l.client, Group: "join-test", State: l.store, Logger: discardLogger(), Progress: func() {
		select {
		case progress <- struct{}{}:
		default:
		}
	}}
	q, err := Start(l.ctx, complete(l.t, l.g), deps, nil)
	if err != nil {
		t.Fatal(err)
	}
	for {
		behind := false
		for _, topic := range inputTopics(l.g) {
			pos := q.PositionsOf(topic)
			for p, end := range l.ends(topic) {
				if p >= len(pos) || pos[p] < end {
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
		case <-l.ctx.Done():
			t.Fatal("query did not catch up")
		}
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
}

// output reads the n records of the output topic, the last value per key.
func (l *liveJoin) output(n int) map[string]string {
	cons, err := l.client.NewConsumer(kafka.ConsumerOptions{})
	if err != nil {
		l.t.Fatal(err)
	}
	defer cons.Close()
	assign := map[int32]int64{}
	for p := range l.ends("out") {
		assign[int32(p)] = kafka.OffsetStart
	}
	cons.Assign(map[string]map[int32]int64{"out": assign})
	got := map[string]string{}
	for read := 0; read < n; {
		recs, err := cons.Poll(l.ctx)
		if err != nil {
			l.t.Fatal(err)
		}
		for _, r := range recs {
			got[string(r.Key)] = string(r.Value)
			read++
		}
	}
	return got
}

// TestStreamTableJoinLive runs a stream-table LEFT JOIN against the
// playground broker over three partitions. The table topic is filled
// before the query starts, with later record times than stream rows
// already waiting: the table side catches up first, so every stream row
// finds its table row. A restart resumes both inputs from their committed
// offsets with the table kept in state.
func TestStreamTableJoinLive(t *testing.T) {
	l := newLiveJoin(t, joinGraph(topology.LeftJoin, false, true, nil, false), map[string]int32{"left": 3, "right": 3})
	const n = 200
	right := func(i int) string { return fmt.Sprintf(`{"R1":"right%d"}`, i) }
	left := func(i int) string { return fmt.Sprintf(`{"L1":"left%d"}`, i) }
	l.send("right", 0, n, 5000, right)
	l.send("left", 0, n/2, 1000, left)
	l.run()
	l.send("left", n/2, n, 2000, left)
	l.run()
	if ends := l.ends("out"); ends[0]+ends[1]+ends[2] != n {
		t.Errorf("%d output records, want one per stream row", ends[0]+ends[1]+ends[2])
	}
	got := l.output(n)
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		if want := fmt.Sprintf(`{"L1":"left%d","R1":"right%d"}`, i, i); got[k] != want {
			t.Errorf("%s: got %s, want %s", k, got[k], want)
		}
	}
}

// TestForeignKeyJoinLive runs a foreign-key join of a left table over
// three partitions with a right table over two: every task reads the whole
// right table, so each left row finds the right row it references, and
// after a restart on an empty store a right update reaches every left row.
func TestForeignKeyJoinLive(t *testing.T) {
	l := newLiveJoin(t, joinGraph(topology.InnerJoin, true, true, nil, true), map[string]int32{"left": 3, "right": 2})
	const n, refs = 60, 5
	l.send("right", 0, refs, 1000, func(i int) string { return fmt.Sprintf(`{"R1":"r%d"}`, i) })
	l.send("left", 0, n, 2000, func(i int) string { return fmt.Sprintf(`{"L1":"l%d","FK":"k%d"}`, i, i%refs) })
	l.run()
	// The restart loses the local store: the right table, the index and
	// the positions in the right topic come back from the changelogs, so
	// no right row is read twice.
	l.store = openStore(t, t.TempDir())
	l.send("right", 0, refs, 3000, func(i int) string { return fmt.Sprintf(`{"R1":"new%d"}`, i) })
	l.run()
	if ends := l.ends("out"); ends[0]+ends[1]+ends[2] != 2*n {
		t.Errorf("%d output records, want %d", ends[0]+ends[1]+ends[2], 2*n)
	}
	got := l.output(2 * n)
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		if want := fmt.Sprintf(`{"L1":"l%d","R1":"new%d"}`, i, i%refs); got[k] != want {
			t.Errorf("%s: got %s, want %s", k, got[k], want)
		}
	}
}

// TestStreamStreamJoinRestore restarts a stream-stream join on a new,
// empty state store: the rows within the window come back from the join's
// changelogs, so right rows sent after the restart still meet the left
// rows sent before it.
func TestStreamStreamJoinRestore(t *testing.T) {
	g := joinGraph(topology.InnerJoin, false, false, &topology.JoinWindow{Before: 1000, After: 1000, Grace: 0}, false)
	l := newLiveJoin(t, g, map[string]int32{"left": 2, "right": 2})
	const n = 50
	l.send("left", 0, n, 10_000, func(i int) string { return fmt.Sprintf(`{"L1":"l%d"}`, i) })
	l.run()
	l.store = openStore(t, t.TempDir())
	l.send("right", 0, n, 10_500, func(i int) string { return fmt.Sprintf(`{"R1":"r%d"}`, i) })
	l.run()
	got := l.output(n)
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		if want := fmt.Sprintf(`{"L1":"l%d","R1":"r%d"}`, i, i); got[k] != want {
			t.Errorf("%s: got %s, want %s", k, got[k], want)
		}
	}
}

// TestStreamStreamJoinOnValues joins two streams on value columns (a
// single-partition join needs no repartition): the rows keep their own
// key columns, and the output is keyed by the join key.
func TestStreamStreamJoinOnValues(t *testing.T) {
	g := func() *topology.Graph {
		g := joinGraph(topology.OuterJoin, false, false, &topology.JoinWindow{Before: 10, After: 10, Grace: 0}, false)
		join := &g.Steps[0]
		lin, rin := g.Source.Schema(), join.Join.Right.Output
		join.Join.LeftKey, join.Join.RightKey = []*expr.Expr{col(lin, "L1")}, []*expr.Expr{col(rin, "R1")}
		proj := &g.Steps[1]
		proj.Exprs = append(proj.Exprs, col(join.Schema, "L_ID"), col(join.Schema, "R_ID"))
		proj.Schema = append(proj.Schema, types.Column{Name: "L_ID", Type: types.StringType}, types.Column{Name: "R_ID", Type: types.StringType})
		g.Output = proj.Schema
		return g
	}
	checkJoin(t, g, []string{
		`left k1 {"L1":"x"}@10`,
		`right k2 {"R1":"x"}@12`,
		`right k3 {"R1":"y"}@13`,
		`left k4 {"L1":"y"}@50`,
	}, []string{
		`x {"L1":"x","R1":"x","L_ID":"k1","R_ID":"k2"}@12`,
		`y {"L1":null,"R1":"y","L_ID":null,"R_ID":"k3"}@13`,
	})
}

// TestJoinCatchUp: left records polled before a table side has read up to
// where its topic ended at start wait, and run once it has.
func TestJoinCatchUp(t *testing.T) {
	r := newJoinRun(t, joinGraph(topology.LeftJoin, false, true, nil, false))
	r.tk.sides[0].catchUp[0] = 2
	r.send(`left a {"L1":"l1"}@1`)
	r.send(`right a {"R1":"r5"}@5`, `left b {"L1":"l2"}@2`)
	if got := r.output(); len(got) != 0 || r.tk.pos.Load() != 0 {
		t.Fatalf("output %v, left position %d before the table caught up", got, r.tk.pos.Load())
	}
	r.send(`right b {"R1":"r6"}@6`)
	want := []string{`a {"L1":"l1","R1":"r5"}@1`, `b {"L1":"l2","R1":"r6"}@2`}
	if got := r.output(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %v, want %v", got, want)
	}
	if r.tk.pos.Load() != 2 || len(r.tk.held) != 0 {
		t.Errorf("left position %d with %d held; want 2 and none", r.tk.pos.Load(), len(r.tk.held))
	}
}

// assignLog is a client whose consumers record every assignment they are
// given, in order.
type assignLog struct {
	kafka.Client
	mu      sync.Mutex
	assigns []map[string]map[int32]int64
}

func (c *assignLog) NewConsumer(opts kafka.ConsumerOptions) (kafka.Consumer, error) {
	cons, err := c.Client.NewConsumer(opts)
	return &assignLogConsumer{Consumer: cons, log: c}, err
}

type assignLogConsumer struct {
	kafka.Consumer
	log *assignLog
}

func (c *assignLogConsumer) Assign(offsets map[string]map[int32]int64) {
	c.log.mu.Lock()
	c.log.assigns = append(c.log.assigns, offsets)
	c.log.mu.Unlock()
	c.Consumer.Assign(offsets)
}

// TestStreamTableJoinLeftWaits checks that a join task reads its stream
// partition only once its table side caught up: the stream records
// loaded ahead of the query are not polled (and held in memory) while the
// table loads. Each task first assigns the table partition alone, then
// the stream partition, and every stream row still finds its table row.
func TestStreamTableJoinLeftWaits(t *testing.T) {
	l := newLiveJoin(t, joinGraph(topology.InnerJoin, false, true, nil, false), map[string]int32{"left": 2, "right": 2})
	log := &assignLog{Client: l.client}
	l.client = log
	const n = 100
	l.send("right", 0, n, 5000, func(i int) string { return fmt.Sprintf(`{"R1":"right%d"}`, i) })
	l.send("left", 0, n, 1000, func(i int) string { return fmt.Sprintf(`{"L1":"left%d"}`, i) })
	l.run()
	log.mu.Lock()
	firsts, lefts := 0, 0
	seen := map[int32]bool{}
	for _, a := range log.assigns {
		for p := range a["right"] {
			if !seen[p] {
				seen[p] = true
				firsts++
				if _, ok := a["left"]; ok {
					t.Errorf("partition %d: the stream was assigned with the table still to catch up: %v", p, a)
				}
			}
		}
		lefts += len(a["left"])
	}
	log.mu.Unlock()
	if firsts != 2 || lefts != 2 {
		t.Errorf("%d tasks assigned the table and %d stream partitions, want 2 and 2", firsts, lefts)
	}
	if ends := l.ends("out"); ends[0]+ends[1] != n {
		t.Errorf("%d output records, want one per stream row", ends[0]+ends[1])
	}
}
