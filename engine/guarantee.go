package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/kafka"
)

// The processing guarantees, by ksqlDB's names.
const (
	AtLeastOnce   = "at_least_once"
	ExactlyOnceV2 = "exactly_once_v2"
	// exactlyOnce is ksqlDB's deprecated name, taken to mean v2.
	exactlyOnce = "exactly_once"
)

// propGuarantee is the property choosing a query's guarantee; ksqlDB also
// reads it under propStreamsGuarantee.
const (
	propGuarantee        = "processing.guarantee"
	propStreamsGuarantee = "ksql.streams.processing.guarantee"
)

// ParseGuarantee checks a processing.guarantee value and returns its
// canonical name; deprecated is true for exactly_once, which means
// exactly_once_v2.
func ParseGuarantee(v string) (canonical string, deprecated bool, err error) {
	switch v {
	case AtLeastOnce, ExactlyOnceV2:
		return v, false, nil
	case exactlyOnce:
		return ExactlyOnceV2, true, nil
	}
	return "", false, fmt.Errorf("'%s' takes '%s' or '%s', not '%s'", propGuarantee, AtLeastOnce, ExactlyOnceV2, v)
}

// errNoTransactions says why exactly_once_v2 is refused with this Kafka
// client.
var errNoTransactions = fmt.Errorf("'%s'='%s' needs Kafka transactions, which the sarama client does not run; start the server with --kafka-client franz, or use '%s'",
	propGuarantee, ExactlyOnceV2, AtLeastOnce)

// checkTransactions reports whether client can run transactions: it makes
// (and closes) a transactional producer, which contacts no broker.
func checkTransactions(client kafka.Client) error {
	p, err := client.NewProducer(kafka.ProducerOptions{TransactionalID: "sluice-capability-check"})
	if errors.Is(err, kafka.ErrNoTransactions) {
		return errNoTransactions
	}
	if err != nil {
		return err
	}
	p.Close()
	return nil
}

// guaranteeOf is the guarantee a persistent query runs under: the one it
// was created with, else the server's.
func (e *Engine) guaranteeOf(q *catalog.Query) string {
	if q.Guarantee != "" {
		return q.Guarantee
	}
	return e.cfg.ProcessingGuarantee
}

// sessionGuarantee is the guarantee new persistent queries of s get.
func (e *Engine) sessionGuarantee(s *Session) string {
	for _, k := range []string{propGuarantee, propStreamsGuarantee} {
		if v, ok := s.Properties[k]; ok {
			if g, _, err := ParseGuarantee(v); err == nil {
				return g
			}
		}
	}
	return e.cfg.ProcessingGuarantee
}

// commitInterval is how long an exactly-once task gathers records for one
// transaction: Kafka Streams' commit.interval.ms default under
// exactly-once. An at-least-once task commits each poll (one without
// state pipelines its produce, exec/flight.go).
const commitInterval = 100 * time.Millisecond

// positionsTopic is the compacted topic in which the tasks of an
// exactly-once query keep their positions.
func (e *Engine) positionsTopic(queryID string) string {
	return e.internalPrefix() + queryID + "-offsets"
}

// ensurePositionsTopic creates the positions topic of an exactly-once
// query.
func (e *Engine) ensurePositionsTopic(ctx context.Context, queryID string) error {
	err := e.createTopic(ctx, kafka.TopicSpec{Name: e.positionsTopic(queryID), Partitions: 1, Configs: map[string]string{"cleanup.policy": "compact"}})
	if err != nil && !errors.Is(err, kafka.ErrTopicExists) {
		return fmt.Errorf("engine: create positions topic %s: %w", e.positionsTopic(queryID), err)
	}
	return nil
}
