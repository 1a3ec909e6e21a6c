package engine

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

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

// statsColumns are the columns SHOW QUERIES EXTENDED adds to ksqlDB's.
var statsColumns = []string{"Records In", "Records Out", "Filtered", "Errors", "Late", "Nulls Dropped", "Lag", "Lag Seconds", "Restored"}

// statsRow formats a query's figures for statsColumns.
func statsRow(ctx context.Context, q *exec.Query) []string {
	if q == nil {
		return []string{"0", "0", "0", "0", "0", "0", "", "", ""}
	}
	s := q.Stats()
	lag, lagSecs := "", ""
	if l, err := q.Lag(ctx); err == nil {
		lag, lagSecs = strconv.FormatInt(l.Records, 10), strconv.FormatFloat(l.Seconds, 'f', 1, 64)
	}
	return []string{strconv.FormatInt(s.RecordsIn, 10), strconv.FormatInt(s.RecordsOut, 10), strconv.FormatInt(s.Filtered, 10),
		strconv.FormatInt(s.Errors, 10), strconv.FormatInt(s.Late, 10), strconv.FormatInt(s.NullsDropped, 10), lag, lagSecs, strconv.Itoa(s.RestorePercent) + " %"}
}

// writeRuntimeStats writes one query's line of DESCRIBE EXTENDED's "Local
// runtime statistics", with ksqlDB's names where it has them
// (total-messages, failed-messages, last-message).
func writeRuntimeStats(ctx context.Context, b *strings.Builder, id string, q *exec.Query) {
	s := q.Stats()
	fmt.Fprintf(b, "%s: total-messages: %d  messages-out: %d  filtered-messages: %d  failed-messages: %d  late-messages: %d  dropped-null-messages: %d",
		id, s.RecordsIn, s.RecordsOut, s.Filtered, s.Errors, s.Late, s.NullsDropped)
	if l, err := q.Lag(ctx); err == nil {
		fmt.Fprintf(b, "  lag: %d  lag-seconds: %.1f", l.Records, l.Seconds)
	}
	if s.Restoring {
		fmt.Fprintf(b, "  restored: %d %%", s.RestorePercent)
	}
	if !s.LastRecord.IsZero() {
		fmt.Fprintf(b, "  last-message: %s", s.LastRecord.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	b.WriteByte('\n')
}
