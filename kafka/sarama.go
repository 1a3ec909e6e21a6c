package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// saramaClient is the Client over IBM/sarama: one sarama.Client behind a
// ClusterAdmin for admin and group-offset requests, and one more per
// producer and per consumer.
type saramaClient struct {
	cfg    Config
	client sarama.Client
	admin  sarama.ClusterAdmin
	life   lifecycle
}

// NewSarama returns a Client over IBM/sarama. Unlike NewFranz it connects
// at once and fails when no broker answers. sarama logs through its
// package-level sarama.Logger, not Config.Logger.
func NewSarama(cfg Config) (Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &saramaClient{cfg: cfg}
	client, err := sarama.NewClient(cfg.Brokers, c.baseConfig(cfg.ClientID))
	if err != nil {
		return nil, fmt.Errorf("kafka: new sarama client: %w", saramaErr(err))
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("kafka: new sarama admin: %w", saramaErr(err))
	}
	c.client, c.admin = client, admin
	return c, nil
}

// baseConfig is the sarama configuration every sarama.Client of this
// Client starts from.
func (c *saramaClient) baseConfig(clientID string) *sarama.Config {
	sc := sarama.NewConfig()
	sc.Version = sarama.V2_8_0_0
	if clientID == "" {
		clientID = c.cfg.ClientID
	}
	sc.ClientID = clientID
	sc.Metadata.AllowAutoTopicCreation = c.cfg.AllowAutoTopicCreation
	sc.Admin.Timeout = c.cfg.RequestTimeout
	// A short fetch wait keeps an idle consumer quick to poll and to close.
	sc.Consumer.MaxWaitTime = 100 * time.Millisecond
	if c.cfg.TLS != nil {
		sc.Net.TLS.Enable = true
		sc.Net.TLS.Config = c.cfg.TLS.Clone()
	}
	if c.cfg.SASL != nil {
		c.cfg.SASL.configureSarama(sc)
	}
	return sc
}

// saramaDo runs fn, which cannot be cancelled, and returns early when ctx ends
// first; fn then finishes in the background.
func saramaDo(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *saramaClient) CreateTopic(ctx context.Context, spec TopicSpec) error {
	if c.life.isClosed() {
		return ErrClosed
	}
	detail := &sarama.TopicDetail{
		NumPartitions:     spec.Partitions,
		ReplicationFactor: spec.ReplicationFactor,
	}
	if detail.NumPartitions <= 0 {
		detail.NumPartitions = -1
	}
	if detail.ReplicationFactor <= 0 {
		detail.ReplicationFactor = -1
	}
	if len(spec.Configs) > 0 {
		detail.ConfigEntries = make(map[string]*string, len(spec.Configs))
		for k, v := range spec.Configs {
			detail.ConfigEntries[k] = &v
		}
	}
	err := saramaDo(ctx, func() error { return c.admin.CreateTopic(spec.Name, detail, false) })
	if err != nil {
		return fmt.Errorf("kafka: create topic %q: %w", spec.Name, saramaErr(err))
	}
	return nil
}

func (c *saramaClient) DeleteTopic(ctx context.Context, name string) error {
	if c.life.isClosed() {
		return ErrClosed
	}
	err := saramaDo(ctx, func() error { return c.admin.DeleteTopic(name) })
	if err != nil {
		return fmt.Errorf("kafka: delete topic %q: %w", name, saramaErr(err))
	}
	return nil
}

// describe returns fresh metadata of topics (all when nil); it never
// creates a topic.
func (c *saramaClient) describe(ctx context.Context, topics []string) ([]*sarama.TopicMetadata, error) {
	var md []*sarama.TopicMetadata
	err := saramaDo(ctx, func() error {
		var err error
		md, err = c.admin.DescribeTopics(topics)
		return err
	})
	if err != nil {
		// md is not read: after ctx ended, fn may still be writing it.
		return nil, saramaErr(err)
	}
	return md, nil
}

func saramaTopicInfo(t *sarama.TopicMetadata) TopicInfo {
	info := TopicInfo{Name: t.Name, Partitions: int32(len(t.Partitions))}
	for _, p := range t.Partitions {
		if p.ID == 0 {
			info.ReplicationFactor = int16(len(p.Replicas))
		}
	}
	return info
}

