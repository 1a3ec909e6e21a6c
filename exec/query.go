package exec

import (
	"context"
	"errors"
	"fmt"
	"github.com/sluice-sql/sluice/registry"
	"log/slog"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/state"
)

// Deps are the services a query runs on.
type Deps struct {
	Kafka kafka.Client
	// Registry is the schema registry of the AVRO and JSON_SR codecs; nil
	// without one.
	Registry registry.Client
	// Group is the consumer group under which a persistent query commits its
	// input offsets; empty for a push query, which commits nothing.
	Group string
	// ProcessingLog is the topic that receives records the query could not
	// process.
	ProcessingLog string
	// MaxRecordBytes, when positive, is the largest record (key and
	// value bytes) the query reads from its user topics: a larger one
	// goes to the processing log (see MaxRecordBytesProperty).
	MaxRecordBytes int
	// Compression is the compression.type of what the query produces
	// (kafka.Compressions); "" for kafka.DefaultCompression.
	Compression string
	Logger      *slog.Logger
	// Progress, when set, is called after a task moved its position; the
	// engine's flush barrier waits on it.
	Progress func()
	// Now is the wall clock, for processing-log records; default time.Now.
	Now func() time.Time
	// State holds the state of queries with an Aggregate step; required
	// for them.
	State *state.Store
	// StateNamespace names the query's state in State; default the graph's
	// QueryID. A push query passes a name unique to its run.
	StateNamespace string
	// Deletes, when set, receives the deletes of a push query whose rows
	// are a table's, as ksqlDB streams them (tombstones): a key deleted
	// from the source table, a group or a session window that went away
	// (not the rows a WHERE or HAVING drops, which ksqlDB's push query
	// leaves out). The row is laid out as Output's, with the key columns
	// and what the projection computes from them alone set, every other
	// column null. Nil drops them. Like Output, it returns false to end
	// the query.
	Deletes Output
	// EndOffsets, when set, ends a push query once each partition of its
	// source topic reached its offset there (a pull query on a stream: the
	// end offsets when it started). Records from there on are not read.
	EndOffsets []int64
	// ExactlyOnce runs a persistent query under exactly_once_v2: each task
	// commits in Kafka transactions (see eos.go), reads its inputs and
	// changelogs with read_committed and keeps its positions in
	// PositionsTopic, a compacted topic of one partition the caller
	// creates. ServiceID starts the tasks' transactional ids.
	ExactlyOnce    bool
	PositionsTopic string
	ServiceID      string
	// CommitInterval is how long a task gathers records after a poll
	// before it processes them and commits (Kafka Streams'
	// commit.interval.ms): in one transaction under ExactlyOnce, else in
	// one produce, acknowledged before the one offset commit and state
	// write that follow; 0 commits every poll. A task without state under
	// at-least-once does not gather: it pipelines its commits (flight.go).
	CommitInterval time.Duration
	// PersistInterval is how long a task with state keeps committed state
	// in its cache before it writes it to the store (default
	// DefaultPersistInterval); it writes earlier when the cache is over
	// its bound, when no record came for a moment, and when it stops.
	// Pull queries read the store: under load they lag by up to this.
	PersistInterval time.Duration

	// afterCommit, set by tests, runs after a task's transaction
	// committed, before its state is written; an error ends the query as
	// a crash there would. beforeCommit runs before the commit; an error
	// fails the transaction as a failed produce would. positionsEnd runs
	// once a task knows up to where it reads the positions topic.
	afterCommit, beforeCommit func() error
	positionsEnd              func()
	// Partitions, when set, says which input partitions this server owns:
	// Start creates the tasks of those only (in every stage, so that
	// co-partitioned tasks stay together), and commits start offsets for
	// those only. Nil runs every partition.
	Partitions func(p int32) bool
	// Tap, when set, receives the rows a persistent query's sink writes
	// into its user topic (scalable push queries subscribe there).
	Tap Tap
}

// owns reports whether the query runs partition p here.
func (d *Deps) owns(p int32) bool { return d.Partitions == nil || d.Partitions(p) }

// Output receives a push query's rows, one at a time, in the layout of the
// graph's Output schema. row is valid only during the call. It returns false
// to end the query.
type Output func(ctx context.Context, row []any) (more bool, err error)

// Query is a running query: one task per input partition.
type Query struct {
	graph  *topology.Graph
	deps   Deps
	tasks  []*task
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}
	// started is when Start was called.
	started time.Time

	mu  sync.Mutex
	err error
}

