package exec

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/state"
)

// Pull queries read the committed state of the persistent query that
// materializes a table:
//
//	Store.Table (Pebble, committed only) ──layout──▶ rows of the stateful step
//	    ──steps after it (HAVING, projection)──▶ table rows ──▶ fn
//
// A layout knows how one kind of stateful step stores its rows: an
// Aggregate's accumulators per group (and window, for a windowed one), a
// Materialize step's rows per key
// (CREATE SOURCE TABLE, CREATE TABLE AS SELECT over a table). A step kind
// that keeps a table's rows in another layout adds a case to newLayout and
// a tableLayout implementation.

// Bounds narrow what ScanTable reads. The zero value reads every row.
type Bounds struct {
	// Keys, when not nil, lists the only keys to read, one value per key
	// column of the table in its key order, of the key columns' types:
	// each is a point lookup per partition (a prefix scan of the key's
	// windows in a windowed table). Empty and not nil reads nothing.
	Keys [][]any
	// Key, when set, is checked on the key of every row a scan meets
	// (before its value is decoded, where the layout can); rows it
	// rejects are skipped.
	Key func(key []any) bool
	// Window, when set, is checked on the window bounds (in ms) of the
	// rows of a windowed table before their value is decoded.
	Window func(start, end int64) bool
	// Partitions, when set, says which partitions to read (those this
	// server owns in a cluster); nil reads them all.
	Partitions func(p int32) bool
}

// scanBatch is how many rows ScanTable hands over at a time.
const scanBatch = 256

// Materialized reports whether ScanTable can read the table the
// persistent query g writes.
func Materialized(g *topology.Graph) bool {
	_, err := newLayout(g)
	return err == nil
}

// RowTime reports whether the state ScanTable reads for g keeps the time
// of each row: when it does not, the rows' ROWTIME is null. An
// aggregation's does, but a group whose state was written before groups
// kept their time has a null ROWTIME until it takes its next record.
func RowTime(g *topology.Graph) bool {
	l, err := newLayout(g)
	return err == nil && l.rowTime()
}

// ScanTable reads the rows of the table the persistent query g writes from
// the state its tasks last committed to store (never what a task holds in
// its cache and has not committed), over partitions 0..partitions-1. It
// calls fn with batches of rows laid out as the pseudo-columns (ROWTIME
// the row's time, or null when the state does not keep it, see RowTime;
// ROWPARTITION the state's partition; ROWOFFSET null) followed by
// g.Output, with WINDOWSTART and WINDOWEND after the key columns for a
// windowed table, until fn returns false. A batch is valid only during the
// call.
func ScanTable(ctx context.Context, store *state.Store, g *topology.Graph, partitions int32, b Bounds, fn func(ctx context.Context, b *Batch) (bool, error)) error {
	l, err := newLayout(g)
	if err != nil {
		return err
	}
	s := &scanner{layout: l, fn: fn, ctx: ctx, keys: -1}
	if g.Sink != nil && g.Sink.Window != nil {
		// The projection of a windowed table ends with the window
		// bounds; the table's rows have them after the key columns.
		s.keys = g.KeyColumns
	}
	post := g.Steps[l.step()+1:]
	if s.post, err = NewPipeline(post, l.schema(), l.keys()); err != nil {
		return err
	}
	final := l.schema()
	if len(post) > 0 {
		final = post[len(post)-1].Schema
	}
	s.pseudo = hasPseudoColumns(final)
	for p := int32(0); p < partitions && !s.done; p++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if b.Partitions != nil && !b.Partitions(p) {
			continue
		}
		s.partition = p
		if b.Keys != nil {
			for _, k := range b.Keys {
				if err := l.get(store, p, k, s.add); err != nil {
					return err
				}
				if s.done {
					break
				}
			}
		} else if err := l.scan(store, p, b, s.add); err != nil {
			return err
		}
		if err := s.flush(); err != nil {
			return err
		}
	}
	return s.err
}