// describeOne returns one topic's metadata, or an error wrapping
// ErrUnknownTopic.
func (c *saramaClient) describeOne(ctx context.Context, name string) (*sarama.TopicMetadata, error) {
	md, err := c.describe(ctx, []string{name})
	if err != nil {
		return nil, err
	}
	for _, t := range md {
		if t.Name != name {
			continue
		}
		if !errors.Is(t.Err, sarama.ErrNoError) {
			return nil, saramaErr(t.Err)
		}
		return t, nil
	}
	return nil, ErrUnknownTopic
}

func (c *saramaClient) DescribeTopic(ctx context.Context, name string) (TopicInfo, error) {
	if c.life.isClosed() {
		return TopicInfo{}, ErrClosed
	}
	t, err := c.describeOne(ctx, name)
	if err != nil {
		return TopicInfo{}, fmt.Errorf("kafka: describe topic %q: %w", name, err)
	}
	return saramaTopicInfo(t), nil
}

func (c *saramaClient) ClusterID(ctx context.Context) (string, error) {
	if c.life.isClosed() {
		return "", ErrClosed
	}
	var id *string
	err := saramaDo(ctx, func() error {
		b := c.client.LeastLoadedBroker()
		if b == nil {
			return sarama.ErrOutOfBrokers
		}
		_ = b.Open(c.client.Config()) // an open broker returns ErrAlreadyConnected
		resp, err := b.GetMetadata(sarama.NewMetadataRequest(c.client.Config().Version, []string{}))
		if err != nil {
			return err
		}
		id = resp.ClusterID
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("kafka: cluster id: %w", saramaErr(err))
	}
	if id == nil {
		return "", nil
	}
	return *id, nil
}

func (c *saramaClient) ListTopics(ctx context.Context) ([]TopicInfo, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	md, err := c.describe(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("kafka: list topics: %w", err)
	}
	out := make([]TopicInfo, 0, len(md))
	for _, t := range md {
		if errors.Is(t.Err, sarama.ErrNoError) {
			out = append(out, saramaTopicInfo(t))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (c *saramaClient) ListOffsets(ctx context.Context, topic string) ([]Offsets, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	t, err := c.describeOne(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("kafka: list offsets of %q: %w", topic, err)
	}
	out := make([]Offsets, len(t.Partitions))
	err = saramaDo(ctx, func() error {
		if err := c.client.RefreshMetadata(topic); err != nil {
			return err
		}
		for p := range out {
			start, err := c.client.GetOffset(topic, int32(p), sarama.OffsetOldest)
			if err != nil {
				return fmt.Errorf("partition %d: %w", p, err)
			}
			end, err := c.client.GetOffset(topic, int32(p), sarama.OffsetNewest)
			if err != nil {
				return fmt.Errorf("partition %d: %w", p, err)
			}
			out[p] = Offsets{Start: start, End: end}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kafka: list offsets of %q: %w", topic, saramaErr(err))
	}
	return out, nil
}

// ListStableOffsets is ListOffsets: sarama runs no transactions here, so
// this client never waits on one.
func (c *saramaClient) ListStableOffsets(ctx context.Context, topic string) ([]Offsets, error) {
	return c.ListOffsets(ctx, topic)
}

// retriableCoordinatorErr reports whether a group request should be
// retried after looking the coordinator up again.
func retriableCoordinatorErr(err error) bool {
	return errors.Is(err, sarama.ErrNotCoordinatorForConsumer) ||
		errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable) ||
		errors.Is(err, sarama.ErrOffsetsLoadInProgress)
}

func (c *saramaClient) CommitOffsets(ctx context.Context, group string, offsets map[string]map[int32]int64) error {
	if c.life.isClosed() {
		return ErrClosed
	}
	// A commit with generation -1 and no member id is what Kafka accepts
	// from a client outside the group, as long as the group has no members.
	req := sarama.NewOffsetCommitRequest(c.client.Config(), group)
	n := 0
	for t, ps := range offsets {
		for p, o := range ps {
			req.AddBlockWithLeaderEpoch(t, p, o, -1, 0, "")
			n++
		}
	}
	if n == 0 {
		return nil
	}
	err := saramaDo(ctx, func() error {
		const attempts = 5
		for attempt := 1; ; attempt++ {
			err := c.commitOnce(group, req)
			if err == nil || !retriableCoordinatorErr(err) || attempt == attempts {
				return err
			}
			_ = c.client.RefreshCoordinator(group)
			time.Sleep(c.client.Config().Admin.Retry.Backoff)
		}
	})
	if err != nil {
		return fmt.Errorf("kafka: commit offsets for group %q: %w", group, saramaErr(err))
	}
	return nil
}

func (c *saramaClient) commitOnce(group string, req *sarama.OffsetCommitRequest) error {
	coord, err := c.client.Coordinator(group)
	if err != nil {
		return err
	}
	resp, err := coord.CommitOffset(req)
	if err != nil {
		return err
	}
	for t, ps := range resp.Errors {
		for p, kerr := range ps {
			if !errors.Is(kerr, sarama.ErrNoError) {
				return fmt.Errorf("%q partition %d: %w", t, p, kerr)
			}
		}
	}
	return nil
}

func (c *saramaClient) FetchOffsets(ctx context.Context, group, topic string) ([]int64, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	t, err := c.describeOne(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("kafka: fetch offsets of group %q for %q: %w", group, topic, err)
	}
	parts := make([]int32, len(t.Partitions))
	out := make([]int64, len(t.Partitions))
	for i := range parts {
		parts[i] = int32(i)
		out[i] = -1
	}
	var resp *sarama.OffsetFetchResponse
	err = saramaDo(ctx, func() error {
		var err error
		resp, err = c.admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: parts})
		return err
	})
	if err != nil {
		if errors.Is(err, sarama.ErrGroupIDNotFound) {
			return out, nil
		}
		return nil, fmt.Errorf("kafka: fetch offsets of group %q for %q: %w", group, topic, saramaErr(err))
	}
	for _, p := range parts {
		b := resp.GetBlock(topic, p)
		if b == nil {
			continue
		}
		if !errors.Is(b.Err, sarama.ErrNoError) {
			return nil, fmt.Errorf("kafka: fetch offsets of group %q for %q partition %d: %w", group, topic, p, saramaErr(b.Err))
		}
		out[p] = b.Offset
	}
	return out, nil
}

func (c *saramaClient) DeleteGroup(ctx context.Context, group string) error {
	if c.life.isClosed() {
		return ErrClosed
	}
	err := saramaDo(ctx, func() error { return c.admin.DeleteConsumerGroup(group) })
	if err != nil && !errors.Is(err, sarama.ErrGroupIDNotFound) {
		return fmt.Errorf("kafka: delete group %q: %w", group, saramaErr(err))
	}
	return nil
}

func (c *saramaClient) NewProducer(opts ProducerOptions) (Producer, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	if opts.TransactionalID != "" {
		return nil, ErrNoTransactions
	}
	if err := CheckCompression(opts.Compression); err != nil {
		return nil, fmt.Errorf("kafka: new producer: %w", err)
	}
	sc := c.baseConfig(opts.ClientID)
	sc.Producer.Compression = saramaCodec(cmp.Or(opts.Compression, DefaultCompression))
	sc.Producer.RequiredAcks = sarama.WaitForAll
	sc.Producer.Idempotent = true
	sc.Net.MaxOpenRequests = 1
	sc.Producer.Return.Successes = true
	sc.Producer.Return.Errors = true
	sc.Producer.Partitioner = newSaramaPartitioner
	sc.Producer.Flush.Frequency = opts.Linger
	sp, err := sarama.NewSyncProducer(c.cfg.Brokers, sc)
	if err != nil {
		return nil, fmt.Errorf("kafka: new producer: %w", saramaErr(err))
	}
	p := &saramaProducer{parent: c, sp: sp}
	if err := c.life.add(p); err != nil {
		return nil, err
	}
	return p, nil
}

func (c *saramaClient) NewConsumer(opts ConsumerOptions) (Consumer, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	sc := c.baseConfig(opts.ClientID)
	sc.Consumer.Return.Errors = true
	if opts.ReadCommitted {
		sc.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	sc.Consumer.Offsets.Initial = sarama.OffsetOldest
	sc.Consumer.Fetch.Default = c.cfg.FetchMaxPartitionBytes
	client, err := sarama.NewClient(c.cfg.Brokers, sc)
	if err != nil {
		return nil, fmt.Errorf("kafka: new consumer: %w", saramaErr(err))
	}
	cons, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("kafka: new consumer: %w", saramaErr(err))
	}
	sc2 := &saramaConsumer{
		parent: c,
		client: client,
		cons:   cons,
		msgs:   make(chan *sarama.ConsumerMessage, sc.ChannelBufferSize),
		errs:   make(chan error, 16),
		done:   make(chan struct{}),
		pcs:    make(map[topicPartition]sarama.PartitionConsumer),
	}
	if err := c.life.add(sc2); err != nil {
		return nil, err
	}
	return sc2, nil
}

func (c *saramaClient) Close() {
	if c.life.close() {
		c.admin.Close() // closes c.client too
	}
}

// saramaProducer is a Producer over its own sarama.SyncProducer.
type saramaProducer struct {
	parent    *saramaClient
	sp        sarama.SyncProducer
	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool
}

func (p *saramaProducer) Produce(ctx context.Context, recs []*Record) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if len(recs) == 0 {
		return nil
	}
	msgs := make([]*sarama.ProducerMessage, len(recs))
	index := make(map[*sarama.ProducerMessage]int, len(recs))
	for i, r := range recs {
		m := &sarama.ProducerMessage{
			Topic:     r.Topic,
			Partition: r.Partition,
			Timestamp: r.Timestamp,
		}
		if r.Partition < 0 {
			m.Metadata = saramaAutoPartition{}
		}
		if r.Key != nil {
			m.Key = sarama.ByteEncoder(r.Key)
		}
		if r.Value != nil {
			m.Value = sarama.ByteEncoder(r.Value)
		}
		if len(r.Headers) > 0 {
			m.Headers = make([]sarama.RecordHeader, len(r.Headers))
			for j, h := range r.Headers {
				m.Headers[j] = sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value}
			}
		}
		msgs[i] = m
		index[m] = i
	}
	err := saramaDo(ctx, func() error { return p.sp.SendMessages(msgs) })
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("kafka: produce: %w", err)
		}
		var perrs sarama.ProducerErrors
		if errors.As(err, &perrs) && len(perrs) > 0 {
			first := perrs[0]
			for _, pe := range perrs[1:] {
				if index[pe.Msg] < index[first.Msg] {
					first = pe
				}
			}
			return fmt.Errorf("kafka: produce to %q: %w", first.Msg.Topic, saramaErr(first.Err))
		}
		return fmt.Errorf("kafka: produce: %w", saramaErr(err))
	}
	for i, m := range msgs {
		recs[i].Partition = m.Partition
		recs[i].Offset = m.Offset
	}
	return nil
}

