package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// franzClient is the Client over franz-go: one kgo.Client for admin
// requests, and one more per producer and per consumer.
type franzClient struct {
	cfg  Config
	cl   *kgo.Client
	adm  *kadm.Client
	life lifecycle
}

// NewFranz returns a Client over franz-go (kgo and kadm). It does not
// contact the brokers until the first call.
func NewFranz(cfg Config) (Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &franzClient{cfg: cfg}
	cl, err := kgo.NewClient(c.baseOpts(cfg.ClientID)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: new franz client: %w", err)
	}
	c.cl = cl
	c.adm = kadm.NewClient(cl)
	return c, nil
}

// fetchMaxWait is how long a consumer's fetch waits at the broker for
// records to arrive.
const fetchMaxWait = 500 * time.Millisecond

// baseOpts are the options every kgo.Client of this Client shares.
func (c *franzClient) baseOpts(clientID string) []kgo.Opt {
	if clientID == "" {
		clientID = c.cfg.ClientID
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.cfg.Brokers...),
		kgo.ClientID(clientID),
		// No KIP-714 telemetry pushes: they cost requests and, with the
		// broker gone, up to a second on Close.
		kgo.DisableClientMetrics(),
	}
	if c.cfg.Logger != nil {
		opts = append(opts, kgo.WithLogger(kgoLogger{c.cfg.Logger}))
	}
	if c.cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.cfg.TLS.Clone()))
	}
	if c.cfg.SASL != nil {
		opts = append(opts, c.cfg.SASL.franzOpts()...)
	}
	if c.cfg.AllowAutoTopicCreation {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	return opts
}

// reqCtx bounds ctx by the configured request timeout when ctx has no
// deadline.
func (c *franzClient) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.cfg.RequestTimeout)
}

