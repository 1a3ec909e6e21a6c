package exec

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/state"
)

// The ports of a join operator: the left rows arrive on port 0 from the
// steps before the join, the right rows on port 1 from the right input's
// steps.
const (
	leftPort  = 0
	rightPort = 1
)

// joinKind is which of the join algorithms a Join step runs.
type joinKind uint8

const (
	streamTableJoin joinKind = iota
	tableTableJoin
	streamStreamJoin
	foreignKeyJoin
)

// joinOp joins the rows of two co-partitioned inputs with Kafka Streams'
// semantics. Each side's rows are kept in the side's state table of the
// task's TaskCache (a table's current row per key, or a stream's rows
// within the join window), so lookups do not reach Pebble for
// rows written since the last commit, nor for rows read once. The
// stream-table and table-table joins are below; join_stream.go and
// join_fk.go hold the stream-stream and foreign-key ones, join_task.go
// the task's side of a join.
type joinOp struct {
	spec *topology.JoinSpec
	kind joinKind
	// keys evaluate the join key over a left (0) or right (1) row;
	// keyTypes are its column types.
	keys     [2][]eval.Evaluator
	keyTexts [2][]string
	keyTypes []*types.Type
	// schemas are the sides' row layouts; codecs encode a table side's
	// rows in its state table, keyed by the join key.
	schemas [2][]types.Column
	codecs  [2]rowCodec
	tables  [2]string
	// mat says a side's state table is written by the Materialize step
	// just before the join on that side: the join only reads it, and takes
	// old rows from the batch.
	mat [2]bool
	// preserved says a side's rows appear in the output without a match
	// (LEFT: the left side, RIGHT: the right side, OUTER: both).
	preserved [2]bool
	// winCols are the WINDOWSTART and WINDOWEND columns of each side's
	// rows when both sides are windowed streams: rows join only within
	// the same window, their keys matching byte for byte.
	winCols      [2][2]int
	windowed     bool
	timeWindowed bool // rows match on WINDOWSTART alone (JoinSpec.TimeWindowed)
	nKey         int  // join key columns of the output
	width        int  // output row width

	cache  *state.TaskCache
	errs   ErrorSink
	counts *counters
	out    Batch
	slab   rowSlab
	kbuf   []byte
	key    []any // scratch join key values

	ss streamJoin   // stream-stream state, see join_stream.go
	fk foreignKeyFn // foreign-key join, see join_fk.go

	// decoded keeps the table rows of a stream-table join decoded, by key
	// bytes, so that the stream rows of a busy key neither read the state
	// store nor allocate; nil (no caching) for other joins. Every change of
	// the table goes through tableChange, which drops its key's entry
	// (keepRow when the join writes the row itself). It holds at most
	// maxDecodedRows rows and starts over when full; decodedBytes
	// estimates their memory, counted in the state's memory budget, and a
	// commit past the budget forgets them all (they are read back from
	// the cache or the store).
	decoded      map[string]decodedRow
	decodedBytes int64
}

// decodedRow is a stream-table join's decoded table row and its estimated
// memory (see decodedRowBytes).
type decodedRow struct {
	row   []any
	bytes int64
}

// maxDecodedRows bounds a stream-table join's decoded table rows.
const maxDecodedRows = 100_000

// decodedRowBytes estimates the memory of a decoded row of n columns kept
// under a key of keyLen bytes, decoded from a value of valueLen bytes:
// the map slot and key, the row's interface slots, and its values, which
// take about twice their encoding.
func decodedRowBytes(keyLen, n, valueLen int) int64 {
	return int64(keyLen + 96 + 16*n + 2*valueLen)
}

// forgetDecoded drops the stream-table join's decoded rows and gives their
// memory back to the budget.
func (j *joinOp) forgetDecoded() {
	clear(j.decoded)
	j.cache.Budget().Add(-j.decodedBytes)
	j.decodedBytes = 0
}