func (p *saramaProducer) Close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		_ = p.sp.Close()
		p.parent.life.remove(p)
	})
}

// saramaAutoPartition marks, in ProducerMessage.Metadata, a message whose
// partition the partitioner chooses; any other message keeps the
// Partition it was given.
type saramaAutoPartition struct{}

// saramaPartitioner places marked messages with sarama's murmur2
// partitioner, which hashes keys exactly like the Java client (a random
// partition for a nil key), and every other message on its own Partition.
type saramaPartitioner struct {
	auto sarama.Partitioner
}

func newSaramaPartitioner(topic string) sarama.Partitioner {
	return saramaPartitioner{auto: sarama.NewMurmur2Partitioner(topic)}
}

func (s saramaPartitioner) Partition(m *sarama.ProducerMessage, n int32) (int32, error) {
	if _, auto := m.Metadata.(saramaAutoPartition); auto {
		return s.auto.Partition(m, n)
	}
	return m.Partition, nil
}

func (s saramaPartitioner) RequiresConsistency() bool { return true }

func (s saramaPartitioner) MessageRequiresConsistency(m *sarama.ProducerMessage) bool {
	if _, auto := m.Metadata.(saramaAutoPartition); auto {
		return m.Key != nil
	}
	return true
}

type topicPartition struct {
	topic     string
	partition int32
}

