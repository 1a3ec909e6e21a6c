package rest_test

import (
	"io"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// spqDDL creates the orders stream and big_orders, which a persistent
// query writes from it.
const spqDDL = ordersDDL + `
CREATE STREAM big_orders AS SELECT id, item, amount * 2 AS doubled FROM orders WHERE amount > 10 EMIT CHANGES;`

// TestScalablePushQueryStream runs a scalable push query over
// /query-stream with the request property on: its id is ksqlDB's, its
// rows are those the persistent query writes after it subscribed, its own
// WHERE and projection run over them, and close-query ends it.
func TestScalablePushQueryStream(t *testing.T) {
	e := newEnv(t)
	e.ksql(t, spqDDL, nil)
	l := e.open(t, e.h1, "/query-stream", "application/vnd.ksqlapi.delimited.v1", map[string]any{
		"sql":        "SELECT id, doubled + 1 AS more FROM big_orders WHERE doubled < 100 EMIT CHANGES;",
		"properties": map[string]any{"ksql.query.push.v2.enabled": true},
	})
	header := decode(t, []byte(l.next(t)))
	qid, _ := header["queryId"].(string)
	if !strings.HasPrefix(qid, "SCALABLE_PUSH_QUERY_") {
		t.Fatalf("queryId %q, want a SCALABLE_PUSH_QUERY_ id; header %v", qid, header)
	}
	if got := toStrings(header["columnNames"]); strings.Join(got, ",") != "ID,MORE" {
		t.Errorf("columns %v", got)
	}
	// Rows inserted into the persistent query's source after the push
	// query subscribed reach it through the persistent query: o1 its WHERE
	// drops, o3 the push query's.
	e.ksql(t, `INSERT INTO orders (id, item, amount) VALUES ('o1', 'apple', 5.5);
INSERT INTO orders (id, item, amount) VALUES ('o2', 'pear', 25.0);
INSERT INTO orders (id, item, amount) VALUES ('o3', 'fig', 60.0);
INSERT INTO orders (id, item, amount) VALUES ('o4', 'kiwi', 30.0);`, nil)
	for _, want := range []string{`["o2",51.0]`, `["o4",61.0]`} {
		if got := l.next(t); got != want {
			t.Fatalf("row %s, want %s", got, want)
		}
	}
	// SHOW QUERIES lists persistent and transient queries only, as
	// ksqlDB's does.
	for _, q := range e.ksql(t, "SHOW QUERIES;", nil)[0]["queries"].([]any) {
		if id := q.(map[string]any)["id"]; id == qid {
			t.Errorf("SHOW QUERIES lists %s", qid)
		}
	}
	status, body, _ := e.post(t, e.h1, "/close-query", "", map[string]any{"queryId": qid})
	if status != 200 {
		t.Fatalf("close-query: %d %s", status, body)
	}
	l.end(t)
}

// TestScalablePushQueryFallsBack checks that push queries that do not
// qualify run as regular push queries with the property on, as ksqlDB's
// "If they cannot be utilized, the streams application version will
// automatically be used instead": an aggregation, a join, a read from
// earliest.
func TestScalablePushQueryFallsBack(t *testing.T) {
	e := newEnvWith(t, nil, func(c *engine.Config) { c.PushV2Enabled = true })
	e.ksql(t, spqDDL+`
CREATE TABLE notes (id VARCHAR PRIMARY KEY, note VARCHAR) WITH (KAFKA_TOPIC='notes', VALUE_FORMAT='JSON', PARTITIONS=1);
INSERT INTO orders (id, item, amount) VALUES ('o1', 'pear', 25.0);`, nil)
	if err := e.eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, sql string
		props     map[string]any
	}{
		{"aggregation", "SELECT item, COUNT(*) AS n FROM big_orders GROUP BY item EMIT CHANGES;", nil},
		{"join", "SELECT big_orders.id, note FROM big_orders JOIN notes ON big_orders.id = notes.id EMIT CHANGES;", nil},
		{"earliest", "SELECT id, doubled FROM big_orders EMIT CHANGES;", map[string]any{"auto.offset.reset": "earliest"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := e.open(t, e.h1, "/query-stream", "application/vnd.ksqlapi.delimited.v1", map[string]any{"sql": c.sql, "properties": c.props})
			header := decode(t, []byte(l.next(t)))
			qid, _ := header["queryId"].(string)
			if qid == "" || strings.HasPrefix(qid, "SCALABLE_PUSH_QUERY_") {
				t.Fatalf("queryId %q, want a regular push query's", qid)
			}
			if c.name == "earliest" {
				// A regular push query reads the topic from its start.
				if got := l.next(t); got != `["o1",50.0]` {
					t.Errorf("row %s", got)
				}
			}
			if status, body, _ := e.post(t, e.h1, "/close-query", "", map[string]any{"queryId": qid}); status != 200 {
				t.Fatalf("close-query: %d %s", status, body)
			}
		})
	}
	// The server's setting serves a qualifying query scalably, over the
	// old /query endpoint too (its status comes once the query has
	// subscribed), and the request's property turns it off.
	l := e.open(t, e.h1, "/query", "", map[string]any{"ksql": "SELECT id FROM big_orders EMIT CHANGES LIMIT 1;"})
	e.ksql(t, "INSERT INTO orders (id, item, amount) VALUES ('o2', 'fig', 40.0);", nil)
	body, err := io.ReadAll(l.resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"queryId":"SCALABLE_PUSH_QUERY_`) || !strings.Contains(string(body), `{"row":{"columns":["o2"]}}`) {
		t.Errorf("/query body %s", body)
	}
	off := e.open(t, e.h1, "/query-stream", "application/vnd.ksqlapi.delimited.v1", map[string]any{
		"sql": "SELECT id FROM big_orders EMIT CHANGES;", "properties": map[string]any{"ksql.query.push.v2.enabled": "false"}})
	if qid, _ := decode(t, []byte(off.next(t)))["queryId"].(string); strings.HasPrefix(qid, "SCALABLE_PUSH_QUERY_") {
		t.Errorf("queryId %q with the property off", qid)
	}
}

// TestScalablePushQueryEndsWithItsWriter terminates a scalable push
// query by its id, then the persistent query another one reads: that
// stream ends with an error saying so.
func TestScalablePushQueryEndsWithItsWriter(t *testing.T) {
	e := newEnvWith(t, nil, func(c *engine.Config) { c.PushV2Enabled = true })
	e.ksql(t, spqDDL, nil)
	first := e.open(t, e.h1, "/query-stream", "application/vnd.ksqlapi.delimited.v1", map[string]any{"sql": "SELECT id FROM big_orders EMIT CHANGES;"})
	qid, _ := decode(t, []byte(first.next(t)))["queryId"].(string)
	e.ksql(t, "TERMINATE "+qid+";", nil)
	first.end(t)
	l := e.open(t, e.h1, "/query-stream", "application/vnd.ksqlapi.delimited.v1", map[string]any{"sql": "SELECT * FROM big_orders EMIT CHANGES;"})
	if qid, _ := decode(t, []byte(l.next(t)))["queryId"].(string); !strings.HasPrefix(qid, "SCALABLE_PUSH_QUERY_") {
		t.Fatalf("queryId %q", qid)
	}
	e.ksql(t, "TERMINATE CSAS_BIG_ORDERS_1;", nil)
	if last := l.next(t); !strings.Contains(last, "CSAS_BIG_ORDERS_1") || !strings.Contains(last, "terminated") {
		t.Errorf("last line %s, want the error naming the terminated query", last)
	}
}
