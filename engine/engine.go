package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/sluice-sql/sluice/registry"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/state"
)

// Config configures an Engine.
type Config struct {
	// Kafka is the cluster client; required. The engine does not close it.
	Kafka kafka.Client
	// DataDir holds local state; required.
	DataDir string
	// ServiceID names this Sluice cluster: it prefixes internal topics and
	// consumer groups. Default "sluice".
	ServiceID string
	// Logger receives the engine's logs; default slog.Default().
	Logger *slog.Logger
	// Now is the wall clock: the time of rows inserted with INSERT VALUES
	// and of processing-log records. Default time.Now; tests fix it.
	Now func() time.Time
	// ProcessingGuarantee is the default processing.guarantee of new
	// persistent queries: at_least_once (the default) or exactly_once_v2,
	// which needs a Kafka client that runs transactions (franz-go).
	ProcessingGuarantee string
	// Cluster, when set, makes the engine one server of a cluster with
	// the others sharing ServiceID (see ClusterConfig); nil runs every
	// partition of every query here.
	Cluster *ClusterConfig
	// Registry is the schema registry of the AVRO, PROTOBUF and JSON_SR
	// formats; nil refuses those formats with an error that says to
	// start the server with --schema-registry-url (or in playground mode).
	Registry registry.Client
	// ReadOnlyTopics are ksqlDB's ksql.readonly.topics: regular
	// expressions, each matching whole names, of topics no statement
	// registers a source over, writes, PRINTs or deletes. nil is
	// DefaultReadOnlyTopics; empty is none. The server's own topics
	// (InternalTopicPrefix, OwnTopics) are protected whatever it holds.
	ReadOnlyTopics []string
	// OwnTopics are topics the server keeps besides its InternalTopicPrefix
	// ones (the built-in schema registry's journal): protected as
	// internal topics.
	OwnTopics []string
	// MaxRecordBytes is the default sluice.max.record.bytes: the largest
	// record (key and value bytes) a persistent query reads; a larger one
	// goes to the processing log. Default exec.DefaultMaxRecordBytes.
	MaxRecordBytes int
	// StateMemory bounds, in bytes, the state the persistent queries keep
	// in memory beside the state store: the task caches and the groups and
	// windows the aggregations keep decoded share it, and past it they
	// write to and read from Pebble instead (see state.Budget). 0 means
	// StateMemoryFor(0); negative, no bound.
	StateMemory int64
	// StatementTimeout bounds how long one statement (of Execute, or a
	// typed call such as PullQuery or Insert) runs before the engine stops
	// it with an error naming the setting, as long as it has not committed
	// (see statement.go). Zero is DefaultStatementTimeout; negative is none.
	// A push query's or PRINT's stream runs without it once started.
	StatementTimeout time.Duration
	// PushV2Enabled is ksqlDB's ksql.query.push.v2.enabled: push queries
	// that qualify are served from the rows of the persistent query
	// writing their source (scalable push queries, see scalable_push.go)
	// unless the session sets the property to false.
	PushV2Enabled bool
	// MaxPushQueries is ksqlDB's ksql.max.push.queries: how many push
	// queries and PRINTs may run at once, whoever started them; the next
	// is refused with ksqlDB's message. Zero is DefaultMaxPushQueries;
	// negative refuses every push query (ksqlDB's 0).
	MaxPushQueries int
	// Connect is the Kafka Connect worker the connector statements (CREATE
	// SOURCE|SINK CONNECTOR, DROP, DESCRIBE, SHOW CONNECTORS) ask; nil
	// refuses them with an error that says how to configure one.
	Connect *connect.Client
	// ConnectTopics are the Kafka Connect worker's own topics (its config,
	// offset and status storage): read-only whatever ReadOnlyTopics says.
	ConnectTopics []string
}

