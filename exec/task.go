package exec

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/registry"
	"github.com/sluice-sql/sluice/state"
)

// task runs one input partition of a query.
type task struct {
	q *Query
	// st is the stage of the query the task runs, and g its graph.
	st        *stage
	g         *topology.Graph
	partition int32
	pos       atomic.Int64 // next offset to read; all before it is done
	consumer  kafka.Consumer
	producer  kafka.Producer
	// mode is how the task commits its batches (see commitMode); nil on
	// a join side's task, whose owner commits.
	mode commitMode
	// marks are the transaction markers polled whose offsets the task's
	// positions have not passed yet (see passMarks).
	marks []*kafka.Record
	// pollErr is a poll error gather met, for the next poll to return.
	pollErr error

	keyCodec, valueCodec format.Codec
	nKey, nValue         int
	// window is the windowing of the source's keys, or nil; nWin is 2 when
	// set (the WINDOWSTART and WINDOWEND columns after the key), else 0.
	window *topology.KeyWindow
	nWin   int
	tsCol  int // index in the source row of the timestamp column, or -1
	tsRead *timestampReader

	ops  []Operator
	sink *sink
	// tapSink says sink writes the query's user topic, whose rows go to
	// Deps.Tap too.
	tapSink bool
	out     Output
	ended   bool // the push query's output asked to stop
	// sidesClosed says close closed the join sides.
	sidesClosed bool

	// cache is the task's state, nil for a query without state;
	// changelogs maps its state tables to their changelog topics.
	cache      *state.TaskCache
	changelogs map[string]string
	// persistedAt is when the task last wrote its cache's committed state
	// to the store (on Deps.Now); unpersisted is set while the cache
	// holds committed state the store does not (see Query.Unpersisted).
	persistedAt time.Time
	unpersisted atomic.Bool

	// pending collects the records one batch produces: sink rows and
	// processing-log entries, sent in one call.
	pending []*kafka.Record
	// logBufs are commitState's slices, kept from one commit to the next.
	logBufs commitBufs
	// logged holds, for each processing-log entry of the batch, its
	// place in pending and the offset of the record it reports, so that
	// the batch's entries go out in offset order (see orderLog).
	logged []loggedAt
	// cur is the input record being decoded, and polled the batch being
	// processed: error reports name the record a row came from.
	cur    *kafka.Record
	polled []*kafka.Record
	in     Batch
	arena  []any
	// box boxes the decoded values (format.Arena).
	box format.Arena

	stats counters
	// streamOut says the rows the last step emits are a stream's (not
	// the stage's TableRows): a push output counts those without a value
	// it drops.
	streamOut bool

	// restore is set until the task has brought its local state up to its
	// changelogs; restoring is true while it does, with restored of
	// toRestore changelog records read so far.
	restore             bool
	restoring           atomic.Bool
	restored, toRestore atomic.Int64

	// internal marks a task reading a repartition topic, whose records
	// Sluice wrote: one it cannot read is a bug that fails the query
	// (fatal) instead of going to the processing log.
	internal bool
	fatal    error
	// note, when set, starts the message of every processing-log entry
	// the task writes (a replay of logged records, see Replay).
	note string

	// ready is closed once the task's state is restored, at once for a
	// task without state to restore.
	ready chan struct{}

	// sides are the right inputs of the stage's join steps, read from the
	// same partition of their topics; held keeps left records polled
	// while a table side catches up (see processJoin). into, set on a
	// side's own task, takes its rows into the join operator instead of a
	// sink.
	sides []*joinSide
	held  []*kafka.Record
	into  func(ctx context.Context, b *Batch) error
	// leftWaits is set while the task does not read its source partition
	// yet: a table side catches up first, so that the left records do not
	// pile up in held meanwhile (see assignLeft).
	leftWaits bool
	// A join task runs its inputs' rows in time order across polls (see
	// processJoin): srcFetched is how far the consumer has read the source
	// partition (transaction markers included) and srcEnd where it is
	// known to end; waitingSince is when the task began holding rows for
	// an input with more to come, zero when it holds none for that.
	srcFetched, srcEnd int64
	waitingSince       time.Time
	// rowRecs gives, for each row of in, the record it was decoded from
	// (kept for join tasks and their sides only); carried are the decoded
	// rows a round left for the next (see processJoin), carriedRecs their
	// records; forceRun makes the next round run every row it has.
	keepRowRecs bool
	rowRecs     []*kafka.Record
	carried     Batch
	carriedRecs []*kafka.Record
	forceRun    bool
}

