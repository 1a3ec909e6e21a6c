package rest_test

import (
	"runtime"
	"strings"
	"testing"
)

// TestDeepRequests sends the requests that used to keep a core busy for
// seconds: each is answered with a clear error, at the cost of the
// nesting limit, not of the input's depth.
func TestDeepRequests(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	for _, c := range []struct {
		name, sql, want string
	}{
		{"20,000 parentheses (40 KB)", "SELECT " + strings.Repeat("(", 20000) + "1" + strings.Repeat(")", 20000) + " FROM orders EMIT CHANGES;",
			"expression nested deeper than 200 levels"},
		{"8,000 NOTs", "SELECT id FROM orders WHERE " + strings.Repeat("NOT ", 8000) + "TRUE EMIT CHANGES;",
			"expression nested deeper than 200 levels"},
		{"50,000 chained 1 +", "CREATE STREAM sums AS SELECT id, " + strings.Repeat("1 + ", 50000) + "1 AS s FROM nowhere;",
			"nowhere"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			status, out, _ := e.post(t, e.h1, "/ksql", "", map[string]any{"ksql": c.sql})
			runtime.ReadMemStats(&after)
			if status != 400 || !strings.Contains(string(out), c.want) {
				t.Errorf("status %d: %.300s; want 400 and %q", status, out, c.want)
			}
			// The whole server's allocations while it answered: far below
			// the gigabytes deep input used to cost.
			if n := after.TotalAlloc - before.TotalAlloc; n > 512<<20 {
				t.Errorf("answering allocated %d MiB", n>>20)
			}
		})
	}
}
