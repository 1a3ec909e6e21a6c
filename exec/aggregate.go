package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/state"
)

// aggregateOp groups rows by key and folds them into one accumulator per
// aggregate and group, kept in a state table of the task's TaskCache. Each
// input row emits its group's new row: the pseudo-columns, the key values,
// then one result per aggregate.
//
// A group's row time is the largest time of the records it took, as Kafka
// Streams keeps it for an aggregation: the time of its rows (ROWTIME) and
// of the records they emit. Its state value is each aggregate's state,
// length-prefixed, in the order of the aggregates, then that time as 8
// bytes big-endian. A value written before groups kept their time ends
// after the aggregates: the group's time is unknown (noRowTime) until it
// takes its next record, whose time it then gets.
type aggregateOp struct {
	// box boxes the times of output rows.
	box       format.Arena
	groupBy   []eval.Evaluator
	keyTypes  []*types.Type
	keyTexts  []string
	aggs      []aggCall
	table     string
	pseudoIn  bool // the input rows start with the pseudo-columns
	partition int32
	cache     *state.TaskCache
	errs      ErrorSink
	counts    *counters
	out       Batch
	arena     []any
	key       []byte
	part      []byte // scratch for one group key value
	accs      []eval.Accumulator
	found     bool // load found the group's state
	// val is where OnCommit encodes a group's state, and slab the chunk
	// it copies the values it writes into (see slabChunk).
	val, slab []byte
	// live holds decoded groups between records, cur the one loaded
	// last, dirty those changed since the last OnCommit.
	live  map[string]*liveGroup
	cur   *liveGroup
	dirty []*liveGroup
	// liveBytes estimates the memory of the live groups, counted in the
	// state's memory budget.
	liveBytes int64
	// changes is the state of aggregating a table's changes and of
	// emitting old rows: see table_aggregate.go.
	changes changeState
}

// aggCall is one compiled aggregate of the step.
type aggCall struct {
	def      *eval.Aggregate
	text     string
	args     []eval.Evaluator
	argTexts []string
	argTypes []*types.Type
	// newTypes are the types of every argument, value and literal, as
	// Check and New take them.
	newTypes []*types.Type
	ret      *types.Type
	params   []any
}

// newAggregateOp compiles an Aggregate step; in is its input schema.
func newAggregateOp(st topology.Step, in []types.Column) (*aggregateOp, error) {
	if st.StateTable == "" {
		return nil, errors.New("exec: aggregate step without a state table")
	}
	op := &aggregateOp{table: st.StateTable}
	op.pseudoIn = len(in) >= topology.PseudoColumns &&
		in[0].Name == topology.RowTime && in[1].Name == topology.RowPartition && in[2].Name == topology.RowOffset
	for _, e := range st.GroupBy {
		ev, err := eval.Compile(e)
		if err != nil {
			return nil, err
		}
		op.groupBy = append(op.groupBy, ev)
		op.keyTypes = append(op.keyTypes, e.Type)
		op.keyTexts = append(op.keyTexts, e.String())
	}
	for _, a := range st.Aggs {
		def, ok := eval.LookupAggregate(a.Func)
		if !ok {
			return nil, fmt.Errorf("exec: unknown aggregate %s", a.Func)
		}
		c := aggCall{def: def, text: a.Func}
		var checkTypes []*types.Type
		for _, e := range a.Args {
			ev, err := eval.Compile(e)
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, ev)
			c.argTexts = append(c.argTexts, e.String())
			c.argTypes = append(c.argTypes, e.Type)
		}
		checkTypes = append(checkTypes, c.argTypes...)
		for _, p := range a.Params {
			ev, err := eval.Compile(p)
			if err != nil {
				return nil, err
			}
			v, err := ev.Eval(nil)
			if err != nil {
				return nil, fmt.Errorf("exec: parameter %s of %s: %w", p, a.Func, err)
			}
			c.params = append(c.params, v)
			checkTypes = append(checkTypes, p.Type)
		}
		if a.Limit > 0 {
			// The configured limit follows the literal arguments, as
			// New takes it; Check does not see it.
			c.params = append(c.params, a.Limit)
		}
		ret, err := def.Check(checkTypes)
		if err != nil {
			return nil, fmt.Errorf("exec: %s: %w", a.Func, err)
		}
		c.ret = ret
		c.newTypes = checkTypes
		// Fail at open rather than on the first row if the call is invalid.
		if _, err := def.New(c.newTypes, c.ret, c.params); err != nil {
			return nil, fmt.Errorf("exec: %s: %w", a.Func, err)
		}
		op.aggs = append(op.aggs, c)
	}
	op.accs = make([]eval.Accumulator, len(op.aggs))
	if st.Regroup {
		w, ok := topology.RegroupWidth(in, len(st.GroupBy))
		if !ok || w == 0 {
			return nil, errors.New("exec: regrouping aggregate over rows that are not change records")
		}
		op.changes.regroup = w
	}
	return op, nil
}

func (a *aggregateOp) Open(_ context.Context, oc *OpContext) error {
	if oc.State == nil {
		return errors.New("exec: an aggregate needs a state store")
	}
	a.cache = oc.State
	a.errs, a.counts = oc.Errors, oc.counts
	a.partition = oc.Partition
	return nil
}

