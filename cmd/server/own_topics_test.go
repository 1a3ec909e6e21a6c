package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ksqlPost runs one statement through the REST API's /ksql, as a ksqlDB
// client would, and returns the status and the decoded answer.
func ksqlPost(t *testing.T, base, sql string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"ksql": sql, "streamsProperties": map[string]string{"ksql.streams.auto.offset.reset": "earliest"}})
	resp, err := http.Post(base+"/ksql", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOwnTopics plays a user with a REST client trying to write the
// server's own topics, and someone with a Kafka client writing garbage
// and forged records straight into them: the statements are refused, and
// the next start skips the bad records (each named with its topic and
// offset in the log, and counted in /metrics) and brings back the rest of
// the catalog and the registry's schemas, with the query running.
func TestOwnTopics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	srv := startServer(t, dir)
	base := "http://" + srv.addrs.HTTP
	const cmdLog = "_sluice-sluice-command-log"

	for _, c := range []struct{ sql, want string }{
		{"CREATE STREAM cmdlog (v VARCHAR) WITH (KAFKA_TOPIC='" + cmdLog + "', VALUE_FORMAT='KAFKA');", "Cannot create a source over read-only topic: " + cmdLog},
		{"INSERT INTO cmdlog (v) VALUES ('this is not a command');", "Cannot insert values into an unknown stream/table"},
		{"CREATE STREAM schemas (v VARCHAR) WITH (KAFKA_TOPIC='_schemas', VALUE_FORMAT='KAFKA');", "Cannot create a source over read-only topic: _schemas"},
		{"DROP STREAM cmdlog DELETE TOPIC;", "does not exist"},
		{"CREATE STREAM s (v VARCHAR) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='KAFKA', PARTITIONS=1);", ""},
		{"CREATE STREAM feed WITH (KAFKA_TOPIC='" + cmdLog + "') AS SELECT * FROM s;", "Cannot insert into read-only topic: " + cmdLog},
		{"CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=1);", ""},
		{"CREATE STREAM big AS SELECT * FROM orders WHERE qty > 10;", ""},
		{"INSERT INTO orders (id, item, qty) VALUES ('o1', 'apple', 20);", ""},
	} {
		code, body := ksqlPost(t, base, c.sql)
		switch {
		case c.want == "" && code != 200:
			t.Fatalf("%s: %d %s", c.sql, code, body)
		case c.want != "" && (code != 400 || !strings.Contains(body, c.want)):
			t.Errorf("%s: %d %s; want 400 and %q", c.sql, code, body, c.want)
		}
	}
	// A schema the registry keeps.
	reg := "http://" + srv.addrs.Registry
	resp, err := http.Post(reg+"/subjects/kept-value/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(`{"schema":"\"string\""}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("registering a schema: %d", resp.StatusCode)
	}

	// Garbage and a forged command, straight into the topics.
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.addrs.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	forged := `{"kind":"create_source","version":1,"source":{"name":"GHOST","kind":"STREAM","topic":"` + cmdLog + `","partitions":1,"keyFormat":"KAFKA","valueFormat":"KAFKA","key":null,"value":[{"name":"V","type":{"kind":"STRING"}}],"sql":"forged"}}`
	var cmdOffsets, journalOffsets []int64
	for _, r := range []*kgo.Record{
		{Topic: cmdLog, Value: []byte("this is not a command")},
		{Topic: cmdLog, Value: []byte(forged)},
		{Topic: "_schemas", Key: []byte(""), Value: []byte("x")},
		{Topic: "_schemas", Key: []byte(`{"keytype":"SCHEMA","subject":"forged-value","version":1,"magic":1}`), Value: []byte(`{"subject":"forged-value","version":1,"id":1,"schema":"{\"type\":\"nonsense\"}"}`)},
	} {
		res := cl.ProduceSync(ctx, r)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		if r.Topic == cmdLog {
			cmdOffsets = append(cmdOffsets, res[0].Record.Offset)
		} else {
			journalOffsets = append(journalOffsets, res[0].Record.Offset)
		}
	}
	cl.Close()
	srv.stop()

	logs := &syncBuffer{}
	srv = startServerOpts(t, dir, logs, nil)
	defer srv.stop()
	base = "http://" + srv.addrs.HTTP
	for _, off := range cmdOffsets {
		if line := fmt.Sprintf(`level=ERROR msg="command log: a record is skipped" component=engine topic=%s offset=%d`, cmdLog, off); !strings.Contains(logs.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, logs)
		}
	}
	for _, off := range journalOffsets {
		if line := fmt.Sprintf(`level=ERROR msg="schema registry: a journal record is skipped" component=schema-registry topic=_schemas offset=%d`, off); !strings.Contains(logs.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, logs)
		}
	}
	_, metrics := httpGet(t, http.DefaultClient, base+"/metrics")
	if v := metricValue(t, metrics, "sluice_command_log_records_skipped_total"); v != 2 {
		t.Errorf("sluice_command_log_records_skipped_total = %v, want 2", v)
	}
	if v := metricValue(t, metrics, "sluice_schema_registry_journal_records_skipped_total"); v != 2 {
		t.Errorf("sluice_schema_registry_journal_records_skipped_total = %v, want 2", v)
	}
	if _, body := ksqlPost(t, base, "SHOW STREAMS;"); !strings.Contains(body, `"BIG"`) || !strings.Contains(body, `"ORDERS"`) || strings.Contains(body, "GHOST") {
		t.Errorf("SHOW STREAMS after the restart: %s", body)
	}
	if code, body := httpGet(t, http.DefaultClient, "http://"+srv.addrs.Registry+"/subjects"); code != 200 || strings.TrimSpace(body) != `["kept-value"]` {
		t.Errorf("the registry's subjects after the restart: %d %s", code, body)
	}
	if code, body := ksqlPost(t, base, "INSERT INTO orders (id, item, qty) VALUES ('o2', 'pear', 30);"); code != 200 {
		t.Fatalf("insert after the restart: %d %s", code, body)
	}
	if got := sinkRecords(t, srv.addrs.Kafka, "BIG", 2); !strings.Contains(got[1], "pear") {
		t.Errorf("the query after the restart wrote %v", got)
	}
}
