package exec

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/state"
)

// windowAggregateOp is a windowed aggregation: the aggregateOp's group
// keys and aggregates, folded per group and window, with Kafka Streams'
// rules for time.
//
//   - Stream time is the largest record time the task has seen (kept in
//     the state table, so it survives a restart).
//   - A time window takes a record while its end plus the grace period is
//     after stream time; a hopping record goes to every window holding it.
//   - A session window takes a record within the gap of it, merging the
//     sessions the record bridges (their rows are deleted downstream with
//     tombstones); a session is late once its end plus gap plus grace is
//     before stream time.
//   - EMIT CHANGES emits every update; EMIT FINAL emits each window once,
//     at the record that takes stream time to its end plus grace, if the
//     window is still within its retention then (a session: always).
//   - Windows leave state once their retention has passed.
//
// State is keyed by the group key and the window: time windows add the
// 8-byte big-endian start, sessions the end then the start (as Kafka
// Streams keys them). A time window's value starts with
// the 8-byte time of its latest row (the largest record time it took).
type windowAggregateOp struct {
	// box boxes the times of output rows.
	box format.Arena
	// counts are the task's counters; late counts the records of the
	// batch being processed that came after a window of theirs closed.
	counts    *counters
	late      int64
	agg       *aggregateOp
	w         topology.Window
	table     string
	cache     *state.TaskCache
	tab       *state.Table
	errs      ErrorSink
	partition int32

	// streamTime is the task's stream time; timeDirty says it moved since
	// it was last written to state.
	streamTime int64
	timeDirty  bool
	// due orders the session windows in state by when they need
	// attention: EMIT FINAL windows by when they close, the others by
	// when their retention ends. Entries whose window is gone are skipped.
	due dueHeap
	// segs holds the time windows in state by their start, which decides
	// when they need attention; starts orders the segments.
	segs   map[int64]*segment
	starts startHeap
	// withOld makes every row carry the window's previous row, for a
	// HAVING filter that follows.
	withOld bool
	// loaded says load has run.
	loaded bool
	// present counts the time windows in state by a hash of their key,
	// so that a new window costs no read of Pebble (a hash shared with
	// another window only costs one).
	present map[uint64]int32
	seed    maphash.Seed
	// sessions holds, by group key, the session windows in state, so that
	// finding the sessions a record merges with reads no Pebble.
	sessions map[string][]span

	out   Batch
	arena []any
	used  int
	key   []byte // the group key of the row at hand
	skey  []byte // a state key
	val   []byte
	accs  []expr.Accumulator
	tmp   []expr.Accumulator
	// reuse says every aggregate's accumulator is an
	// expr.ReusableAccumulator: time windows then load o.accs with a
	// window's state, or fresh, the fresh state, instead of creating
	// accumulators per record.
	reuse bool
	fresh [][]byte
	state []byte // scratch for one accumulator's state
	found []session
}

// session is a stored session window a record may merge with.
type session struct {
	key        []byte
	start, end int64
	value      []byte
	old        []any // its row, when a HAVING filter needs it
}

// span is a window's bounds.
type span struct{ start, end int64 }

// streamTimeKey holds a window table's stream time; a window key is
// always longer than 8 bytes, so it cannot collide.
var streamTimeKey = []byte{0}

// newWindowAggregateOp compiles a windowed Aggregate step; in is its input
// schema.
func newWindowAggregateOp(st topology.Step, in []types.Column) (*windowAggregateOp, error) {
	if st.Window == nil {
		return nil, errors.New("exec: windowed aggregate without a window")
	}
	a, err := newAggregateOp(st, in)
	if err != nil {
		return nil, err
	}
	w := *st.Window
	if w.Size <= 0 || (w.Type != topology.Session && w.Advance <= 0) {
		return nil, fmt.Errorf("exec: invalid window %s", w.String())
	}
	return &windowAggregateOp{
		agg: a, w: w, table: st.StateTable, streamTime: math.MinInt64, present: map[uint64]int32{}, seed: maphash.MakeSeed(),
		segs: map[int64]*segment{}, sessions: map[string][]span{},
		accs: make([]expr.Accumulator, len(a.aggs)), tmp: make([]expr.Accumulator, len(a.aggs)),
	}, nil
}