func newTask(ctx context.Context, q *Query, s *stage, partition int32, start int64, sides []sideStart, out Output) (*task, error) {
	g := s.g
	src := g.Source
	t := &task{q: q, partition: partition, out: out, nKey: len(src.Key), nValue: len(src.Value), tsCol: -1, window: src.Window}
	if t.window != nil {
		t.nWin = 2
	}
	t.pos.Store(start)
	// A persistent query's state is restored from its changelogs when the
	// task starts running, so that the query shows RESTORING meanwhile.
	t.restore = len(s.stores) > 0 && persistent(g)
	t.restoring.Store(t.restore)
	if _, err := newTaskParts(t, s); err != nil {
		return nil, err
	}
	if err := t.addSides(sides); err != nil {
		t.close()
		return nil, err
	}
	clientID := g.QueryID
	if clientID == "" {
		clientID = "transient-" + src.Name
	}
	t.ready = make(chan struct{})
	var err error
	eos := q.deps.ExactlyOnce && persistent(g)
	// Every query reads committed records only, whatever its own
	// guarantee: a topic written by an exactly-once query (or any
	// transactional producer) may hold records of aborted transactions,
	// which must never reach a row. On a topic without transactions it
	// changes nothing.
	if t.consumer, err = q.deps.Kafka.NewConsumer(kafka.ConsumerOptions{ClientID: clientID, ReadCommitted: true, KeepControl: true}); err != nil {
		t.close()
		return nil, err
	}
	if eos {
		t.mode, err = newExactlyOnce(t, clientID)
	} else if t.producer, err = q.deps.Kafka.NewProducer(kafka.ProducerOptions{ClientID: clientID, Compression: q.deps.Compression}); err == nil {
		t.mode = newAtLeastOnce(t)
	}
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// newTaskParts builds what a task of stage s needs besides Kafka: codecs,
// operators (see operators) and the sink encoder.
func newTaskParts(t *task, s *stage) (*task, error) {
	g := s.g
	// Set once: reopen (after an aborted transaction) builds the parts
	// again while other goroutines read these (Positions, Stats).
	if t.st != s {
		t.st, t.g = s, g
	}
	if internal := g.Source.KeyFormat == internalFormat; internal != t.internal {
		t.internal = internal
	}
	src := g.Source
	var err error
	switch {
	case src.KeyFormat == internalFormat:
		t.keyCodec, t.valueCodec = newInternalCodec(src.Key), newInternalCodec(src.Value)
	default:
		sr := format.SR{Registry: t.q.deps.Registry, Topic: src.Topic}
		if t.keyCodec, err = format.NewKeyCodecSR(src.KeyFormat, src.Key, src.KeyProps, sr); err != nil {
			return nil, fmt.Errorf("exec: source %s key: %w", src.Name, err)
		}
		if t.valueCodec, err = format.NewValueCodecSR(src.ValueFormat, src.Value, src.ValueProps, sr); err != nil {
			return nil, fmt.Errorf("exec: source %s value: %w", src.Name, err)
		}
		// The value columns the query never reads stay null.
		t.valueCodec = format.Prune(t.valueCodec, src.ValueRead())
	}
	if src.Timestamp != "" {
		for i, c := range src.Schema() {
			if c.Name == src.Timestamp {
				t.tsCol = i
			}
		}
		if t.tsCol < 0 {
			return nil, fmt.Errorf("exec: timestamp column %s is not in source %s", src.Timestamp, src.Name)
		}
		if t.tsRead, err = newTimestampReader(src.Timestamp, src.TimestampFormat); err != nil {
			return nil, err
		}
	}
	if len(s.stores) > 0 && t.cache == nil {
		if t.q.deps.State == nil {
			return nil, fmt.Errorf("exec: query %s keeps state but has no state store", g.QueryID)
		}
		ns := t.q.deps.StateNamespace
		if ns == "" {
			ns = g.QueryID
		}
		t.cache = t.q.deps.State.NewTaskCache(ns, t.partition, 0)
		t.persistedAt = t.q.deps.Now()
		t.changelogs = map[string]string{}
		for _, st := range s.stores {
			t.changelogs[st.Name] = st.Changelog
		}
	}
	oc := &OpContext{QueryID: g.QueryID, Partition: t.partition, Logger: t.q.deps.Logger, Errors: t, State: t.cache, counts: &t.stats}
	keys := keyColumns(topology.PseudoColumns, len(src.Key)+t.nWin)
	in := src.Schema()
	for i := range g.Steps {
		st := &g.Steps[i]
		var op Operator
		if op, keys, err = newOperator(st, in, keys, false); err != nil {
			t.close()
			return nil, err
		}
		if err := op.Open(context.Background(), oc); err != nil {
			t.close()
			return nil, err
		}
		t.ops = append(t.ops, op)
		if st.Schema != nil {
			in = st.Schema
		}
	}
	if streamOut := !s.TableRows; streamOut != t.streamOut {
		t.streamOut = streamOut
	}
	if g.Sink != nil {
		if t.sink, err = newSink(g, t.q.deps.Registry); err != nil {
			t.close()
			return nil, err
		}
		t.tapSink = t.q.graph.Sink != nil && g.Sink.Topic == t.q.graph.Sink.Topic
	}
	return t, nil
}

// headerValue reads a header column: every header as ARRAY<STRUCT<KEY,
// VALUE>> when key is empty, else the bytes of the last header named key
// (null when there is none).
func headerValue(hs []kafka.Header, key string) any {
	if key == "" {
		all := make([]any, len(hs))
		for i, h := range hs {
			all[i] = types.StructValue{h.Key, h.Value}
		}
		return all
	}
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].Key == key {
			return hs[i].Value
		}
	}
	return nil
}

// keyAbsent marks a record without a key when the key has several columns
// (a single column shows it as null by itself).
func (t *task) keyAbsent(r *kafka.Record) ChangeKind {
	if r.Key == nil && t.nKey > 1 {
		return KeyAbsent
	}
	return 0
}

// keyColumns is the set of n key column indexes starting at from.
func keyColumns(from, n int) map[int]bool {
	m := make(map[int]bool, n)
	for i := from; i < from+n; i++ {
		m[i] = true
	}
	return m
}

