package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Record is one Kafka record. On produce, Partition < 0 asks the client to
// pick the partition from the key with Kafka's default murmur2 partitioner
// (round-robin/sticky for a nil key); Offset is ignored.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp time.Time
	Headers   []Header
	// Control marks a transaction marker (commit or abort) a consumer
	// with ConsumerOptions.KeepControl returns: it carries no data, only
	// its Offset, so that a reader's position can move past it.
	Control bool
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte
}

// TopicSpec describes a topic to create.
type TopicSpec struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16 // <= 0: the broker's default
	Configs           map[string]string
}

// TopicInfo describes an existing topic.
type TopicInfo struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
}

// Offsets are the log start and end (high watermark) offsets of a partition.
type Offsets struct {
	Start int64
	End   int64
}

// Errors returned by clients; test with errors.Is.
var (
	ErrTopicExists  = errors.New("kafka: topic already exists")
	ErrUnknownTopic = errors.New("kafka: unknown topic")
	ErrClosed       = errors.New("kafka: client closed")
	// ErrFenced: a newer producer with the same transactional id took
	// over; this one can do nothing more.
	ErrFenced = errors.New("kafka: producer fenced by a newer producer with the same transactional id")
	// ErrNoTransactions: the client library cannot run transactions
	// with fencing (sarama); use the franz-go client.
	ErrNoTransactions = errors.New("kafka: the sarama client does not run exactly-once transactions; use the franz-go client (--kafka-client=franz)")
)

// Client is Sluice's narrow view of a Kafka cluster. A Client is safe for
// concurrent use. Close releases it; every method after Close returns
// ErrClosed.
type Client interface {
	// CreateTopic creates a topic; ErrTopicExists if it exists.
	CreateTopic(ctx context.Context, spec TopicSpec) error
	// DeleteTopic deletes a topic; ErrUnknownTopic if it does not exist.
	DeleteTopic(ctx context.Context, name string) error
	// DescribeTopic returns a topic's partition count; ErrUnknownTopic if it
	// does not exist.
	DescribeTopic(ctx context.Context, name string) (TopicInfo, error)
	// ListTopics returns every topic, internal ones (names starting with
	// '_') included, sorted by name.
	ListTopics(ctx context.Context) ([]TopicInfo, error)
	// ClusterID returns the Kafka cluster's id (KIP-78), as its metadata
	// gives it; empty for a cluster that has none.
	ClusterID(ctx context.Context) (string, error)
	// ListOffsets returns the start and end offsets of every partition of a
	// topic, indexed by partition.
	ListOffsets(ctx context.Context, topic string) ([]Offsets, error)
	// ListStableOffsets is ListOffsets with End the last stable offset
	// (what a read_committed consumer can read up to: before the first
	// record of a transaction still open). The sarama client, which runs
	// no transactions, returns the high watermark.
	ListStableOffsets(ctx context.Context, topic string) ([]Offsets, error)

	// NewProducer returns a producer with acks=all and idempotence on.
	NewProducer(opts ProducerOptions) (Producer, error)
	// NewConsumer returns a consumer on directly assigned partitions (no
	// group membership).
	NewConsumer(opts ConsumerOptions) (Consumer, error)

	// CommitOffsets commits offsets (the next offset to read) for group
	// without joining it: topic -> partition -> offset.
	CommitOffsets(ctx context.Context, group string, offsets map[string]map[int32]int64) error
	// FetchOffsets returns group's committed offsets for topic, indexed by
	// partition; -1 where none is committed.
	FetchOffsets(ctx context.Context, group, topic string) ([]int64, error)
	// DeleteGroup deletes a group's committed offsets; no error if unknown.
	DeleteGroup(ctx context.Context, group string) error

	Close()
}

