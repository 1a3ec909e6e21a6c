package kafka

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"time"
)

// Config configures a Client. Both adapters read the same fields.
type Config struct {
	// Brokers are the bootstrap "host:port" addresses; at least one.
	Brokers []string
	// ClientID names the client in broker logs; "sluice" when empty.
	ClientID string
	// Logger receives the client library's warnings and errors; nothing
	// is logged when nil.
	Logger *slog.Logger
	// TLS, when set, encrypts every connection with this configuration.
	TLS *tls.Config
	// SASL, when set, authenticates every connection.
	SASL *SASL
	// AllowAutoTopicCreation lets producers and consumers ask the broker
	// to create a topic on first use (the broker must allow it too). Off by
	// default: Sluice creates the topics it writes.
	AllowAutoTopicCreation bool
	// RequestTimeout bounds a single admin request when the caller's
	// context has no deadline; 30s when zero.
	RequestTimeout time.Duration
	// FetchMaxPartitionBytes bounds what a consumer fetches from one
	// partition in one request (the broker still returns a whole first
	// record batch when it is larger); DefaultFetchMaxPartitionBytes when
	// zero. A task processes what one poll returns as one batch, so this
	// sizes a task's batches and the memory they take.
	FetchMaxPartitionBytes int32
	// FetchMaxBytes bounds what a consumer fetches in one request over all
	// its partitions (franz only); DefaultFetchMaxBytes when zero.
	FetchMaxBytes int32
	// MaxPollRecords caps the records one Consumer.Poll returns (the rest
	// wait for the next), as Kafka's max.poll.records: a record batch
	// larger than the fetch size still comes whole from the broker.
	// DefaultMaxPollRecords when zero.
	MaxPollRecords int
}

// The consumers' fetch and poll limits when Config leaves them zero. A
// task processes what one poll returns as one batch. Kafka's fetch sizes
// (1 MiB a partition, 50 MiB a request) make that tens of thousands of
// records, tens of MiB decoded: a few such batches, fetched, processed
// and being produced, then make most of a server's memory, while a batch
// of a thousand records (Kafka Streams' max.poll.records) costs no more
// CPU per record.
const (
	DefaultFetchMaxPartitionBytes = 64 << 10
	DefaultFetchMaxBytes          = 1 << 20
	DefaultMaxPollRecords         = 1000
)

func (c Config) withDefaults() (Config, error) {
	if len(c.Brokers) == 0 {
		return c, errors.New("kafka: config: no brokers")
	}
	if c.ClientID == "" {
		c.ClientID = "sluice"
	}
	if c.SASL != nil {
		if err := c.SASL.Validate(); err != nil {
			return c, err
		}
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.FetchMaxPartitionBytes <= 0 {
		c.FetchMaxPartitionBytes = DefaultFetchMaxPartitionBytes
	}
	if c.FetchMaxBytes <= 0 {
		c.FetchMaxBytes = DefaultFetchMaxBytes
	}
	c.FetchMaxBytes = max(c.FetchMaxBytes, c.FetchMaxPartitionBytes)
	if c.MaxPollRecords <= 0 {
		c.MaxPollRecords = DefaultMaxPollRecords
	}
	return c, nil
}
