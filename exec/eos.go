package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/internal/failpoint"
	"github.com/sluice-sql/sluice/kafka"
)

// Exactly-once (processing.guarantee exactly_once_v2): each task of a
// persistent query owns a transactional producer, and one commit is one
// Kafka transaction holding the batch's sink and processing-log records,
// its changelog records, and one record of the query's positions topic
// with the offsets the task has consumed after the batch:
//
//	Begin ─▶ produce changelogs ─▶ produce outputs ─▶ produce positions ─▶ Commit
//	                                                                        │
//	      Pebble batch (with the changelog offsets) ◀── group offsets ◀─────┘
//
// The transactional id names the task (service, query, stage input topic,
// partition), so a new owner of the task fences the previous one when its
// producer registers (Init), whichever server that one runs on: the broker
// aborts the older producer's open transaction and refuses its later
// writes. No consumer-group generation is involved.
//
// A task starts by registering its producer, then reads its positions
// from the positions topic with read_committed (falling back on the
// group's offsets for a query that ran at-least-once before), then
// restores its state from its changelogs up to their last stable offset:
// what a crash left between the transaction's commit and the Pebble write
// is read back from the changelogs.

// txnError is a transaction that failed and was aborted: nothing of the
// batch is visible, and the task processes it again from its positions.
type txnError struct{ err error }

func (e *txnError) Error() string { return "exec: transaction aborted: " + e.err.Error() }
func (e *txnError) Unwrap() error { return e.err }

// TransactionalID is the transactional id of the task of query reading
// partition of topic (the input of its stage).
func TransactionalID(serviceID, queryID, topic string, partition int32) string {
	return serviceID + "-" + queryID + "-" + topic + "-" + strconv.Itoa(int(partition))
}

// positionsKey is the key of a task's record in the positions topic.
func positionsKey(topic string, partition int32) []byte {
	return []byte(topic + "/" + strconv.Itoa(int(partition)))
}

// exactlyOnce is the commit mode of a task under exactly-once.
type exactlyOnce struct {
	t *task
	// txn is the task's producer, transactional, with its id.
	txn   kafka.TxnProducer
	txnID string
	// written are where the task's committed transactions ended in the
	// partitions they wrote, until readers can read that far (see
	// WaitCommitted).
	written writtenEnds
}

// newExactlyOnce gives t its transactional producer and returns its
// commit mode.
func newExactlyOnce(t *task, clientID string) (*exactlyOnce, error) {
	deps := t.q.deps
	id := TransactionalID(deps.ServiceID, t.g.QueryID, t.g.Source.Topic, t.partition)
	p, err := deps.Kafka.NewProducer(kafka.ProducerOptions{ClientID: clientID, TransactionalID: id, Compression: deps.Compression})
	if err != nil {
		return nil, fmt.Errorf("exec: transactional producer %s: %w", id, err)
	}
	txn, ok := p.(kafka.TxnProducer)
	if !ok {
		p.Close()
		return nil, fmt.Errorf("exec: transactional producer %s: %w", id, kafka.ErrNoTransactions)
	}
	t.producer = p
	return &exactlyOnce{t: t, txn: txn, txnID: id}, nil
}

func (m *exactlyOnce) transactional() bool { return true }

// A transaction's commit returns once it is done: nothing is in the air.
func (m *exactlyOnce) failed() bool { return false }
func (m *exactlyOnce) land() error  { return nil }

func (m *exactlyOnce) watch(ctx context.Context) (context.Context, context.CancelFunc) {
	return ctx, func() {}
}

func (m *exactlyOnce) passSource(next int64) bool {
	m.t.pos.Store(next)
	return true
}

// fenced is the error that stops a task a newer instance took over.
func (m *exactlyOnce) fenced(err error) error {
	return fmt.Errorf("exec: fenced by a newer instance of task %s[%d] (transactional id %s); this instance stopped writing: %w",
		m.t.g.Source.Topic, m.t.partition, m.txnID, err)
}