func (t *task) close() {
	if t.cache != nil {
		// What the task committed reaches the store before it ends; the
		// changelogs have it too, so a failure only lengthens a restore.
		if err := t.persist(); err != nil {
			t.q.deps.Logger.Warn("cannot write the committed state of a stopping task; it is restored from the changelog at the next start", "query", t.g.QueryID, "partition", t.partition, "err", err)
		}
	}
	defer func() {
		// After the operators, which give back what they keep decoded.
		if t.cache != nil {
			t.cache.Release()
		}
	}()
	// The sides stay listed (Query.Stats reads them while the query
	// stops); sidesClosed makes a second close leave them be.
	if !t.sidesClosed {
		t.sidesClosed = true
		for _, s := range t.sides {
			s.close()
		}
	}
	for _, op := range t.ops {
		_ = op.Close(context.Background())
	}
	t.ops = nil
	if t.consumer != nil {
		t.consumer.Close()
		t.consumer = nil
	}
	if t.producer != nil {
		t.producer.Close()
		t.producer = nil
	}
}

// run polls, processes and commits until ctx is done or the push query's
// output ends it. A batch once polled is finished under its own deadline,
// even when ctx is cancelled meanwhile, so a stop never loses or repeats
// work.
func (t *task) run(ctx context.Context) (err error) {
	defer func() {
		// The last batch's produce and commit finish before the task
		// ends, under their own deadline.
		if ferr := t.mode.land(); err == nil {
			err = ferr
		}
	}()
	// Under exactly-once, fence older instances of the task before
	// reading what they committed.
	if err := t.mode.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if t.restore {
		err := restoreState(ctx, t)
		t.restoring.Store(false)
		if t.q.deps.Progress != nil {
			t.q.deps.Progress()
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("exec: restore state of %s[%d]: %w", t.g.QueryID, t.partition, err)
		}
		t.restore = false
		// Forget what operators read before the restore wrote the store.
		t.cache.Reset()
	}
	// The consumer starts once the state is restored: a global join side
	// resumes from the positions kept in it.
	if len(t.sides) > 0 {
		if err := t.loadPositions(); err != nil {
			return err
		}
	}
	if len(t.sides) > 0 {
		if err := t.syncStart(ctx); err != nil {
			return err
		}
	}
	assign := map[string]map[int32]int64{}
	t.leftWaits = t.catchingUp() && !t.sideReads(t.g.Source.Topic)
	if !t.leftWaits {
		assign[t.g.Source.Topic] = map[int32]int64{t.partition: t.pos.Load()}
	}
	for _, s := range t.sides {
		s.assignment(assign)
	}
	t.consumer.Assign(assign)
	close(t.ready)
	end := int64(-1)
	if ends := t.q.deps.EndOffsets; ends != nil && t.g.Source.Topic == t.q.graph.Source.Topic && int(t.partition) < len(ends) {
		end = ends[t.partition]
	}
	pollFails, failingSince := 0, time.Time{}
	for !t.ended {
		if end >= 0 && t.pos.Load() >= end {
			return nil
		}
		t.assignLeft()
		var recs []*kafka.Record
		var err error
		if m, ok := t.mode.(*atLeastOnce); ok && m.held {
			// Records are held for the next flight (see Coalescing): take
			// what is fetched already, or launch them and poll as usual.
			recs, err = m.pollHeld()
		}
		if len(recs) == 0 && err == nil && !t.mode.failed() {
			polled := time.Now()
			recs, err = t.pollWatching(ctx)
			timed(&t.stats.poll, polled)
		}
		if ctx.Err() != nil {
			return nil
		}
		if t.mode.failed() {
			return t.mode.land()
		}
		if err != nil {
			// A broker restarting or a leader moving: poll again. A topic
			// unknown for longer than a leader election takes is gone.
			if pollFails == 0 {
				failingSince = time.Now()
			}
			outOfRange := kafka.OffsetOutOfRange(err)
			if !kafka.Temporary(err) && !outOfRange ||
				(outOfRange || errors.Is(err, kafka.ErrUnknownTopic)) && time.Since(failingSince) > stopGrace {
				return fmt.Errorf("exec: poll %s[%d]: %w", t.g.Source.Topic, t.partition, err)
			}
			if outOfRange {
				// A new leader not yet holding what its predecessor
				// reported: read again from the task's positions (what
				// the consumer still buffered is read again too).
				t.reassign()
			}
			if pollFails++; pollFails == 1 {
				t.q.deps.Logger.Warn("Kafka is not available; polling again", "topic", t.g.Source.Topic, "partition", t.partition, "err", err)
			}
			if !pollBackoff(ctx, pollFails) {
				return nil
			}
			continue
		}
		pollFails = 0
		if len(t.sides) > 0 {
			t.noteFetched(recs)
		}
		past := false
		if end >= 0 {
			// Records written after the query started are not its to read;
			// meeting one means every record before the end was read.
			n := 0
			for n < len(recs) && recs[n].Offset < end {
				n++
			}
			past = n < len(recs)
			recs = recs[:n]
		}
		recs = t.dropControl(recs)
		if past && len(t.sides) > 0 && t.holding() && !t.catchingUp() {
			// The input ends here: what waited for the others runs now.
			t.forceRun = true
		}
		if len(recs) == 0 && !t.waitDue() && !t.forceRun {
			t.passMarks()
			if t.cache != nil && t.cache.Unpersisted() > 0 {
				// Idle: what the task committed goes to the store.
				if err := t.persist(); err != nil {
					return err
				}
			}
			if past {
				return nil
			}
			continue
		}
		work, cancel := batchCtx(ctx)
		started, waited := time.Now(), t.stats.waited()
		err = t.process(work, recs)
		t.stats.work.Add(int64(time.Since(started)) - (t.stats.waited() - waited))
		cancel()
		var aborted *txnError
		if errors.As(err, &aborted) {
			// Nothing of the batch is visible: process it again.
			if pollFails++; pollFails == 1 {
				t.q.deps.Logger.Warn("transaction aborted; processing the batch again", "topic", t.g.Source.Topic, "partition", t.partition, "err", err)
			}
			if err := t.rewind(); err != nil {
				return err
			}
			if !pollBackoff(ctx, pollFails) {
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		t.passMarks()
		if t.ended {
			t.q.cancel()
		}
		if past {
			return nil
		}
	}
	return nil
}

// maxGather bounds the records poll gathers for one commit.
const maxGather = 50_000

// poll polls the task's consumer; under exactly-once, with a commit
// interval (a persistent query's, Deps.CommitInterval), it then gathers
// what arrives within the interval, so that one transaction covers several
// polls. No transaction is open meanwhile: the task begins one only to
// commit. An at-least-once task does not gather: a failed produce or
// offset commit rewinds it to its last commit, and gathering made that
// rewind, and so the duplicates it writes, several times larger when the
// only broker restarted (TestBrokerRestart). A pipelined task (flight.go)
// does not wait for its commits. A task holding state the store does not
// have yet polls no longer than persistIdle (see pollFirst).
func (t *task) poll(ctx context.Context) ([]*kafka.Record, error) {
	if err := t.pollErr; err != nil {
		t.pollErr = nil
		return nil, err
	}
	recs, err := t.pollFirst(ctx)
	if err != nil || len(recs) == 0 || t.q.deps.CommitInterval <= 0 || !t.mode.transactional() {
		return recs, err
	}
	deadline := time.Now().Add(t.q.deps.CommitInterval)
	for len(recs) < maxGather {
		pctx, cancel := context.WithDeadline(ctx, deadline)
		more, err := t.consumer.Poll(pctx)
		expired := pctx.Err() != nil
		cancel()
		if err != nil {
			if !expired {
				t.pollErr = err
			}
			break
		}
		recs = append(recs, more...)
	}
	return recs, nil
}

// dropControl removes the transaction markers from recs, keeping them in
// t.marks until the positions pass them.
func (t *task) dropControl(recs []*kafka.Record) []*kafka.Record {
	n := 0
	for _, r := range recs {
		if r.Control {
			t.marks = append(t.marks, r)
			continue
		}
		recs[n] = r
		n++
	}
	clear(recs[n:])
	return recs[:n]
}

// passMarks moves the positions of t and its sides past the transaction
// markers read, so that a position reaches the end offset of a partition
// written in transactions (which ends with a marker no record follows).
// Only memory moves: reading a marker again after a restart is harmless.
// The source's position waits while left records are held (processJoin).
func (t *task) passMarks() {
	if len(t.marks) == 0 {
		return
	}
	moved := false
	keep := t.marks[:0]
	for _, m := range t.marks {
		next := m.Offset + 1
		if m.Topic == t.g.Source.Topic && m.Partition == t.partition {
			if len(t.held) > 0 || len(t.carriedRecs) > 0 {
				keep = append(keep, m)
			} else if next > t.pos.Load() && t.mode.passSource(next) {
				moved = true
			}
			continue
		}
		for _, s := range t.sides {
			if m.Topic != s.g.Source.Topic {
				continue
			}
			if len(s.carry) > 0 || len(s.carriedRecs) > 0 {
				// Its position waits for what the side holds.
				keep = append(keep, m)
				continue
			}
			if n := s.index(m.Partition); n >= 0 && next > s.pos[n].Load() {
				s.next[n] = next
				s.pos[n].Store(next)
				moved = true
			}
		}
	}
	clear(t.marks[len(keep):])
	t.marks = keep
	if moved && t.q.deps.Progress != nil {
		t.q.deps.Progress()
	}
}

// reassign points the consumer at the task's positions again: its source
// partition's and those of its join sides.
func (t *task) reassign() {
	t.dropHeld()
	assign := map[string]map[int32]int64{}
	if !t.leftWaits {
		assign[t.g.Source.Topic] = map[int32]int64{t.partition: t.pos.Load()}
	}
	t.sideOffsets(assign)
	t.consumer.Assign(assign)
}

// process runs one polled batch through the operators and the sink, then
// commits.
func (t *task) process(ctx context.Context, recs []*kafka.Record) error {
	if len(t.sides) > 0 {
		return t.processJoin(ctx, recs)
	}
	t.polled = recs
	defer func() { t.polled = nil }()
	t.logged = t.logged[:0]
	t.decode(recs)
	if t.fatal != nil {
		return t.fatal
	}
	t.stats.in.Add(int64(len(recs)))
	t.stats.lastTime.Store(recs[len(recs)-1].Timestamp.UnixMilli())
	if t.in.Len() > 0 {
		if err := t.push(ctx, 0, &t.in); err != nil {
			return err
		}
	}
	clear(t.arena)
	t.in.Reset()
	next := recs[len(recs)-1].Offset + 1
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
	} else if later, err := t.mode.commit(ctx, next, 0); err != nil || later {
		// A flight moves the position once the batch is committed.
		return err
	}
	t.pos.Store(next)
	if t.q.deps.Progress != nil {
		t.q.deps.Progress()
	}
	return nil
}

// stageCommit lets every operator write what it holds in memory into the
// task's state cache (Operator.OnCommit) before the cache is flushed.
func (t *task) stageCommit(ctx context.Context) error {
	for i, op := range t.ops {
		err := op.OnCommit(ctx, emitterFunc(func(ctx context.Context, b *Batch) error {
			return t.push(ctx, i+1, b)
		}))
		if err != nil {
			return err
		}
	}
	return nil
}

// pollWatching polls as poll does, returning early when the commit in
// the air fails, so that the task ends with its error instead of waiting
// for a record.
func (t *task) pollWatching(ctx context.Context) ([]*kafka.Record, error) {
	pctx, cancel := t.mode.watch(ctx)
	defer cancel()
	return t.poll(pctx)
}

// produce sends recs and waits for their acknowledgement.
func (t *task) produce(ctx context.Context, recs []*kafka.Record) error {
	if len(recs) == 0 {
		return nil
	}
	err := retryKafka(ctx, t.q.deps.Logger, "produce", func() error {
		return t.producer.Produce(ctx, recs)
	})
	if err != nil {
		return fmt.Errorf("exec: produce: %w", err)
	}
	return nil
}

// commitOffsets commits the group's offsets: next for the source
// partition, and the sides' positions.
func (t *task) commitOffsets(ctx context.Context, next int64) error {
	if t.q.deps.Group != "" {
		offs := map[string]map[int32]int64{t.g.Source.Topic: {t.partition: next}}
		t.sideOffsets(offs)
		err := retryKafka(ctx, t.q.deps.Logger, "commit offsets", func() error {
			return t.q.deps.Kafka.CommitOffsets(ctx, t.q.deps.Group, offs)
		})
		if err != nil {
			return fmt.Errorf("exec: commit offsets: %w", err)
		}
	}
	return nil
}

// push sends b into operator i (or the sink after the last).
func (t *task) push(ctx context.Context, i int, b *Batch) error {
	if i == len(t.ops) {
		return t.emit(ctx, b)
	}
	return t.ops[i].OnBatch(ctx, 0, b, emitterFunc(func(ctx context.Context, b *Batch) error {
		return t.push(ctx, i+1, b)
	}))
}

// emit hands the last operator's rows to the sink or the push output.
func (t *task) emit(ctx context.Context, b *Batch) error {
	if t.into != nil {
		return t.into(ctx, b)
	}
	if t.sink != nil {
		out := int64(0)
		var tapped []TapRow
		tapping := t.tapping()
		for i := 0; i < b.Len(); i++ {
			rec, err := t.sink.record(b.Row(i), b.Time(i), b.Kind(i).Base() == NullValue, b.Kind(i)&KeyAbsent != 0, b.Headers(i))
			if err != nil {
				t.RowError(err.Error(), b.Row(i))
				continue
			}
			t.pending = append(t.pending, rec)
			if b.Kind(i)&Filtered == 0 {
				out++
			}
			if tapping {
				tapped = append(tapped, TapRow{Values: append([]any(nil), b.Row(i)...), Time: b.Time(i), Delete: b.Kind(i).Base() == NullValue})
			}
		}
		t.stats.out.Add(out)
		if len(tapped) > 0 {
			t.q.deps.Tap.Rows(ctx, tapped)
		}
		return nil
	}
	if t.out == nil {
		// A materialization keeps its rows in its state only.
		return nil
	}
	var nulls int64
	for i := 0; i < b.Len() && !t.ended; i++ {
		out, k := t.out, b.Kind(i)
		if k.Base() == NullValue {
			// A push query shows rows, and a null value has none: ksqlDB
			// drops a stream's records without a value there. On a
			// table it is a delete, which goes to Deletes, but for the
			// delete a WHERE or HAVING sends for a row it drops: ksqlDB's
			// push query leaves those rows out.
			if t.streamOut {
				if k&Filtered == 0 {
					nulls++
				}
				continue
			}
			if out = t.q.deps.Deletes; out == nil || k&Filtered != 0 {
				continue
			}
		}
		more, err := out(ctx, b.Row(i))
		if err != nil {
			t.stats.addNulls(nulls)
			return err
		}
		t.stats.out.Add(1)
		if !more {
			t.ended = true
		}
	}
	t.stats.addNulls(nulls)
	return nil
}

// nullTableKeyRecord is the processing-log message of a table's record
// without a key.
const nullTableKeyRecord = "a table's record needs a key, and this one has none: it is not a row of the table; produce it with a key"

// decode turns records into source rows: pseudo-columns, key, value.
// Records that cannot be read go to the processing log.
func (t *task) decode(recs []*kafka.Record) {
	headerKeys := t.g.Source.HeaderKeys
	width := topology.PseudoColumns + t.nKey + t.nWin + t.nValue + len(headerKeys)
	keyEnd := topology.PseudoColumns + t.nKey
	if cap(t.arena) < len(recs)*width {
		t.arena = make([]any, len(recs)*width)
	}
	arena := t.arena[:len(recs)*width]
	maxBytes := t.q.deps.MaxRecordBytes
	for i, r := range recs {
		t.cur = r
		row := arena[i*width : (i+1)*width : (i+1)*width]
		key := r.Key
		if n := len(r.Key) + len(r.Value); maxBytes > 0 && n > maxBytes && !t.internal {
			t.recordError(fmt.Sprintf("record of %d bytes (key and value) is larger than %s (%d)", n, MaxRecordBytesProperty, maxBytes), r)
			continue
		}
		if t.window != nil {
			var err error
			if key, err = t.windowBounds(key, row[keyEnd:keyEnd+2]); err != nil {
				t.recordError("cannot decode key: "+err.Error(), r)
				continue
			}
		}
		if r.Key == nil && t.g.Source.IsTable() && t.nKey > 0 && !t.internal {
			t.recordError(nullTableKeyRecord, r)
			continue
		}
		if r.Value == nil {
			// A record without a value: only its key is known.
			if err := t.keyCodec.Decode(key, row[topology.PseudoColumns:keyEnd]); err != nil {
				t.recordError("cannot decode key: "+err.Error(), r)
				continue
			}
			t.in.Append(row, r.Timestamp.UnixMilli(), NullValue|t.keyAbsent(r))
			t.in.SetHeaders(t.in.Len()-1, r.Headers)
			t.rowDecoded(r)
			continue
		}
		ts := r.Timestamp.UnixMilli()
		row[0] = t.box.Int64(ts)
		row[1] = r.Partition
		row[2] = t.box.Int64(r.Offset)
		if err := format.DecodeIn(t.keyCodec, &t.box, key, row[topology.PseudoColumns:keyEnd]); err != nil {
			t.recordError("cannot decode key: "+err.Error(), r)
			continue
		}
		valueStart := keyEnd + t.nWin
		valueEnd := valueStart + t.nValue
		if err := format.DecodeIn(t.valueCodec, &t.box, r.Value, row[valueStart:valueEnd]); err != nil {
			t.recordError("cannot decode value: "+err.Error(), r)
			continue
		}
		for j, hk := range headerKeys {
			row[valueEnd+j] = headerValue(r.Headers, hk)
		}
		if t.tsCol >= 0 {
			var err error
			if ts, err = t.tsRead.read(row[t.tsCol]); err != nil {
				t.recordError(err.Error(), r)
				continue
			}
			row[0] = t.box.Int64(ts)
		}
		t.in.Append(row, ts, Insert|t.keyAbsent(r))
		t.in.SetHeaders(t.in.Len()-1, r.Headers)
		t.rowDecoded(r)
	}
	t.cur = nil
}

// windowBounds splits a windowed key into the key's own bytes and its
// window, which it writes to bounds as WINDOWSTART and WINDOWEND.
// rowDecoded notes that the row just appended to t.in came from r (see
// rowRecs).
func (t *task) rowDecoded(r *kafka.Record) {
	if t.keepRowRecs {
		t.rowRecs = append(t.rowRecs, r)
	}
}

func (t *task) windowBounds(key []byte, bounds []any) ([]byte, error) {
	start, end, rest, err := SplitWindowedKey(key, t.window)
	if err != nil {
		return nil, err
	}
	bounds[0], bounds[1] = start, end
	return rest, nil
}

// SplitWindowedKey splits a windowed record key as Kafka Streams writes
// it into the window start and end and the key's own bytes.
func SplitWindowedKey(key []byte, w *topology.KeyWindow) (start, end int64, rest []byte, err error) {
	if w.Type == topology.Session {
		if len(key) < 16 {
			return 0, 0, nil, fmt.Errorf("a session-windowed key needs at least 16 bytes, got %d", len(key))
		}
		n := len(key)
		end = int64(binary.BigEndian.Uint64(key[n-16 : n-8]))
		start = int64(binary.BigEndian.Uint64(key[n-8:]))
		return start, end, key[:n-16], nil
	}
	if len(key) < 8 {
		return 0, 0, nil, fmt.Errorf("a time-windowed key needs at least 8 bytes, got %d", len(key))
	}
	start = int64(binary.BigEndian.Uint64(key[len(key)-8:]))
	return start, start + w.Size, key[:len(key)-8], nil
}

// AppendWindow appends the window [start, end) to a record key's bytes as
// Kafka Streams writes windowed keys.
func AppendWindow(key []byte, w *topology.KeyWindow, start, end int64) []byte {
	if w.Type == topology.Session {
		key = binary.BigEndian.AppendUint64(key, uint64(end))
	}
	return binary.BigEndian.AppendUint64(key, uint64(start))
}

// RowError sends a row an operator could not process to the processing log.
func (t *task) RowError(msg string, row []any) {
	t.recordError(msg, t.origin(row))
}

// origin finds the polled record a source-layout row was decoded from, by
// its ROWOFFSET pseudo-column.
func (t *task) origin(row []any) *kafka.Record {
	if t.cur != nil || len(row) < topology.PseudoColumns {
		return t.cur
	}
	off, ok := row[2].(int64)
	if !ok {
		return nil
	}
	i := sort.Search(len(t.polled), func(i int) bool { return t.polled[i].Offset >= off })
	if i < len(t.polled) && t.polled[i].Offset == off {
		return t.polled[i]
	}
	return nil
}

// ProcessingLogEntry is one processing-log record's value, written as
// JSON; its members are the columns of the SLUICE_PROCESSING_LOG stream
// (matched case-insensitively). Key and Value are the record's bytes,
// base64 in JSON; Truncated says Value keeps only its first
// MaxLoggedBytes bytes.
type ProcessingLogEntry struct {
	Level string `json:"level"`
	// Type is DeserializationError or RecordProcessingError.
	Type      string `json:"type"`
	QueryID   string `json:"query_id,omitempty"`
	Message   string `json:"message"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Timestamp int64  `json:"timestamp"`
	Key       []byte `json:"key"`
	Value     []byte `json:"value"`
	Truncated bool   `json:"truncated"`
}

// The processing-log entry types, by ksqlDB's names. A record with a
// DeserializationError never reached the query's pipeline (its bytes,
// size or record time could not be read); a RecordProcessingError is a
// row the pipeline could not compute fully (it went on with a null, as
// in ksqlDB, or was dropped where no null can stand in).
const (
	DeserializationError  = "DESERIALIZATION_ERROR"
	RecordProcessingError = "RECORD_PROCESSING_ERROR"
)

// MaxLoggedBytes bounds the key and value bytes one processing-log entry
// keeps: base64 makes them a third larger, and the entry must stay under
// the broker's default message.max.bytes (1 MiB). A longer value is cut
// to what fits, and the entry says so (Truncated, and in its message).
const MaxLoggedBytes = 512 << 10

// recordError logs a bad record with its bytes and coordinates; the record
// is skipped and the query goes on.
func (t *task) recordError(msg string, r *kafka.Record) {
	if t.internal && t.cur != nil {
		// Decoding a record Sluice wrote failed: not the user's data.
		if t.fatal == nil {
			t.fatal = fmt.Errorf("exec: bug: cannot read record %d of internal topic %s[%d]: %s", t.cur.Offset, t.g.Source.Topic, t.partition, msg)
		}
		return
	}
	t.stats.errors.Add(1)
	typ := RecordProcessingError
	if t.cur != nil {
		typ = DeserializationError
	}
	e := ProcessingLogEntry{Level: "ERROR", Type: typ, QueryID: t.g.QueryID, Message: t.note + msg, Topic: t.g.Source.Topic, Partition: t.partition, Offset: -1}
	if r != nil {
		e.Offset, e.Timestamp, e.Key, e.Value = r.Offset, r.Timestamp.UnixMilli(), r.Key, r.Value
		if n := len(e.Key) + len(e.Value); n > MaxLoggedBytes && len(e.Key) < MaxLoggedBytes {
			e.Value, e.Truncated = e.Value[:MaxLoggedBytes-len(e.Key)], true
			e.Message += fmt.Sprintf(" (value truncated to its first %d of %d bytes)", len(e.Value), len(r.Value))
		}
	}
	t.q.deps.Logger.Warn("record skipped", "topic", e.Topic, "partition", e.Partition, "offset", e.Offset, "reason", msg)
	if t.q.deps.ProcessingLog == "" {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	t.logged = append(t.logged, loggedAt{at: len(t.pending), offset: e.Offset})
	t.pending = append(t.pending, &kafka.Record{Topic: t.q.deps.ProcessingLog, Partition: -1, Value: b, Timestamp: t.q.deps.Now()})
}

// loggedAt places a processing-log entry of the batch: its index in
// pending and the offset of the record it reports.
type loggedAt struct {
	at     int
	offset int64
}

// orderLog puts the batch's processing-log entries in the order of the
// records they report, as a record-at-a-time engine logs them: a batch
// decodes all its records before computing any row, so an entry for a
// row the pipeline could not compute is appended after every entry for
// a record that could not be read. The entries keep their places in
// pending (the sink records around them do not move); only which entry
// sits in which place changes.
func (t *task) orderLog() {
	logged := t.logged
	t.logged = t.logged[:0]
	if len(logged) < 2 || slices.IsSortedFunc(logged, func(a, b loggedAt) int { return cmp.Compare(a.offset, b.offset) }) {
		return
	}
	recs := make([]*kafka.Record, len(logged))
	for i, l := range logged {
		recs[i] = t.pending[l.at]
	}
	order := make([]int, len(logged))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(logged[a].offset, logged[b].offset) })
	for i, j := range order {
		t.pending[logged[i].at] = recs[j]
	}
}

// sink encodes output rows into records of the sink topic.
type sink struct {
	topic                string
	keyCodec, valueCodec format.Codec
	nKey, nOut           int
	tsCol                int // output column giving the record time, or -1
	tsRead               *timestampReader
	// window makes the keys windowed: each row's bounds are the two
	// columns after the nOut output columns.
	window *topology.KeyWindow
	// place, for a repartition topic placed by a key format, encodes the
	// key as that format does; the record goes to the partition its bytes
	// hash to among partitions.
	place      format.Codec
	partitions int32
	placeBuf   []byte
	// bareKey, for a windowed sink topic of partitions partitions, places
	// each record by its key without the window, as Kafka Streams'
	// WindowedStreamPartitioner does: every window of a key goes to the
	// partition of the key.
	bareKey bool
	// buf and recs are slabs the records' bytes and the records are cut
	// from, a few kilobytes at a time; what was cut is never written
	// again, so the records may outlive the batch.
	buf  []byte
	recs []kafka.Record
	// used are the record slabs cut from since the last recycle (recs is
	// the last), spare those recycle gave back, for recs to reuse; only
	// a sink recycle was called on keeps them (recycles).
	used, spare [][]kafka.Record
	recycles    bool
}

// maxSpareSlabs bounds the record slabs a sink keeps for reuse: 64 of
// 256 records, about 2 MiB, a commit of 16,384 output records.
const maxSpareSlabs = 64

// recycle takes back every record the sink has cut, for later records:
// the task calls it once none is referenced any more, after a commit has
// produced them all (only a task committing in its own goroutine does).
// From then on the sink keeps its slabs for the next recycle.
func (s *sink) recycle() {
	s.recycles = true
	for _, slab := range s.used {
		clear(slab[:cap(slab)])
		if len(s.spare) < maxSpareSlabs {
			s.spare = append(s.spare, slab[:0])
		}
	}
	clear(s.used)
	s.used, s.recs = s.used[:0], nil
}

// sinkSlab is the size of a slab of record bytes, and sinkRecords the
// number of records of a slab.
const (
	sinkSlab    = 32 << 10
	sinkRecords = 256
)

// encode appends what enc encodes to the sink's slab and returns it, nil
// when enc returns nil.
func (s *sink) encode(enc func([]byte) ([]byte, error)) ([]byte, error) {
	if cap(s.buf)-len(s.buf) < sinkSlab/16 {
		s.buf = make([]byte, 0, sinkSlab)
	}
	start := len(s.buf)
	out, err := enc(s.buf)
	if err != nil || out == nil {
		return nil, err
	}
	if len(out) == start {
		// Nothing written: what the codec returns for no bytes.
		return enc(nil)
	}
	// When the slab was too small out is a new array, holding a copy of
	// the slab, in which the next records go on.
	s.buf = out
	return out[start:len(out):len(out)], nil
}

func newSink(g *topology.Graph, reg registry.Client) (*sink, error) {
	s := &sink{topic: g.Sink.Topic, nKey: g.KeyColumns, nOut: len(g.Output), tsCol: -1, window: g.Sink.Window}
	var err error
	if g.Sink.KeyFormat == internalFormat {
		s.keyCodec, s.valueCodec = newInternalCodec(g.Output[:g.KeyColumns]), newInternalCodec(g.Output[g.KeyColumns:])
		if g.Sink.PlaceBy != "" {
			if s.place, err = format.NewKeyCodecProps(g.Sink.PlaceBy, g.Output[:g.KeyColumns], g.Sink.PlaceProps); err != nil {
				return nil, fmt.Errorf("exec: repartition topic %s placement: %w", g.Sink.Topic, err)
			}
			s.partitions = g.Sink.Partitions
		}
		return s, nil
	}
	for i, c := range g.Output {
		if g.Sink.Timestamp != "" && c.Name == g.Sink.Timestamp {
			s.tsCol = i
		}
	}
	if s.tsCol >= 0 {
		if s.tsRead, err = newTimestampReader(g.Sink.Timestamp, g.Sink.TimestampFormat); err != nil {
			return nil, err
		}
	}
	if s.window != nil && g.Sink.Partitions > 0 {
		s.bareKey, s.partitions = true, g.Sink.Partitions
	}
	sr := format.SR{Registry: reg, Topic: g.Sink.Topic}
	if s.keyCodec, err = format.NewKeyCodecSR(g.Sink.KeyFormat, g.Output[:g.KeyColumns], g.Sink.KeyProps, sr); err != nil {
		return nil, fmt.Errorf("exec: sink %s key: %w", g.Sink.Name, err)
	}
	if s.valueCodec, err = format.NewValueCodecSR(g.Sink.ValueFormat, g.Output[g.KeyColumns:], g.Sink.ValueProps, sr); err != nil {
		return nil, fmt.Errorf("exec: sink %s value: %w", g.Sink.Name, err)
	}
	return s, nil
}

// record encodes one output row; nullValue writes the key with a null
// value. The record carries headers, those of the input record the row
// came from, as Kafka Streams writes them on.
func (s *sink) record(row []any, ts int64, nullValue, keyAbsent bool, headers []kafka.Header) (*kafka.Record, error) {
	var key []byte
	var err error
	bare := 0 // the length of a windowed key without its window
	if !keyAbsent {
		if s.window != nil {
			start, _ := row[s.nOut].(int64)
			end, _ := row[s.nOut+1].(int64)
			key, err = s.encode(func(b []byte) ([]byte, error) {
				k, err := s.keyCodec.Encode(b, row[:s.nKey])
				if err != nil {
					return nil, err
				}
				if k == nil {
					// A null key: the window alone.
					k = b
				}
				bare = len(k) - len(b)
				return AppendWindow(k, s.window, start, end), nil
			})
		} else {
			key, err = s.encode(func(b []byte) ([]byte, error) { return s.keyCodec.Encode(b, row[:s.nKey]) })
		}
		if err != nil {
			return nil, fmt.Errorf("cannot encode key: %w", err)
		}
	}
	if s.tsCol >= 0 && !nullValue {
		if ts, err = s.tsRead.read(row[s.tsCol]); err != nil {
			return nil, fmt.Errorf("sink record time: %w", err)
		}
	}
	var value []byte
	if !nullValue {
		if value, err = s.encode(func(b []byte) ([]byte, error) { return s.valueCodec.Encode(b, row[s.nKey:s.nOut]) }); err != nil {
			return nil, fmt.Errorf("cannot encode value: %w", err)
		}
	}
	partition := int32(-1)
	if s.place != nil && !keyAbsent {
		if s.placeBuf, err = s.place.Encode(s.placeBuf[:0], row[:s.nKey]); err != nil {
			return nil, fmt.Errorf("cannot place key: %w", err)
		}
		partition = kafka.KeyPartition(s.placeBuf, s.partitions)
	} else if s.bareKey && bare > 0 {
		partition = kafka.KeyPartition(key[:bare], s.partitions)
	}
	if len(s.recs) == cap(s.recs) {
		if n := len(s.spare); n > 0 {
			s.recs, s.spare[n-1] = s.spare[n-1], nil
			s.spare = s.spare[:n-1]
		} else {
			s.recs = make([]kafka.Record, 0, sinkRecords)
		}
		if s.recycles {
			s.used = append(s.used, s.recs)
		}
	}
	s.recs = append(s.recs, kafka.Record{Topic: s.topic, Partition: partition, Key: key, Value: value, Timestamp: time.UnixMilli(ts), Headers: headers})
	return &s.recs[len(s.recs)-1], nil
}
