package registry

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sluice-sql/sluice/kafka"
)

// DefaultTopic is the topic Confluent's registry keeps its schemas in, and
// so does the playground's.
const DefaultTopic = "_schemas"

// KafkaJournal is a Journal in a compacted single-partition topic.
type KafkaJournal struct {
	client kafka.Client
	topic  string
	mu     sync.Mutex
	prod   kafka.Producer
}

// NewKafkaJournal returns a journal in topic (DefaultTopic when empty),
// creating the topic compacted with one partition if it does not exist.
func NewKafkaJournal(ctx context.Context, c kafka.Client, topic string) (*KafkaJournal, error) {
	if topic == "" {
		topic = DefaultTopic
	}
	err := c.CreateTopic(ctx, kafka.TopicSpec{Name: topic, Partitions: 1, Configs: map[string]string{"cleanup.policy": "compact"}})
	if err != nil && !errors.Is(err, kafka.ErrTopicExists) {
		return nil, fmt.Errorf("creating the schema registry's topic %s: %w", topic, err)
	}
	p, err := c.NewProducer(kafka.ProducerOptions{ClientID: "sluice-schema-registry"})
	if err != nil {
		return nil, err
	}
	return &KafkaJournal{client: c, topic: topic, prod: p}, nil
}

// Load implements Journal.
func (k *KafkaJournal) Load(ctx context.Context) ([]Entry, error) {
	recs, err := kafka.ReadAll(ctx, k.client, k.topic)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(recs))
	for _, r := range recs {
		out = append(out, Entry{Key: r.Key, Value: r.Value, Offset: r.Offset})
	}
	return out, nil
}

// Append implements Journal.
func (k *KafkaJournal) Append(ctx context.Context, e Entry) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.prod.Produce(ctx, []*kafka.Record{{Topic: k.topic, Partition: 0, Key: e.Key, Value: e.Value}})
}

// Topic is the journal's topic.
func (k *KafkaJournal) Topic() string { return k.topic }

// Close closes the journal's producer.
func (k *KafkaJournal) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.prod.Close()
}
