package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// joinSide is one right input of a task whose stage joins: a task of its
// own for decoding and running the right input's steps, whose rows go into
// the join operator's right port instead of a sink.
//
// A side reads the task's partition of its topic, except the right table
// of a foreign-key join, which every task reads whole (global): any left
// row may reference any right key. A global side's positions are not
// committed under the query's group, which could not tell the tasks
// apart, but kept in the join's foreign-key index table, whose changelog
// restores them with the rest of the task's state (see positionKey).
type joinSide struct {
	*task
	// op is the index of the join operator in the owning task's ops.
	op     int
	global bool
	// table is the state table keeping a global side's positions.
	table string
	// parts are the partitions of the topic the side reads; for each,
	// pos is the position (all before it processed and committed), next
	// the position after the batch being processed, and catchUp the end
	// offset when the task started, for a table side: the task processes
	// no left row before the side has read that far, so that the first
	// left rows see the table as it was loaded (0 for a stream side).
	parts   []int32
	pos     []atomic.Int64
	next    []int64
	catchUp []int64
	// recs are the side's records of the batch being processed, and carry
	// those a round held back (see processJoin). fetched is, per
	// partition, how far the consumer has read it, and ends where it is
	// known to end.
	recs    []*kafka.Record
	carry   []*kafka.Record
	fetched []int64
	ends    []int64
}

// sideStart is where a join side's task starts reading its topic: per
// partition read, the offset and the offset to catch up to. A global
// side's positions kept in state, when there are, replace offsets when the
// task starts running.
type sideStart struct {
	global  bool
	parts   []int32
	offsets []int64
	catchUp []int64
}

// positionKey is the key under which a global side keeps its position in
// partition p: 0xff cannot start a foreign key, which starts with a field
// tag.
func positionKey(p int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{0xff}, uint32(p))
}

// keepPositions writes the positions of t's global sides after the batch
// into their state tables, so that they commit with the state.
func (t *task) keepPositions() error {
	for _, s := range t.sides {
		if !s.global {
			continue
		}
		for n, p := range s.parts {
			if s.next[n] == s.pos[n].Load() {
				continue
			}
			if err := t.cache.Put(s.table, positionKey(p), binary.BigEndian.AppendUint64(nil, uint64(s.next[n]))); err != nil {
				return fmt.Errorf("exec: write join state: %w", err)
			}
		}
	}
	return nil
}

// loadPositions reads the positions t's global sides kept in state, once
// it is restored.
func (t *task) loadPositions() error {
	for _, s := range t.sides {
		if !s.global {
			continue
		}
		for n, p := range s.parts {
			v, ok, err := t.cache.Get(s.table, positionKey(p))
			if err != nil {
				return fmt.Errorf("exec: read join state: %w", err)
			}
			if ok && len(v) == 8 {
				off := int64(binary.BigEndian.Uint64(v))
				s.next[n] = off
				s.pos[n].Store(off)
			}
		}
	}
	return nil
}

// joinSteps returns the indexes of g's Join steps.
func joinSteps(g *topology.Graph) []int {
	var out []int
	for i, st := range g.Steps {
		if st.Kind == topology.Join {
			out = append(out, i)
		}
	}
	return out
}

// addSides builds the right inputs of t's join steps; starts[k] is where
// the k-th join's right input starts reading.
func (t *task) addSides(starts []sideStart) error {
	for k, i := range joinSteps(t.g) {
		spec := t.g.Steps[i].Join
		side := t.st.sides[k]
		rg := side.g
		st := &task{q: t.q, partition: t.partition, nKey: len(rg.Source.Key), nValue: len(rg.Source.Value), tsCol: -1, cache: t.cache, window: rg.Source.Window}
		if st.window != nil {
			st.nWin = 2
		}
		ss := starts[k]
		js := &joinSide{task: st, op: i, global: ss.global, table: spec.ExtraState, parts: ss.parts, pos: make([]atomic.Int64, len(ss.parts)),
			next: append([]int64(nil), ss.offsets...), catchUp: ss.catchUp}
		for n, off := range ss.offsets {
			js.pos[n].Store(off)
		}
		if _, err := newTaskParts(st, side); err != nil {
			return err
		}
		op := i
		st.into = func(ctx context.Context, b *Batch) error {
			return t.ops[op].OnBatch(ctx, rightPort, b, emitterFunc(func(ctx context.Context, b *Batch) error {
				return t.push(ctx, op+1, b)
			}))
		}
		t.sides = append(t.sides, js)
	}
	return nil
}