// start registers the task's transactional producer, fencing older
// instances of the task, and loads the positions the last committed
// transaction recorded.
func (m *exactlyOnce) start(ctx context.Context) error {
	initCtx, cancel := boundedCtx(ctx)
	defer cancel()
	err := retryKafka(initCtx, m.t.q.deps.Logger, "init transactions", func() error { return m.txn.Init(initCtx) })
	if errors.Is(err, kafka.ErrFenced) {
		return m.fenced(err)
	}
	if err != nil {
		return fmt.Errorf("exec: init transactional producer %s: %w", m.txnID, err)
	}
	return m.loadPositions(ctx)
}

// loadPositions reads the query's positions topic to its end and, when
// it holds a record for the task, moves the task and its sides to the
// positions it gives.
//
// To the end, not the last stable offset: the query's other tasks share
// the topic's partition, and one of them that died in a transaction
// holds the last stable offset back until its next instance registers
// (or the transaction times out), while t's own later transactions may
// have committed after it. Reading with read_committed waits for that
// transaction's end.
func (m *exactlyOnce) loadPositions(ctx context.Context) error {
	t := m.t
	deps := t.q.deps
	topic := deps.PositionsTopic
	var bounds []kafka.Offsets
	lctx, cancel := boundedCtx(ctx)
	err := retryKafka(lctx, deps.Logger, "list offsets", func() (err error) {
		bounds, err = deps.Kafka.ListOffsets(lctx, topic)
		return err
	})
	cancel()
	if err != nil {
		return fmt.Errorf("exec: list offsets of positions topic %s: %w", topic, err)
	}
	if deps.positionsEnd != nil {
		deps.positionsEnd()
	}
	if len(bounds) == 0 || bounds[0].Start >= bounds[0].End {
		return nil
	}
	c, err := deps.Kafka.NewConsumer(kafka.ConsumerOptions{ClientID: m.txnID + "-positions", ReadCommitted: true, KeepControl: true})
	if err != nil {
		return err
	}
	defer c.Close()
	c.Assign(map[string]map[int32]int64{topic: {0: bounds[0].Start}})
	key := string(positionsKey(t.g.Source.Topic, t.partition))
	var last []byte
	for next, end := bounds[0].Start, bounds[0].End; next < end; {
		recs, err := c.Poll(ctx)
		if err != nil {
			return fmt.Errorf("exec: read positions topic %s: %w", topic, err)
		}
		for _, r := range recs {
			if r.Offset >= end && !r.Control {
				// Written after the task started: not its own, and
				// everything before the end was read (or compacted).
				next = end
				break
			}
			next = r.Offset + 1
			if !r.Control && string(r.Key) == key {
				last = r.Value
			}
		}
	}
	if last == nil {
		return nil
	}
	var pos map[string]int64
	if err := json.Unmarshal(last, &pos); err != nil {
		return fmt.Errorf("exec: bug: positions record %s of %s: %w", key, topic, err)
	}
	if off, ok := pos[t.g.Source.Topic]; ok {
		t.pos.Store(off)
	}
	for _, s := range t.sides {
		if s.global {
			continue
		}
		if off, ok := pos[s.g.Source.Topic]; ok {
			for n := range s.parts {
				s.next[n] = off
				s.pos[n].Store(off)
			}
		}
	}
	if t.q.deps.Progress != nil {
		t.q.deps.Progress()
	}
	return nil
}

// positionsRecord is t's record of the positions topic after the batch:
// next for its source partition, and its sides' (but global ones', kept
// in state) for the same partition of theirs.
func (t *task) positionsRecord(next int64) (*kafka.Record, error) {
	pos := map[string]int64{t.g.Source.Topic: next}
	for _, s := range t.sides {
		if s.global {
			continue
		}
		for n := range s.parts {
			pos[s.g.Source.Topic] = s.next[n]
		}
	}
	v, err := json.Marshal(pos)
	if err != nil {
		return nil, err
	}
	return &kafka.Record{Topic: t.q.deps.PositionsTopic, Partition: 0, Key: positionsKey(t.g.Source.Topic, t.partition), Value: v, Timestamp: t.q.deps.Now()}, nil
}