func (c *franzClient) CreateTopic(ctx context.Context, spec TopicSpec) error {
	if c.life.isClosed() {
		return ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	parts := spec.Partitions
	if parts <= 0 {
		parts = -1
	}
	rf := spec.ReplicationFactor
	if rf <= 0 {
		rf = -1
	}
	var configs map[string]*string
	if len(spec.Configs) > 0 {
		configs = make(map[string]*string, len(spec.Configs))
		for k, v := range spec.Configs {
			configs[k] = kmsg.StringPtr(v)
		}
	}
	resp, err := c.adm.CreateTopic(ctx, parts, rf, configs, spec.Name)
	if err == nil {
		err = resp.Err
		if err != nil && resp.ErrMessage != "" {
			err = fmt.Errorf("%w (%s)", err, resp.ErrMessage)
		}
	}
	if err != nil {
		return fmt.Errorf("kafka: create topic %q: %w", spec.Name, franzErr(err))
	}
	return nil
}

func (c *franzClient) DeleteTopic(ctx context.Context, name string) error {
	if c.life.isClosed() {
		return ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	resp, err := c.adm.DeleteTopic(ctx, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("kafka: delete topic %q: %w", name, franzErr(err))
	}
	return nil
}

// metadata issues an uncached metadata request for topics (all when none)
// that never creates a topic.
func (c *franzClient) metadata(ctx context.Context, topics ...string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	return req.RequestWith(ctx, c.cl)
}

// describe returns one topic's metadata, or an error wrapping
// ErrUnknownTopic.
func (c *franzClient) describe(ctx context.Context, name string) (kmsg.MetadataResponseTopic, error) {
	resp, err := c.metadata(ctx, name)
	if err != nil {
		return kmsg.MetadataResponseTopic{}, franzErr(err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != name {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return t, franzErr(err)
		}
		return t, nil
	}
	return kmsg.MetadataResponseTopic{}, ErrUnknownTopic
}

func topicInfo(t kmsg.MetadataResponseTopic) TopicInfo {
	info := TopicInfo{Name: *t.Topic, Partitions: int32(len(t.Partitions))}
	for _, p := range t.Partitions {
		if p.Partition == 0 {
			info.ReplicationFactor = int16(len(p.Replicas))
		}
	}
	return info
}

func (c *franzClient) DescribeTopic(ctx context.Context, name string) (TopicInfo, error) {
	if c.life.isClosed() {
		return TopicInfo{}, ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	t, err := c.describe(ctx, name)
	if err != nil {
		return TopicInfo{}, fmt.Errorf("kafka: describe topic %q: %w", name, err)
	}
	return topicInfo(t), nil
}

func (c *franzClient) ClusterID(ctx context.Context) (string, error) {
	if c.life.isClosed() {
		return "", ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none: the cluster only
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		return "", fmt.Errorf("kafka: cluster id: %w", franzErr(err))
	}
	if resp.ClusterID == nil {
		return "", nil
	}
	return *resp.ClusterID, nil
}

func (c *franzClient) ListTopics(ctx context.Context) ([]TopicInfo, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	resp, err := c.metadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka: list topics: %w", franzErr(err))
	}
	out := make([]TopicInfo, 0, len(resp.Topics))
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode != 0 {
			continue
		}
		out = append(out, topicInfo(t))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (c *franzClient) ListOffsets(ctx context.Context, topic string) ([]Offsets, error) {
	return c.retryListOffsets(ctx, topic, false)
}

func (c *franzClient) ListStableOffsets(ctx context.Context, topic string) ([]Offsets, error) {
	return c.retryListOffsets(ctx, topic, true)
}

// retryListOffsets is listOffsets, retried while the cluster settles.
func (c *franzClient) retryListOffsets(ctx context.Context, topic string, stable bool) ([]Offsets, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	var out []Offsets
	err := retryGroup(ctx, func() error {
		var err error
		out, err = c.listOffsets(ctx, topic, stable)
		return err
	})
	return out, err
}

// listOffsets asks the partitions' leaders once; stable asks for the last
// stable offset as the end.
func (c *franzClient) listOffsets(ctx context.Context, topic string, stable bool) ([]Offsets, error) {
	t, err := c.describe(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("kafka: list offsets of %q: %w", topic, err)
	}
	out := make([]Offsets, len(t.Partitions))
	for _, which := range []int64{OffsetStart, OffsetEnd} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		if stable {
			req.IsolationLevel = 1 // read_committed: the end is the LSO
		}
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		for p := range out {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition = int32(p)
			rp.CurrentLeaderEpoch = -1
			rp.Timestamp = which
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, c.cl)
		if err != nil {
			return nil, fmt.Errorf("kafka: list offsets of %q: %w", topic, franzErr(err))
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return nil, fmt.Errorf("kafka: list offsets of %q partition %d: %w", topic, rp.Partition, franzErr(err))
				}
				if rp.Partition < 0 || int(rp.Partition) >= len(out) {
					continue
				}
				if which == OffsetStart {
					out[rp.Partition].Start = rp.Offset
				} else {
					out[rp.Partition].End = rp.Offset
				}
			}
		}
	}
	return out, nil
}

func (c *franzClient) CommitOffsets(ctx context.Context, group string, offsets map[string]map[int32]int64) error {
	if c.life.isClosed() {
		return ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	os := make(kadm.Offsets)
	for t, ps := range offsets {
		for p, o := range ps {
			os.AddOffset(t, p, o, -1)
		}
	}
	if len(os) == 0 {
		return nil
	}
	err := retryGroup(ctx, func() error {
		resps, err := c.adm.CommitOffsets(ctx, group, os)
		if err == nil {
			err = resps.Error()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("kafka: commit offsets for group %q: %w", group, franzErr(err))
	}
	return nil
}

func (c *franzClient) FetchOffsets(ctx context.Context, group, topic string) ([]int64, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	t, err := c.describe(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("kafka: fetch offsets of group %q for %q: %w", group, topic, err)
	}
	out := make([]int64, len(t.Partitions))
	for i := range out {
		out[i] = -1
	}
	var resps kadm.OffsetResponses
	err = retryGroup(ctx, func() error {
		var err error
		resps, err = c.adm.FetchOffsets(ctx, group)
		return err
	})
	if err != nil {
		if errors.Is(err, kerr.GroupIDNotFound) {
			return out, nil
		}
		return nil, fmt.Errorf("kafka: fetch offsets of group %q for %q: %w", group, topic, franzErr(err))
	}
	for p, r := range resps[topic] {
		if r.Err != nil {
			return nil, fmt.Errorf("kafka: fetch offsets of group %q for %q partition %d: %w", group, topic, p, franzErr(r.Err))
		}
		if p >= 0 && int(p) < len(out) {
			out[p] = r.At
		}
	}
	return out, nil
}

func (c *franzClient) DeleteGroup(ctx context.Context, group string) error {
	if c.life.isClosed() {
		return ErrClosed
	}
	ctx, cancel := c.reqCtx(ctx)
	defer cancel()
	err := retryGroup(ctx, func() error {
		_, err := c.adm.DeleteGroup(ctx, group)
		return err
	})
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return fmt.Errorf("kafka: delete group %q: %w", group, franzErr(err))
	}
	return nil
}

func (c *franzClient) NewProducer(opts ProducerOptions) (Producer, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	if err := CheckCompression(opts.Compression); err != nil {
		return nil, fmt.Errorf("kafka: new producer: %w", err)
	}
	kopts := append(c.baseOpts(opts.ClientID),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(opts.Linger),
		kgo.RecordPartitioner(newFranzPartitioner()),
		kgo.ProducerBatchCompression(franzCodec(cmp.Or(opts.Compression, DefaultCompression))),
	)
	if opts.TransactionalID != "" {
		timeout := opts.TransactionTimeout
		if timeout <= 0 {
			timeout = time.Minute
		}
		kopts = append(kopts, kgo.TransactionalID(opts.TransactionalID), kgo.TransactionTimeout(timeout))
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: new producer: %w", err)
	}
	p := &franzProducer{parent: c, cl: cl}
	if err := c.life.add(p); err != nil {
		return nil, err
	}
	if opts.TransactionalID != "" {
		return &franzTxnProducer{franzProducer: p}, nil
	}
	return p, nil
}

// franzTxnProducer runs a franzProducer's records in transactions.
type franzTxnProducer struct {
	*franzProducer
}

func (p *franzTxnProducer) Init(ctx context.Context) error {
	if p.isClosed() {
		return ErrClosed
	}
	if _, _, err := p.cl.ProducerID(ctx); err != nil {
		return fmt.Errorf("kafka: init transactional producer: %w", txnErr(err))
	}
	return nil
}

func (p *franzTxnProducer) Begin() error {
	if p.isClosed() {
		return ErrClosed
	}
	if err := p.cl.BeginTransaction(); err != nil {
		return fmt.Errorf("kafka: begin transaction: %w", txnErr(err))
	}
	return nil
}

func (p *franzTxnProducer) Commit(ctx context.Context) error {
	if p.isClosed() {
		return ErrClosed
	}
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka: commit transaction: %w", txnErr(err))
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("kafka: commit transaction: %w", txnErr(err))
	}
	return nil
}

func (p *franzTxnProducer) Abort(ctx context.Context) error {
	if p.isClosed() {
		return ErrClosed
	}
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		return fmt.Errorf("kafka: abort transaction: %w", txnErr(err))
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("kafka: abort transaction: %w", txnErr(err))
	}
	return nil
}

// txnErr marks the errors that mean a newer producer took over.
func txnErr(err error) error {
	if errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) {
		return fmt.Errorf("%w: %w", ErrFenced, err)
	}
	return franzErr(err)
}