// sideStarts returns where the right inputs of g's join steps start, for
// each of the left input's parts partitions: the group's committed offset
// (for a global side, see loadPositions), else the query's offset reset; a
// table side first catches up to its end offset.
func sideStarts(ctx context.Context, s *stage, deps Deps, parts int) ([][]sideStart, error) {
	g := s.g
	out := make([][]sideStart, parts)
	for k, i := range joinSteps(g) {
		spec := g.Steps[i].Join
		rg := s.sides[k].g
		topic := rg.Source.Topic
		var bounds []kafka.Offsets
		bctx, cancel := boundedCtx(ctx)
		err := retryKafka(bctx, deps.Logger, "list offsets", func() (err error) {
			bounds, err = deps.Kafka.ListOffsets(bctx, topic)
			return err
		})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("exec: list offsets of %s: %w", topic, err)
		}
		catchUp := func(r int) int64 {
			if spec.RightTable {
				return bounds[r].End
			}
			return 0
		}
		if spec.ForeignKey != nil {
			for p := range out {
				s := sideStart{global: true}
				for r, b := range bounds {
					off := b.End
					if rg.OffsetReset == "earliest" {
						off = b.Start
					}
					s.parts = append(s.parts, int32(r))
					s.offsets = append(s.offsets, off)
					s.catchUp = append(s.catchUp, catchUp(r))
				}
				out[p] = append(out[p], s)
			}
			continue
		}
		if len(bounds) != parts {
			return nil, fmt.Errorf("exec: cannot join %s with %d partitions to %s with %d; the inputs of a join must be co-partitioned",
				g.Source.Name, parts, rg.Source.Name, len(bounds))
		}
		starts, err := startOffsets(ctx, rg, deps)
		if err != nil {
			return nil, err
		}
		for p := range out {
			out[p] = append(out[p], sideStart{parts: []int32{int32(p)}, offsets: []int64{starts[p]}, catchUp: []int64{catchUp(p)}})
		}
	}
	return out, nil
}

// catchingUp reports whether a table side has not yet read up to where
// its topic ended when the task started.
func (t *task) catchingUp() bool {
	for _, s := range t.sides {
		for n, next := range s.next {
			if next < s.catchUp[n] {
				return true
			}
		}
	}
	return false
}

// sideReads reports whether a join side of t reads topic.
func (t *task) sideReads(topic string) bool {
	for _, s := range t.sides {
		if s.g.Source.Topic == topic {
			return true
		}
	}
	return false
}

// assignLeft starts reading the task's source partition, from its
// position, once the table sides it waited for have caught up. Until then
// the consumer reads the sides only: left records polled meanwhile would
// wait in memory, all of them when the topics were loaded ahead of the
// query.
func (t *task) assignLeft() {
	if !t.leftWaits || t.catchingUp() {
		return
	}
	t.leftWaits = false
	t.consumer.Assign(map[string]map[int32]int64{t.g.Source.Topic: {t.partition: t.pos.Load()}})
}

