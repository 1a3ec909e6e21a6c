package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/sluice-sql/sluice/exec"
)

// QueryMetrics are one running query's figures.
type QueryMetrics struct {
	// ID is the query id; Type is PERSISTENT or PUSH.
	ID, Type string
	// Status is as SHOW QUERIES prints it.
	Status string
	exec.Stats
	// Lag is how far the query is behind its input topics; LagErr says
	// why it could not be measured.
	Lag    exec.Lag
	LagErr error
}

// Metrics returns the figures of every running query (persistent ones
// first, then push queries), in id order. Measuring lag asks Kafka for the
// end offsets of each query's input topics.
func (e *Engine) Metrics(ctx context.Context) []QueryMetrics {
	type entry struct {
		id, typ string
		q       *exec.Query
	}
	e.mu.Lock()
	var qs []entry
	for id, q := range e.running {
		qs = append(qs, entry{id, "PERSISTENT", q})
	}
	for id, q := range e.transient {
		qs = append(qs, entry{id, "PUSH", q})
	}
	e.mu.Unlock()
	sort.Slice(qs, func(i, j int) bool {
		if qs[i].typ != qs[j].typ {
			return qs[i].typ == "PERSISTENT"
		}
		return qs[i].id < qs[j].id
	})
	out := make([]QueryMetrics, 0, len(qs))
	for _, en := range qs {
		m := QueryMetrics{ID: en.id, Type: en.typ, Stats: en.q.Stats(), Status: "RUNNING"}
		if en.typ == "PERSISTENT" {
			m.Status = e.queryStatus(en.id)
		}
		m.Lag, m.LagErr = en.q.Lag(ctx)
		out = append(out, m)
	}
	return out
}

// Ready returns nil when the engine can serve: it is open (its catalog
// replayed and its queries started) and Kafka answers.
func (e *Engine) Ready(ctx context.Context) error {
	if _, err := e.cfg.Kafka.ListTopics(ctx); err != nil {
		return fmt.Errorf("kafka is not reachable: %w", err)
	}
	return nil
}