// saramaConsumer is a Consumer merging sarama partition consumers into one
// stream of messages.
type saramaConsumer struct {
	parent *saramaClient
	client sarama.Client
	cons   sarama.Consumer
	msgs   chan *sarama.ConsumerMessage
	errs   chan error
	done   chan struct{}
	wg     sync.WaitGroup

	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool
	pcs       map[topicPartition]sarama.PartitionConsumer
}

func (c *saramaConsumer) Assign(offsets map[string]map[int32]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	for t, ps := range offsets {
		for p, o := range ps {
			tp := topicPartition{t, p}
			if old, ok := c.pcs[tp]; ok {
				old.AsyncClose()
				delete(c.pcs, tp)
			}
			if o < 0 && o != OffsetEnd {
				o = OffsetStart
			}
			pc, err := c.cons.ConsumePartition(t, p, o)
			if errors.Is(err, sarama.ErrOffsetOutOfRange) {
				pc, err = c.cons.ConsumePartition(t, p, OffsetStart)
			}
			if err != nil {
				c.pushErr(fmt.Errorf("kafka: assign %q partition %d: %w", t, p, saramaErr(err)))
				continue
			}
			c.pcs[tp] = pc
			c.wg.Add(2)
			go c.forwardMessages(pc)
			go c.forwardErrors(pc)
		}
	}
}