// Engine is Sluice's one API: it runs statements, persistent queries and
// push queries. Its methods are safe for concurrent use.
type Engine struct {
	cfg Config
	log *slog.Logger
	cat *catalog.Catalog
	// statuses are the command statuses /status gives (command_status.go).
	statuses statuses
	// pullSeq numbers pull queries (pullQueryID).
	pullSeq    atomic.Int64
	commands   string // the command log topic
	processing string // the processing log topic
	// replays is the compacted topic keeping each query's replay
	// state (see replayState).
	replays string

	// ddl serialises statements that change the catalog, so that what is
	// checked is still true when its command is written. A statement
	// waiting for it gives up when its context ends.
	ddl stmtLock
	// replayMu serialises REPLAY statements, which move replay positions.
	replayMu stmtLock
	// cmdNext is the offset of the first command of the log not applied
	// yet; guarded by ddl. In a cluster, commands are applied in the log's
	// order only (see write and tailCommands).
	cmdNext int64

	prodMu   sync.Mutex
	producer kafka.Producer

	// store holds the state of every stateful query, in DataDir.
	store *state.Store

	mu        sync.Mutex
	running   map[string]*exec.Query
	transient map[string]*exec.Query
	// pushState names the state of each running push query that has any.
	pushState map[string]string
	// pushTopics are the repartition topics of each running push query
	// that has any.
	pushTopics map[string][]string
	pushSeq    int
	// scalable are the running scalable push queries, by id; spqSeq
	// numbers them.
	scalable map[string]*tapSub
	spqSeq   int
	// taps are the row taps of the persistent queries that scalable push
	// queries read.
	taps taps
	// pushOpen counts the push queries and PRINTs started whose Stream
	// is not closed yet, against MaxPushQueries.
	pushOpen int
	closed   bool
	progress chan struct{} // closed and replaced whenever a task moves

	// guard says which topics statements may not touch.
	guard *topicGuard
	// skips are the command log records not applied.
	skipMu sync.Mutex
	skips  skipped

	// shared holds the readers that live-tail push queries share.
	shared *sharedReads

	// cluster is the cluster membership; nil outside cluster mode.
	cluster *cluster
}