func (c *franzClient) NewConsumer(opts ConsumerOptions) (Consumer, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	kopts := c.baseOpts(opts.ClientID)
	if opts.ReadCommitted {
		kopts = append(kopts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	} else {
		kopts = append(kopts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	}
	if opts.KeepControl {
		kopts = append(kopts, kgo.KeepControlRecords())
	}
	kopts = append(kopts, kgo.FetchMaxPartitionBytes(c.cfg.FetchMaxPartitionBytes), kgo.FetchMaxBytes(c.cfg.FetchMaxBytes),
		// A fetch in flight when the consumer is given more partitions
		// (a join task's stream side, once its table side has caught
		// up) asks for the old ones only, and an idle broker holds it
		// for the whole wait: franz-go's 5 s left a task idle that long.
		// Kafka's Java consumer waits 500 ms (fetch.max.wait.ms).
		kgo.FetchMaxWait(fetchMaxWait),
		// No fetch sessions (KIP-227): a consumer here reads a few
		// partitions, where a session saves next to nothing, and
		// franz-go's Close kills a session without waiting for a fetch
		// that a concurrent metadata update may have started, so the
		// two write the session's fields at once (a data race the race
		// detector reports when a push query is closed right after it
		// started).
		kgo.DisableFetchSessions())
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: new consumer: %w", err)
	}
	cons := &franzConsumer{parent: c, cl: cl, committed: opts.ReadCommitted}
	if err := c.life.add(cons); err != nil {
		return nil, err
	}
	return cons, nil
}

func (c *franzClient) Close() {
	if c.life.close() {
		c.cl.Close()
	}
}

// franzProducer is a Producer over its own kgo.Client.
type franzProducer struct {
	parent    *franzClient
	cl        *kgo.Client
	closeOnce sync.Once
	closed    bool
	mu        sync.Mutex
	// spare are the records of a finished Produce call, cleared, for the
	// next call to fill: the client touches a record no more once its
	// promise is called, and a call returns after every promise (one
	// cancelled earlier keeps its records to itself).
	spare []kgo.Record
}

// maxSpareRecords bounds the records a franzProducer keeps for its next
// Produce call, about 800 KiB: a stateful task's commit (its outputs and
// changelog records) often passes 1,024 records.
const maxSpareRecords = 4096

func (p *franzProducer) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *franzProducer) Produce(ctx context.Context, recs []*Record) error {
	if p.isClosed() {
		return ErrClosed
	}
	if len(recs) == 0 {
		return nil
	}
	// One slice of records and one callback for the whole call: the
	// client sets each record's partition and offset, and the callback
	// keeps the rare errors. Neither touches recs, so that recs are not
	// written after an early return on ctx.
	p.mu.Lock()
	krs := p.spare
	p.spare = nil
	p.mu.Unlock()
	if cap(krs) < len(recs) {
		krs = make([]kgo.Record, len(recs))
	}
	krs = krs[:len(recs)]
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs map[*kgo.Record]error
	)
	promise := func(kr *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if errs == nil {
				errs = make(map[*kgo.Record]error)
			}
			errs[kr] = err
			mu.Unlock()
		}
		wg.Done()
	}
	wg.Add(len(recs))
	for i, r := range recs {
		kr := &krs[i]
		kr.Topic, kr.Partition, kr.Key, kr.Value, kr.Timestamp = r.Topic, r.Partition, r.Key, r.Value, r.Timestamp
		if r.Partition < 0 {
			kr.Partition = autoPartition
		}
		if len(r.Headers) > 0 {
			kr.Headers = make([]kgo.RecordHeader, len(r.Headers))
			for j, h := range r.Headers {
				kr.Headers[j] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
			}
		}
		p.cl.Produce(ctx, kr, promise)
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("kafka: produce: %w", ctx.Err())
	}
	defer p.keep(krs)
	if len(errs) > 0 {
		for i := range krs {
			if err := errs[&krs[i]]; err != nil {
				return fmt.Errorf("kafka: produce to %q: %w", recs[i].Topic, txnErr(err))
			}
		}
	}
	for i := range krs {
		recs[i].Partition = krs[i].Partition
		recs[i].Offset = krs[i].Offset
	}
	return nil
}