// ProducerOptions configure a producer.
type ProducerOptions struct {
	// ClientID names the producer in broker logs; optional.
	ClientID string
	// Linger lets the client wait to fill batches; 0 sends at once.
	Linger time.Duration
	// TransactionalID, when set, makes the producer transactional: it
	// returns a TxnProducer, whose records are read by read_committed
	// consumers only once their transaction commits. Creating it fences
	// any older producer with the same id: that one's later calls fail
	// with ErrFenced, and its open transaction is aborted.
	TransactionalID string
	// TransactionTimeout bounds how long a transaction may stay open
	// before the broker aborts it; 60s when zero.
	TransactionTimeout time.Duration
	// Compression is the codec of the record batches sent: one of
	// Compressions (compression.type), "" for DefaultCompression.
	Compression string
}

// DefaultCompression is the codec of a producer given none. Kafka's Java
// producer sends batches uncompressed by default; Sluice compresses them
// with snappy, franz-go's default: the JSON it writes shrinks to a third
// or less, and the smaller batches cost less to write than the
// compression costs (measured on Nexmark's q0: uncompressed took 15 %
// more CPU per event, and more wall time).
const DefaultCompression = "snappy"

// Compressions are the producer's compression.type values, as Kafka's
// Java producer names them.
var Compressions = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// CheckCompression checks a compression.type value with Kafka's message.
func CheckCompression(v string) error {
	if v == "" || slices.Contains(Compressions, v) {
		return nil
	}
	return fmt.Errorf("Invalid value %s for configuration compression.type: String must be one of: %s", v, strings.Join(Compressions, ", "))
}

// TxnProducer is a transactional producer: Begin, then Produce any number
// of times, then Commit or Abort. Use from one goroutine at a time.
type TxnProducer interface {
	Producer
	// Init registers the transactional id with the broker now instead of
	// at the first transaction: older producers with the same id are
	// fenced and their open transaction is aborted when it returns.
	Init(ctx context.Context) error
	// Begin starts a transaction.
	Begin() error
	// Commit commits the open transaction: its records become visible to
	// read_committed consumers, all at once.
	Commit(ctx context.Context) error
	// Abort aborts the open transaction: its records are never read by
	// read_committed consumers.
	Abort(ctx context.Context) error
}

// Producer writes records. Use from one goroutine at a time.
type Producer interface {
	// Produce sends recs and returns once every one is acknowledged by all
	// in-sync replicas (acks=all), or with the first error. On success each
	// record's Partition and Offset are set. recs are not retained.
	Produce(ctx context.Context, recs []*Record) error
	Close()
}

// ConsumerOptions configure a consumer.
type ConsumerOptions struct {
	ClientID string
	// ReadCommitted reads only committed transactional records.
	ReadCommitted bool
	// KeepControl makes Poll return transaction markers as records with
	// Control set, so that a reader comparing its position with an end
	// offset sees it move past them (and past the aborted records a
	// read_committed consumer skips). The sarama client never returns
	// them.
	KeepControl bool
}

// Consumer reads assigned partitions. Use from one goroutine at a time.
type Consumer interface {
	// Assign adds partitions to read, each from the given offset: an
	// absolute offset >= 0, or OffsetStart / OffsetEnd.
	Assign(offsets map[string]map[int32]int64)
	// Poll blocks until records are available or ctx is done, and returns
	// them in offset order per partition. The returned slice and records are
	// owned by the caller.
	Poll(ctx context.Context) ([]*Record, error)
	Close()
}

// BufferedPoller is a Consumer that can also return, without waiting,
// what it has fetched already: PollBuffered returns the records Poll
// would return at once, and none (nil, nil) when nothing is buffered.
type BufferedPoller interface {
	PollBuffered() ([]*Record, error)
}

// EndWatcher is a Consumer that reports where a partition ended as of its
// latest fetch that returned records of it: the last stable offset for a
// read_committed consumer (the high watermark otherwise). ok is false
// before such a fetch. A task reading several inputs tells from it
// whether an input it has no records of has more to come (see exec's
// processJoin).
type EndWatcher interface {
	FetchedEnd(topic string, partition int32) (end int64, ok bool)
}

// Special offsets for Consumer.Assign.
const (
	OffsetStart int64 = -2 // the earliest available offset
	OffsetEnd   int64 = -1 // the end of the partition: only new records
)
