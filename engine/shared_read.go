package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// Push queries that tail the same source share one read of its topic.
//
// A push query with auto.offset.reset=latest (the default) reads its
// source from the end offsets it finds when it starts. Many clients often
// watch the same source, so instead of one Kafka consumer per query and
// partition, the engine keeps one shared reader per topic: a single
// consumer whose records fan out to every subscribed push query, each
// running its own filter, projection and aggregation over them. The
// reader is reference counted: it opens with its first subscriber,
// starting each partition at the offset the first subscriber of that
// partition needs, and closes with its last.
//
// A later subscriber needs records from the offset it found at its start.
// The reader keeps the last sharedBacklog records of each partition, so
// that a subscriber whose start the reader already passed (records arrived
// between the query's start and its subscription) is served from there;
// one whose start is older than that reads on its own consumer.
//
// Only live-tail queries share: a push query with
// auto.offset.reset=earliest reads the topic from its start on its own
// consumer, and so do queries that join or repartition (their tasks read
// several topics). A subscriber never slows the reader: each has its own
// queue, and one that falls more than sharedMaxPending records behind
// fails with an error (the server drops a client that does not keep up
// long before that).

// sharedBacklog is how many recent records per partition a shared reader
// keeps at least (and at most twice that) for subscribers that start
// behind it.
const sharedBacklog = 1024

// sharedMaxPending is how many records may wait for a subscriber's tasks.
const sharedMaxPending = 1 << 20

// sharedReads holds the engine's shared readers, by topic.
type sharedReads struct {
	client kafka.Client
	log    *slog.Logger

	mu      sync.Mutex
	readers map[string]*sharedReader
}

func newSharedReads(client kafka.Client, log *slog.Logger) *sharedReads {
	return &sharedReads{client: client, log: log, readers: map[string]*sharedReader{}}
}

// shareable reports whether push query g may read its source through a
// shared reader: it starts at the end of its source, and runs as one
// stage reading only that topic (no repartition, no join's right input).
func shareable(g *topology.Graph) bool {
	return g.OffsetReset != "earliest" && g.Physical != nil && len(g.Physical.Stages) == 1 && !hasJoin(g)
}

// hasJoin reports whether a step of g joins.
func hasJoin(g *topology.Graph) bool {
	for _, st := range g.Steps {
		if st.Kind == topology.Join {
			return true
		}
	}
	return false
}

// clientFor returns the Kafka client a shareable push query on topic runs
// with: its consumers that read only topic subscribe to the shared reader.
func (sr *sharedReads) clientFor(topic string) kafka.Client {
	return &sharedClient{Client: sr.client, reads: sr, topic: topic}
}

// sharedClient is a kafka.Client whose consumers read one topic through
// the shared reader.
type sharedClient struct {
	kafka.Client
	reads *sharedReads
	topic string
}

func (c *sharedClient) NewConsumer(opts kafka.ConsumerOptions) (kafka.Consumer, error) {
	return &subscriber{reads: c.reads, topic: c.topic, opts: opts, wake: make(chan struct{}, 1)}, nil
}

// subscriber is a consumer of one push query task. Assigned only its
// shared topic, it reads through the shared reader; assigned anything
// else, it reads on its own consumer (own).
type subscriber struct {
	reads *sharedReads
	topic string
	opts  kafka.ConsumerOptions

	own    kafka.Consumer
	reader *sharedReader
	part   int32
	start  int64 // the first offset it needs

	mu      sync.Mutex
	wake    chan struct{}
	pending []*kafka.Record
	err     error
	closed  bool
}

func (s *subscriber) Assign(offsets map[string]map[int32]int64) {
	if s.own == nil && s.reader == nil && len(offsets) == 1 && len(offsets[s.topic]) == 1 {
		for p, off := range offsets[s.topic] {
			if off >= 0 && s.reads.subscribe(s, p, off) {
				return
			}
		}
	}
	if s.reader != nil {
		s.fail(errors.New("engine: bug: a shared subscriber was assigned twice"))
		return
	}
	if s.own == nil {
		c, err := s.reads.client.NewConsumer(s.opts)
		if err != nil {
			s.fail(err)
			return
		}
		s.own = c
	}
	s.own.Assign(offsets)
}

func (s *subscriber) Poll(ctx context.Context) ([]*kafka.Record, error) {
	if s.own != nil {
		return s.own.Poll(ctx)
	}
	for {
		s.mu.Lock()
		if len(s.pending) > 0 {
			recs := s.pending
			s.pending = nil
			s.mu.Unlock()
			return recs, nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *subscriber) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.pending = nil
	s.mu.Unlock()
	if s.own != nil {
		s.own.Close()
	}
	if s.reader != nil {
		s.reads.unsubscribe(s)
	}
}

// deliver queues records for the subscriber (those before its start are
// skipped); called by the reader.
func (s *subscriber) deliver(recs []*kafka.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.err != nil {
		return
	}
	for _, r := range recs {
		if r.Offset >= s.start {
			s.pending = append(s.pending, r)
		}
	}
	if len(s.pending) > sharedMaxPending {
		s.pending = nil
		s.err = fmt.Errorf("push query fell more than %d records behind the shared read of topic %s; it was stopped", sharedMaxPending, s.topic)
	}
	s.signal()
}

func (s *subscriber) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.signal()
}