// keep clears krs, whose every promise has been called, and keeps it
// for the next Produce call.
func (p *franzProducer) keep(krs []kgo.Record) {
	if cap(krs) > maxSpareRecords {
		return
	}
	clear(krs)
	p.mu.Lock()
	p.spare = krs[:0]
	p.mu.Unlock()
}

func (p *franzProducer) Close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cl.Close()
		p.parent.life.remove(p)
	})
}

// autoPartition marks a kgo.Record whose partition the partitioner
// chooses; any partition >= 0 is used as given.
const autoPartition int32 = -1

// franzPartitioner sends records with a partition already set to that
// partition, and hands the others to kgo's default partitioner (murmur2
// on keys, exactly like the Java client; uniform sticky batches for nil
// keys).
type franzPartitioner struct {
	auto kgo.Partitioner
}

func newFranzPartitioner() kgo.Partitioner {
	return franzPartitioner{auto: kgo.UniformBytesPartitioner(64<<10, true, true, nil)}
}

func (f franzPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	tp := f.auto.ForTopic(topic)
	backup, _ := tp.(kgo.TopicBackupPartitioner)
	return &franzTopicPartitioner{auto: tp, backup: backup}
}

// franzTopicPartitioner implements kgo.TopicBackupPartitioner. kgo passes
// n as the count of all partitions when RequiresConsistency is true, so a
// manual partition indexes the full partition list.
type franzTopicPartitioner struct {
	auto   kgo.TopicPartitioner
	backup kgo.TopicBackupPartitioner
}

