package exec

import (
	"context"
	"fmt"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// joinStateTables returns the state tables a Join step keeps, as state
// steps: each side's rows, the unmatched rows of a stream-stream join and
// the foreign-key index of a foreign-key join. The last two are named
// after the left state table and its changelog (see OuterStateTable and
// ForeignKeyIndexTable).
func joinStateTables(spec *topology.JoinSpec) []topology.Step {
	var out []topology.Step
	if spec.LeftState != "" {
		out = append(out, topology.Step{Kind: topology.Join, StateTable: spec.LeftState, Changelog: spec.LeftChangelog})
	}
	if spec.RightState != "" {
		out = append(out, topology.Step{Kind: topology.Join, StateTable: spec.RightState, Changelog: spec.RightChangelog})
	}
	switch {
	case spec.ForeignKey != nil:
		out = append(out, topology.Step{Kind: topology.Join, StateTable: ForeignKeyIndexTable(spec), Changelog: ForeignKeyIndexChangelog(spec)})
	case !spec.LeftTable && !spec.RightTable:
		out = append(out, topology.Step{Kind: topology.Join, StateTable: OuterStateTable(spec), Changelog: OuterChangelog(spec)})
	}
	return out
}

// joinSide is one right input of a task whose stage joins: a task of its
// own for decoding and running the right input's steps, whose rows go into
// the join operator's right port instead of a sink.
type joinSide struct {
	*task
	// op is the index of the join operator in the owning task's ops.
	op int
	// catchUp is the right topic's end offset when the task started, for
	// a table side: the task processes no left row before the side has
	// read that far, so that the first left rows see the table as it was
	// loaded. 0 for a stream side.
	catchUp int64
	// recs are the side's records of the batch being processed, next the
	// offset after them.
	recs []*kafka.Record
	next int64
}

// sideStart is where a join side's task starts reading its topic.
type sideStart struct {
	offset, catchUp int64
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
		rs := stages(rightGraph(t.g, spec))
		rg := rs[len(rs)-1]
		st := &task{q: t.q, partition: t.partition, nKey: len(rg.Source.Key), nValue: len(rg.Source.Value), tsCol: -1, cache: t.cache}
		side := &joinSide{task: st, op: i, catchUp: starts[k].catchUp, next: starts[k].offset}
		st.pos.Store(starts[k].offset)
		if _, err := newTaskParts(st, rg); err != nil {
			return err
		}
		op := i
		st.into = func(ctx context.Context, b *Batch) error {
			return t.ops[op].OnBatch(ctx, rightPort, b, emitterFunc(func(ctx context.Context, b *Batch) error {
				return t.push(ctx, op+1, b)
			}))
		}
		t.sides = append(t.sides, side)
	}
	return nil
}

// sideStarts returns where the right inputs of g's join steps start, for
// each partition: the group's committed offset, else the query's offset
// reset, and for a table side the end offset to catch up to first.
func sideStarts(ctx context.Context, g *topology.Graph, deps Deps) ([][]sideStart, error) {
	var out [][]sideStart
	for _, i := range joinSteps(g) {
		spec := g.Steps[i].Join
		rs := stages(rightGraph(g, spec))
		rg := rs[len(rs)-1]
		starts, err := startOffsets(ctx, rg, deps)
		if err != nil {
			return nil, err
		}
		var ends []kafka.Offsets
		if spec.RightTable {
			if ends, err = deps.Kafka.ListOffsets(ctx, rg.Source.Topic); err != nil {
				return nil, fmt.Errorf("exec: list offsets of %s: %w", rg.Source.Topic, err)
			}
		}
		for p, off := range starts {
			for len(out) <= p {
				out = append(out, nil)
			}
			s := sideStart{offset: off}
			if p < len(ends) {
				s.catchUp = ends[p].End
			}
			out[p] = append(out[p], s)
		}
	}
	return out, nil
}

// catchingUp reports whether a table side has not yet read up to where
// its topic ended when the task started.
func (t *task) catchingUp() bool {
	for _, s := range t.sides {
		if s.next < s.catchUp {
			return true
		}
	}
	return false
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
	t.decode(left)
	if t.fatal != nil {
		return t.fatal
	}
	t.stats.in.Add(int64(len(left)))
	for _, s := range t.sides {
		s.polled = s.recs
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
		s.pending = s.pending[:0]
		if n := len(s.recs); n > 0 {
			s.next = s.recs[n-1].Offset + 1
		}
	}
	next := t.pos.Load()
	if n := len(left); n > 0 {
		next = left[n-1].Offset + 1
	}
	if t.cache != nil {
		if err := t.commitState(ctx, next); err != nil {
			return err
		}
	} else if err := t.produceAndCommit(ctx, next); err != nil {
		return err
	}
	t.pos.Store(next)
	for _, s := range t.sides {
		s.pos.Store(s.next)
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