func (s *subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// sharedReader is one consumer of a topic and its subscribers.
type sharedReader struct {
	reads    *sharedReads
	topic    string
	consumer kafka.Consumer
	cancel   context.CancelFunc
	done     chan struct{}

	// Guarded by reads.mu.
	refs int
	// Guarded by mu: per partition the subscribers, the next offset the
	// reader delivers, and the last records it read.
	mu      sync.Mutex
	subs    map[int32][]*subscriber
	pos     map[int32]int64
	backlog map[int32][]*kafka.Record
}

// subscribe attaches s to the shared reader of its topic, for partition p
// from offset start; false when the reader has moved past what it can
// replay, and s must read on its own.
func (sr *sharedReads) subscribe(s *subscriber, p int32, start int64) bool {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	r := sr.readers[s.topic]
	if r == nil {
		c, err := sr.client.NewConsumer(kafka.ConsumerOptions{ClientID: "sluice-shared-" + s.topic, ReadCommitted: true})
		if err != nil {
			sr.log.Warn("cannot open a shared reader; the push query reads on its own", "topic", s.topic, "err", err)
			return false
		}
		ctx, cancel := context.WithCancel(context.Background())
		r = &sharedReader{reads: sr, topic: s.topic, consumer: c, cancel: cancel, done: make(chan struct{}),
			subs: map[int32][]*subscriber{}, pos: map[int32]int64{}, backlog: map[int32][]*kafka.Record{}}
		sr.readers[s.topic] = r
		go r.run(ctx)
	}
	r.mu.Lock()
	pos, assigned := r.pos[p]
	switch {
	case !assigned:
		r.pos[p] = start
		r.consumer.Assign(map[string]map[int32]int64{s.topic: {p: start}})
	case start < pos:
		// Serve the records it missed from the backlog, if they are there.
		bl := r.backlog[p]
		if len(bl) == 0 || bl[0].Offset > start {
			r.mu.Unlock()
			return false
		}
		s.start = start
		s.deliver(bl)
	}
	s.reader, s.part, s.start = r, p, start
	r.subs[p] = append(r.subs[p], s)
	r.mu.Unlock()
	r.refs++
	return true
}

// unsubscribe detaches s; the last subscriber closes the reader.
func (sr *sharedReads) unsubscribe(s *subscriber) {
	r := s.reader
	sr.mu.Lock()
	r.mu.Lock()
	subs := r.subs[s.part]
	for i, x := range subs {
		if x == s {
			r.subs[s.part] = append(subs[:i:i], subs[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	r.refs--
	last := r.refs == 0
	if last && sr.readers[r.topic] == r {
		delete(sr.readers, r.topic)
	}
	sr.mu.Unlock()
	if last {
		r.cancel()
		<-r.done
		r.consumer.Close()
	}
}

// run reads the topic and fans its records out until cancelled.
func (r *sharedReader) run(ctx context.Context) {
	defer close(r.done)
	var byPart map[int32][]*kafka.Record
	for {
		recs, err := r.consumer.Poll(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.failAll(fmt.Errorf("shared read of topic %s: %w", r.topic, err))
			return
		}
		if byPart == nil {
			byPart = map[int32][]*kafka.Record{}
		}
		for _, rec := range recs {
			byPart[rec.Partition] = append(byPart[rec.Partition], rec)
		}
		r.mu.Lock()
		for p, prs := range byPart {
			r.pos[p] = prs[len(prs)-1].Offset + 1
			bl := append(r.backlog[p], prs...)
			if len(bl) > 2*sharedBacklog {
				// Keep the last sharedBacklog records, moving them once per
				// sharedBacklog records read.
				n := copy(bl, bl[len(bl)-sharedBacklog:])
				clear(bl[n:])
				bl = bl[:n]
			}
			r.backlog[p] = bl
			for _, s := range r.subs[p] {
				s.deliver(prs)
			}
		}
		r.mu.Unlock()
		clear(byPart)
	}
}

// failAll ends every subscriber with err and detaches the reader, so that
// later push queries open a new one.
func (r *sharedReader) failAll(err error) {
	r.reads.mu.Lock()
	if r.reads.readers[r.topic] == r {
		delete(r.reads.readers, r.topic)
	}
	r.reads.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, subs := range r.subs {
		for _, s := range subs {
			s.fail(err)
		}
	}
}
