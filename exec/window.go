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
	"github.com/sluice-sql/sluice/internal/eval"
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
	// when they need attention; starts orders the segments; seg is the
	// segment a record went to last.
	segs   map[int64]*segment
	starts startHeap
	seg    *segment
	// newest is the segment of the latest start created so far, nil once
	// it left; hintWins and hintKeys are then its sizes.
	newest             *segment
	hintWins, hintKeys int
	// withOld makes every row carry the window's previous row, for a
	// HAVING filter that follows.
	withOld bool
	// loaded says load has run.
	loaded bool
	// seed hashes group keys for the segments' maps.
	seed maphash.Seed
	// sessions holds, by group key, the session windows in state, so that
	// finding the sessions a record merges with reads no Pebble.
	sessions map[string][]span
	// nLive counts the live time windows of the segments; dirty are
	// those changed since the last OnCommit, which writes them to state;
	// free are slots to reuse.
	nLive int
	dirty []*winSlot
	free  []*winSlot
	// slots, slotAccs and slotKeys are the rest of the chunks newSlot
	// carves slots from.
	slots    []winSlot
	slotAccs []eval.Accumulator
	slotKeys []byte
	// slab is where OnCommit encodes the values it writes, a chunk
	// shared by several windows.
	slab []byte

	out   Batch
	arena []any
	used  int
	key   []byte // the group key of the row at hand
	skey  []byte // a state key
	val   []byte
	accs  []eval.Accumulator
	tmp   []eval.Accumulator
	// reuse says every aggregate's accumulator is an
	// eval.ReusableAccumulator: time windows then load o.accs with a
	// window's state, or fresh, the fresh state, instead of creating
	// accumulators per record.
	reuse bool
	fresh [][]byte
	state []byte // scratch for one accumulator's state or key value
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
		agg: a, w: w, table: st.StateTable, streamTime: math.MinInt64, seed: maphash.MakeSeed(),
		segs: map[int64]*segment{}, sessions: map[string][]span{},
		accs: make([]eval.Accumulator, len(a.aggs)), tmp: make([]eval.Accumulator, len(a.aggs)),
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
		r, ok := acc.(eval.ReusableAccumulator)
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
			g := k[:o.groupLen(k)]
			o.addWindow(o.segment(start), g, maphash.Bytes(o.seed, g))
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
	var nulls int64
	for i := 0; i < b.Len(); i++ {
		if k := b.Kind(i); k.Base() != Insert {
			// A record without a value has nothing to aggregate.
			if k.Base() == NullValue {
				nulls++
			}
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
				o.errs.RowError(nullGroupKey(j), in)
				ok = false
				break
			}
			p, err := expr.AppendValue(o.state[:0], v, a.keyTypes[j])
			if err != nil {
				o.errs.RowError("cannot encode group key "+a.keyTexts[j]+": "+err.Error(), in)
				ok = false
				break
			}
			o.state = p
			o.key = binary.AppendUvarint(o.key, uint64(len(p)))
			o.key = append(o.key, p...)
			keys = append(keys, v)
		}
		if ok {
			from := o.out.Len()
			var err error
			if o.w.Type == topology.Session {
				err = o.session(in, ts, keys)
			} else {
				err = o.timeWindows(in, ts, keys)
			}
			if err != nil {
				return err
			}
			// The changes a record makes carry its headers; the final
			// rows of the windows it closes (EMIT FINAL) carry none.
			o.out.SetHeaders(from, b.Headers(i))
		}
		if err := o.advance(); err != nil {
			return err
		}
	}
	o.counts.addLate(o.late)
	o.counts.addNulls(nulls)
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
	h := maphash.Bytes(o.seed, o.key)
	for ; start <= ts; start += adv {
		end := start + size
		if end+o.w.Grace <= o.streamTime {
			// The window has closed: the record is late for it.
			late = true
			continue
		}
		seg := o.segment(start)
		s, present := seg.slot(h, o.key)
		found := s != nil
		if s == nil {
			var err error
			if s, found, err = o.loadSlot(seg, h, start, present); err != nil {
				return err
			}
		}
		rowTime := ts
		var old []any
		if found {
			rowTime = max(rowTime, s.rowTime)
			if o.withOld && !o.w.Final {
				old = o.makeRow(in, keys, start, end, s.rowTime, s.accs)
			}
		}
		o.add(in, s.accs)
		s.rowTime = rowTime
		if !s.dirty {
			s.dirty = true
			o.dirty = append(o.dirty, s)
		}
		if !found {
			seg.keys = binary.AppendUvarint(seg.keys, uint64(len(o.key)))
			seg.keys = append(seg.keys, o.key...)
		}
		if !o.w.Final {
			o.emitRow(in, keys, start, end, rowTime, Insert, old, s.accs)
		}
	}
	if late {
		o.late++
	}
	return nil
}