func (o *windowAggregateOp) Open(ctx context.Context, oc *OpContext) error {
	if err := o.agg.Open(ctx, oc); err != nil {
		return err
	}
	o.cache, o.errs, o.partition, o.counts = oc.State, oc.Errors, oc.Partition, oc.counts
	o.tab = o.cache.Table(o.table)
	if err := o.decode(nil, false, o.accs); err != nil {
		return err
	}
	o.reuse = true
	for _, acc := range o.accs {
		r, ok := acc.(expr.ReusableAccumulator)
		if !ok {
			o.reuse = false
			break
		}
		p, err := r.AppendBinary(nil)
		if err != nil {
			return err
		}
		o.fresh = append(o.fresh, p)
	}
	return nil
}

// load reads the stream time and the schedule of the windows from state:
// at the first batch, once the task has restored its state from the
// changelog.
func (o *windowAggregateOp) load() error {
	o.loaded = true
	v, ok, err := o.tab.Get(streamTimeKey)
	if err != nil {
		return fmt.Errorf("exec: read stream time: %w", err)
	}
	if ok && len(v) == 8 {
		o.streamTime = int64(binary.BigEndian.Uint64(v))
	}
	// Rebuild the schedule of the windows the state holds.
	return o.tab.Scan(nil, nil, func(k, v []byte) bool {
		if len(k) <= 8 {
			return true
		}
		start, end := o.bounds(k)
		if o.w.Type != topology.Session {
			o.addWindow(k[:o.groupLen(k)], start, k)
			return true
		}
		key := string(k)
		o.due.push(dueEntry{at: o.dueAt(start, end), key: key})
		g := key[:o.groupLen(k)]
		o.sessions[g] = append(o.sessions[g], span{start, end})
		return true
	})
}

// bounds returns the window of state key k.
func (o *windowAggregateOp) bounds(k []byte) (start, end int64) {
	if o.w.Type == topology.Session {
		n := len(k)
		return int64(binary.BigEndian.Uint64(k[n-8:])), int64(binary.BigEndian.Uint64(k[n-16 : n-8]))
	}
	start = int64(binary.BigEndian.Uint64(k[len(k)-8:]))
	return start, start + o.w.Size
}

// groupLen is the length of the group key part of state key k.
func (o *windowAggregateOp) groupLen(k []byte) int {
	if o.w.Type == topology.Session {
		return len(k) - 16
	}
	return len(k) - 8
}

// dueAt is the stream time at which window [start, end) needs attention:
// when it closes for EMIT FINAL, else when its retention has passed.
func (o *windowAggregateOp) dueAt(start, end int64) int64 {
	switch {
	case o.w.Type == topology.Session && o.w.Final:
		return end + o.w.Size + o.w.Grace + 1
	case o.w.Type == topology.Session:
		return end + o.w.Retention + 1
	case o.w.Final:
		return end + o.w.Grace
	default:
		return start + o.w.Retention + 1
	}
}

// row returns a fresh output row from the operator's arena.
func (o *windowAggregateOp) row() []any {
	w := topology.PseudoColumns + len(o.agg.groupBy) + 2 + len(o.agg.aggs)
	if o.used+w > len(o.arena) {
		o.arena = make([]any, max(2*len(o.arena), 64*w))
		o.used = 0
	}
	r := o.arena[o.used : o.used+w : o.used+w]
	o.used += w
	return r
}