// processJoin is process for a task with join sides: it splits the polled
// records by topic, decodes each input, and runs the rows through the
// operators in record time order across the inputs (ties: the left input
// first, then the sides in order), then produces and commits every
// input's offsets. While a table side catches up, the left input's
// records wait.
//
// Time order holds across polls as Kafka Streams keeps it: no row runs
// while an input the task has no row of has more to come (its consumer
// has not read up to where the input is known to end), since that
// input's next row may be earlier. The other inputs' records wait
// meanwhile (and the decoded rows a round could not run, see carryOver), for
// at most syncWait, or until maxSyncHeld of them wait; then the task runs
// what it has and stops waiting for the ends it did not reach. A foreign
// key join's table side (global) is not waited for: Kafka Streams joins it
// through a topic of its own, without time order.
func (t *task) processJoin(ctx context.Context, recs []*kafka.Record) error {
	var left []*kafka.Record
	for _, s := range t.sides {
		s.recs = append(s.recs[:0], s.carry...)
		clear(s.carry)
		s.carry = s.carry[:0]
	}
	catching := t.catchingUp()
	for _, r := range recs {
		matched := false
		for _, s := range t.sides {
			if r.Topic == s.g.Source.Topic {
				s.recs = append(s.recs, r)
				matched = true
				break
			}
		}
		if !matched {
			left = append(left, r)
		}
	}
	if catching {
		t.held = append(t.held, left...)
		left = nil
	} else if len(t.held) > 0 {
		left = append(t.held, left...)
		t.held = nil
	}
	sync := !catching && !t.forceRun
	t.forceRun = false
	if sync && t.mustWait(left) {
		if t.waitingSince.IsZero() {
			t.waitingSince = time.Now()
		}
		if time.Since(t.waitingSince) < syncWait && t.heldCount(left) < maxSyncHeld {
			t.held = left
			for _, s := range t.sides {
				s.carry = append(s.carry, s.recs...)
			}
			return nil
		}
		t.stopWaiting()
	}
	t.waitingSince = time.Time{}
	t.logged = t.logged[:0]
	carriedIn := len(t.carriedRecs)
	t.polled = t.startRound(left)
	defer func() { t.polled = nil }()
	t.decode(left)
	if t.fatal != nil {
		return t.fatal
	}
	sideIn := make([]int, len(t.sides))
	for k, s := range t.sides {
		sideIn[k] = len(s.carriedRecs)
		s.polled = s.startRound(s.recs)
		s.decode(s.recs)
		if s.fatal != nil {
			return s.fatal
		}
	}
	done, err := t.merge(ctx, sync)
	if err != nil {
		return err
	}
	next := t.pos.Load()
	if n := len(t.polled); n > 0 {
		next = t.polled[n-1].Offset + 1
	}
	if first := t.carryOver(done[0]); first != nil {
		next = first.Offset
	}
	t.stats.in.Add(int64(len(left) + carriedIn - len(t.carriedRecs)))
	if len(left) > 0 {
		t.stats.lastTime.Store(left[len(left)-1].Timestamp.UnixMilli())
	}
	for k, s := range t.sides {
		for _, r := range s.polled {
			if n := s.index(r.Partition); n >= 0 {
				s.next[n] = r.Offset + 1
			}
		}
		s.carryOver(done[k+1])
		for _, r := range s.carriedRecs {
			// The first carried record of a partition is where it resumes.
			if n := s.index(r.Partition); n >= 0 && r.Offset < s.next[n] {
				s.next[n] = r.Offset
			}
		}
		s.stats.in.Add(int64(len(s.recs) + sideIn[k] - len(s.carriedRecs)))
		if len(s.recs) > 0 {
			s.stats.lastTime.Store(s.recs[len(s.recs)-1].Timestamp.UnixMilli())
		}
		s.polled = nil
		t.pending = append(t.pending, s.pending...)
		clear(s.pending)
		s.pending, s.logged = s.pending[:0], s.logged[:0]
	}
	if err := t.keepPositions(); err != nil {
		return err
	}
	if t.cache != nil {
		if err := t.stageCommit(ctx); err != nil {
			return err
		}
	}
	t.orderLog()
	if t.cache != nil {
		if err := t.commitState(ctx, next); err != nil {
			return err
		}
	} else if _, err := t.mode.commit(ctx, next, 0); err != nil {
		return err
	}
	t.pos.Store(next)
	for _, s := range t.sides {
		for n, next := range s.next {
			s.pos[n].Store(next)
		}
	}
	if t.q.deps.Progress != nil {
		t.q.deps.Progress()
	}
	if catching && !t.catchingUp() && len(t.held) > 0 {
		// The tables caught up: run the left records that waited.
		return t.processJoin(ctx, nil)
	}
	return nil
}