// segment returns the segment of the time windows starting at start,
// creating it if needed.
func (o *windowAggregateOp) segment(start int64) *segment {
	if seg := o.seg; seg != nil && seg.start == start {
		return seg
	}
	seg := o.segs[start]
	if seg == nil {
		// The newest segment sizes the next: windows of one size over a
		// steady stream hold about as many groups each, and a map made
		// for them does not grow window by window.
		n, nk := o.hintWins, o.hintKeys
		if last := o.newest; last != nil {
			n, nk = len(last.wins), len(last.keys)
		}
		seg = &segment{start: start, wins: make(map[uint64]*winSlot, n), keys: make([]byte, 0, nk)}
		o.segs[start] = seg
		o.starts.push(start)
		if o.newest == nil || start > o.newest.start {
			o.newest = seg
		}
	}
	o.seg = seg
	return seg
}

// loadSlot makes a live slot in seg for the window of group o.key, whose
// hash is h, holding its state, or fresh accumulators when it has none
// (found false). Only a window whose hash is present in seg can be in
// state, and only one the cache does not know is read from Pebble.
func (o *windowAggregateOp) loadSlot(seg *segment, h uint64, start int64, present bool) (*winSlot, bool, error) {
	o.skey = binary.BigEndian.AppendUint64(append(o.skey[:0], o.key...), uint64(start))
	var v []byte
	found := false
	if present {
		var known bool
		v, found, known = o.tab.Cached(o.skey)
		if !known {
			var err error
			if v, found, err = o.tab.Get(o.skey); err != nil {
				return nil, false, fmt.Errorf("exec: read window state: %w", err)
			}
		}
	}
	var s *winSlot
	if n := len(o.free); n > 0 {
		s = o.free[n-1]
		o.free[n-1] = nil
		o.free = o.free[:n-1]
	} else {
		s = o.newSlot(len(o.skey))
	}
	s.key = append(s.key[:0], o.skey...)
	s.rowTime = math.MinInt64
	if found {
		if len(v) < 8 {
			return nil, false, fmt.Errorf("exec: corrupt window state in %s", o.table)
		}
		s.rowTime = int64(binary.BigEndian.Uint64(v))
		v = v[8:]
	}
	if err := o.loadAccs(v, found, s.accs); err != nil {
		return nil, false, err
	}
	s.next = seg.wins[h]
	seg.wins[h] = s
	seg.nLive++
	o.nLive++
	n := int64(liveGroupBytes(len(s.key), len(s.accs), len(v)))
	seg.liveBytes += n
	o.agg.account(n)
	return s, found, nil
}

// newSlot returns a new slot with room for a key of n bytes, carved
// from chunks of slots, accumulator slices and key bytes.
func (o *windowAggregateOp) newSlot(n int) *winSlot {
	if len(o.slots) == 0 {
		o.slots = make([]winSlot, slotChunk)
		o.slotAccs = make([]eval.Accumulator, slotChunk*len(o.agg.aggs))
	}
	s := &o.slots[0]
	o.slots = o.slots[1:]
	na := len(o.agg.aggs)
	s.accs = o.slotAccs[:na:na]
	o.slotAccs = o.slotAccs[na:]
	if len(o.slotKeys)+n > cap(o.slotKeys) {
		o.slotKeys = make([]byte, 0, max(slotChunk*n, n))
	}
	at := len(o.slotKeys)
	o.slotKeys = o.slotKeys[:at+n]
	s.key = o.slotKeys[at : at : at+n]
	return s
}