// scanner batches the rows a layout reads, runs them through the steps
// after the stateful one and hands the table rows to fn.
type scanner struct {
	ctx       context.Context
	layout    tableLayout
	post      *Pipeline
	fn        func(ctx context.Context, b *Batch) (bool, error)
	partition int32
	// pseudo says the rows out of post already start with the
	// pseudo-columns.
	pseudo bool
	// keys, when not negative, is how many key columns lead the rows of
	// a windowed table, whose bounds go after them.
	keys    int
	in, out Batch
	done    bool
	err     error
}

// add takes one row of the stateful step, and its time when the state
// keeps it (noRowTime when the row has none); it returns false once the
// scan should stop.
func (s *scanner) add(row []any, ts int64) bool {
	s.in.Append(row, ts, Insert)
	if s.in.Len() >= scanBatch {
		if err := s.flush(); err != nil {
			s.err, s.done = err, true
		}
	}
	return !s.done
}

func (s *scanner) flush() error {
	if s.in.Len() == 0 || s.done {
		s.in.Reset()
		return nil
	}
	s.out.Reset()
	err := s.post.Run(s.ctx, &s.in, func(row []any, ts int64) bool {
		// A row the HAVING filter rejects is not in the table.
		t := make([]any, 0, topology.PseudoColumns+len(row))
		var rowTime any
		if s.layout.rowTime() && ts != noRowTime {
			rowTime = ts
		}
		t = append(t, rowTime, s.partition, nil)
		if s.pseudo {
			row = row[topology.PseudoColumns:]
		}
		if s.keys >= 0 {
			n := len(row) - 2
			t = append(t, row[:s.keys]...)
			t = append(t, row[n:]...)
			row = row[s.keys:n]
		}
		s.out.Append(append(t, row...), ts, Insert)
		return true
	})
	s.in.Reset()
	if err != nil {
		return err
	}
	if s.out.Len() == 0 {
		return nil
	}
	more, err := s.fn(s.ctx, &s.out)
	if err != nil {
		return err
	}
	s.done = !more
	return nil
}

// hasPseudoColumns reports whether a row layout starts with the
// pseudo-columns.
func hasPseudoColumns(cols []types.Column) bool {
	return len(cols) >= topology.PseudoColumns && cols[0].Name == topology.RowTime &&
		cols[1].Name == topology.RowPartition && cols[2].Name == topology.RowOffset
}

// tableLayout reads the rows one kind of stateful step keeps in its state
// table, in the layout of the step's output schema.
type tableLayout interface {
	// step is the index in the graph of the stateful step.
	step() int
	// schema and keys are the step's output schema and how many key
	// columns follow its pseudo-columns.
	schema() []types.Column
	keys() int
	// rowTime says whether the state keeps the time of each row.
	rowTime() bool
	// get reads the row of one key (values of the table's key columns),
	// if there is one, and passes it to emit with its time.
	get(store *state.Store, partition int32, key []any, emit func(row []any, ts int64) bool) error
	// scan passes every row within b to emit, until emit returns false.
	scan(store *state.Store, partition int32, b Bounds, emit func(row []any, ts int64) bool) error
}

// newLayout finds the step of g that keeps the rows of the table g writes
// and returns its reader. The steps after it must be stateless.
func newLayout(g *topology.Graph) (tableLayout, error) {
	if g == nil || !persistent(g) {
		return nil, fmt.Errorf("exec: not a persistent query")
	}
	last := -1
	for i, st := range g.Steps {
		if st.StateTable != "" {
			last = i
		}
	}
	if last < 0 {
		return nil, fmt.Errorf("exec: query %s keeps no state", g.QueryID)
	}
	st := g.Steps[last]
	switch {
	case st.Kind == topology.Aggregate && st.Window != nil:
		return newWindowLayout(g, last)
	case st.Kind == topology.Aggregate:
		return newAggregateLayout(g, last)
	case st.Kind == topology.Materialize:
		return newMaterializeLayout(g, last), nil
	}
	return nil, fmt.Errorf("exec: the state of %s steps cannot be read by pull queries yet", st.Kind)
}

// aggregateLayout reads an Aggregate step's state: the group key (each
// value length-prefixed, see aggregateOp) mapped to its accumulators.
type aggregateLayout struct {
	ns  string // the query's state namespace
	in  []types.Column
	idx int
	st  topology.Step
	op  *aggregateOp
	// keyOf maps the table's key columns to the group key: keyOf[i] is
	// the GroupBy index the i-th key column of g.Output copies.
	keyOf []int
}