// commit puts the pending records (changelogs first, nLog of them) and
// the positions record in one transaction; then, best effort, it commits
// the group's offsets for lag tools.
func (m *exactlyOnce) commit(ctx context.Context, next int64, nLog int) (bool, error) {
	return false, m.commitTxn(ctx, next, nLog)
}

func (m *exactlyOnce) commitTxn(ctx context.Context, next int64, nLog int) error {
	t := m.t
	deps := t.q.deps
	pos, err := t.positionsRecord(next)
	if err != nil {
		return err
	}
	defer func() {
		clear(t.pending)
		t.pending = t.pending[:0]
	}()
	recs := append(t.pending, pos)
	all := recs
	if err := m.txn.Begin(); err != nil {
		return m.abort(ctx, err)
	}
	if failpoint.Enabled() && nLog > 0 {
		// Half of the changelog records go first, so that a kill in the
		// middle of the cache flush leaves an open transaction.
		if half := nLog / 2; half > 0 {
			if err := m.txn.Produce(ctx, recs[:half]); err != nil {
				return m.abort(ctx, err)
			}
			recs = recs[half:]
		}
		failpoint.Hit("cache-flush")
	}
	producing := time.Now()
	err = m.txn.Produce(ctx, recs)
	timed(&t.stats.produce, producing)
	if err != nil {
		return m.abort(ctx, err)
	}
	committing := time.Now()
	defer timed(&t.stats.commit, committing)
	if deps.beforeCommit != nil {
		if err := deps.beforeCommit(); err != nil {
			return m.abort(ctx, err)
		}
	}
	if err := m.txn.Commit(ctx); err != nil {
		return m.abort(ctx, err)
	}
	m.written.note(all)
	failpoint.Hit("txn-committed")
	if deps.afterCommit != nil {
		if err := deps.afterCommit(); err != nil {
			return err
		}
	}
	if deps.Group != "" {
		offs := map[string]map[int32]int64{t.g.Source.Topic: {t.partition: next}}
		t.sideOffsets(offs)
		if err := deps.Kafka.CommitOffsets(ctx, deps.Group, offs); err != nil {
			deps.Logger.Warn("cannot commit the group's offsets after a transaction; lag tools show the query behind until the next commit", "err", err)
		}
	}
	return nil
}

// abort aborts the open transaction after err; a fenced task stops.
func (m *exactlyOnce) abort(ctx context.Context, err error) error {
	if errors.Is(err, kafka.ErrFenced) {
		return m.fenced(err)
	}
	if aerr := m.txn.Abort(ctx); aerr != nil {
		if errors.Is(aerr, kafka.ErrFenced) {
			return m.fenced(aerr)
		}
		return fmt.Errorf("exec: abort transaction of %s after %v: %w", m.txnID, err, aerr)
	}
	return &txnError{err}
}

// rewind brings t back to its last committed positions after an aborted
// transaction: the state cache and the operators are rebuilt from the
// store, and the consumer reads again from the positions.
func (t *task) rewind() error {
	if t.cache != nil {
		t.cache.Reset()
	}
	clear(t.pending)
	t.pending, t.marks = t.pending[:0], t.marks[:0]
	t.dropHeld()
	if err := t.reopen(); err != nil {
		return err
	}
	for _, s := range t.sides {
		clear(s.pending)
		s.pending = s.pending[:0]
		for n := range s.parts {
			s.next[n] = s.pos[n].Load()
		}
		if err := s.reopen(); err != nil {
			return err
		}
	}
	t.reassign()
	return nil
}

// reopen builds t's operators and sink again, forgetting what they held in
// memory.
func (t *task) reopen() error {
	for _, op := range t.ops {
		_ = op.Close(context.Background())
	}
	t.ops, t.sink = nil, nil
	_, err := newTaskParts(t, t.st)
	return err
}