func (o *windowAggregateOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	if !o.loaded {
		if err := o.load(); err != nil {
			return err
		}
	}
	a := o.agg
	nk := len(a.groupBy)
	o.out.Reset()
	keys := make([]any, 0, nk)
	for i := 0; i < b.Len(); i++ {
		if b.Kind(i).Base() != Insert {
			continue
		}
		in := b.Row(i)
		ts := b.Time(i)
		if ts > o.streamTime {
			o.streamTime, o.timeDirty = ts, true
		}
		keys = keys[:0]
		o.key = o.key[:0]
		ok := true
		for j, ev := range a.groupBy {
			v, err := ev.Eval(in)
			if err != nil {
				o.errs.RowError("error computing group key "+a.keyTexts[j]+": "+err.Error(), in)
				ok = false
				break
			}
			if v == nil {
				ok = false
				break
			}
			p, err := expr.MarshalValue(v, a.keyTypes[j])
			if err != nil {
				o.errs.RowError("cannot encode group key "+a.keyTexts[j]+": "+err.Error(), in)
				ok = false
				break
			}
			o.key = binary.AppendUvarint(o.key, uint64(len(p)))
			o.key = append(o.key, p...)
			keys = append(keys, v)
		}
		if ok {
			var err error
			if o.w.Type == topology.Session {
				err = o.session(in, ts, keys)
			} else {
				err = o.timeWindows(in, ts, keys)
			}
			if err != nil {
				return err
			}
		}
		if err := o.advance(); err != nil {
			return err
		}
	}
	o.counts.addLate(o.late)
	o.late = 0
	if o.timeDirty {
		v := binary.BigEndian.AppendUint64(nil, uint64(o.streamTime))
		if err := o.tab.Put(streamTimeKey, v); err != nil {
			return fmt.Errorf("exec: write stream time: %w", err)
		}
		o.timeDirty = false
	}
	var err error
	if o.out.Len() > 0 {
		err = out.Emit(ctx, &o.out)
	}
	clear(o.arena[:o.used])
	o.used = 0
	return err
}

// timeWindows folds one record into each tumbling or hopping window that
// holds ts and is not closed yet.
func (o *windowAggregateOp) timeWindows(in []any, ts int64, keys []any) error {
	size, adv := o.w.Size, o.w.Advance
	start := max(0, ts-size+adv) / adv * adv
	late := false
	for ; start <= ts; start += adv {
		end := start + size
		if end+o.w.Grace <= o.streamTime {
			// The window has closed: the record is late for it.
			late = true
			continue
		}
		o.skey = binary.BigEndian.AppendUint64(append(o.skey[:0], o.key...), uint64(start))
		// The cache knows the windows written lately; the others are
		// read only when in state.
		v, found, known := o.tab.Cached(o.skey)
		if !known && o.present[maphash.Bytes(o.seed, o.skey)] > 0 {
			var err error
			if v, found, err = o.tab.Get(o.skey); err != nil {
				return fmt.Errorf("exec: read window state: %w", err)
			}
		}
		rowTime, prevTime := ts, ts
		if found {
			if len(v) < 8 {
				return fmt.Errorf("exec: corrupt window state in %s", o.table)
			}
			prevTime = int64(binary.BigEndian.Uint64(v))
			rowTime = max(rowTime, prevTime)
			v = v[8:]
		}
		if err := o.loadAccs(v, found); err != nil {
			return err
		}
		var old []any
		if found && o.withOld && !o.w.Final {
			old = o.makeRow(in, keys, start, end, prevTime, o.accs)
		}
		o.add(in)
		o.val = binary.BigEndian.AppendUint64(o.val[:0], uint64(rowTime))
		var err error
		if o.val, err = o.encode(o.val); err != nil {
			return err
		}
		if err := o.tab.Put(o.skey, append([]byte(nil), o.val...)); err != nil {
			return fmt.Errorf("exec: write window state: %w", err)
		}
		if !found {
			o.addWindow(o.key, start, o.skey)
		}
		if !o.w.Final {
			o.emitRow(in, keys, start, end, rowTime, Insert, old)
		}
	}
	if late {
		o.late++
	}
	return nil
}