func newAggregateLayout(g *topology.Graph, idx int) (*aggregateLayout, error) {
	in := g.Source.Schema()
	for _, st := range g.Steps[:idx] {
		if st.Schema != nil {
			in = st.Schema
		}
	}
	st := g.Steps[idx]
	op, err := newAggregateOp(st, in)
	if err != nil {
		return nil, err
	}
	l := &aggregateLayout{ns: g.QueryID, idx: idx, st: st, op: op, in: in}
	// The projection of a CREATE TABLE AS SELECT copies the group key
	// into its key columns, in the GROUP BY order (see keysFirst).
	if g.KeyColumns == st.Keys {
		proj := g.Steps[len(g.Steps)-1]
		for i := 0; i < g.KeyColumns && proj.Kind == topology.Project; i++ {
			e := proj.Exprs[i]
			if e.Op != expr.OpColumn || e.Col < topology.PseudoColumns || e.Col >= topology.PseudoColumns+st.Keys {
				l.keyOf = nil
				break
			}
			l.keyOf = append(l.keyOf, e.Col-topology.PseudoColumns)
		}
	}
	return l, nil
}

func (l *aggregateLayout) step() int              { return l.idx }
func (l *aggregateLayout) schema() []types.Column { return l.st.Schema }
func (l *aggregateLayout) keys() int              { return l.st.Keys }

// rowTime is true: a group keeps the largest time of its records (but
// see noRowTime).
func (l *aggregateLayout) rowTime() bool { return true }

func (l *aggregateLayout) get(store *state.Store, partition int32, key []any, emit func(row []any, ts int64) bool) error {
	if len(l.keyOf) != len(key) {
		// The table's key does not map onto the group key: look among
		// all rows.
		return l.scan(store, partition, Bounds{Key: equalKey(key)}, emit)
	}
	kb, ok := l.groupKey(key)
	if !ok {
		return nil
	}
	v, ok, err := store.Table(l.ns, partition, l.st.StateTable).Get(kb)
	if err != nil || !ok {
		return err
	}
	group, err := l.decodeKey(kb)
	if err != nil {
		return err
	}
	row, ts, err := l.row(group, v)
	if err != nil {
		return err
	}
	emit(row, ts)
	return nil
}

func (l *aggregateLayout) scan(store *state.Store, partition int32, b Bounds, emit func(row []any, ts int64) bool) error {
	var failed error
	err := store.Table(l.ns, partition, l.st.StateTable).Scan(nil, nil, func(k, v []byte) bool {
		group, err := l.decodeKey(k)
		if err != nil {
			failed = err
			return false
		}
		if b.Key != nil && !b.Key(l.tableKey(group)) {
			return true
		}
		row, ts, err := l.row(group, v)
		if err != nil {
			failed = err
			return false
		}
		return emit(row, ts)
	})
	if err != nil {
		return err
	}
	return failed
}

// groupKey encodes the state key of the group a table key (values of the
// table's key columns) copies; ok is false when no group can have it.
func (l *aggregateLayout) groupKey(key []any) (kb []byte, ok bool) {
	group := make([]any, len(key))
	for i, j := range l.keyOf {
		group[j] = key[i]
	}
	for j, v := range group {
		if v == nil {
			return nil, false
		}
		p, err := expr.MarshalValue(v, l.op.keyTypes[j])
		if err != nil {
			// A value the key type cannot hold matches no key.
			return nil, false
		}
		kb = binary.AppendUvarint(kb, uint64(len(p)))
		kb = append(kb, p...)
	}
	return kb, true
}

// tableKey returns the table key of a group: its values in the order of
// the table's key columns.
func (l *aggregateLayout) tableKey(group []any) []any {
	if l.keyOf == nil {
		return group
	}
	key := make([]any, len(l.keyOf))
	for i, j := range l.keyOf {
		key[i] = group[j]
	}
	return key
}

// equalKey matches the table key key.
func equalKey(key []any) func(k []any) bool {
	return func(k []any) bool {
		if len(k) != len(key) {
			return false
		}
		for i := range k {
			if c, err := types.Compare(k[i], key[i]); err != nil || c != 0 {
				return false
			}
		}
		return true
	}
}

