package engine_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// TestDropTerminatesItsQuery: as in ksqlDB, DROP of a source created with
// its query terminates that query; it is refused, with ksqlDB's messages,
// while INSERT INTO queries read or write the source, or while sources
// created from it read it. The link between a source and its query
// survives a restart.
func TestDropTerminatesItsQuery(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	s := engine.NewSession()
	for _, sql := range []string{
		"CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);",
		"CREATE STREAM a AS SELECT * FROM s;",
		"CREATE STREAM b AS SELECT * FROM a;",
		"INSERT INTO a SELECT * FROM s;",
	} {
		if msg := execErr(h, s, sql); msg != "" {
			t.Fatalf("%s: %s", sql, msg)
		}
	}
	queries := func() string {
		var ids []string
		for _, q := range h.eng.Queries(h.ctx) {
			ids = append(ids, q.ID)
		}
		return strings.Join(ids, " ")
	}
	if got := queries(); got != "CSAS_A_1 CSAS_B_2 INSERTQUERY_3" {
		t.Fatalf("queries %s", got)
	}
	for _, tc := range []struct{ sql, want string }{
		{"DROP STREAM a;", "Cannot drop A.\nThe following queries read from this source: [].\nThe following queries write into this source: [INSERTQUERY_3].\nYou need to terminate them before dropping A."},
		{"DROP STREAM s;", "Cannot drop S.\nThe following queries read from this source: [INSERTQUERY_3].\nThe following queries write into this source: [].\nYou need to terminate them before dropping S."},
		{"TERMINATE INSERTQUERY_3;", ""},
		{"DROP STREAM a;", "Cannot drop A.\nThe following streams and/or tables read from this source: [B].\nYou need to drop them before dropping A."},
		{"DROP STREAM s;", "Cannot drop S.\nThe following streams and/or tables read from this source: [A].\nYou need to drop them before dropping S."},
		{"DROP STREAM b;", ""},
	} {
		if got := execErr(h, s, tc.sql); got != tc.want {
			t.Errorf("%s\n got %q\nwant %q", tc.sql, got, tc.want)
		}
	}
	if got := queries(); got != "CSAS_A_1" {
		t.Errorf("after DROP STREAM b, queries %s, want CSAS_A_1", got)
	}
	if err := h.shut(); err != nil {
		t.Fatal(err)
	}
	h.open()
	if got := execErr(h, s, "DROP STREAM a;"); got != "" {
		t.Fatalf("DROP STREAM a after a restart: %s", got)
	}
	if got := queries(); got != "" {
		t.Errorf("after DROP STREAM a, queries %s, want none", got)
	}
	if got := execErr(h, s, "DROP STREAM s;"); got != "" {
		t.Errorf("DROP STREAM s: %s", got)
	}
}
