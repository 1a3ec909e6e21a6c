package rest_test

import (
	"strings"
	"testing"
)

// TestDescribeExtendedStatistics checks that DESCRIBE EXTENDED's entity
// carries each query's runtime figures, as the engine prints them.
func TestDescribeExtendedStatistics(t *testing.T) {
	e := newEnv(t)
	e.ksql(t, ordersDDL, nil)
	ents := e.ksql(t, "CREATE STREAM big AS SELECT id, item, amount FROM orders WHERE amount > 10;", map[string]any{"auto.offset.reset": "earliest"})
	qid, _ := ents[0]["commandStatus"].(map[string]any)["queryId"].(string)
	desc := e.ksql(t, "DESCRIBE orders EXTENDED;", nil)[0]["sourceDescription"].(map[string]any)
	st, _ := desc["statistics"].(string)
	if qid == "" || !strings.HasPrefix(st, qid+": total-messages: ") || !strings.Contains(st, "  filtered-messages: 0") || !strings.Contains(st, "  dropped-null-messages: 0") {
		t.Errorf("DESCRIBE EXTENDED statistics of %s = %q", qid, st)
	}
}
