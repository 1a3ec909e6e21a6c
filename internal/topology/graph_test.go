package topology

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
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

// TestSourceJSON checks that a source node reads back as written, and that
// a table source of a plan written before Kind existed ("table": true)
// still reads as a table.
func TestSourceJSON(t *testing.T) {
	s := &Source{Name: "USERS", Kind: Table, Topic: "users", Partitions: 2, KeyFormat: "KAFKA", ValueFormat: "JSON",
		Key: []types.Column{{Name: "ID", Type: types.StringType}}, Unused: []string{"X"}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Source
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, s) {
		t.Errorf("read back %+v, want %+v", back, *s)
	}
	for _, tt := range []struct {
		json  string
		table bool
	}{
		{`{"name":"U","topic":"u","table":true}`, true},
		{`{"name":"S","topic":"s"}`, false},
		{`{"name":"S","topic":"s","kind":"STREAM"}`, false},
		{`{"name":"U","topic":"u","kind":"TABLE"}`, true},
	} {
		var got Source
		if err := json.Unmarshal([]byte(tt.json), &got); err != nil {
			t.Fatal(err)
		}
		if got.IsTable() != tt.table {
			t.Errorf("%s: IsTable() = %v", tt.json, got.IsTable())
		}
	}
	// A plan node keeps nothing only the catalog needs.
	cat := *s
	cat.SQL, cat.System, cat.IsSource = "CREATE SOURCE TABLE ...", true, true
	if n := cat.PlanNode(); n.SQL != "" || n.System || n.IsSource || n.Unused != nil || n.Kind != Table {
		t.Errorf("PlanNode() = %+v", *n)
	}
}