// slotChunk is how many slots newSlot allocates at once.
const slotChunk = 64

// recycle keeps slot s, no longer live, for reuse, unless a commit has
// yet to write it.
func (o *windowAggregateOp) recycle(s *winSlot) {
	s.next = nil
	if s.dirty {
		// OnCommit skips and recycles it.
		s.gone = true
		return
	}
	s.gone = false
	if o.reuse {
		o.free = append(o.free, s)
		return
	}
	// Its chunk may live on: let go of the accumulators.
	clear(s.accs)
}

// dropLive forgets the live windows of seg, keeping their hashes.
func (o *windowAggregateOp) dropLive(seg *segment) {
	if seg.nLive == 0 {
		return
	}
	o.nLive -= seg.nLive
	seg.nLive = 0
	o.agg.account(-seg.liveBytes)
	seg.liveBytes = 0
	for h, s := range seg.wins {
		if s == nil {
			continue
		}
		for s != nil {
			next := s.next
			o.recycle(s)
			s = next
		}
		seg.wins[h] = nil
	}
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
				o.emitRow(in, keys, s.start, s.end, s.end, NullValue, s.old, nil)
			}
		}
	}
	o.add(in, o.accs)
	o.skey = o.sessionKey(o.skey[:0], span{start, end})
	if start == ts && end == ts {
		// A session of its own, or the same one again: add it if new.
		o.dropSession(o.key, span{start, end})
	}
	o.sessions[string(o.key)] = append(o.sessions[string(o.key)], span{start, end})
	var err2 error
	if o.val, err2 = o.encode(o.val[:0], o.accs); err2 != nil {
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
		o.emitRow(in, keys, start, end, end, Insert, old, o.accs)
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

// addWindow records the time window of group g in seg, whose hash is h,
// as in state.
func (o *windowAggregateOp) addWindow(seg *segment, g []byte, h uint64) {
	if _, ok := seg.wins[h]; !ok {
		seg.wins[h] = nil
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
		if o.seg == seg {
			o.seg = nil
		}
		if o.newest == seg {
			o.newest, o.hintWins, o.hintKeys = nil, len(seg.wins), len(seg.keys)
		}
		final := o.w.Final && start+o.w.Retention >= o.streamTime
		for ks := seg.keys; len(ks) > 0; {
			n, m := binary.Uvarint(ks)
			if m <= 0 || n > uint64(len(ks)-m) {
				return fmt.Errorf("exec: bug: corrupt window segment in %s", o.table)
			}
			g := ks[m : m+int(n)]
			ks = ks[m+int(n):]
			o.skey = binary.BigEndian.AppendUint64(append(o.skey[:0], g...), uint64(start))
			if s, _ := seg.slot(maphash.Bytes(o.seed, g), g); s != nil {
				if final {
					if err := o.emitSlot(s, start, end); err != nil {
						return err
					}
				}
			} else if final {
				// Only a final row needs the window's state: the others
				// are deleted unread, as each window of the segment is in
				// state.
				v, ok, err := o.tab.Get(o.skey)
				if err != nil {
					return fmt.Errorf("exec: read window state: %w", err)
				}
				if !ok {
					continue
				}
				if err := o.emitFinal(o.skey, v, start, end); err != nil {
					return err
				}
			}
			if err := o.tab.Delete(o.skey); err != nil {
				return fmt.Errorf("exec: delete window state: %w", err)
			}
		}
		o.dropLive(seg)
	}
	return nil
}

// emitFinal emits the final row of the window stored under k with value v.
func (o *windowAggregateOp) emitFinal(k, v []byte, start, end int64) error {
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
	keys, err := o.groupKeys(k)
	if err != nil {
		return err
	}
	o.emitRow(nil, keys, start, end, rowTime, Insert, nil, o.accs)
	return nil
}

// emitSlot emits the final row of the live time window s.
func (o *windowAggregateOp) emitSlot(s *winSlot, start, end int64) error {
	keys, err := o.groupKeys(s.key)
	if err != nil {
		return err
	}
	o.emitRow(nil, keys, start, end, s.rowTime, Insert, nil, s.accs)
	return nil
}

// groupKeys decodes the group key values of state key k.
func (o *windowAggregateOp) groupKeys(k []byte) ([]any, error) {
	a := o.agg
	keys := make([]any, len(a.groupBy))
	g := k[:o.groupLen(k)]
	for j := range keys {
		n, m := binary.Uvarint(g)
		if m <= 0 || n > uint64(len(g)-m) {
			return nil, fmt.Errorf("exec: corrupt window key in %s", o.table)
		}
		val, err := expr.UnmarshalValue(g[m:m+int(n)], a.keyTypes[j])
		if err != nil {
			return nil, fmt.Errorf("exec: corrupt window key in %s: %w", o.table, err)
		}
		keys[j] = val
		g = g[m+int(n):]
	}
	return keys, nil
}

// makeRow returns an output row: the pseudo-columns, keys, the window
// bounds, then the results of accs (nulls when accs is nil).
func (o *windowAggregateOp) makeRow(in []any, keys []any, start, end, rowTime int64, accs []eval.Accumulator) []any {
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
		if r, ok := accs[j].(eval.NumberResult); ok {
			// A number is boxed from the operator's arena.
			if i, f, isInt, ok := r.NumberResult(); ok {
				if isInt {
					row[topology.PseudoColumns+nk+2+j] = o.box.Int64(i)
				} else {
					row[topology.PseudoColumns+nk+2+j] = o.box.Float64(f)
				}
				continue
			}
		}
		res, err := eval.AccumulatorResult(accs[j])
		if err != nil {
			o.errs.RowError("error computing "+a.aggs[j].text+": "+err.Error(), in)
			res = nil
		}
		row[topology.PseudoColumns+nk+2+j] = res
	}
	return row
}