// Start builds the graph's operators and starts its tasks. A persistent
// query (with a Sink) resumes from its group's committed offsets; where none
// are committed it starts at g.OffsetReset and commits that start at once,
// so a restart never moves it. out receives a push query's rows and must be
// nil for a persistent query. A materialization (see IsMaterialization) is
// persistent and has neither sink nor output.
//
// Start runs g's physical plan (g.Physical, see topology.Complete): its
// stages, the operator settings of its steps and its state stores. It
// refuses a plan of an older version, which topology.Upgrade completes.
func Start(ctx context.Context, g *topology.Graph, deps Deps, out Output) (*Query, error) {
	if persistent(g) == (out != nil) {
		return nil, errors.New("exec: a query needs exactly one of a sink and an output")
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.StateNamespace == "" {
		deps.StateNamespace = g.QueryID
	}
	if deps.ExactlyOnce && persistent(g) && deps.PositionsTopic == "" {
		return nil, errors.New("exec: an exactly-once query needs a positions topic")
	}
	plan, err := planStages(g)
	if err != nil {
		return nil, err
	}
	if len(g.Physical.Stores) > 0 && deps.State == nil {
		return nil, errors.New("exec: a query with state needs a state store")
	}
	for _, s := range plan {
		if n := len(s.g.Steps); n > 0 && s.g.Steps[n-1].Kind == topology.Repartition && s.g.Sink.Topic == "" {
			return nil, errors.New("exec: a repartition step without a topic")
		}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q := &Query{graph: g, deps: deps, cancel: cancel, done: make(chan struct{}), started: deps.Now()}
	// The stages of joins' right inputs but their last, which the
	// joining task runs, run first, like the main graph's.
	run := runStages(plan)
	for i, s := range run {
		starts, err := startOffsets(ctx, s.g, deps)
		if err != nil {
			cancel()
			q.closeTasks()
			return nil, err
		}
		sides, err := sideStarts(ctx, s, deps, len(starts))
		if err != nil {
			cancel()
			q.closeTasks()
			return nil, err
		}
		var stageOut Output
		if i == len(run)-1 {
			stageOut = out
		}
		for p, off := range starts {
			if !deps.owns(int32(p)) {
				continue
			}
			t, err := newTask(ctx, q, s, int32(p), off, sides[p], stageOut)
			if err != nil {
				cancel()
				q.closeTasks()
				return nil, err
			}
			q.tasks = append(q.tasks, t)
		}
	}
	for _, t := range q.tasks {
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			err := t.run(runCtx)
			if err != nil && runCtx.Err() != nil && errors.Is(err, runCtx.Err()) {
				// Cut short by the query's stop (Stop, a failure of
				// another task, a push query's LIMIT): not a failure.
				err = nil
			}
			if err != nil {
				q.fail(err)
			}
		}()
	}
	go func() {
		q.wg.Wait()
		q.closeTasks()
		close(q.done)
	}()
	return q, nil
}

// startOffsets returns the absolute offset each partition's task starts at.
func startOffsets(ctx context.Context, g *topology.Graph, deps Deps) ([]int64, error) {
	src := g.Source
	// A broker that just started may have no group coordinator yet.
	ctx, cancel := boundedCtx(ctx)
	defer cancel()
	var bounds []kafka.Offsets
	err := retryKafka(ctx, deps.Logger, "list offsets", func() (err error) {
		bounds, err = deps.Kafka.ListOffsets(ctx, src.Topic)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("exec: list offsets of %s: %w", src.Topic, err)
	}
	starts := make([]int64, len(bounds))
	committed := make([]int64, len(bounds))
	for i := range committed {
		committed[i] = -1
	}
	if deps.Group != "" {
		var c []int64
		err := retryKafka(ctx, deps.Logger, "fetch offsets", func() (err error) {
			c, err = deps.Kafka.FetchOffsets(ctx, deps.Group, src.Topic)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("exec: fetch committed offsets of %s: %w", deps.Group, err)
		}
		copy(committed, c)
	}
	fresh := map[int32]int64{}
	for p, b := range bounds {
		switch {
		case committed[p] >= 0:
			starts[p] = committed[p]
		case g.OffsetReset == "earliest":
			starts[p] = b.Start
			fresh[int32(p)] = b.Start
		default:
			starts[p] = b.End
			fresh[int32(p)] = b.End
		}
		if !deps.owns(int32(p)) {
			// Another server's to start and commit.
			delete(fresh, int32(p))
		}
	}
	if deps.Group != "" && len(fresh) > 0 {
		err := retryKafka(ctx, deps.Logger, "commit offsets", func() error {
			return deps.Kafka.CommitOffsets(ctx, deps.Group, map[string]map[int32]int64{src.Topic: fresh})
		})
		if err != nil {
			return nil, fmt.Errorf("exec: commit start offsets of %s: %w", deps.Group, err)
		}
	}
	return starts, nil
}

func (q *Query) fail(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
		q.deps.Logger.Error("query failed", "query", q.graph.QueryID, "err", err)
	}
	q.mu.Unlock()
	q.cancel()
}

func (q *Query) closeTasks() {
	for _, t := range q.tasks {
		t.close()
	}
}

// Unpersisted reports whether a task holds committed state it has not
// written to the store yet, which pull queries do not see. A task writes
// it within moments once no records come; the engine's flush barrier
// waits for that after the positions reached the input ends (read the
// positions first: a task marks its state unpersisted before it moves
// its position).
func (q *Query) Unpersisted() bool {
	for _, t := range q.tasks {
		if t.unpersisted.Load() {
			return true
		}
	}
	return false
}

// Stop stops every task after the batch it is working on (whose output is
// produced and whose offsets are committed) and waits for them. Safe to
// call twice.
func (q *Query) Stop() error {
	q.cancel()
	<-q.done
	return q.Err()
}

// Done is closed when every task has ended: stopped, failed, or (for a push
// query) finished.
func (q *Query) Done() <-chan struct{} { return q.done }

// Err returns the error that ended the query, if any.
func (q *Query) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// Positions returns, per partition of the source topic, the next offset
// the query will read: everything before it is processed, and (for a
// persistent query) committed.
func (q *Query) Positions() []int64 {
	return q.PositionsOf(q.graph.Source.Topic)
}

// PositionsOf is Positions for one of the topics the query reads (the
// sources of its stages, g.Physical.Stages): its source, a join's right
// source, or one of its repartition topics.
//
// A partition several tasks read (the right table of a foreign-key join)
// shows the least of their positions; one no task of this server reads
// (another server owns it, see Deps.Partitions) shows -1.
func (q *Query) PositionsOf(topic string) []int64 {
	pos := map[int32]int64{}
	note := func(p int32, off int64) {
		if old, ok := pos[p]; !ok || off < old {
			pos[p] = off
		}
	}
	for _, t := range q.tasks {
		if t.g.Source.Topic == topic {
			note(t.partition, t.pos.Load())
		}
		for _, s := range t.sides {
			if s.g.Source.Topic == topic {
				for n, p := range s.parts {
					note(p, s.pos[n].Load())
				}
			}
		}
	}
	if len(pos) == 0 {
		return nil
	}
	n := int32(0)
	for p := range pos {
		n = max(n, p+1)
	}
	out := make([]int64, n)
	for p := range out {
		out[p] = -1
	}
	for p, off := range pos {
		if p >= 0 {
			out[p] = off
		}
	}
	return out
}

// Restoring reports whether any task is still restoring its state from
// changelogs, and the share of the changelog records to restore read so
// far, in percent.
func (q *Query) Restoring() (bool, int) {
	var active bool
	var done, total int64
	for _, t := range q.tasks {
		if t.restoring.Load() {
			active = true
		}
		done += t.restored.Load()
		total += t.toRestore.Load()
	}
	if !active {
		return false, 100
	}
	if total == 0 {
		return true, 0
	}
	return true, int(done * 100 / total)
}

// WaitRestored blocks until every task has restored its state from its
// changelogs (or the query ended), or ctx is done. Pull queries call it so
// as not to answer from state a restore is still filling.
func (q *Query) WaitRestored(ctx context.Context) error {
	for _, t := range q.tasks {
		select {
		case <-t.ready:
		case <-q.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Stats returns counters summed over the query's tasks.
func (q *Query) Stats() Stats {
	var s Stats
	add := func(t *task) {
		s.Time.add(&t.stats)
		s.Filtered += t.stats.filtered.Load()
		s.Errors += t.stats.errors.Load()
		s.Late += t.stats.late.Load()
		s.NullsDropped += t.stats.nulls.Load()
		if ms := t.stats.lastTime.Load(); ms > 0 && !t.internal {
			if lt := time.UnixMilli(ms); lt.After(s.LastRecord) {
				s.LastRecord = lt
			}
		}
	}
	for _, t := range q.tasks {
		// Records moving between stages count neither in nor out; both
		// inputs of a join count in.
		if !t.internal {
			s.RecordsIn += t.stats.in.Load()
		}
		if t.g.Sink == q.graph.Sink {
			s.RecordsOut += t.stats.out.Load()
		}
		add(t)
		for _, side := range t.sides {
			if !side.internal {
				s.RecordsIn += side.stats.in.Load()
			}
			add(side.task)
		}
	}
	s.Restoring, s.RestorePercent = q.Restoring()
	return s
}

// Stats are a query's counters.
type Stats struct {
	// RecordsIn are the records read from the query's input topics
	// (both sides of a join); RecordsOut the rows written to its sink or
	// push output.
	RecordsIn, RecordsOut int64
	// Filtered are the rows a WHERE or HAVING dropped.
	Filtered int64
	// Errors are the records and rows sent to the processing log.
	Errors int64
	// Late are the records a window dropped because they came after its
	// grace period (for a hopping window: after one of its windows
	// closed).
	Late int64
	// NullsDropped are the records of a stream whose value is null that
	// the query dropped: a WHERE, GROUP BY, join, table function or push
	// output has no row to make of them, as in ksqlDB. A projection
	// (PARTITION BY included) writes them on with a null value, counted
	// in RecordsOut. For a query over a stream that neither aggregates
	// nor joins, RecordsIn = RecordsOut + Filtered + Errors +
	// NullsDropped.
	NullsDropped int64
	// LastRecord is the timestamp of the last input record processed;
	// zero before the first.
	LastRecord time.Time
	// Restoring is true while the query restores its state from its
	// changelogs, RestorePercent done (100 when not restoring).
	Restoring      bool
	RestorePercent int
	// Time is where the query's tasks spent their wall time, summed over
	// them.
	Time TaskTime
}

// TaskTime splits the wall time of a query's task goroutines (summed over
// the tasks): a task draining a backlog should be at work, and one that
// keeps up with its input waits in its polls.
type TaskTime struct {
	// Poll is the time spent waiting for records.
	Poll time.Duration
	// Work is the processing of what the polls brought: decoding, the
	// operators, the sink's encoding, the state cache.
	Work time.Duration
	// Produce is the time waiting for the outputs' acknowledgement
	// (acks=all); for a task that produces in flights (stateless
	// at-least-once), the wait for the previous batch's flight to land.
	Produce time.Duration
	// Commit is the time waiting for offset commits and transaction
	// commits.
	Commit time.Duration
	// Persist is the time writing committed state to the store.
	Persist time.Duration
}

func (tt *TaskTime) add(c *counters) {
	tt.Poll += time.Duration(c.poll.Load())
	tt.Work += time.Duration(c.work.Load())
	tt.Produce += time.Duration(c.produce.Load())
	tt.Commit += time.Duration(c.commit.Load())
	tt.Persist += time.Duration(c.persist.Load())
}

// Lag is how far a query is behind its input topics.
type Lag struct {
	// Records is the sum over the partitions of the query's input topics
	// of the end offset minus the query's position.
	Records int64
	// Seconds is, over the partitions with records left to process, the
	// longest time since the timestamp of the last record processed there
	// (since the query started when there was none); 0 without lag.
	Seconds float64
}

// Lag asks Kafka for the end offsets of the query's input topics (the
// source and the right inputs of its joins; not its internal repartition
// topics) and compares them with the query's positions.
func (q *Query) Lag(ctx context.Context) (Lag, error) {
	var lag Lag
	now := q.deps.Now()
	seen := map[string]bool{}
	for _, t := range q.tasks {
		if t.internal || seen[t.g.Source.Topic] {
			continue
		}
		topic := t.g.Source.Topic
		seen[topic] = true
		ends, err := q.deps.Kafka.ListOffsets(ctx, topic)
		if err != nil {
			return Lag{}, fmt.Errorf("exec: list offsets of %s: %w", topic, err)
		}
		pos := q.PositionsOf(topic)
		for p, b := range ends {
			if p >= len(pos) || pos[p] < 0 || b.End <= pos[p] {
				continue
			}
			lag.Records += b.End - pos[p]
			since := q.started
			for _, o := range q.tasks {
				if o.g.Source.Topic == topic && int(o.partition) == p {
					if ms := o.stats.lastTime.Load(); ms > 0 {
						since = time.UnixMilli(ms)
					}
				}
			}
			lag.Seconds = max(lag.Seconds, now.Sub(since).Seconds())
		}
	}
	for _, t := range q.tasks {
		for _, s := range t.sides {
			topic := s.g.Source.Topic
			if s.internal || seen[topic] {
				continue
			}
			seen[topic] = true
			ends, err := q.deps.Kafka.ListOffsets(ctx, topic)
			if err != nil {
				return Lag{}, fmt.Errorf("exec: list offsets of %s: %w", topic, err)
			}
			pos := q.PositionsOf(topic)
			for p, b := range ends {
				if p < len(pos) && pos[p] >= 0 && b.End > pos[p] {
					lag.Records += b.End - pos[p]
					since := q.started
					if ms := s.stats.lastTime.Load(); ms > 0 {
						since = time.UnixMilli(ms)
					}
					lag.Seconds = max(lag.Seconds, now.Sub(since).Seconds())
				}
			}
		}
	}
	return lag, nil
}

// stopGrace bounds how long a stopping task may take to produce and commit
// the batch it is working on.
const stopGrace = 30 * time.Second