// pushErr queues err for the next Poll, dropping it when the queue is full.
func (c *saramaConsumer) pushErr(err error) {
	select {
	case c.errs <- err:
	default:
	}
}

func (c *saramaConsumer) forwardMessages(pc sarama.PartitionConsumer) {
	defer c.wg.Done()
	for m := range pc.Messages() {
		select {
		case c.msgs <- m:
		case <-c.done:
			for range pc.Messages() {
			}
			return
		}
	}
}

func (c *saramaConsumer) forwardErrors(pc sarama.PartitionConsumer) {
	defer c.wg.Done()
	for e := range pc.Errors() {
		err := fmt.Errorf("kafka: poll %q partition %d: %w", e.Topic, e.Partition, saramaErr(e.Err))
		select {
		case c.errs <- err:
		case <-c.done:
			for range pc.Errors() {
			}
			return
		}
	}
}

func (c *saramaConsumer) Poll(ctx context.Context) ([]*Record, error) {
	select {
	case <-c.done:
		return nil, ErrClosed
	default:
	}
	var first *sarama.ConsumerMessage
	select {
	case first = <-c.msgs:
	case err := <-c.errs:
		return nil, err
	case <-ctx.Done():
		return nil, fmt.Errorf("kafka: poll: %w", ctx.Err())
	case <-c.done:
		return nil, ErrClosed
	}
	return c.drain(first), nil
}

// PollBuffered implements BufferedPoller.
func (c *saramaConsumer) PollBuffered() ([]*Record, error) {
	select {
	case <-c.done:
		return nil, ErrClosed
	default:
	}
	select {
	case first := <-c.msgs:
		return c.drain(first), nil
	case err := <-c.errs:
		return nil, err
	default:
		return nil, nil
	}
}

// drain returns first and what else is buffered, up to MaxPollRecords.
func (c *saramaConsumer) drain(first *sarama.ConsumerMessage) []*Record {
	out := []*Record{fromSarama(first)}
	for len(out) < c.parent.cfg.MaxPollRecords {
		select {
		case m := <-c.msgs:
			out = append(out, fromSarama(m))
		default:
			return out
		}
	}
	return out
}

func fromSarama(m *sarama.ConsumerMessage) *Record {
	r := &Record{
		Topic:     m.Topic,
		Partition: m.Partition,
		Offset:    m.Offset,
		Key:       m.Key,
		Value:     m.Value,
		Timestamp: m.Timestamp,
	}
	if len(m.Headers) > 0 {
		r.Headers = make([]Header, len(m.Headers))
		for i, h := range m.Headers {
			r.Headers[i] = Header{Key: string(h.Key), Value: h.Value}
		}
	}
	return r
}

func (c *saramaConsumer) Close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		pcs := c.pcs
		c.pcs = nil
		c.mu.Unlock()
		close(c.done)
		for _, pc := range pcs {
			pc.AsyncClose()
		}
		c.wg.Wait()
		_ = c.cons.Close()
		_ = c.client.Close()
		c.parent.life.remove(c)
	})
}

// saramaErr maps sarama errors onto this package's sentinel errors,
// keeping the original in the chain.
func saramaErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sarama.ErrTopicAlreadyExists):
		return fmt.Errorf("%w: %w", ErrTopicExists, err)
	case errors.Is(err, sarama.ErrUnknownTopicOrPartition):
		return fmt.Errorf("%w: %w", ErrUnknownTopic, err)
	case errors.Is(err, sarama.ErrClosedClient), errors.Is(err, sarama.ErrShuttingDown):
		return ErrClosed
	}
	return err
}

// saramaCodec is the codec of a checked compression.type.
func saramaCodec(v string) sarama.CompressionCodec {
	switch v {
	case "gzip":
		return sarama.CompressionGZIP
	case "snappy":
		return sarama.CompressionSnappy
	case "lz4":
		return sarama.CompressionLZ4
	case "zstd":
		return sarama.CompressionZSTD
	}
	return sarama.CompressionNone
}