// emitRow appends an output row of window [start, end) with the results
// of accs, or a delete of the window for a NullValue kind. When a HAVING
// filter follows, old is the window's previous row (nil for none).
func (o *windowAggregateOp) emitRow(in []any, keys []any, start, end, rowTime int64, kind ChangeKind, old []any, accs []eval.Accumulator) {
	if kind != Insert {
		accs = nil
	}
	row := o.makeRow(in, keys, start, end, rowTime, accs)
	if o.withOld {
		o.out.AppendChange(row, old, rowTime, kind)
		return
	}
	o.out.Append(row, rowTime, kind)
}

// add folds one input row into accs.
func (o *windowAggregateOp) add(in []any, accs []eval.Accumulator) {
	a := o.agg
	for j := range a.aggs {
		c := &a.aggs[j]
		switch len(c.args) {
		case 0:
			accs[j].Add(nil)
		case 1:
			v, err := c.args[0].Eval(in)
			if err != nil {
				o.errs.RowError("error computing "+c.argTexts[0]+": "+err.Error(), in)
			}
			accs[j].Add(v)
		default:
			vs := make([]any, len(c.args))
			for k, ev := range c.args {
				v, err := ev.Eval(in)
				if err != nil {
					o.errs.RowError("error computing "+c.argTexts[k]+": "+err.Error(), in)
				}
				vs[k] = v
			}
			accs[j].Add(vs)
		}
	}
}