func (t *franzTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return r.Partition >= 0 || t.auto.RequiresConsistency(r)
}

func (t *franzTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if r.Partition >= 0 {
		return int(r.Partition)
	}
	return t.auto.Partition(r, n)
}

func (t *franzTopicPartitioner) PartitionByBackup(r *kgo.Record, n int, it kgo.TopicBackupIter) int {
	if r.Partition >= 0 {
		return int(r.Partition)
	}
	if t.backup != nil {
		return t.backup.PartitionByBackup(r, n, it)
	}
	return t.auto.Partition(r, n)
}

// franzConsumer is a Consumer over its own direct (group-less) kgo.Client.
type franzConsumer struct {
	parent    *franzClient
	cl        *kgo.Client
	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool
	pending   error // a fetch error held back because records came with it
	// assigned are the partitions Assign added.
	assigned map[string]map[int32]bool
	// ends are where each partition ended at its latest fetch with
	// records (see EndWatcher); committed says they are last stable
	// offsets.
	ends      map[string]map[int32]int64
	committed bool
}

// FetchedEnd implements EndWatcher.
func (c *franzConsumer) FetchedEnd(topic string, partition int32) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	end, ok := c.ends[topic][partition]
	return end, ok
}

// noteEnds keeps where the partitions of fs ended.
func (c *franzConsumer) noteEnds(fs kgo.Fetches) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ends == nil {
		c.ends = map[string]map[int32]int64{}
	}
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		end := p.HighWatermark
		if c.committed && p.LastStableOffset >= 0 {
			end = p.LastStableOffset
		}
		if end < 0 || len(p.Records) == 0 {
			return
		}
		ps := c.ends[p.Topic]
		if ps == nil {
			ps = map[int32]int64{}
			c.ends[p.Topic] = ps
		}
		if end > ps[p.Partition] {
			ps[p.Partition] = end
		}
	})
}

func (c *franzConsumer) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *franzConsumer) Assign(offsets map[string]map[int32]int64) {
	if c.isClosed() {
		return
	}
	// A partition already read moves to its new offset (what it buffered
	// is dropped); kgo ignores a new start for it in
	// AddConsumePartitions.
	m := make(map[string]map[int32]kgo.Offset, len(offsets))
	move := map[string]map[int32]kgo.EpochOffset{}
	c.mu.Lock()
	if c.assigned == nil {
		c.assigned = map[string]map[int32]bool{}
	}
	for t, ps := range offsets {
		if len(ps) == 0 {
			continue
		}
		if c.assigned[t] == nil {
			c.assigned[t] = map[int32]bool{}
		}
		for p, o := range ps {
			if c.assigned[t][p] && o >= 0 {
				if move[t] == nil {
					move[t] = map[int32]kgo.EpochOffset{}
				}
				move[t][p] = kgo.EpochOffset{Epoch: -1, Offset: o}
				continue
			}
			c.assigned[t][p] = true
			if m[t] == nil {
				m[t] = make(map[int32]kgo.Offset, len(ps))
			}
			m[t][p] = franzOffset(o)
		}
	}
	c.mu.Unlock()
	if len(move) > 0 {
		c.cl.SetOffsets(move)
	}
	if len(m) > 0 {
		c.cl.AddConsumePartitions(m)
	}
}

func franzOffset(o int64) kgo.Offset {
	switch {
	case o == OffsetStart:
		return kgo.NewOffset().AtStart()
	case o == OffsetEnd:
		return kgo.NewOffset().AtEnd()
	case o < 0:
		return kgo.NewOffset().AtStart()
	default:
		return kgo.NewOffset().At(o)
	}
}

// held returns ErrClosed once the consumer is closed, else the fetch
// error a poll held back, forgetting it.
func (c *franzConsumer) held() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	err := c.pending
	c.pending = nil
	return err
}

func (c *franzConsumer) Poll(ctx context.Context) ([]*Record, error) {
	if err := c.held(); err != nil {
		return nil, err
	}
	for {
		out, err := c.records(c.cl.PollRecords(ctx, c.parent.cfg.MaxPollRecords))
		if len(out) > 0 || err != nil {
			return out, err
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("kafka: poll: %w", err)
		}
		if c.isClosed() {
			return nil, ErrClosed
		}
	}
}