// Open starts an engine: it replays the command log to rebuild the catalog
// and restarts every persistent query found there.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Kafka == nil {
		return nil, errors.New("engine: Config.Kafka is required")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("engine: Config.DataDir is required")
	}
	if cfg.ServiceID == "" {
		cfg.ServiceID = "sluice"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StateMemory == 0 {
		cfg.StateMemory = StateMemoryFor(0)
	}
	if cfg.MaxRecordBytes <= 0 {
		cfg.MaxRecordBytes = exec.DefaultMaxRecordBytes
	}
	if cfg.ProcessingGuarantee == "" {
		cfg.ProcessingGuarantee = AtLeastOnce
	}
	if cfg.StatementTimeout == 0 {
		cfg.StatementTimeout = DefaultStatementTimeout
	}
	if cfg.MaxPushQueries == 0 {
		cfg.MaxPushQueries = DefaultMaxPushQueries
	}
	g, deprecated, err := ParseGuarantee(cfg.ProcessingGuarantee)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if deprecated {
		cfg.Logger.Warn("processing.guarantee 'exactly_once' is deprecated; running exactly_once_v2")
	}
	cfg.ProcessingGuarantee = g
	if g == ExactlyOnceV2 {
		if err := checkTransactions(cfg.Kafka); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("engine: data directory: %w", err)
	}
	e := &Engine{
		cfg:        cfg,
		log:        cfg.Logger,
		cat:        catalog.New(),
		commands:   "_sluice-" + cfg.ServiceID + "-command-log",
		processing: cfg.ServiceID + "_processing_log",
		replays:    "_sluice-" + cfg.ServiceID + "-replays",
		running:    map[string]*exec.Query{},
		transient:  map[string]*exec.Query{},
		pushState:  map[string]string{},
		pushTopics: map[string][]string{},
		scalable:   map[string]*tapSub{},
		progress:   make(chan struct{}),
		ddl:        newStmtLock(),
		replayMu:   newStmtLock(),
	}
	if e.guard, err = newTopicGuard(cfg, e.processing); err != nil {
		return nil, err
	}
	e.shared = newSharedReads(cfg.Kafka, cfg.Logger)
	if cfg.Cluster != nil {
		if _, ok := cfg.Kafka.(kafka.Membership); !ok {
			return nil, fmt.Errorf("engine: this Kafka client cannot run a cluster of servers: %w", kafka.ErrNotSupported)
		}
		e.cluster = &cluster{cfg: *cfg.Cluster, wake: make(chan struct{}, 1)}
		e.cluster.slots.Store(1)
	}
	if err := e.ensureTopic(ctx, e.commands, map[string]string{"cleanup.policy": "delete", "retention.ms": "-1"}); err != nil {
		return nil, err
	}
	if err := e.ensureTopic(ctx, e.processing, nil); err != nil {
		return nil, err
	}
	if err := e.ensureTopic(ctx, e.replays, map[string]string{"cleanup.policy": "compact"}); err != nil {
		return nil, err
	}

	if e.store, err = state.Open(filepath.Join(cfg.DataDir, "state-store"), state.Options{Logger: cfg.Logger, MemoryBudget: cfg.StateMemory}); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if e.producer, err = cfg.Kafka.NewProducer(kafka.ProducerOptions{ClientID: "sluice-engine"}); err != nil {
		_ = e.store.Close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	next, err := e.replay(ctx)
	e.cmdNext = next
	if err != nil {
		e.producer.Close()
		_ = e.store.Close()
		return nil, err
	}
	e.declareProcessingLog()
	// In cluster mode this only notes the partitions the queries need:
	// they start on the first assignment.
	for _, q := range e.cat.Queries() {
		if q.State != catalog.Running {
			continue
		}
		if err := e.startPersistent(ctx, q); err != nil {
			e.log.Error("cannot restart query", "query", q.ID, "err", err)
		}
	}
	if e.cluster != nil {
		if err := e.joinCluster(ctx, next); err != nil {
			_ = e.Close()
			return nil, err
		}
	}
	e.log.Info("engine ready", "sources", len(e.cat.Sources()), "queries", len(e.cat.Queries()), "data_dir", filepath.Clean(cfg.DataDir))
	return e, nil
}

func (e *Engine) ensureTopic(ctx context.Context, name string, configs map[string]string) error {
	err := e.createTopic(ctx, kafka.TopicSpec{Name: name, Partitions: 1, Configs: configs})
	if err != nil && !errors.Is(err, kafka.ErrTopicExists) {
		return fmt.Errorf("engine: create internal topic %s: %w", name, err)
	}
	return nil
}

// createTopic creates a topic and waits until it can be used (see
// kafka.AwaitTopic): a real cluster acknowledges a creation before every
// broker knows the topic. It returns kafka.ErrTopicExists, after the same
// wait, when the topic was there already.
func (e *Engine) createTopic(ctx context.Context, spec kafka.TopicSpec) error {
	err := e.cfg.Kafka.CreateTopic(ctx, spec)
	if err != nil && !errors.Is(err, kafka.ErrTopicExists) {
		return err
	}
	if werr := kafka.AwaitTopic(ctx, e.cfg.Kafka, spec.Name, spec.Partitions); werr != nil {
		return werr
	}
	return err
}

// write appends a command to the log (acknowledged by all in-sync replicas)
// and applies it to the catalog. It is not cancelled: a statement commits
// (see commit) before it writes, and ctx's end would leave the command
// written but not applied here.
func (e *Engine) write(ctx context.Context, cmd *catalog.Command) error {
	ctx = context.WithoutCancel(ctx)
	b, err := cmd.Encode()
	if err != nil {
		return err
	}
	rec := &kafka.Record{Topic: e.commands, Partition: 0, Value: b, Timestamp: e.cfg.Now()}
	if err := e.produce(ctx, []*kafka.Record{rec}); err != nil {
		return fmt.Errorf("cannot write to the command log: %w", err)
	}
	if st, ok := ctx.Value(stmtKey{}).(*stmtState); ok {
		st.lastCommand.Store(rec.Offset + 1)
	}
	if e.cluster != nil {
		// Other servers may have written commands before this one: apply
		// them first, so that every server applies the log in one order
		// and a statement racing another's is refused on all of them.
		if err := e.catchUp(ctx, rec.Offset); err != nil {
			return err
		}
		e.cmdNext = rec.Offset + 1
		if err := e.cat.Apply(cmd); err != nil {
			return fmt.Errorf("another server of the cluster ran a conflicting statement first (%s); look at the catalog again (SHOW STREAMS, SHOW TABLES, SHOW QUERIES) and run the statement again if it still applies", strings.TrimPrefix(err.Error(), "catalog: "))
		}
		return nil
	}
	return e.cat.Apply(cmd)
}

func (e *Engine) produce(ctx context.Context, recs []*kafka.Record) error {
	e.prodMu.Lock()
	defer e.prodMu.Unlock()
	return e.producer.Produce(ctx, recs)
}

// internalPrefix starts the names of the internal topics (changelogs) of
// persistent queries.
func (e *Engine) internalPrefix() string {
	return "_sluice-" + e.cfg.ServiceID + "-"
}

// InternalTopicPrefix starts the names of the internal topics of every
// persistent query: the prefix, the query's id, a dash, then the topic's
// role (KafkaTopic_Right-Reduce-changelog, Join-left-repartition, ...).
func (e *Engine) InternalTopicPrefix() string { return e.internalPrefix() }

// groupOf is the consumer group of a persistent query.
func (e *Engine) groupOf(queryID string) string {
	return "_sluice-" + e.cfg.ServiceID + "-query-" + queryID
}

// ConsumerGroup is the consumer group whose committed offsets are the
// input positions of persistent query queryID (as consumer-lag monitors
// read them).
func (e *Engine) ConsumerGroup(queryID string) string { return e.groupOf(queryID) }

// ensureTopics creates the internal topics of a persistent query that its
// physical plan lists (changelogs and repartition topics), with the
// partitions and configuration the plan gives. Those partition counts
// derive from the source's partition count when the query was planned,
// which the source topic must still have: a task of each stage owns one
// partition of each topic.
func (e *Engine) ensureTopics(ctx context.Context, q *catalog.Query) error {
	p := q.Plan.Physical
	if p == nil {
		return fmt.Errorf("engine: query %s has no physical plan, which every plan is given when it is planned or read from the command log; terminate the query and run its statement again", q.ID)
	}
	var internal []topology.Topic
	for _, t := range p.Topics {
		if t.Role != topology.SinkTopic {
			internal = append(internal, t)
		}
	}
	if len(internal) == 0 {
		return nil
	}
	src := q.Plan.Source
	bounds, err := e.cfg.Kafka.ListOffsets(ctx, src.Topic)
	if err != nil {
		return fmt.Errorf("engine: list offsets of %s: %w", src.Topic, err)
	}
	if n := int32(len(bounds)); n != src.Partitions {
		return fmt.Errorf("engine: query %s reads topic %s, which has %d partitions, but the query was planned for %d: its state and internal topics are laid out for %d. "+
			"Terminate the query (TERMINATE %s) and run its statement again to plan it for %d partitions",
			q.ID, src.Topic, n, src.Partitions, src.Partitions, q.ID, n)
	}
	for _, t := range internal {
		err := e.createTopic(ctx, kafka.TopicSpec{Name: t.Name, Partitions: t.Partitions, Configs: t.Config})
		if err != nil && !errors.Is(err, kafka.ErrTopicExists) {
			return fmt.Errorf("engine: create %s topic %s of query %s: %w", t.Role, t.Name, q.ID, err)
		}
	}
	return nil
}

// dropState deletes the local state and the internal topics (changelogs,
// repartition topics) of a terminated persistent query; failures are
// logged.
func (e *Engine) dropState(ctx context.Context, id string, q *catalog.Query) {
	if q == nil || q.Plan == nil || q.Plan.Physical == nil {
		return
	}
	p := q.Plan.Physical
	if len(p.Stores) > 0 {
		if err := e.store.DropQuery(id); err != nil {
			e.log.Warn("cannot delete the state of a terminated query", "query", id, "err", err)
		}
	}
	for _, t := range p.Topics {
		if t.Role == topology.SinkTopic {
			continue
		}
		if err := e.cfg.Kafka.DeleteTopic(ctx, t.Name); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
			e.log.Warn("cannot delete the "+string(t.Role)+" topic of a terminated query", "query", id, "topic", t.Name, "err", err)
		}
	}
}