// startRound begins a round of a join task's input (the task itself or a
// side's): its batch starts with the rows the last round carried, and it
// returns the records of the round, those rows' first and recs after.
func (t *task) startRound(recs []*kafka.Record) []*kafka.Record {
	t.keepRowRecs = true
	t.in.Reset()
	t.rowRecs = append(t.rowRecs[:0], t.carriedRecs...)
	c := &t.carried
	for i := range c.rows {
		t.in.Append(c.rows[i], c.times[i], c.kinds[i])
		t.in.SetHeaders(i, c.Headers(i))
	}
	c.Reset()
	if len(t.carriedRecs) == 0 {
		return recs
	}
	all := append(append(make([]*kafka.Record, 0, len(t.carriedRecs)+len(recs)), t.carriedRecs...), recs...)
	clear(t.carriedRecs)
	t.carriedRecs = t.carriedRecs[:0]
	return all
}

// carryOver ends a round of a join task's input: the rows after the first
// done stay decoded for the next round (with their records), and it
// returns the first of those records, nil when every row ran. The arena
// the carried rows live in is left to them: the next round decodes into a
// new one.
func (t *task) carryOver(done int) *kafka.Record {
	b := &t.in
	for i := done; i < b.Len(); i++ {
		t.carried.Append(b.rows[i], b.times[i], b.kinds[i])
		t.carried.SetHeaders(i-done, b.Headers(i))
		t.carriedRecs = append(t.carriedRecs, t.rowRecs[i])
	}
	if done < b.Len() {
		t.arena = nil
	} else {
		clear(t.arena)
	}
	b.Reset()
	clear(t.rowRecs)
	t.rowRecs = t.rowRecs[:0]
	if len(t.carriedRecs) == 0 {
		return nil
	}
	return t.carriedRecs[0]
}

// heldCount is how many records a round of t would hold: left's and the
// sides', raw and decoded.
func (t *task) heldCount(left []*kafka.Record) int {
	n := len(left) + len(t.carriedRecs)
	for _, s := range t.sides {
		n += len(s.recs) + len(s.carriedRecs)
	}
	return n
}

// mustWait reports whether the round must wait: some input has records,
// and another has none but more to come.
func (t *task) mustWait(left []*kafka.Record) bool {
	has := len(left) > 0 || len(t.carriedRecs) > 0
	some, empty := has, !has && !t.srcDrained()
	for _, s := range t.sides {
		if s.global {
			continue
		}
		if len(s.recs) > 0 || len(s.carriedRecs) > 0 {
			some = true
		} else if !s.drained() {
			empty = true
		}
	}
	return some && empty
}

// syncWait bounds how long a join task holds rows for an input that is
// known to have more to come but delivers none, and maxSyncHeld how many
// records it holds meanwhile.
const (
	syncWait    = 5 * time.Second
	maxSyncHeld = 50_000
)

// srcDrained reports whether the consumer has read the source partition
// up to where it is known to end.
func (t *task) srcDrained() bool { return t.srcFetched >= t.srcEnd }

// drained reports whether the consumer has read every partition of the
// side up to where it is known to end; a global side always has.
func (s *joinSide) drained() bool {
	if s.global {
		return true
	}
	for n, f := range s.fetched {
		if f < s.ends[n] {
			return false
		}
	}
	return true
}