// session folds one record into its session, merging the sessions within
// the gap of it.
func (o *windowAggregateOp) session(in []any, ts int64, keys []any) error {
	gap := o.w.Size
	o.found = o.found[:0]
	for _, sp := range o.sessions[string(o.key)] {
		if sp.end < ts-gap || sp.start > ts+gap || sp.end+o.w.Retention < o.streamTime {
			continue
		}
		k := o.sessionKey(nil, sp)
		v, ok, err := o.tab.Get(k)
		if err != nil {
			return fmt.Errorf("exec: read session state: %w", err)
		}
		if !ok {
			return fmt.Errorf("exec: session [%d, %d] of %s is missing from state", sp.start, sp.end, o.table)
		}
		o.found = append(o.found, session{key: k, start: sp.start, end: sp.end, value: v})
	}
	// Merge in the order of the sessions' ends, then starts.
	slices.SortFunc(o.found, func(a, b session) int {
		return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.start, b.start))
	})
	start, end := ts, ts
	if err := o.decode(nil, false, o.accs); err != nil {
		return err
	}
	for i := range o.found {
		s := &o.found[i]
		start, end = min(start, s.start), max(end, s.end)
		if err := o.decode(s.value, true, o.tmp); err != nil {
			return err
		}
		if o.withOld && !o.w.Final {
			s.old = o.makeRow(in, keys, s.start, s.end, s.end, o.tmp)
		}
		for j := range o.accs {
			o.accs[j].Merge(o.tmp[j])
		}
	}
	if end+gap+o.w.Grace < o.streamTime {
		// The merged session has closed: the record is late.
		o.late++
		return nil
	}
	if start != ts || end != ts {
		for _, s := range o.found {
			o.dropSession(o.key, span{s.start, s.end})
			if err := o.tab.Delete(s.key); err != nil {
				return fmt.Errorf("exec: delete session state: %w", err)
			}
			if !o.w.Final {
				o.emitRow(in, keys, s.start, s.end, s.end, NullValue, s.old)
			}
		}
	}
	o.add(in)
	o.skey = o.sessionKey(o.skey[:0], span{start, end})
	if start == ts && end == ts {
		// A session of its own, or the same one again: add it if new.
		o.dropSession(o.key, span{start, end})
	}
	o.sessions[string(o.key)] = append(o.sessions[string(o.key)], span{start, end})
	var err2 error
	if o.val, err2 = o.encode(o.val[:0]); err2 != nil {
		return err2
	}
	if err := o.tab.Put(o.skey, append([]byte(nil), o.val...)); err != nil {
		return fmt.Errorf("exec: write session state: %w", err)
	}
	o.due.push(dueEntry{at: o.dueAt(start, end), key: string(o.skey)})
	if !o.w.Final {
		var old []any
		if start == ts && end == ts && len(o.found) > 0 {
			// The record fell on a session of its own instant: it updates it.
			old = o.found[0].old
		}
		o.emitRow(in, keys, start, end, end, Insert, old)
	}
	return nil
}

// sessionKey appends to buf the state key of session sp of the group
// o.key.
func (o *windowAggregateOp) sessionKey(buf []byte, sp span) []byte {
	buf = binary.BigEndian.AppendUint64(append(buf, o.key...), uint64(sp.end))
	return binary.BigEndian.AppendUint64(buf, uint64(sp.start))
}

// dropSession removes session sp of group g from the index.
func (o *windowAggregateOp) dropSession(g []byte, sp span) {
	list := o.sessions[string(g)]
	for i, x := range list {
		if x == sp {
			list = slices.Delete(list, i, i+1)
			break
		}
	}
	if len(list) == 0 {
		delete(o.sessions, string(g))
		return
	}
	o.sessions[string(g)] = list
}

