package rest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestQueryWire: /query sends each kind of query as ksqlDB does. A pull
// query on a table marks its key columns KEY and ends with no final
// message; one on a stream ends "Query Completed", or "Limit Reached" when
// its LIMIT stopped it; a push query ends "Limit Reached". Every header,
// pull queries' too, has a query id.
func TestQueryWire(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	earliest := map[string]any{"auto.offset.reset": "earliest"}
	e.ksql(t, "CREATE TABLE totals AS SELECT id, SUM(amount) AS total FROM orders GROUP BY id;", earliest)
	if err := e.eng.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	query := func(sql string) []map[string]any {
		t.Helper()
		status, body, _ := e.post(t, e.h1, "/query", "", map[string]any{"ksql": sql, "streamsProperties": earliest})
		var out []map[string]any
		if err := json.Unmarshal(body, &out); status != 200 || err != nil {
			t.Fatalf("%s: %d %v: %s", sql, status, err, body)
		}
		return out
	}
	for _, tc := range []struct {
		sql, schema string
		rows        int
		final       string // "" for none
	}{
		{"SELECT * FROM totals WHERE id = 'o2';", "`ID` STRING KEY, `TOTAL` DOUBLE", 1, ""},
		{"SELECT total, id FROM totals;", "`TOTAL` DOUBLE, `ID` STRING KEY", 3, ""},
		{"SELECT * FROM totals LIMIT 1;", "`ID` STRING KEY, `TOTAL` DOUBLE", 1, ""},
		{"SELECT id, amount FROM orders;", "`ID` STRING, `AMOUNT` DOUBLE", 3, "Query Completed"},
		{"SELECT id FROM orders LIMIT 2;", "`ID` STRING", 2, "Limit Reached"},
		{"SELECT id FROM orders EMIT CHANGES LIMIT 2;", "`ID` STRING", 2, "Limit Reached"},
	} {
		got := query(tc.sql)
		want := 1 + tc.rows
		if tc.final != "" {
			want++
		}
		if len(got) != want {
			t.Errorf("%s: %d entries, want %d: %v", tc.sql, len(got), want, got)
			continue
		}
		h, _ := got[0]["header"].(map[string]any)
		if id, _ := h["queryId"].(string); h["schema"] != tc.schema || id == "" {
			t.Errorf("%s: header %v, want schema %s and a query id", tc.sql, h, tc.schema)
		}
		last := got[len(got)-1]
		if tc.final == "" && last["row"] == nil {
			t.Errorf("%s: ends with %v, want its last row", tc.sql, last)
		}
		if tc.final != "" && last["finalMessage"] != tc.final {
			t.Errorf("%s: ends with %v, want finalMessage %q", tc.sql, last, tc.final)
		}
	}

	// /query-stream: a pull query's header has a query id.
	for _, sql := range []string{"SELECT * FROM totals;", "SELECT * FROM orders;"} {
		_, body, _ := e.post(t, e.h2, "/query-stream", "application/vnd.ksqlapi.delimited.v1", map[string]any{"sql": sql})
		var h map[string]any
		first, _, _ := strings.Cut(string(body), "\n")
		err := json.Unmarshal([]byte(first), &h)
		if id, _ := h["queryId"].(string); err != nil || !strings.HasPrefix(id, "query_") {
			t.Errorf("%s: header %s, want a query id", sql, first)
		}
	}
}

// TestDropOverREST: DROP TABLE of a table made by CREATE TABLE AS SELECT
// ends its query, as ksqlDB does since 0.13; DROP of a source an INSERT
// INTO query writes is refused with ksqlDB's message.
func TestDropOverREST(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	e.ksql(t, "CREATE TABLE totals AS SELECT id, SUM(amount) AS total FROM orders GROUP BY id;"+
		"CREATE STREAM merged AS SELECT * FROM orders; INSERT INTO merged SELECT * FROM orders;", nil)
	ents := e.ksql(t, "DROP TABLE totals;", nil)
	if st, _ := ents[0]["commandStatus"].(map[string]any); st["status"] != "SUCCESS" {
		t.Fatalf("DROP TABLE totals: %v", ents)
	}
	for _, q := range e.ksql(t, "SHOW QUERIES;", nil)[0]["queries"].([]any) {
		if id := q.(map[string]any)["id"].(string); strings.HasPrefix(id, "CTAS_TOTALS") {
			t.Errorf("query %s still runs after DROP TABLE totals", id)
		}
	}
	status, body, _ := e.post(t, e.h1, "/ksql", "", map[string]any{"ksql": "DROP STREAM merged;"})
	want := "Cannot drop MERGED.\nThe following queries read from this source: [].\nThe following queries write into this source: [INSERTQUERY_"
	if status != 400 || !strings.Contains(string(body), strings.ReplaceAll(want, "\n", `\n`)) {
		t.Errorf("DROP STREAM merged: %d %s", status, body)
	}
}

// TestPullSettingsOverREST: a request's streamsProperties set the pull
// query settings; with table scans disabled a query that needs one is
// refused with ksqlDB's message.
func TestPullSettingsOverREST(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	e.ksql(t, "CREATE TABLE totals AS SELECT id, SUM(amount) AS total FROM orders GROUP BY id;", map[string]any{"auto.offset.reset": "earliest"})
	if err := e.eng.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	props := map[string]any{"ksql.query.pull.table.scan.enabled": false}
	status, body, _ := e.post(t, e.h1, "/query", "", map[string]any{"ksql": "SELECT * FROM totals WHERE total > 10;", "streamsProperties": props})
	if status != 400 || !strings.Contains(string(body), "WHERE clause missing key column for disjunct") {
		t.Errorf("table scan disabled: %d %s", status, body)
	}
	status, body, _ = e.post(t, e.h1, "/query", "", map[string]any{"ksql": "SELECT * FROM totals WHERE id = 'o2';", "streamsProperties": props})
	if status != 200 || !strings.Contains(string(body), `"o2"`) {
		t.Errorf("key lookup with table scans disabled: %d %s", status, body)
	}
}