// decodeKey reads the group key values from a state key.
func (l *aggregateLayout) decodeKey(k []byte) ([]any, error) {
	out := make([]any, len(l.op.keyTypes))
	for j, t := range l.op.keyTypes {
		n, w := binary.Uvarint(k)
		if w <= 0 || n > uint64(len(k)-w) {
			return nil, fmt.Errorf("exec: corrupt aggregate state key in %s", l.st.StateTable)
		}
		v, err := expr.UnmarshalValue(k[w:w+int(n)], t)
		if err != nil {
			return nil, fmt.Errorf("exec: corrupt aggregate state key in %s: %w", l.st.StateTable, err)
		}
		out[j] = v
		k = k[w+int(n):]
	}
	if len(k) != 0 {
		return nil, fmt.Errorf("exec: corrupt aggregate state key in %s", l.st.StateTable)
	}
	return out, nil
}

// row builds the aggregate step's output row of one group from its state,
// and returns the group's row time (noRowTime when its state keeps none).
func (l *aggregateLayout) row(group []any, v []byte) ([]any, int64, error) {
	a := l.op
	ts, err := a.decodeState(v, true)
	if err != nil {
		return nil, noRowTime, err
	}
	row := make([]any, 0, topology.PseudoColumns+len(group)+len(a.accs))
	var rowTime any
	if ts != noRowTime {
		rowTime = ts
	}
	row = append(row, rowTime, nil, nil)
	row = append(row, group...)
	for _, acc := range a.accs {
		// A failing aggregate shows null, as the query emitted it.
		res, err := eval.AccumulatorResult(acc)
		if err != nil {
			res = nil
		}
		row = append(row, res)
	}
	return row, ts, nil
}

// windowLayout reads a windowed Aggregate step's state: the group key
// followed by the window (see windowAggregateOp), mapped to the row time
// (time windows only) and the accumulators.
type windowLayout struct {
	*aggregateLayout
	op *windowAggregateOp
	w  topology.Window
}

func newWindowLayout(g *topology.Graph, idx int) (*windowLayout, error) {
	l, err := newAggregateLayout(g, idx)
	if err != nil {
		return nil, err
	}
	op, err := newWindowAggregateOp(l.st, l.in)
	if err != nil {
		return nil, err
	}
	return &windowLayout{aggregateLayout: l, op: op, w: *l.st.Window}, nil
}

func (l *windowLayout) rowTime() bool { return true }

// keys counts the window bounds, which follow the key columns.
func (l *windowLayout) keys() int { return l.st.Keys + 2 }

// winLen is the length of the window part of a state key.
func (l *windowLayout) winLen() int {
	if l.w.Type == topology.Session {
		return 16
	}
	return 8
}

// get reads every window of one key, by a scan of the keys that start
// with its group key.
func (l *windowLayout) get(store *state.Store, partition int32, key []any, emit func(row []any, ts int64) bool) error {
	if len(l.keyOf) != len(key) {
		return l.scanKey(store, partition, nil, Bounds{Key: equalKey(key)}, emit)
	}
	gk, ok := l.groupKey(key)
	if !ok {
		return nil
	}
	return l.scanKey(store, partition, gk, Bounds{}, emit)
}

func (l *windowLayout) scan(store *state.Store, partition int32, b Bounds, emit func(row []any, ts int64) bool) error {
	return l.scanKey(store, partition, nil, b, emit)
}