func (e *Engine) startPersistent(ctx context.Context, q *catalog.Query) error {
	if err := e.ensureTopics(ctx, q); err != nil {
		return err
	}
	deps := exec.Deps{
		Kafka:         e.cfg.Kafka,
		Registry:      e.cfg.Registry,
		Group:         e.groupOf(q.ID),
		ProcessingLog: e.processing,
		Logger:        e.log.With("query", q.ID),
		Progress:      e.notify,
		Now:           e.cfg.Now,
		State:         e.store,
		Tap:           e.taps.tap(q.ID),
		// Exactly-once tasks gather their polls into one transaction.
		CommitInterval: commitInterval,
		// A query created before the property existed reads the server's.
		MaxRecordBytes: e.cfg.MaxRecordBytes,
	}
	if q.MaxRecordBytes > 0 {
		deps.MaxRecordBytes = q.MaxRecordBytes
	}
	deps.Compression = q.Compression
	if e.cluster != nil {
		owns, assigned, err := e.clusterPartitions(ctx, q.Plan.Source.Topic)
		if err != nil {
			return err
		}
		if !assigned {
			return nil
		}
		e.mu.Lock()
		_, runs := e.running[q.ID]
		e.mu.Unlock()
		if runs {
			return nil
		}
		deps.Partitions = owns
	}
	if e.guaranteeOf(q) == ExactlyOnceV2 {
		if err := e.ensurePositionsTopic(ctx, q.ID); err != nil {
			return err
		}
		deps.ExactlyOnce, deps.PositionsTopic, deps.ServiceID = true, e.positionsTopic(q.ID), e.cfg.ServiceID
	}
	rq, err := exec.Start(ctx, q.Plan, deps, nil)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.running[q.ID] = rq
	e.mu.Unlock()
	return nil
}

