package engine_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// TestTaskTime: the wall time of a query's tasks is split between
// waiting for records, processing them and waiting for their outputs and
// commits, and /metrics' figures come from it.
func TestTaskTime(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	s := engine.NewSession()
	for _, sql := range []string{
		`CREATE STREAM tt_src (id INT KEY, v INT) WITH (kafka_topic='tt_src', value_format='JSON', partitions=1);`,
		`CREATE STREAM tt_out AS SELECT id, v * 2 AS w FROM tt_src;`,
		`CREATE TABLE tt_counts AS SELECT id, COUNT(*) AS n FROM tt_src GROUP BY id;`,
		`INSERT INTO tt_src (id, v) VALUES (1, 2);`,
		`INSERT INTO tt_src (id, v) VALUES (2, 3);`,
	} {
		if _, err := h.eng.Execute(h.ctx, s, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if err := h.eng.Flush(h.ctx); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, m := range h.eng.Metrics(h.ctx) {
		if !strings.HasPrefix(m.ID, "CSAS_TT_OUT_") && !strings.HasPrefix(m.ID, "CTAS_TT_COUNTS_") {
			continue
		}
		seen++
		tt := m.Time
		if tt.Poll <= 0 || tt.Work <= 0 || tt.Produce+tt.Commit <= 0 {
			t.Errorf("%s: task time %+v: want time polling, working and waiting for the outputs", m.ID, tt)
		}
	}
	if seen != 2 {
		t.Errorf("metrics of %d of the 2 queries", seen)
	}
}