// scanKey passes the windows within b of the group whose state key
// starts with gk (of every group when gk is nil) to emit.
func (l *windowLayout) scanKey(store *state.Store, partition int32, gk []byte, b Bounds, emit func(row []any, ts int64) bool) error {
	var lo, hi []byte
	if gk != nil {
		lo, hi = gk, prefixEnd(gk)
	}
	var failed error
	err := store.Table(l.ns, partition, l.st.StateTable).Scan(lo, hi, func(k, v []byte) bool {
		n := len(k) - l.winLen()
		if n <= 0 || (gk != nil && n != len(gk)) {
			// The stream time entry, or another group's key.
			return true
		}
		start, end := l.op.bounds(k)
		if b.Window != nil && !b.Window(start, end) {
			return true
		}
		group, err := l.decodeKey(k[:n])
		if err != nil {
			failed = err
			return false
		}
		if b.Key != nil && !b.Key(l.tableKey(group)) {
			return true
		}
		ts := end
		if l.w.Type != topology.Session {
			if len(v) < 8 {
				failed = fmt.Errorf("exec: corrupt window state in %s", l.st.StateTable)
				return false
			}
			ts, v = int64(binary.BigEndian.Uint64(v)), v[8:]
		}
		if err := l.op.decode(v, true, l.op.accs); err != nil {
			failed = err
			return false
		}
		row := make([]any, 0, topology.PseudoColumns+len(group)+2+len(l.op.accs))
		row = append(row, ts, nil, nil)
		row = append(row, group...)
		row = append(row, start, end)
		for _, acc := range l.op.accs {
			// A failing aggregate shows null, as the query emitted it.
			res, err := eval.AccumulatorResult(acc)
			if err != nil {
				res = nil
			}
			row = append(row, res)
		}
		return emit(row, ts)
	})
	if err != nil {
		return err
	}
	return failed
}

// prefixEnd returns the smallest key greater than every key starting with
// p, or nil when there is none.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// materializeLayout reads a Materialize step's state: a table's rows, one
// per key (see MaterializedTable), and per window for a windowed table,
// whose window bounds follow the key columns in the state key.
type materializeLayout struct {
	idx int
	mt  MaterializedTable
	// from is where the key columns start in a row; tableKeys is how many
	// key columns the table has (its window bounds not counted).
	from, tableKeys int
	windowed        bool
}

func newMaterializeLayout(g *topology.Graph, idx int) *materializeLayout {
	st := g.Steps[idx]
	l := &materializeLayout{idx: idx, mt: MaterializedTable{Namespace: g.QueryID, StateTable: st.StateTable, Schema: st.Schema, Keys: st.Keys}, tableKeys: st.Keys}
	if hasPseudoColumns(st.Schema) {
		l.from = topology.PseudoColumns
	}
	if n := l.from + st.Keys; st.Keys >= 2 && st.Schema[n-2].Name == topology.WindowStart && st.Schema[n-1].Name == topology.WindowEnd {
		l.windowed, l.tableKeys = true, st.Keys-2
	}
	return l
}

func (l *materializeLayout) step() int              { return l.idx }
func (l *materializeLayout) schema() []types.Column { return l.mt.Schema }
func (l *materializeLayout) keys() int              { return l.mt.Keys }

// rowTime holds when the rows keep their pseudo-columns (a source
// table's); the rows of a CREATE TABLE AS SELECT's sink do not.
func (l *materializeLayout) rowTime() bool { return l.from == topology.PseudoColumns }

func (l *materializeLayout) get(store *state.Store, partition int32, key []any, emit func(row []any, ts int64) bool) error {
	if len(key) != l.tableKeys {
		return l.scan(store, partition, Bounds{Key: equalKey(key)}, emit)
	}
	if !l.windowed {
		row, ok, err := l.mt.Lookup(store, partition, key)
		if err != nil || !ok {
			return err
		}
		emit(row, l.time(row))
		return nil
	}
	// Every window of the key: the state keys that start with the key
	// columns' encoding.
	c := newRowCodec(l.mt.Schema, l.tableKeys)
	probe := make([]any, len(l.mt.Schema))
	copy(probe[l.from:], key)
	prefix, ok, err := c.appendKey(nil, probe)
	if err != nil || !ok {
		// A value the key type cannot hold matches no key.
		return nil
	}
	return l.scanRange(store, partition, prefix, prefixEnd(prefix), Bounds{}, emit)
}

func (l *materializeLayout) scan(store *state.Store, partition int32, b Bounds, emit func(row []any, ts int64) bool) error {
	return l.scanRange(store, partition, nil, nil, b, emit)
}

