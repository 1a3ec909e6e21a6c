// Package kafka owns Sluice's every conversation with Kafka: admin
// (topics, offsets, group offsets), producing batches, and consuming
// directly assigned partitions. Outside this package only tests and
// benchmarks that play an outside client import a Kafka library.
//
// Client is the narrow interface the engine uses. Two adapters implement
// it and pass the same conformance suite:
//
//   - NewFranz, over franz-go (kgo, kadm): the default; less CPU per record.
//   - NewSarama, over IBM/sarama: for users who standardise on it.
//
// Both produce with acks=all and idempotence on, and place a keyed record
// whose Partition is negative exactly where Kafka's Java client would:
// toPositive(murmur2(key)) % partitions. A record with Partition >= 0 goes
// to that partition. Both commit and fetch group offsets without joining
// the group, which Kafka accepts while the group has no members.
//
//	engine ──Produce(batch)──▶ Producer ──▶ broker
//	engine ◀──Poll(batch)──── Consumer ◀── broker (Assign: topic/partition/offset)
//	engine ──admin, group offsets──▶ Client ──▶ broker
//
// Consumer.Assign takes an absolute offset or one of the special offsets
// OffsetStart (-2, the earliest available record) and OffsetEnd (-1, only
// records produced after the consumer starts). An absolute offset outside
// the log (below its start or past its end) reads from the log start, so
// no record that still exists is skipped.
//
// Membership (implemented by the franz-go client; sarama answers
// ErrNotSupported by not implementing it) makes a server a member of the
// cluster group of the servers sharing a service id. The group's own
// balancer assigns no partition of any topic: it assigns slots, partition
// numbers that stand for partition p of every topic of every query, so
// that co-partitioned work stays on one server, and sends every member
// the slot-to-address map (see Assignment).
//
// StartPlayground runs an in-process, single-node Kafka-protocol broker
// (franz-go's kfake) that persists topics, records and committed offsets
// under a data directory: Sluice's playground mode when no brokers are
// given. It is a development broker, not a replicated one.
//
// Errors wrap ErrTopicExists, ErrUnknownTopic and ErrClosed where they
// apply, keeping the client library's error in the chain.
package kafka