func (a *aggregateOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	nk := len(a.groupBy)
	w := topology.PseudoColumns + nk + len(a.aggs)
	n := b.Len()
	if cap(a.arena) < n*w {
		a.arena = make([]any, n*w)
	}
	arena := a.arena[:n*w]
	a.out.Reset()
	used := 0
	var nulls int64
	a.changes.slab.reset()
	// The rows row i makes carry its record's headers; they are given
	// when the next row starts, whatever way this one ends.
	var carry headerCarry
rows:
	for i := 0; i < n; i++ {
		carry.next(&a.out, b, i)
		if a.changes.regroup > 0 && b.Kind(i).Base() == Insert {
			if err := a.onRecord(b, i); err != nil {
				return err
			}
			continue
		}
		if b.Kind(i)&OldKnown != 0 {
			if err := a.onChange(b, i); err != nil {
				return err
			}
			continue
		}
		if k := b.Kind(i); k.Base() != Insert {
			// A stream's record without a value has nothing to
			// aggregate: Kafka Streams' aggregation skips it.
			if k.Base() == NullValue && k&Filtered == 0 {
				nulls++
			}
			continue
		}
		in := b.Row(i)
		row := arena[used*w : (used+1)*w : (used+1)*w]
		row[1] = a.partition
		row[2] = nil
		if a.pseudoIn {
			row[1], row[2] = in[1], in[2]
		}
		a.key = a.key[:0]
		for j, ev := range a.groupBy {
			v, err := ev.Eval(in)
			if err != nil {
				a.errs.RowError("error computing group key "+a.keyTexts[j]+": "+err.Error(), in)
				continue rows
			}
			if v == nil {
				// ksqlDB drops and logs rows whose group key has a null.
				a.errs.RowError(nullGroupKey(j), in)
				continue rows
			}
			p, err := expr.AppendValue(a.part[:0], v, a.keyTypes[j])
			if err != nil {
				a.errs.RowError("cannot encode group key "+a.keyTexts[j]+": "+err.Error(), in)
				continue rows
			}
			a.part = p
			a.key = binary.AppendUvarint(a.key, uint64(len(p)))
			a.key = append(a.key, p...)
			row[topology.PseudoColumns+j] = v
		}
		if err := a.load(); err != nil {
			return err
		}
		ts := a.touch(b.Time(i))
		row[0] = a.box.Int64(ts)
		old := a.oldRow(row)
		for j := range a.aggs {
			c := &a.aggs[j]
			switch len(c.args) {
			case 0:
				a.accs[j].Add(nil)
			case 1:
				v, err := c.args[0].Eval(in)
				if err != nil {
					a.errs.RowError("error computing "+c.argTexts[0]+": "+err.Error(), in)
				}
				a.accs[j].Add(v)
			default:
				vs := make([]any, len(c.args))
				for k, ev := range c.args {
					v, err := ev.Eval(in)
					if err != nil {
						a.errs.RowError("error computing "+c.argTexts[k]+": "+err.Error(), in)
					}
					vs[k] = v
				}
				a.accs[j].Add(vs)
			}
			res, err := eval.AccumulatorResult(a.accs[j])
			if err != nil {
				a.errs.RowError("error computing "+c.text+": "+err.Error(), in)
				res = nil
			}
			row[topology.PseudoColumns+nk+j] = res
		}
		if err := a.store(); err != nil {
			return err
		}
		a.emit(row, old, ts)
		used++
	}
	carry.done(&a.out)
	a.counts.addNulls(nulls)
	var err error
	if a.out.Len() > 0 {
		err = out.Emit(ctx, &a.out)
	}
	clear(arena)
	return err
}

// load makes a.accs the accumulators of the group a.key: live ones kept
// since an earlier record, else decoded from the state table, else empty
// ones for a new group.
func (a *aggregateOp) load() error {
	if g, ok := a.live[string(a.key)]; ok {
		a.cur, a.accs, a.found = g, g.accs, g.stored
		return nil
	}
	v, ok, err := a.cache.Get(a.table, a.key)
	if err != nil {
		return fmt.Errorf("exec: read aggregate state: %w", err)
	}
	ts, err := a.decodeState(v, ok)
	if err != nil {
		return err
	}
	if a.live == nil {
		a.live = map[string]*liveGroup{}
	}
	g := &liveGroup{key: string(a.key), accs: a.accs, stored: ok, rowTime: ts}
	g.bytes = liveGroupBytes(len(g.key), len(a.accs), len(v))
	a.account(int64(g.bytes))
	a.live[g.key] = g
	a.cur = g
	return nil
}

// noRowTime is the row time of a group that has none: a new group, or one
// whose state was written before groups kept their time.
const noRowTime = math.MinInt64