// advance handles the windows whose time has come at the current stream
// time: EMIT FINAL emits the closed ones (unless their retention passed
// meanwhile); every window leaves state once handled.
func (o *windowAggregateOp) advance() error {
	if o.w.Type != topology.Session {
		return o.advanceTime()
	}
	for len(o.due) > 0 && o.due[0].at <= o.streamTime {
		e := o.due.pop()
		k := []byte(e.key)
		v, ok, err := o.tab.Get(k)
		if err != nil {
			return fmt.Errorf("exec: read window state: %w", err)
		}
		if !ok {
			continue
		}
		start, end := o.bounds(k)
		if at := o.dueAt(start, end); at != e.at {
			// A stale entry of a rebuilt schedule.
			continue
		}
		if o.w.Final && (o.w.Type == topology.Session || start+o.w.Retention >= o.streamTime) {
			if err := o.emitFinal(k, v, start, end); err != nil {
				return err
			}
		}
		o.dropSession(k[:o.groupLen(k)], span{start, end})
		if err := o.tab.Delete(k); err != nil {
			return fmt.Errorf("exec: delete window state: %w", err)
		}
	}
	return nil
}

// addWindow records the time window of group g starting at start, whose
// state key is k, as in state.
func (o *windowAggregateOp) addWindow(g []byte, start int64, k []byte) {
	o.present[maphash.Bytes(o.seed, k)]++
	seg := o.segs[start]
	if seg == nil {
		seg = &segment{}
		o.segs[start] = seg
		o.starts.push(start)
	}
	seg.keys = binary.AppendUvarint(seg.keys, uint64(len(g)))
	seg.keys = append(seg.keys, g...)
}

// advanceTime handles the time windows whose time has come, a segment
// (the windows of one start) at a time, in the order their records
// created them.
func (o *windowAggregateOp) advanceTime() error {
	for len(o.starts) > 0 {
		start := o.starts[0]
		end := start + o.w.Size
		if o.dueAt(start, end) > o.streamTime {
			return nil
		}
		o.starts.pop()
		seg := o.segs[start]
		delete(o.segs, start)
		for ks := seg.keys; len(ks) > 0; {
			n, m := binary.Uvarint(ks)
			if m <= 0 || n > uint64(len(ks)-m) {
				return fmt.Errorf("exec: bug: corrupt window segment in %s", o.table)
			}
			g := ks[m : m+int(n)]
			ks = ks[m+int(n):]
			o.skey = binary.BigEndian.AppendUint64(append(o.skey[:0], g...), uint64(start))
			v, ok, err := o.tab.Get(o.skey)
			if err != nil {
				return fmt.Errorf("exec: read window state: %w", err)
			}
			if !ok {
				continue
			}
			if o.w.Final && start+o.w.Retention >= o.streamTime {
				if err := o.emitFinal(o.skey, v, start, end); err != nil {
					return err
				}
			}
			h := maphash.Bytes(o.seed, o.skey)
			if o.present[h]--; o.present[h] <= 0 {
				delete(o.present, h)
			}
			if err := o.tab.Delete(o.skey); err != nil {
				return fmt.Errorf("exec: delete window state: %w", err)
			}
		}
	}
	return nil
}

// emitFinal emits the final row of the window stored under k with value v.
func (o *windowAggregateOp) emitFinal(k, v []byte, start, end int64) error {
	a := o.agg
	rowTime := end
	if o.w.Type != topology.Session {
		if len(v) < 8 {
			return fmt.Errorf("exec: corrupt window state in %s", o.table)
		}
		rowTime = int64(binary.BigEndian.Uint64(v))
		v = v[8:]
	}
	if err := o.decode(v, true, o.accs); err != nil {
		return err
	}
	keys := make([]any, len(a.groupBy))
	g := k[:o.groupLen(k)]
	for j := range keys {
		n, m := binary.Uvarint(g)
		if m <= 0 || n > uint64(len(g)-m) {
			return fmt.Errorf("exec: corrupt window key in %s", o.table)
		}
		val, err := expr.UnmarshalValue(g[m:m+int(n)], a.keyTypes[j])
		if err != nil {
			return fmt.Errorf("exec: corrupt window key in %s: %w", o.table, err)
		}
		keys[j] = val
		g = g[m+int(n):]
	}
	o.emitRow(nil, keys, start, end, rowTime, Insert, nil)
	return nil
}