// stopWaiting gives up the ends the task waited for too long: those its
// inputs are not read up to are taken as reached.
func (t *task) stopWaiting() {
	if !t.srcDrained() {
		t.q.deps.Logger.Warn("join input did not deliver the records it holds; running the others without waiting", "topic", t.g.Source.Topic, "partition", t.partition, "read", t.srcFetched, "end", t.srcEnd)
		t.srcEnd = t.srcFetched
	}
	for _, s := range t.sides {
		for n, f := range s.fetched {
			if f < s.ends[n] {
				t.q.deps.Logger.Warn("join input did not deliver the records it holds; running the others without waiting", "topic", s.g.Source.Topic, "partition", s.parts[n], "read", f, "end", s.ends[n])
				s.ends[n] = f
			}
		}
	}
	t.waitingSince = time.Time{}
}

// noteFetched keeps how far the consumer has read each input of a join
// task, from the records (markers included) a poll returned, and where
// the inputs end, from the consumer when it tells (kafka.EndWatcher).
func (t *task) noteFetched(recs []*kafka.Record) {
	src := t.g.Source.Topic
	for _, r := range recs {
		if r.Topic == src && r.Partition == t.partition && r.Offset >= t.srcFetched {
			t.srcFetched = r.Offset + 1
		}
		for _, s := range t.sides {
			if s.global || r.Topic != s.g.Source.Topic || s.fetched == nil {
				continue
			}
			if n := s.index(r.Partition); n >= 0 && r.Offset >= s.fetched[n] {
				s.fetched[n] = r.Offset + 1
			}
		}
	}
	ew, ok := t.consumer.(kafka.EndWatcher)
	if !ok {
		return
	}
	if end, ok := ew.FetchedEnd(src, t.partition); ok && end > t.srcEnd {
		t.srcEnd = end
	}
	for _, s := range t.sides {
		if s.global || s.ends == nil {
			continue
		}
		for n, p := range s.parts {
			if end, ok := ew.FetchedEnd(s.g.Source.Topic, p); ok && end > s.ends[n] {
				s.ends[n] = end
			}
		}
	}
}

