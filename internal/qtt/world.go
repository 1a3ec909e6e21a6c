package qtt

import (
	"context"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/registry"
)

// World is the setting of one run for a runner that sends the statements
// another way than RunOne does (over the REST API, say): a fresh
// in-memory broker with the case's topics, a schema registry holding the
// schemas its topics declare, and an engine over them with the fixed
// Clock. Inputs are produced and outputs checked exactly as RunOne does.
type World struct {
	h *harness
}

// NewWorld brings up r's world: the broker, its topics and the registry.
// The caller closes it.
func NewWorld(ctx context.Context, r Run) (*World, error) {
	return NewWorldPartitions(ctx, r, 1)
}

// NewWorldPartitions is NewWorld with the partitions the topics the case
// does not give a count get: ksqlDB's QTT runner runs a query in one
// partition (Kafka Streams' test driver), its REST runner on a broker
// with topics of 4 partitions, which decide ROWPARTITION and the order
// in which a pull query scans a table.
func NewWorldPartitions(ctx context.Context, r Run, partitions int32) (*World, error) {
	w := &World{h: &harness{run: r, partitions: max(partitions, 1)}}
	if err := w.h.start(ctx); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Registry is the run's schema registry.
func (w *World) Registry() registry.Client { return w.h.reg }

// OpenEngine opens the run's engine; Close closes it.
func (w *World) OpenEngine(ctx context.Context) (*engine.Engine, error) {
	if err := w.h.openEngine(ctx); err != nil {
		return nil, err
	}
	return w.h.eng, nil
}

// NoteSources records the sources the statements run so far created, in
// catalog order, so that inputs are written and outputs read with the
// codecs of the sources over their topics. Call it after statements ran.
func (w *World) NoteSources() { w.h.noteSources() }

// Feed produces the case's inputs one at a time, each processed by the
// persistent queries (engine Flush) before the next.
func (w *World) Feed(ctx context.Context) error { return w.h.feed(ctx) }

// Check reads back every topic the case's outputs name and compares it
// with them; a difference is a *Mismatch.
func (w *World) Check(ctx context.Context) error { return w.h.check(ctx) }

// Close closes the engine, the clients and the broker, and removes the
// run's data.
func (w *World) Close() { w.h.close() }