// PollBuffered implements BufferedPoller.
func (c *franzConsumer) PollBuffered() ([]*Record, error) {
	if err := c.held(); err != nil {
		return nil, err
	}
	// A nil context is franz-go's way of asking for what is buffered,
	// without waiting.
	//lint:ignore SA1012 PollRecords documents nil as "return at once"
	return c.records(c.cl.PollRecords(nil, c.parent.cfg.MaxPollRecords))
}

// records converts a poll's fetches: their records, or the first error
// when there are none; an error that came with records is held back for
// the next poll.
func (c *franzConsumer) records(fs kgo.Fetches) ([]*Record, error) {
	var firstErr error
	if errs := fs.Errors(); len(errs) > 0 {
		fe := errs[0]
		switch {
		case errors.Is(fe.Err, kgo.ErrClientClosed):
			firstErr = ErrClosed
		case errors.Is(fe.Err, context.Canceled), errors.Is(fe.Err, context.DeadlineExceeded):
			firstErr = fmt.Errorf("kafka: poll: %w", fe.Err)
		default:
			firstErr = fmt.Errorf("kafka: poll %q partition %d: %w", fe.Topic, fe.Partition, franzErr(fe.Err))
		}
	}
	n := fs.NumRecords()
	if n == 0 {
		return nil, firstErr
	}
	c.noteEnds(fs)
	// One allocation for the poll's records, not one each.
	slab := make([]Record, n)
	out := make([]*Record, 0, n)
	fs.EachRecord(func(kr *kgo.Record) {
		r := &slab[len(out)]
		fromKgo(r, kr)
		out = append(out, r)
	})
	if firstErr != nil {
		c.mu.Lock()
		c.pending = firstErr
		c.mu.Unlock()
	}
	return out, nil
}

// fromKgo fills r with kr.
func fromKgo(r *Record, kr *kgo.Record) {
	*r = Record{
		Topic:     kr.Topic,
		Partition: kr.Partition,
		Offset:    kr.Offset,
		Key:       kr.Key,
		Value:     kr.Value,
		Timestamp: kr.Timestamp,
		Control:   kr.Attrs.IsControl(),
	}
	if r.Control {
		r.Key, r.Value = nil, nil
		return
	}
	if len(kr.Headers) > 0 {
		r.Headers = make([]Header, len(kr.Headers))
		for i, h := range kr.Headers {
			r.Headers[i] = Header{Key: h.Key, Value: h.Value}
		}
	}
}

func (c *franzConsumer) Close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cl.Close()
		c.parent.life.remove(c)
	})
}

// franzErr maps franz-go errors onto this package's sentinel errors,
// keeping the original in the chain.
// retryGroup runs a request again while the broker answers with an error
// Kafka marks retriable: a coordinator not ready (a new cluster creating
// its offsets topic, a coordinator moving after a broker restart), a
// partition whose leader is not elected or known yet (a topic just
// created, a broker gone), until ctx ends.
func retryGroup(ctx context.Context, fn func() error) error {
	wait := 50 * time.Millisecond
	for {
		err := fn()
		if err == nil || !kerr.IsRetriable(err) || errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID) {
			// An unknown topic is the caller's to judge: it may be
			// missing for good (see AwaitTopic for one just created).
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

func franzErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.TopicAlreadyExists):
		return fmt.Errorf("%w: %w", ErrTopicExists, err)
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return fmt.Errorf("%w: %w", ErrUnknownTopic, err)
	case errors.Is(err, kgo.ErrClientClosed):
		return ErrClosed
	}
	return err
}

// kgoLogger adapts a *slog.Logger to kgo.Logger, passing warnings and
// errors only.
type kgoLogger struct{ l *slog.Logger }

func (k kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lvl := slog.LevelInfo
	switch level {
	case kgo.LogLevelError:
		lvl = slog.LevelError
	case kgo.LogLevelWarn:
		lvl = slog.LevelWarn
	case kgo.LogLevelDebug:
		lvl = slog.LevelDebug
	}
	k.l.Log(context.Background(), lvl, "kafka: "+msg, keyvals...)
}

// franzCodec is the codec of a checked compression.type.
func franzCodec(v string) kgo.CompressionCodec {
	switch v {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}