// decode fills dst with fresh accumulators, then, when found, their state
// from v: each one's length-prefixed state in the order of the aggregates.
func (o *windowAggregateOp) decode(v []byte, found bool, dst []eval.Accumulator) error {
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

// loadAccs is decode into accs, reusing their accumulators when they
// can.
func (o *windowAggregateOp) loadAccs(v []byte, found bool, accs []eval.Accumulator) error {
	if !o.reuse || len(accs) > 0 && accs[0] == nil {
		return o.decode(v, found, accs)
	}
	if !found {
		for j, acc := range accs {
			if err := acc.UnmarshalBinary(o.fresh[j]); err != nil {
				return fmt.Errorf("exec: bug: fresh state of %s: %w", o.agg.aggs[j].text, err)
			}
		}
		return nil
	}
	for j, acc := range accs {
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

// encode appends the state of accs to buf.
func (o *windowAggregateOp) encode(buf []byte, accs []eval.Accumulator) ([]byte, error) {
	for j, acc := range accs {
		if r, ok := acc.(eval.ReusableAccumulator); ok {
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

// OnCommit writes every time window changed since the last commit to the
// state table: the 8-byte time of its latest row, then each aggregate's
// length-prefixed state. The values are encoded into chunks shared by
// several windows, as the cache keeps them. Once the live windows are
// more than maxLiveWindows, it forgets those of the oldest segments; all
// of them while the state's memory budget is over.
func (o *windowAggregateOp) OnCommit(context.Context, Emitter) error {
	for _, s := range o.dirty {
		s.dirty = false
		if s.gone {
			// Its window left state since it changed.
			o.recycle(s)
			continue
		}
		var err error
		o.val = binary.BigEndian.AppendUint64(o.val[:0], uint64(s.rowTime))
		if o.val, err = o.encode(o.val, s.accs); err != nil {
			return err
		}
		if len(o.slab)+len(o.val) > cap(o.slab) {
			o.slab = make([]byte, 0, max(slabChunk, len(o.val)))
		}
		at := len(o.slab)
		o.slab = append(o.slab, o.val...)
		v := o.slab[at:len(o.slab):len(o.slab)]
		if err := o.tab.Put(s.key, v); err != nil {
			return fmt.Errorf("exec: write window state: %w", err)
		}
	}
	clear(o.dirty)
	o.dirty = o.dirty[:0]
	// Past a bound, forget the oldest segments' windows first (the newest
	// take the records to come): down to half the count bound, and until
	// the memory budget is no longer spent.
	budget := o.agg.cache.Budget()
	if o.nLive > maxLiveWindows || budget.Over() {
		starts := slices.Clone(o.starts)
		slices.Sort(starts)
		for _, start := range starts {
			if o.nLive <= maxLiveWindows/2 && !budget.Over() {
				break
			}
			o.dropLive(o.segs[start])
		}
	}
	return nil
}

// slabChunk is the size of the chunks OnCommit encodes window values
// into: small, so that a value the cache keeps long holds little memory
// of others alive, yet shared by a few dozen windows.
const slabChunk = 512

// maxLiveWindows bounds how many time windows the operator keeps decoded
// between commits.
var maxLiveWindows = 100_000

// winSlot is a live time window: its decoded state, and its place in the
// live index.
type winSlot struct {
	key     []byte // the state key: the group key, then the 8-byte start
	rowTime int64  // the time of its latest row
	accs    []eval.Accumulator
	dirty   bool     // changed since the last OnCommit
	gone    bool     // dirty, but its window left state
	next    *winSlot // another live window of the same group hash
}

func (o *windowAggregateOp) Close(ctx context.Context) error { return o.agg.Close(ctx) }

// segment is the time windows in state that start at the same time.
type segment struct {
	start int64
	// keys are the group keys of the windows, each after its uvarint
	// length, in the order the windows were created.
	keys []byte
	// wins holds every window of the segment in state by the hash of its
	// group key: the live ones (decoded, so that a record touches one map
	// and a busy window is neither decoded nor encoded per record) chained
	// from their hash, the others as a nil entry. A window whose hash has
	// no entry is not in state, so a new window costs no read of Pebble
	// (a hash shared with another window only costs one).
	wins map[uint64]*winSlot
	// nLive counts the live windows in wins, and liveBytes estimates
	// their memory (see liveGroupBytes), counted in the state's budget.
	nLive     int
	liveBytes int64
}

// slot returns the live window of group g, whose hash is h, or nil, and
// whether seg holds h: whether a window that is not live may be in state.
func (seg *segment) slot(h uint64, g []byte) (*winSlot, bool) {
	head, ok := seg.wins[h]
	for s := head; s != nil; s = s.next {
		if string(s.key[:len(s.key)-8]) == string(g) {
			return s, true
		}
	}
	return nil, ok
}

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
