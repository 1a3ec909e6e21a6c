// Package connecttest is a fake Kafka Connect worker for tests: the REST
// calls package connect makes, answered from memory, with failures to
// order.
package connecttest