// dropDecoded forgets the decoded row of the key bytes k, if kept.
func (j *joinOp) dropDecoded(k []byte) {
	if d, ok := j.decoded[string(k)]; ok {
		delete(j.decoded, string(k))
		j.decodedBytes -= d.bytes
		j.cache.Budget().Add(-d.bytes)
	}
}

// newJoinOp compiles a Join step; in is the left rows' layout (the
// previous step's schema), st.Join.Right.Output the right rows'. A side
// the plan says is materialized (JoinSpec.LeftMaterialized,
// RightMaterialized) is read from the Materialize step's state table.
func newJoinOp(st topology.Step, in []types.Column) (*joinOp, error) {
	spec := st.Join
	if spec == nil || spec.Right == nil {
		return nil, errors.New("exec: a join step without its right input")
	}
	j := &joinOp{spec: spec, nKey: st.Keys, width: len(st.Schema)}
	j.schemas[leftPort], j.schemas[rightPort] = in, spec.Right.Output
	j.tables[leftPort], j.tables[rightPort] = spec.LeftState, spec.RightState
	j.mat[leftPort], j.mat[rightPort] = spec.LeftMaterialized, spec.RightMaterialized
	switch spec.Type {
	case topology.InnerJoin:
	case topology.LeftJoin:
		j.preserved[leftPort] = true
	case topology.RightJoin:
		j.preserved[rightPort] = true
	case topology.OuterJoin:
		j.preserved = [2]bool{true, true}
	default:
		return nil, fmt.Errorf("exec: unknown join type %q", spec.Type)
	}
	if want := topology.PseudoColumns + st.Keys + len(in) - topology.PseudoColumns + len(spec.Right.Output) - topology.PseudoColumns; want != len(st.Schema) {
		return nil, fmt.Errorf("exec: join output has %d columns; %d pseudo-columns, %d key columns and both sides' columns make %d",
			len(st.Schema), topology.PseudoColumns, st.Keys, want)
	}
	for side, es := range [2][]*expr.Expr{spec.LeftKey, spec.RightKey} {
		for _, e := range es {
			ev, err := eval.Compile(e)
			if err != nil {
				return nil, err
			}
			j.keys[side] = append(j.keys[side], ev)
			j.keyTexts[side] = append(j.keyTexts[side], e.String())
			if side == leftPort {
				j.keyTypes = append(j.keyTypes, e.Type)
			}
		}
	}
	switch {
	case spec.ForeignKey != nil:
		if !spec.LeftTable || !spec.RightTable {
			return nil, errors.New("exec: a foreign-key join joins two tables")
		}
		j.kind = foreignKeyJoin
		if err := j.fk.init(j, st); err != nil {
			return nil, err
		}
	case spec.LeftTable && spec.RightTable:
		j.kind = tableTableJoin
	case !spec.LeftTable && spec.RightTable:
		j.kind = streamTableJoin
	case !spec.LeftTable && !spec.RightTable:
		j.kind = streamStreamJoin
		if spec.Within == nil {
			return nil, errors.New("exec: a stream-stream join needs a window")
		}
	default:
		return nil, errors.New("exec: a table cannot join a stream on its right; put the stream on the left")
	}
	if j.kind != foreignKeyJoin {
		if len(j.keys[leftPort]) == 0 || len(j.keys[leftPort]) != len(j.keys[rightPort]) {
			return nil, fmt.Errorf("exec: join keys: %d left, %d right", len(j.keys[leftPort]), len(j.keys[rightPort]))
		}
		if len(j.keys[leftPort]) != st.Keys {
			return nil, fmt.Errorf("exec: join of %d key columns outputs %d", len(j.keys[leftPort]), st.Keys)
		}
	}
	if j.kind != foreignKeyJoin {
		for side := range j.codecs {
			j.codecs[side] = newRowCodec(j.schemas[side], len(j.keys[side]))
		}
	}
	for side, name := range j.tables {
		// A stream-table join keeps no left rows.
		if name == "" && (side == rightPort || j.kind != streamTableJoin) {
			return nil, fmt.Errorf("exec: join step without a state table for its %s side", sideName(side))
		}
	}
	j.key = make([]any, max(st.Keys, 1))
	if j.kind == streamStreamJoin {
		j.ss.init(spec, j.schemas)
		j.windowed, j.timeWindowed = true, spec.TimeWindowed
		for side, schema := range j.schemas {
			j.winCols[side] = [2]int{-1, -1}
			for k, c := range schema {
				for b, name := range []string{topology.WindowStart, topology.WindowEnd} {
					if c.Name == name && j.winCols[side][b] < 0 {
						j.winCols[side][b] = k
					}
				}
			}
			if j.winCols[side][0] < 0 || j.winCols[side][1] < 0 {
				j.windowed = false
			}
		}
	}
	return j, nil
}