// Visibility. Kafka confirms a transaction's commit once the coordinator
// has recorded the decision, and writes the commit markers into the
// transaction's partitions after that: until a partition's marker is
// written, read_committed readers (and the partition's last stable offset)
// stop before the transaction's records there. So a task's position, which
// moves when its commit returns, may cover records nobody can read yet.
// Each task notes where its committed transactions ended in every
// partition they wrote (written), and WaitCommitted waits until the last
// stable offsets pass those ends, for the flush barrier:
//
//	commit returns ─▶ position moves ─▶ barrier: positions at the input ends
//	      │                                   │
//	      └─▶ markers written ─▶ LSO ≥ ends ─▶ WaitCommitted returns ─▶ drained

// partitionKey names a topic's partition.
type partitionKey struct {
	topic     string
	partition int32
}

// writtenEnds is, per partition a task's transactions wrote, the offset
// after the last record they wrote there. The task's goroutine notes a
// commit's records; WaitCommitted reads and forgets them.
type writtenEnds struct {
	mu   sync.Mutex
	ends map[partitionKey]int64
}

// note records the ends of recs, a committed transaction's records (their
// offsets set by the produce).
func (w *writtenEnds) note(recs []*kafka.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ends == nil {
		w.ends = map[partitionKey]int64{}
	}
	var last partitionKey
	end := int64(-1)
	for _, r := range recs {
		if r.Topic != last.topic || r.Partition != last.partition {
			if end >= 0 {
				w.ends[last] = max(w.ends[last], end)
			}
			last, end = partitionKey{r.Topic, r.Partition}, -1
		}
		end = max(end, r.Offset+1)
	}
	if end >= 0 {
		w.ends[last] = max(w.ends[last], end)
	}
}

// snapshot copies the ends noted so far into into.
func (w *writtenEnds) snapshot(into map[partitionKey]int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, end := range w.ends {
		into[k] = max(into[k], end)
	}
}

// forget drops the ends that have not moved past seen, which readers
// can now read.
func (w *writtenEnds) forget(seen map[partitionKey]int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, end := range w.ends {
		if s, ok := seen[k]; ok && end <= s {
			delete(w.ends, k)
		}
	}
}

// WaitCommitted blocks until read_committed readers can read every record
// the query's tasks committed in transactions so far (exactly-once; an
// at-least-once query returns at once), or ctx is done. Positions report
// what a task consumed and committed; under exactly-once the commit
// markers of its last transaction may still be on their way (see
// writtenEnds), and Engine.Flush waits for them with this.
func (q *Query) WaitCommitted(ctx context.Context) error {
	want := map[partitionKey]int64{}
	for _, t := range q.tasks {
		if m, ok := t.mode.(*exactlyOnce); ok {
			m.written.snapshot(want)
		}
	}
	if len(want) == 0 {
		return nil
	}
	topics := map[string]bool{}
	for k := range want {
		topics[k.topic] = true
	}
	wait := time.Millisecond
	for {
		behind := ""
		for topic := range topics {
			bounds, err := q.deps.Kafka.ListStableOffsets(ctx, topic)
			if errors.Is(err, kafka.ErrUnknownTopic) {
				// Deleted (a dropped sink): nothing left to read.
				delete(topics, topic)
				continue
			}
			if err != nil {
				return fmt.Errorf("exec: list stable offsets of %s: %w", topic, err)
			}
			done := true
			for k, end := range want {
				if k.topic == topic && int(k.partition) < len(bounds) && bounds[k.partition].End < end {
					done = false
					behind = fmt.Sprintf("%s[%d]", topic, k.partition)
				}
			}
			if done {
				delete(topics, topic)
			}
		}
		if behind == "" {
			for _, t := range q.tasks {
				if m, ok := t.mode.(*exactlyOnce); ok {
					m.written.forget(want)
				}
			}
			return nil
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("exec: the last transaction of query %s is not readable in %s yet: %w", q.graph.QueryID, behind, ctx.Err())
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