// makeRow returns an output row: the pseudo-columns, keys, the window
// bounds, then the results of accs (nulls when accs is nil).
func (o *windowAggregateOp) makeRow(in []any, keys []any, start, end, rowTime int64, accs []expr.Accumulator) []any {
	a := o.agg
	nk := len(keys)
	row := o.row()
	row[0], row[1] = o.box.Int64(rowTime), o.partition
	if a.pseudoIn && in != nil {
		row[1], row[2] = in[1], in[2]
	}
	copy(row[topology.PseudoColumns:], keys)
	row[topology.PseudoColumns+nk] = o.box.Int64(start)
	row[topology.PseudoColumns+nk+1] = o.box.Int64(end)
	for j := range accs {
		res, err := expr.AccumulatorResult(accs[j])
		if err != nil {
			o.errs.RowError("error computing "+a.aggs[j].text+": "+err.Error(), in)
			res = nil
		}
		row[topology.PseudoColumns+nk+2+j] = res
	}
	return row
}

// emitRow appends an output row of window [start, end) with the results
// of o.accs, or a delete of the window for a NullValue kind. When a
// HAVING filter follows, old is the window's previous row (nil for none).
func (o *windowAggregateOp) emitRow(in []any, keys []any, start, end, rowTime int64, kind ChangeKind, old []any) {
	var accs []expr.Accumulator
	if kind == Insert {
		accs = o.accs
	}
	row := o.makeRow(in, keys, start, end, rowTime, accs)
	if o.withOld {
		o.out.AppendChange(row, old, rowTime, kind)
		return
	}
	o.out.Append(row, rowTime, kind)
}

// add folds one input row into o.accs.
func (o *windowAggregateOp) add(in []any) {
	a := o.agg
	for j := range a.aggs {
		c := &a.aggs[j]
		switch len(c.args) {
		case 0:
			o.accs[j].Add(nil)
		case 1:
			v, err := c.args[0].Eval(in)
			if err != nil {
				o.errs.RowError("error computing "+c.argTexts[0]+": "+err.Error(), in)
			}
			o.accs[j].Add(v)
		default:
			vs := make([]any, len(c.args))
			for k, ev := range c.args {
				v, err := ev.Eval(in)
				if err != nil {
					o.errs.RowError("error computing "+c.argTexts[k]+": "+err.Error(), in)
				}
				vs[k] = v
			}
			o.accs[j].Add(vs)
		}
	}
}

// decode fills dst with fresh accumulators, then, when found, their state
// from v: each one's length-prefixed state in the order of the aggregates.
func (o *windowAggregateOp) decode(v []byte, found bool, dst []expr.Accumulator) error {
	a := o.agg
	for j := range a.aggs {
		c := &a.aggs[j]
		acc, err := c.def.New(c.newTypes, c.ret, c.params)
		if err != nil {
			return fmt.Errorf("exec: %s: %w", c.text, err)
		}
		dst[j] = acc
	}
	if !found {
		return nil
	}
	for j := range a.aggs {
		n, k := binary.Uvarint(v)
		if k <= 0 || n > uint64(len(v)-k) {
			return fmt.Errorf("exec: corrupt window state in %s", o.table)
		}
		if err := dst[j].UnmarshalBinary(v[k : k+int(n)]); err != nil {
			return fmt.Errorf("exec: corrupt window state of %s in %s: %w", a.aggs[j].text, o.table, err)
		}
		v = v[k+int(n):]
	}
	if len(v) != 0 {
		return fmt.Errorf("exec: corrupt window state in %s", o.table)
	}
	return nil
}

