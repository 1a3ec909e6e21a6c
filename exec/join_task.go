package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"

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
	// recs are the side's records of the batch being processed.
	recs []*kafka.Record
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
func (t *task) processJoin(ctx context.Context, recs []*kafka.Record) error {
	var left []*kafka.Record
	for _, s := range t.sides {
		s.recs = s.recs[:0]
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
	t.polled = left
	defer func() { t.polled = nil }()
	t.logged = t.logged[:0]
	t.decode(left)
	if t.fatal != nil {
		return t.fatal
	}
	t.stats.in.Add(int64(len(left)))
	if len(left) > 0 {
		t.stats.lastTime.Store(left[len(left)-1].Timestamp.UnixMilli())
	}
	for _, s := range t.sides {
		s.polled = s.recs
		s.stats.in.Add(int64(len(s.recs)))
		if len(s.recs) > 0 {
			s.stats.lastTime.Store(s.recs[len(s.recs)-1].Timestamp.UnixMilli())
		}
		s.decode(s.recs)
		if s.fatal != nil {
			return s.fatal
		}
	}
	if err := t.merge(ctx); err != nil {
		return err
	}
	clear(t.arena)
	t.in.Reset()
	for _, s := range t.sides {
		clear(s.arena)
		s.in.Reset()
		s.polled = nil
		t.pending = append(t.pending, s.pending...)
		clear(s.pending)
		s.pending, s.logged = s.pending[:0], s.logged[:0]
		for _, r := range s.recs {
			if n := s.index(r.Partition); n >= 0 {
				s.next[n] = r.Offset + 1
			}
		}
	}
	next := t.pos.Load()
	if n := len(left); n > 0 {
		next = left[n-1].Offset + 1
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

// merge pushes the decoded rows of every input through the operators in
// record time order: runs of consecutive rows of one input go as one
// batch.
func (t *task) merge(ctx context.Context) error {
	ins := make([]*Batch, 1+len(t.sides))
	ins[0] = &t.in
	for k, s := range t.sides {
		ins[k+1] = &s.in
	}
	idx := make([]int, len(ins))
	// before reports whether row r of input k goes before the next row of
	// every other input.
	before := func(k, r int) bool {
		tm := ins[k].Time(r)
		for o, b := range ins {
			if o == k || idx[o] >= b.Len() {
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
			return nil
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
			return err
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