// decodeState makes a.accs fresh accumulators of a group from its stored
// state v, or empty ones when ok is false, and returns the group's row
// time (noRowTime when v keeps none).
func (a *aggregateOp) decodeState(v []byte, ok bool) (int64, error) {
	a.accs = make([]eval.Accumulator, len(a.aggs))
	for j := range a.aggs {
		c := &a.aggs[j]
		acc, err := c.def.New(c.newTypes, c.ret, c.params)
		if err != nil {
			return noRowTime, fmt.Errorf("exec: %s: %w", c.text, err)
		}
		a.accs[j] = acc
	}
	a.found = ok
	if !ok {
		return noRowTime, nil
	}
	for j := range a.aggs {
		n, k := binary.Uvarint(v)
		if k <= 0 || n > uint64(len(v)-k) {
			return noRowTime, fmt.Errorf("exec: corrupt aggregate state in %s", a.table)
		}
		if err := a.accs[j].UnmarshalBinary(v[k : k+int(n)]); err != nil {
			return noRowTime, fmt.Errorf("exec: corrupt aggregate state of %s in %s: %w", a.aggs[j].text, a.table, err)
		}
		v = v[k+int(n):]
	}
	switch len(v) {
	case 0:
		// Written before groups kept their time.
		return noRowTime, nil
	case 8:
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	return noRowTime, fmt.Errorf("exec: corrupt aggregate state in %s", a.table)
}

// touch gives the group loaded last a record of time ts and returns the
// group's new row time: the larger of ts and its time so far.
func (a *aggregateOp) touch(ts int64) int64 {
	g := a.cur
	g.rowTime = max(g.rowTime, ts)
	return g.rowTime
}

// store marks the group loaded last as changed; OnCommit writes it to the
// state table.
func (a *aggregateOp) store() error {
	g := a.cur
	g.stored = true
	if !g.dirty {
		g.dirty = true
		a.dirty = append(a.dirty, g)
	}
	return nil
}

// OnCommit writes every changed group's state to the state table (see
// aggregateOp), the values encoded into chunks shared by several groups,
// and forgets the live groups when they are more than maxLiveGroups.
func (a *aggregateOp) OnCommit(context.Context, Emitter) error {
	for _, g := range a.dirty {
		a.val = a.val[:0]
		for j, acc := range g.accs {
			if r, ok := acc.(eval.ReusableAccumulator); ok {
				var err error
				if a.part, err = r.AppendBinary(a.part[:0]); err != nil {
					return fmt.Errorf("exec: encode state of %s: %w", a.aggs[j].text, err)
				}
				a.val = binary.AppendUvarint(a.val, uint64(len(a.part)))
				a.val = append(a.val, a.part...)
				continue
			}
			p, err := acc.MarshalBinary()
			if err != nil {
				return fmt.Errorf("exec: encode state of %s: %w", a.aggs[j].text, err)
			}
			a.val = binary.AppendUvarint(a.val, uint64(len(p)))
			a.val = append(a.val, p...)
		}
		a.val = binary.BigEndian.AppendUint64(a.val, uint64(g.rowTime))
		if len(a.slab)+len(a.val) > cap(a.slab) {
			a.slab = make([]byte, 0, max(slabChunk, len(a.val)))
		}
		at := len(a.slab)
		a.slab = append(a.slab, a.val...)
		v := a.slab[at:len(a.slab):len(a.slab)]
		if err := a.cache.Put(a.table, []byte(g.key), v); err != nil {
			return fmt.Errorf("exec: write aggregate state: %w", err)
		}
		g.dirty = false
		n := liveGroupBytes(len(g.key), len(g.accs), len(v))
		a.account(int64(n - g.bytes))
		g.bytes = n
	}
	clear(a.dirty)
	a.dirty = a.dirty[:0]
	if len(a.live) > maxLiveGroups || a.cache.Budget().Over() {
		a.dropLive()
	}
	return nil
}

// maxLiveGroups bounds how many groups an aggregate keeps decoded between
// commits; the state's memory budget bounds their bytes.
const maxLiveGroups = 100_000

// liveGroupBytes estimates the memory of a live group of a key of
// keyLen bytes and n accumulators whose encoded state takes stateLen
// bytes: the group and its map slot, each accumulator's object, and its
// decoded values, which take about twice their encoding.
func liveGroupBytes(keyLen, n, stateLen int) int {
	return keyLen + 128 + 64*n + 2*stateLen
}

// account adds n bytes to the live groups' estimate and to the budget.
func (a *aggregateOp) account(n int64) {
	a.liveBytes += n
	a.cache.Budget().Add(n)
}

// dropLive forgets the live groups; their state is in the cache.
func (a *aggregateOp) dropLive() {
	clear(a.live)
	a.cur = nil
	a.account(-a.liveBytes)
}

// liveGroup is a group's decoded accumulators, kept between records so
// that a busy group is not decoded and encoded on every row.
type liveGroup struct {
	key     string
	accs    []eval.Accumulator
	rowTime int64 // the largest time of its records, or noRowTime
	stored  bool  // the group has state (stored, or to store at commit)
	dirty   bool  // changed since the last OnCommit
	bytes   int   // estimated memory (see liveGroupBytes)
}

func (a *aggregateOp) Close(context.Context) error {
	if a.cache != nil {
		a.dropLive()
	}
	return nil
}

var _ Operator = (*aggregateOp)(nil)