// dropTopics deletes internal topics of a query that ended (what names
// it in the log); failures are logged.
func (e *Engine) dropTopics(ctx context.Context, what string, topics []string) {
	for _, name := range topics {
		if err := e.cfg.Kafka.DeleteTopic(ctx, name); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
			e.log.Warn("cannot delete the internal topic of a "+what, "topic", name, "err", err)
		}
	}
}

// notify wakes Flush waiters.
func (e *Engine) notify() {
	e.mu.Lock()
	close(e.progress)
	e.progress = make(chan struct{})
	e.mu.Unlock()
}

// Flush waits until every running persistent query has consumed, processed
// and committed all the input that existed when Flush was called, including
// what queries upstream of it produced meanwhile, and what it wrote is
// readable (with read_committed too). Tests use it as a barrier instead of
// sleeping.
func (e *Engine) Flush(ctx context.Context) error {
	var last map[inputKey][]int64
	for {
		ends, err := e.inputEnds(ctx)
		if err != nil {
			return err
		}
		if last != nil && sameEnds(last, ends) {
			return nil
		}
		if err := e.waitFor(ctx, ends); err != nil {
			return err
		}
		last = ends
	}
}

// inputEnds returns the end offsets of every running query's inputs: its
// source and its repartition topics, keyed by query id and topic.
func (e *Engine) inputEnds(ctx context.Context) (map[inputKey][]int64, error) {
	e.mu.Lock()
	qs := make(map[string][]string, len(e.running))
	for id := range e.running {
		if q, ok := e.cat.Query(id); ok {
			qs[id] = inputTopics(q.Plan)
		}
	}
	e.mu.Unlock()
	out := make(map[inputKey][]int64, len(qs))
	for id, topics := range qs {
		for _, topic := range topics {
			bounds, err := e.cfg.Kafka.ListOffsets(ctx, topic)
			if err != nil {
				return nil, fmt.Errorf("engine: flush: %w", err)
			}
			ends := make([]int64, len(bounds))
			for i, b := range bounds {
				ends[i] = b.End
			}
			out[inputKey{id, topic}] = ends
		}
	}
	return out, nil
}