func sideName(side int) string {
	if side == leftPort {
		return "left"
	}
	return "right"
}

func (j *joinOp) Open(_ context.Context, oc *OpContext) error {
	if oc.State == nil {
		return errors.New("exec: a join needs a state store")
	}
	j.cache = oc.State
	j.errs, j.counts = oc.Errors, oc.counts
	if j.kind == streamTableJoin {
		j.decoded = map[string]decodedRow{}
	}
	return nil
}

func (j *joinOp) OnBatch(ctx context.Context, in int, b *Batch, out Emitter) error {
	j.out.Reset()
	j.slab.reset()
	if j.kind == streamStreamJoin && !j.ss.loaded {
		// The stream times are read once the state is restored.
		if err := j.ss.load(j); err != nil {
			return err
		}
	}
	stream := j.kind == streamStreamJoin || j.kind == streamTableJoin && in == leftPort
	var nulls int64
	// A joined row carries the headers of the record whose arrival made
	// it, as Kafka Streams forwards the arriving record's.
	var carry headerCarry
	for i := 0; i < b.Len(); i++ {
		carry.next(&j.out, b, i)
		if stream && b.Kind(i).Base() == NullValue {
			// A stream's record without a value joins nothing, as
			// Kafka Streams' stream joins skip it (a table side's are
			// deletes).
			nulls++
			continue
		}
		var err error
		switch j.kind {
		case streamTableJoin:
			err = j.streamTable(in, b, i)
		case tableTableJoin:
			err = j.tableTable(in, b, i)
		case streamStreamJoin:
			err = j.streamStream(in, b, i)
		case foreignKeyJoin:
			err = j.foreignKey(in, b, i)
		}
		if err != nil {
			return err
		}
	}
	carry.done(&j.out)
	j.counts.addNulls(nulls)
	if j.kind == streamStreamJoin {
		if err := j.saveTimes(); err != nil {
			return err
		}
	}
	if j.out.Len() == 0 {
		return nil
	}
	return out.Emit(ctx, &j.out)
}

// joinKey evaluates side's join key over row into j.key and encodes it
// into j.kbuf; ok is false when a key column is null: such a row joins
// nothing.
func (j *joinOp) joinKey(side int, row []any) (ok bool) {
	j.kbuf = j.kbuf[:0]
	for k, ev := range j.keys[side] {
		v, err := ev.Eval(row)
		if err != nil {
			j.errs.RowError("error computing the join key "+j.keyTexts[side][k]+": "+err.Error(), row)
			return false
		}
		if v == nil {
			return false
		}
		j.key[k] = v
		if j.kbuf, err = appendField(j.kbuf, v, j.keyTypes[k]); err != nil {
			j.errs.RowError("cannot encode the join key: "+err.Error(), row)
			return false
		}
	}
	if j.windowed {
		cols := j.winCols[side][:]
		if j.timeWindowed {
			cols = cols[:1]
		}
		for _, c := range cols {
			j.kbuf, _ = appendField(j.kbuf, row[c], types.BigintType)
		}
	}
	return true
}