// syncStart sets where a join task's inputs start and end, before its
// consumer first reads them: from their positions to their last stable
// offsets.
func (t *task) syncStart(ctx context.Context) error {
	ends := func(topic string) ([]kafka.Offsets, error) {
		var bounds []kafka.Offsets
		bctx, cancel := boundedCtx(ctx)
		defer cancel()
		err := retryKafka(bctx, t.q.deps.Logger, "list offsets", func() (err error) {
			bounds, err = t.q.deps.Kafka.ListStableOffsets(bctx, topic)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("exec: list offsets of %s: %w", topic, err)
		}
		return bounds, nil
	}
	bounds, err := ends(t.g.Source.Topic)
	if err != nil {
		return err
	}
	t.srcFetched = t.pos.Load()
	t.srcEnd = 0
	if int(t.partition) < len(bounds) {
		t.srcEnd = bounds[t.partition].End
	}
	for _, s := range t.sides {
		s.fetched, s.ends = make([]int64, len(s.parts)), make([]int64, len(s.parts))
		for n := range s.parts {
			s.fetched[n] = s.pos[n].Load()
		}
		if s.global {
			continue
		}
		if bounds, err = ends(s.g.Source.Topic); err != nil {
			return err
		}
		for n, p := range s.parts {
			if int(p) < len(bounds) {
				s.ends[n] = bounds[p].End
			}
		}
	}
	return nil
}

// merge pushes the decoded rows of every input through the operators in
// record time order: runs of consecutive rows of one input go as one
// batch. With sync, it stops where an input has no rows left but more to
// come (see processJoin). It returns how many rows of each input ran.
func (t *task) merge(ctx context.Context, sync bool) ([]int, error) {
	ins := make([]*Batch, 1+len(t.sides))
	ins[0] = &t.in
	for k, s := range t.sides {
		ins[k+1] = &s.in
	}
	idx := make([]int, len(ins))
	// waits reports whether input k has run out of rows with more to come.
	waits := func(k int) bool {
		if !sync || idx[k] < ins[k].Len() {
			return false
		}
		if k == 0 {
			return !t.srcDrained()
		}
		return !t.sides[k-1].drained()
	}
	// before reports whether row r of input k goes before the next row of
	// every other input, and that no input has run out with more to come.
	before := func(k, r int) bool {
		tm := ins[k].Time(r)
		for o, b := range ins {
			if o == k {
				continue
			}
			if waits(o) {
				return false
			}
			if idx[o] >= b.Len() {
				continue
			}
			if ot := b.Time(idx[o]); ot < tm || (ot == tm && o < k) {
				return false
			}
		}
		return true
	}
	var view Batch
	for {
		best := -1
		for k, b := range ins {
			if idx[k] < b.Len() && before(k, idx[k]) {
				best = k
				break
			}
		}
		if best < 0 {
			return idx, nil
		}
		b := ins[best]
		end := idx[best] + 1
		for end < b.Len() && before(best, end) {
			end++
		}
		view.rows, view.times, view.kinds = b.rows[idx[best]:end], b.times[idx[best]:end], b.kinds[idx[best]:end]
		view.olds = nil
		view.hdrs = nil
		if lo := idx[best]; lo < len(b.hdrs) {
			view.hdrs = b.hdrs[lo:min(end, len(b.hdrs))]
		}
		idx[best] = end
		var err error
		if best == 0 {
			err = t.push(ctx, 0, &view)
		} else {
			err = t.sides[best-1].push(ctx, 0, &view)
		}
		if err != nil {
			return nil, err
		}
	}
}

// index returns the index of partition p in s.parts, or -1.
func (s *joinSide) index(p int32) int {
	for n, q := range s.parts {
		if q == p {
			return n
		}
	}
	return -1
}

// assignment adds the partitions s reads to a consumer assignment.
func (s *joinSide) assignment(assign map[string]map[int32]int64) {
	m := assign[s.g.Source.Topic]
	if m == nil {
		m = map[int32]int64{}
		assign[s.g.Source.Topic] = m
	}
	for n, p := range s.parts {
		m[p] = s.pos[n].Load()
	}
}

// sideOffsets adds the positions of t's sides after the batch to the
// group's offsets, but a global side's (see keepPositions).
func (t *task) sideOffsets(group map[string]map[int32]int64) {
	for _, s := range t.sides {
		topic := s.g.Source.Topic
		for n, p := range s.parts {
			if s.global {
				continue
			}
			if group[topic] == nil {
				group[topic] = map[int32]int64{}
			}
			group[topic][p] = s.next[n]
		}
	}
}

// holding reports whether t holds records or rows of its inputs for a
// later round.
func (t *task) holding() bool {
	if len(t.held) > 0 || len(t.carriedRecs) > 0 {
		return true
	}
	for _, s := range t.sides {
		if len(s.carry) > 0 || len(s.carriedRecs) > 0 {
			return true
		}
	}
	return false
}

// waitDue reports whether t has waited syncWait for an input.
func (t *task) waitDue() bool {
	return !t.waitingSince.IsZero() && time.Since(t.waitingSince) >= syncWait
}

// dropHeld forgets what t holds for later rounds, when its consumer reads
// again from its positions, which are before all of it.
func (t *task) dropHeld() {
	t.held = nil
	t.carried.Reset()
	clear(t.carriedRecs)
	t.carriedRecs = t.carriedRecs[:0]
	t.waitingSince = time.Time{}
	t.srcFetched = t.pos.Load()
	for _, s := range t.sides {
		clear(s.carry)
		s.carry = s.carry[:0]
		s.carried.Reset()
		clear(s.carriedRecs)
		s.carriedRecs = s.carriedRecs[:0]
		for n := range s.fetched {
			s.fetched[n] = s.pos[n].Load()
		}
	}
}