// inputTopics returns the topics g's stages read: its source, its joins'
// right sources and its repartition topics.
func inputTopics(g *topology.Graph) []string {
	if g.Physical == nil {
		return []string{g.Source.Topic}
	}
	out := make([]string, 0, len(g.Physical.Stages))
	for _, s := range g.Physical.Stages {
		if s.Source != "" && !slices.Contains(out, s.Source) {
			out = append(out, s.Source)
		}
	}
	return out
}

// inputKey names one input topic of a running query.
type inputKey struct{ query, topic string }

func sameEnds(a, b map[inputKey][]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for id, x := range a {
		y, ok := b[id]
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
	}
	return true
}

// waitFor blocks until each query's positions reach ends, or it stopped.
func (e *Engine) waitFor(ctx context.Context, ends map[inputKey][]int64) error {
	for {
		e.mu.Lock()
		wake := e.progress
		behind := ""
		for in, end := range ends {
			q, ok := e.running[in.query]
			if !ok {
				continue
			}
			select {
			case <-q.Done():
				continue
			default:
			}
			if restoring, _ := q.Restoring(); restoring {
				behind = in.query
			}
			pos := q.PositionsOf(in.topic)
			for p := range end {
				if p < len(pos) && pos[p] >= 0 && pos[p] < end[p] {
					behind = in.query
				}
			}
			// Read after the positions: pull queries read the store,
			// which an idle task writes within moments.
			if q.Unpersisted() {
				behind = in.query
			}
		}
		e.mu.Unlock()
		if behind == "" {
			return e.waitCommitted(ctx, ends)
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("engine: flush: query %s has not caught up: %w", behind, ctx.Err())
		}
	}
}

// waitCommitted waits, once the queries' positions reached ends, until
// what their exactly-once tasks committed is readable with read_committed:
// a transaction's commit markers reach its partitions after the commit
// returns (see exec.Query.WaitCommitted).
func (e *Engine) waitCommitted(ctx context.Context, ends map[inputKey][]int64) error {
	seen := map[string]bool{}
	for in := range ends {
		if seen[in.query] {
			continue
		}
		seen[in.query] = true
		e.mu.Lock()
		q, ok := e.running[in.query]
		e.mu.Unlock()
		if !ok {
			continue
		}
		if err := q.WaitCommitted(ctx); err != nil {
			return fmt.Errorf("engine: flush: %w", err)
		}
	}
	return nil
}

// Close stops every query (committing what they processed) and releases
// local resources. Safe to call twice.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.taps.endAll()
	// Leaving the group stops the queries (see revoke); the others take
	// the partitions.
	e.leaveCluster()
	e.mu.Lock()
	qs := make([]*exec.Query, 0, len(e.running)+len(e.transient))
	for _, q := range e.running {
		qs = append(qs, q)
	}
	for _, q := range e.transient {
		qs = append(qs, q)
	}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = q.Stop()
		}()
	}
	wg.Wait()
	e.mu.Lock()
	pushState := make([]string, 0, len(e.pushState))
	for _, ns := range e.pushState {
		pushState = append(pushState, ns)
	}
	e.mu.Unlock()
	for _, ns := range pushState {
		_ = e.store.DropQuery(ns)
	}
	e.mu.Lock()
	var topics []string
	for id, ts := range e.pushTopics {
		topics = append(topics, ts...)
		delete(e.pushTopics, id)
	}
	e.mu.Unlock()
	e.dropTopics(context.Background(), "push query", topics)
	e.prodMu.Lock()
	e.producer.Close()
	e.prodMu.Unlock()
	if err := e.store.Close(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}