// emit appends a joined row: the pseudo-columns of trigger (the row that
// caused it) with time t, the join key j.key, then the left and right
// rows' columns after their pseudo-columns (nulls for a missing side).
func (j *joinOp) emit(left, right, trigger []any, t int64) {
	row := j.slab.alloc(j.width)
	j.fill(row, left, right, trigger, t)
	j.out.Append(row, t, Insert)
}

func (j *joinOp) fill(row, left, right, trigger []any, t int64) {
	row[0] = t
	if len(trigger) >= topology.PseudoColumns {
		row[1], row[2] = trigger[1], trigger[2]
	}
	copy(row[topology.PseudoColumns:], j.key[:j.nKey])
	at := topology.PseudoColumns + j.nKey
	nl := len(j.schemas[leftPort]) - topology.PseudoColumns
	if left != nil {
		copy(row[at:at+nl], left[topology.PseudoColumns:])
	}
	if right != nil {
		copy(row[at+nl:], right[topology.PseudoColumns:])
	}
}

// tombstone appends a delete of the join key j.key at time t.
func (j *joinOp) tombstone(t int64) {
	row := j.slab.alloc(j.width)
	row[0] = t
	copy(row[topology.PseudoColumns:], j.key[:j.nKey])
	j.out.Append(row, t, NullValue)
}

// getRow reads side's table row under the key bytes k, nil when there is
// none.
func (j *joinOp) getRow(side int, k []byte) ([]any, error) {
	cached := side == rightPort && j.decoded != nil
	if cached {
		if d, ok := j.decoded[string(k)]; ok {
			return d.row, nil
		}
	}
	v, found, err := j.cache.Get(j.tables[side], k)
	if err != nil {
		return nil, fmt.Errorf("exec: read join state: %w", err)
	}
	if !found {
		return nil, nil
	}
	var row []any
	if cached {
		row = make([]any, len(j.schemas[side]))
	} else {
		row = j.slab.alloc(len(j.schemas[side]))
	}
	if err := j.codecs[side].decode(k, v, row); err != nil {
		return nil, fmt.Errorf("exec: corrupt join state in %s: %w", j.tables[side], err)
	}
	if cached {
		if len(j.decoded) >= maxDecodedRows {
			j.forgetDecoded()
		}
		n := decodedRowBytes(len(k), len(row), len(v))
		j.decoded[string(k)] = decodedRow{row: row, bytes: n}
		j.decodedBytes += n
		j.cache.Budget().Add(n)
	}
	return row, nil
}

// keepRow writes a table side's new row under the key bytes k, or deletes
// the key when row is nil.
func (j *joinOp) keepRow(side int, k []byte, row []any) error {
	if side == rightPort && j.decoded != nil {
		j.dropDecoded(k)
	}
	if row == nil {
		if err := j.cache.Delete(j.tables[side], k); err != nil {
			return fmt.Errorf("exec: write join state: %w", err)
		}
		return nil
	}
	v, err := j.codecs[side].value(row)
	if err != nil {
		j.errs.RowError("cannot keep the row of the join: "+err.Error(), row)
		return nil
	}
	if err := j.cache.Put(j.tables[side], k, v); err != nil {
		return fmt.Errorf("exec: write join state: %w", err)
	}
	return nil
}

// rowTime is a kept row's record time: its ROWTIME pseudo-column.
func rowTime(row []any) int64 {
	if t, ok := row[0].(int64); ok {
		return t
	}
	return math.MinInt64
}