// loadAccs is decode into o.accs, reusing them when they can.
func (o *windowAggregateOp) loadAccs(v []byte, found bool) error {
	if !o.reuse {
		return o.decode(v, found, o.accs)
	}
	if !found {
		for j, acc := range o.accs {
			if err := acc.UnmarshalBinary(o.fresh[j]); err != nil {
				return fmt.Errorf("exec: bug: fresh state of %s: %w", o.agg.aggs[j].text, err)
			}
		}
		return nil
	}
	for j, acc := range o.accs {
		n, k := binary.Uvarint(v)
		if k <= 0 || n > uint64(len(v)-k) {
			return fmt.Errorf("exec: corrupt window state in %s", o.table)
		}
		if err := acc.UnmarshalBinary(v[k : k+int(n)]); err != nil {
			return fmt.Errorf("exec: corrupt window state of %s in %s: %w", o.agg.aggs[j].text, o.table, err)
		}
		v = v[k+int(n):]
	}
	if len(v) != 0 {
		return fmt.Errorf("exec: corrupt window state in %s", o.table)
	}
	return nil
}

// encode appends the state of o.accs to buf.
func (o *windowAggregateOp) encode(buf []byte) ([]byte, error) {
	for j, acc := range o.accs {
		if r, ok := acc.(expr.ReusableAccumulator); ok {
			var err error
			if o.state, err = r.AppendBinary(o.state[:0]); err != nil {
				return nil, fmt.Errorf("exec: encode state of %s: %w", o.agg.aggs[j].text, err)
			}
			buf = binary.AppendUvarint(buf, uint64(len(o.state)))
			buf = append(buf, o.state...)
			continue
		}
		p, err := acc.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("exec: encode state of %s: %w", o.agg.aggs[j].text, err)
		}
		buf = binary.AppendUvarint(buf, uint64(len(p)))
		buf = append(buf, p...)
	}
	return buf, nil
}

func (o *windowAggregateOp) OnTime(context.Context, StreamTime, Emitter) error { return nil }
func (o *windowAggregateOp) OnCommit(context.Context, Emitter) error           { return nil }
func (o *windowAggregateOp) Close(ctx context.Context) error                   { return o.agg.Close(ctx) }

// segment is the time windows in state that start at the same time: the
// group keys of their state keys, each after its uvarint length.
type segment struct{ keys []byte }

// startHeap is a min-heap of window starts.
type startHeap []int64

func (h *startHeap) push(x int64) {
	*h = append(*h, x)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if q[p] <= q[i] {
			break
		}
		q[p], q[i] = q[i], q[p]
		i = p
	}
}

func (h *startHeap) pop() int64 {
	q := *h
	x := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q[l] < q[m] {
			m = l
		}
		if r < n && q[r] < q[m] {
			m = r
		}
		if m == i {
			break
		}
		q[m], q[i] = q[i], q[m]
		i = m
	}
	*h = q
	return x
}

// dueEntry is a window in state and the stream time at which it needs
// attention.
type dueEntry struct {
	at  int64
	key string
}

// dueHeap is a min-heap of dueEntry by at (without container/heap, whose
// interface would box every entry).
type dueHeap []dueEntry

func (h *dueHeap) push(e dueEntry) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if q[p].at <= q[i].at {
			break
		}
		q[p], q[i] = q[i], q[p]
		i = p
	}
}

func (h *dueHeap) pop() dueEntry {
	q := *h
	e := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q[n] = dueEntry{}
	q = q[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q[l].at < q[m].at {
			m = l
		}
		if r < n && q[r].at < q[m].at {
			m = r
		}
		if m == i {
			break
		}
		q[m], q[i] = q[i], q[m]
		i = m
	}
	*h = q
	return e
}

var _ Operator = (*windowAggregateOp)(nil)
