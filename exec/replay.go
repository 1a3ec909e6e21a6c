package exec

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// MaxRecordBytesProperty is the property (server configuration, or SET
// before a CREATE ... AS SELECT) bounding the records a query reads (see
// Deps.MaxRecordBytes).
const MaxRecordBytesProperty = "sluice.max.record.bytes"

// DefaultMaxRecordBytes is MaxRecordBytesProperty's default: Kafka's
// default message.max.bytes (1 MiB plus a batch header) rounded down, so
// that every record a default broker accepts is read.
const DefaultMaxRecordBytes = 1 << 20

// ErrReplayNeedsStateless: REPLAY re-feeds records through a fresh
// pipeline, which only a query without state and joins can run beside
// its running tasks.
var ErrReplayNeedsStateless = errors.New("exec: only a query with a sink and without state (no aggregation, join or table source) can replay records")

// Replayable says whether Replay can run g's records: nil for a
// persistent query with a sink, without state or joins, else
// ErrReplayNeedsStateless (or the error of a plan without its physical
// part, see Start).
func Replayable(g *topology.Graph) error {
	if err := checkPlan(g); err != nil {
		return err
	}
	if p := g.Physical; g.Sink == nil || len(p.Stores) > 0 || len(p.Stages) != 1 || len(joinSteps(g)) > 0 {
		return ErrReplayNeedsStateless
	}
	return nil
}

// ReplayStats count what a Replay did with its records.
type ReplayStats struct {
	// In are the records re-fed; Out the rows written to the sink;
	// Filtered the rows a WHERE dropped; Failed the records and rows
	// logged again.
	In, Out, Filtered, Failed int64
}

// Replay runs recs (records of g's source topic, as first read: key,
// value, timestamp, partition and offset) once more through g, a
// persistent query without state: rows go to g's sink, records that fail
// again go to the processing log, each entry's message starting with
// note. Records are processed per partition in offset order; Replay reads
// no topic and commits no offset. It returns once everything it produced
// is acknowledged.
func Replay(ctx context.Context, g *topology.Graph, deps Deps, recs []*kafka.Record, note string) (ReplayStats, error) {
	var st ReplayStats
	if err := Replayable(g); err != nil {
		return st, err
	}
	if len(recs) == 0 {
		return st, nil
	}
	if deps.Logger == nil {
		return st, errors.New("exec: Replay needs a logger")
	}
	if deps.Now == nil {
		return st, errors.New("exec: Replay needs a clock")
	}
	plan, err := planStages(g)
	if err != nil {
		return st, err
	}
	deps.Group, deps.ExactlyOnce = "", false
	q := &Query{graph: g, deps: deps, done: make(chan struct{})}
	byPart := map[int32][]*kafka.Record{}
	for _, r := range recs {
		if r.Topic != g.Source.Topic {
			return st, fmt.Errorf("exec: cannot replay a record of topic %s through a query reading %s", r.Topic, g.Source.Topic)
		}
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	parts := make([]int32, 0, len(byPart))
	for p := range byPart {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	prod, err := deps.Kafka.NewProducer(kafka.ProducerOptions{ClientID: g.QueryID + "-replay", Compression: deps.Compression})
	if err != nil {
		return st, err
	}
	defer prod.Close()
	for _, p := range parts {
		rs := byPart[p]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Offset < rs[j].Offset })
		t := &task{q: q, partition: p, nKey: len(g.Source.Key), nValue: len(g.Source.Value), tsCol: -1, window: g.Source.Window, note: note}
		if t.window != nil {
			t.nWin = 2
		}
		if _, err := newTaskParts(t, plan[0]); err != nil {
			return st, err
		}
		t.producer, t.mode = prod, replayMode{t}
		err := t.replay(ctx, rs)
		t.producer = nil
		t.close()
		st.In += t.stats.in.Load()
		st.Out += t.stats.out.Load()
		st.Filtered += t.stats.filtered.Load()
		st.Failed += t.stats.errors.Load()
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// replay decodes and processes recs as process does, then produces what
// they gave at once: no offset to commit, no pipelining.
func (t *task) replay(ctx context.Context, recs []*kafka.Record) error {
	t.polled = recs
	defer func() { t.polled = nil }()
	t.logged = t.logged[:0]
	t.decode(recs)
	if t.fatal != nil {
		return t.fatal
	}
	t.stats.in.Add(int64(len(recs)))
	if t.in.Len() > 0 {
		if err := t.push(ctx, 0, &t.in); err != nil {
			return err
		}
	}
	clear(t.arena)
	t.in.Reset()
	t.orderLog()
	_, err := t.mode.commit(ctx, recs[len(recs)-1].Offset+1, 0)
	return err
}

// replayMode is the commit mode of a Replay: it produces a batch's
// records and waits for their acknowledgement; there is no position to
// commit, and nothing stays in the air.
type replayMode struct{ t *task }

func (m replayMode) start(context.Context) error { return nil }
func (m replayMode) transactional() bool         { return false }
func (m replayMode) failed() bool                { return false }
func (m replayMode) land() error                 { return nil }

func (m replayMode) commit(ctx context.Context, _ int64, _ int) (bool, error) {
	t := m.t
	err := t.produce(ctx, t.pending)
	clear(t.pending)
	t.pending = t.pending[:0]
	return false, err
}

func (m replayMode) passSource(next int64) bool {
	m.t.pos.Store(next)
	return true
}

func (m replayMode) watch(ctx context.Context) (context.Context, context.CancelFunc) {
	return ctx, func() {}
}