// tableChange applies row i of b to side's table state and returns the
// side's new row (nil for a delete) and old row (nil when the key had
// none); ok is false when the row changes nothing (no key, or the delete
// of an absent key).
func (j *joinOp) tableChange(side int, b *Batch, i int) (newRow, old []any, ok bool, err error) {
	row := b.Row(i)
	if b.Kind(i)&KeyAbsent != 0 {
		return nil, nil, false, nil
	}
	if b.Kind(i).Base() != NullValue {
		newRow = row
	}
	if j.mat[side] {
		// A delete carries only its key columns: the join key may read
		// value columns that equal them, so it is read from the old row.
		old, _ = b.Old(i)
		keyRow := row
		if newRow == nil && old != nil {
			keyRow = old
		}
		ok = j.joinKey(side, keyRow)
		if ok && j.decoded != nil {
			j.dropDecoded(j.kbuf)
		}
		return newRow, old, ok, nil
	}
	if !j.joinKey(side, row) {
		return nil, nil, false, nil
	}
	if old, err = j.getRow(side, j.kbuf); err != nil {
		return nil, nil, false, err
	}
	if newRow == nil && old == nil {
		return nil, nil, false, nil
	}
	return newRow, old, true, j.keepRow(side, j.kbuf, newRow)
}

// streamTable joins a stream row (port 0) with the table side's current
// row; a table row (port 1) only updates the table. The output has the
// stream row's time.
func (j *joinOp) streamTable(in int, b *Batch, i int) error {
	if in == rightPort {
		_, _, _, err := j.tableChange(rightPort, b, i)
		return err
	}
	row := b.Row(i)
	if b.Kind(i).Base() == NullValue || b.Kind(i)&KeyAbsent != 0 {
		return nil
	}
	if !j.joinKey(leftPort, row) {
		return nil
	}
	right, err := j.getRow(rightPort, j.kbuf)
	if err != nil {
		return err
	}
	if right == nil && !j.preserved[leftPort] {
		return nil
	}
	j.emit(row, right, row, b.Time(i))
	return nil
}

// tableTable applies a change of either table and emits the join result
// of its key as Kafka Streams' KTable-KTable joins do: nothing when the
// join yields no row for the key before nor after the change; otherwise
// the joined row, or a delete of the key when the join no longer yields
// one, each carrying the key's previous result as its old row (so that a
// WHERE after the join retracts only what it passed). The output time is
// the later of the two rows' times.
func (j *joinOp) tableTable(in int, b *Batch, i int) error {
	newRow, old, ok, err := j.tableChange(in, b, i)
	if err != nil || !ok {
		return err
	}
	other, err := j.getRow(1-in, j.kbuf)
	if err != nil {
		return err
	}
	t := b.Time(i)
	if other != nil {
		t = max(t, rowTime(other))
	}
	j.change(j.result(in, newRow, other, b.Row(i), t), j.result(in, old, other, b.Row(i), t), t)
	return nil
}

// result builds the joined row of side's row x and the other side's row
// o, either nil when missing; it is nil when the join yields no row.
func (j *joinOp) result(side int, x, o, trigger []any, t int64) []any {
	l, r := x, o
	if side == rightPort {
		l, r = o, x
	}
	switch {
	case l == nil && r == nil:
		return nil
	case l == nil && !j.preserved[rightPort], r == nil && !j.preserved[leftPort]:
		return nil
	}
	row := j.slab.alloc(j.width)
	j.fill(row, l, r, trigger, t)
	return row
}

// change emits a table join's change from oldOut to newOut: the new row,
// or a delete of the key j.key when there is none but was one.
func (j *joinOp) change(newOut, oldOut []any, t int64) {
	switch {
	case newOut != nil:
		j.out.AppendChange(newOut, oldOut, t, Insert)
	case oldOut != nil:
		row := j.slab.alloc(j.width)
		row[0] = t
		copy(row[topology.PseudoColumns:], j.key[:j.nKey])
		j.out.AppendChange(row, oldOut, t, NullValue)
	}
}

// OnCommit forgets the decoded table rows of a stream-table join when the
// state's memory budget is spent.
func (j *joinOp) OnCommit(context.Context, Emitter) error {
	if j.decoded != nil && j.cache.Budget().Over() {
		j.forgetDecoded()
	}
	return nil
}

// Close gives the decoded table rows' memory back to the budget.
func (j *joinOp) Close(context.Context) error {
	if j.decoded != nil {
		j.forgetDecoded()
	}
	return nil
}

var _ Operator = (*joinOp)(nil)