// scanRange passes the rows whose state keys are in [lo, hi) and within b
// to emit.
func (l *materializeLayout) scanRange(store *state.Store, partition int32, lo, hi []byte, b Bounds, emit func(row []any, ts int64) bool) error {
	c := newRowCodec(l.mt.Schema, l.mt.Keys)
	var failed error
	err := store.Table(l.mt.Namespace, partition, l.mt.StateTable).Scan(lo, hi, func(k, v []byte) bool {
		row := make([]any, len(l.mt.Schema))
		if err := c.decode(k, v, row); err != nil {
			failed = fmt.Errorf("exec: corrupt table state in %s of %s: %w", l.mt.StateTable, l.mt.Namespace, err)
			return false
		}
		if b.Key != nil && !b.Key(row[l.from:l.from+l.tableKeys]) {
			return true
		}
		if l.windowed && b.Window != nil {
			n := l.from + l.mt.Keys
			start, ok1 := row[n-2].(int64)
			end, ok2 := row[n-1].(int64)
			if !ok1 || !ok2 || !b.Window(start, end) {
				return true
			}
		}
		return emit(row, l.time(row))
	})
	if err != nil {
		return err
	}
	return failed
}

// time is the row's ROWTIME, when it keeps one.
func (l *materializeLayout) time(row []any) int64 {
	if ts, ok := row[0].(int64); ok && l.rowTime() {
		return ts
	}
	return 0
}

// Pipeline runs stateless steps (filter, projection, flat map) over rows
// outside any task: pull queries run the steps of a table's query after
// its state, and their own WHERE and projection, with it. A Pipeline
// belongs to one goroutine.
type Pipeline struct {
	ops  []Operator
	emit func(row []any, ts int64, del bool) bool
	// changes passes deletes on to emit (RunChanges).
	changes bool
	stop    bool
}

// NewPipeline compiles steps over rows of schema in whose first keys
// columns after the pseudo-columns are key columns. Only stateless steps
// can run there (see operators).
func NewPipeline(steps []topology.Step, in []types.Column, keys int) (*Pipeline, error) {
	p := &Pipeline{}
	oc := &OpContext{Errors: discardErrors{}}
	inKeys := keyColumns(topology.PseudoColumns, keys)
	for i := range steps {
		st := &steps[i]
		op, outKeys, err := newOperator(st, in, inKeys, true)
		if err != nil {
			return nil, err
		}
		inKeys = outKeys
		if st.Schema != nil {
			in = st.Schema
		}
		if err := op.Open(context.Background(), oc); err != nil {
			return nil, err
		}
		p.ops = append(p.ops, op)
	}
	return p, nil
}

// Run passes b through the steps and calls emit with every row that comes
// out (rows that leave a table, such as those a HAVING filter rejects, do
// not), until emit returns false. A row is valid only during the call.
func (p *Pipeline) Run(ctx context.Context, b *Batch, emit func(row []any, ts int64) bool) error {
	p.emit = func(row []any, ts int64, _ bool) bool { return emit(row, ts) }
	p.changes, p.stop = false, false
	return p.push(ctx, 0, b)
}

// RunChanges is Run over a table's changes: the deletes of b (rows with
// a NullValue kind) go through the steps too, and emit gets those that
// come out with del set, the columns the steps compute from the key
// alone filled in. A delete a WHERE sends for a row it drops (Filtered)
// is left out, as a push query leaves it out.
func (p *Pipeline) RunChanges(ctx context.Context, b *Batch, emit func(row []any, ts int64, del bool) bool) error {
	p.emit, p.changes, p.stop = emit, true, false
	return p.push(ctx, 0, b)
}

func (p *Pipeline) push(ctx context.Context, i int, b *Batch) error {
	if i == len(p.ops) {
		for j := 0; j < b.Len() && !p.stop; j++ {
			del := b.Kind(j).Base() == NullValue
			if del && (!p.changes || b.Kind(j)&Filtered != 0) {
				continue
			}
			p.stop = !p.emit(b.Row(j), b.Time(j), del)
		}
		return nil
	}
	return p.ops[i].OnBatch(ctx, 0, b, emitterFunc(func(ctx context.Context, b *Batch) error {
		if p.stop {
			return nil
		}
		return p.push(ctx, i+1, b)
	}))
}

// discardErrors drops the row errors of a pull query: expressions that
// fail yield null, as they do in a persistent query.
type discardErrors struct{}

func (discardErrors) RowError(string, []any) {}
