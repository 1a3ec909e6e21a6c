package topology

import (
	"encoding/json"
	"strings"
	"testing"
)

// A stored plan without "limit" has no LIMIT; LIMIT 0 is kept as a limit.
func TestGraphLimitJSON(t *testing.T) {
	var g Graph
	if err := json.Unmarshal([]byte(`{"queryId":"CSAS_X_1","steps":[],"output":[],"keyColumns":0,"offsetReset":"earliest"}`), &g); err != nil {
		t.Fatal(err)
	}
	if g.Limit != nil || g.LimitReached(0) || g.LimitReached(1<<40) {
		t.Errorf("a plan without a limit: Limit %v", g.Limit)
	}
	b, err := json.Marshal(&g)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"limit"`) {
		t.Errorf("no LIMIT written as %s", b)
	}

	zero := int64(0)
	g.Limit = &zero
	if b, err = json.Marshal(&g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"limit":0`) {
		t.Errorf("LIMIT 0 written as %s", b)
	}
	var back Graph
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Limit == nil || *back.Limit != 0 || !back.LimitReached(0) {
		t.Errorf("LIMIT 0 read back as %v", back.Limit)
	}
}

func TestGraphLimitReached(t *testing.T) {
	limit := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		limit *int64
		n     int64
		want  bool
	}{
		{nil, 0, false},
		{limit(0), 0, true},
		{limit(-1), 0, true},
		{limit(2), 1, false},
		{limit(2), 2, true},
	} {
		g := Graph{Limit: tc.limit}
		if got := g.LimitReached(tc.n); got != tc.want {
			t.Errorf("limit %v after %d rows: %v, want %v", tc.limit, tc.n, got, tc.want)
		}
	}
}
