package rest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/sluice-sql/sluice/registry"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/server/rest"
)

// env is a REST handler over a real engine and playground broker, served
// over HTTP/1.1 and h2c.
type env struct {
	eng     *engine.Engine
	client  kafka.Client
	handler *rest.Handler
	srv     *httptest.Server
	url     string
	// h1 speaks HTTP/1.1, h2 HTTP/2 with prior knowledge.
	h1, h2 *http.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil, nil)
}

// newEnvWith is newEnv with options changing the handler's options and
// configure the engine's configuration.
func newEnvWith(t *testing.T, options func(*rest.Options), configure func(*engine.Config)) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka"), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { broker.Close() })
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}, ClientID: "rest-test", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	cfg := engine.Config{Kafka: client, DataDir: filepath.Join(dir, "state"), Logger: quiet, Registry: registry.NewMemory()}
	if configure != nil {
		configure(&cfg)
	}
	eng, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	opts := rest.Options{Version: "test-version", ServiceID: "sluice", KafkaClusterID: broker.Addr(), Logger: quiet,
		CheckKafka: func(ctx context.Context) error { _, err := client.ListTopics(ctx); return err }}
	if options != nil {
		options(&opts)
	}
	h := rest.New(eng, opts)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Config.RegisterOnShutdown(h.Close)
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	h2 := new(http.Protocols)
	h2.SetUnencryptedHTTP2(true)
	return &env{
		eng: eng, client: client, handler: h, srv: srv, url: srv.URL,
		h1: &http.Client{Transport: &http.Transport{}, Timeout: time.Minute},
		h2: &http.Client{Transport: &http.Transport{Protocols: h2}, Timeout: time.Minute},
	}
}

// post sends body as JSON and returns the status and the whole response.
func (e *env) post(t *testing.T, c *http.Client, path, accept string, body any) (int, []byte, *http.Response) {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/vnd.ksql.v1+json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out, resp
}

// ksql runs statements through /ksql and decodes the entities.
func (e *env) ksql(t *testing.T, sql string, props map[string]any) []map[string]any {
	t.Helper()
	status, body, _ := e.post(t, e.h1, "/ksql", "", map[string]any{"ksql": sql, "streamsProperties": props})
	if status != http.StatusOK {
		t.Fatalf("/ksql %q: status %d: %s", sql, status, body)
	}
	var out []map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("/ksql %q: %v: %s", sql, err, body)
	}
	return out
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, b)
	}
	return m
}

const ordersDDL = "CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, amount DOUBLE) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=1);"

func TestKSQLEntities(t *testing.T) {
	e := newEnv(t)
	ents := e.ksql(t, ordersDDL+"\nINSERT INTO orders (id, item, amount) VALUES ('o1', 'apple', 5.5);", nil)
	if len(ents) != 1 {
		t.Fatalf("CREATE + INSERT gave %d entities, want 1 (INSERT VALUES has none): %v", len(ents), ents)
	}
	cs := ents[0]
	if cs["@type"] != "currentStatus" || cs["commandId"] != "stream/`ORDERS`/create" {
		t.Errorf("CREATE STREAM entity = %v", cs)
	}
	if st := cs["commandStatus"].(map[string]any); st["status"] != "SUCCESS" || st["message"] != "Stream created" {
		t.Errorf("commandStatus = %v", st)
	}
	if cs["commandSequenceNumber"].(float64) != 0 || cs["statementText"] != ordersDDL {
		t.Errorf("currentStatus = %v", cs)
	}

	ents = e.ksql(t, "CREATE STREAM big AS SELECT id, item, amount FROM orders WHERE amount > 10; SHOW STREAMS; LIST QUERIES; DESCRIBE orders; SHOW PROPERTIES; SHOW TOPICS;", map[string]any{"auto.offset.reset": "earliest"})
	types := make([]string, len(ents))
	for i, en := range ents {
		types[i] = en["@type"].(string)
	}
	if want := []string{"currentStatus", "streams", "queries", "sourceDescription", "properties", "kafka_topics"}; !slices.Equal(types, want) {
		t.Fatalf("entity types = %v, want %v", types, want)
	}
	csas := ents[0]["commandStatus"].(map[string]any)
	qid, _ := csas["queryId"].(string)
	if !strings.HasPrefix(qid, "CSAS_BIG") {
		t.Errorf("CSAS queryId = %v", csas)
	}
	streams := ents[1]["streams"].([]any)
	// BIG, ORDERS and the processing log every server declares.
	if len(streams) != 3 || streams[2].(map[string]any)["name"] != "SLUICE_PROCESSING_LOG" {
		t.Fatalf("streams = %v", streams)
	}
	s0 := streams[0].(map[string]any)
	if s0["type"] != "STREAM" || s0["topic"] == "" || s0["valueFormat"] != "JSON" || s0["isWindowed"] != false {
		t.Errorf("stream = %v", s0)
	}
	queries := ents[2]["queries"].([]any)
	if len(queries) != 1 || queries[0].(map[string]any)["id"] != qid || queries[0].(map[string]any)["queryType"] != "PERSISTENT" {
		t.Errorf("queries = %v", queries)
	}
	desc := ents[3]["sourceDescription"].(map[string]any)
	fields := desc["fields"].([]any)
	if desc["name"] != "ORDERS" || len(fields) != 3 || fields[0].(map[string]any)["type"] != "KEY" ||
		fields[2].(map[string]any)["schema"].(map[string]any)["type"] != "DOUBLE" {
		t.Errorf("sourceDescription = %v", desc)
	}
	if rq := desc["readQueries"].([]any); len(rq) != 1 || rq[0].(map[string]any)["id"] != qid {
		t.Errorf("readQueries = %v", rq)
	}

	// /status knows the commands.
	resp, err := e.h1.Get(e.url + "/status/stream/ORDERS/create")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || decode(t, b)["status"] != "SUCCESS" {
		t.Errorf("/status/stream/ORDERS/create: %d %s", resp.StatusCode, b)
	}
	resp, err = e.h1.Get(e.url + "/status")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if all := decode(t, b)["commandStatuses"].(map[string]any); all["stream/`BIG`/create"] != "SUCCESS" {
		t.Errorf("/status: %s", b)
	}

	ents = e.ksql(t, "TERMINATE "+qid+"; DROP STREAM big;", nil)
	if len(ents) != 2 || ents[0]["commandId"] != "terminate/"+qid+"/execute" || ents[1]["commandId"] != "stream/`BIG`/drop" {
		t.Errorf("TERMINATE, DROP = %v", ents)
	}
}

func TestKSQLErrors(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, sql  string
		status     int
		code       float64
		typ        string
		msg        string
		statement  string
		nEntities  int
		checkEnts  bool
		httpClient *http.Client
	}{
		{name: "syntax", sql: "CREATE STREM x;", status: 400, code: 40001, typ: "statement_error", msg: "line 1:", statement: "CREATE STREM x"},
		{name: "unknown source", sql: ordersDDL + "\nDESCRIBE nope;", status: 400, code: 40001, typ: "statement_error", msg: "line 2:10", statement: "DESCRIBE nope;", nEntities: 1, checkEnts: true},
		{name: "token it cannot place", sql: "SHOW STREAMS;\nSELECT * FROM orders ORDER BY id;", status: 400, code: 40001, typ: "statement_error",
			msg: "line 2:28: Syntax Error\n\nStatement: SELECT * FROM orders ORDER BY id;\nmismatched input 'BY'", statement: "SELECT * FROM orders ORDER BY id;", nEntities: 1, checkEnts: true},
		{name: "query on /ksql", sql: "SELECT * FROM orders EMIT CHANGES;", status: 400, code: 40002, typ: "statement_error", msg: "should be issued to the websocket endpoint '/query'", statement: "SELECT * FROM orders EMIT CHANGES;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := e.post(t, e.h1, "/ksql", "", map[string]any{"ksql": tc.sql})
			m := decode(t, body)
			if status != tc.status || m["error_code"] != tc.code || m["@type"] != tc.typ {
				t.Fatalf("status %d, body %s", status, body)
			}
			if !strings.Contains(m["message"].(string), tc.msg) {
				t.Errorf("message %q does not contain %q", m["message"], tc.msg)
			}
			if !strings.Contains(m["statementText"].(string), tc.statement) {
				t.Errorf("statementText %q does not contain %q", m["statementText"], tc.statement)
			}
			if tc.checkEnts && len(m["entities"].([]any)) != tc.nEntities {
				t.Errorf("entities = %v, want %d", m["entities"], tc.nEntities)
			}
		})
	}
	// A body that is not JSON, and an unknown path.
	status, body, _ := e.post(t, e.h1, "/ksql", "", []byte("{not json"))
	if m := decode(t, body); status != 400 || m["error_code"] != float64(40000) || m["@type"] != "generic_error" {
		t.Errorf("bad JSON: %d %s", status, body)
	}
	status, body, _ = e.post(t, e.h1, "/nope", "", map[string]any{})
	if m := decode(t, body); status != 404 || m["error_code"] != float64(40400) {
		t.Errorf("unknown path: %d %s", status, body)
	}
	status, body, resp := e.post(t, e.h1, "/info", "", map[string]any{})
	if m := decode(t, body); status != 405 || m["error_code"] != float64(40500) || resp.Header.Get("Allow") != "GET" {
		t.Errorf("POST /info: %d %s", status, body)
	}
	// A statement that is not a query on /query-stream.
	status, body, _ = e.post(t, e.h2, "/query-stream", "", map[string]any{"sql": "SHOW STREAMS;"})
	if m := decode(t, body); status != 400 || m["error_code"] != float64(40001) {
		t.Errorf("SHOW on /query-stream: %d %s", status, body)
	}
}

// seed creates the orders stream with three rows.
func seed(t *testing.T, e *env) {
	t.Helper()
	e.ksql(t, ordersDDL+`
INSERT INTO orders (id, item, amount) VALUES ('o1', 'apple', 5.5);
INSERT INTO orders (id, item, amount) VALUES ('o2', 'pear', 25.0);
INSERT INTO orders (id, item, amount) VALUES ('o3', 'fig', 40.0);`, nil)
}

func TestQueryStreamPull(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	sql := map[string]any{"sql": "SELECT id, amount FROM orders WHERE amount > 10;"}
	for _, c := range []struct {
		name   string
		client *http.Client
		proto  int
	}{{"http1", e.h1, 1}, {"http2", e.h2, 2}} {
		t.Run(c.name+"/delimited", func(t *testing.T) {
			status, body, resp := e.post(t, c.client, "/query-stream", "application/vnd.ksqlapi.delimited.v1", sql)
			if status != 200 || resp.ProtoMajor != c.proto {
				t.Fatalf("status %d proto %d: %s", status, resp.ProtoMajor, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.ksqlapi.delimited.v1" {
				t.Errorf("Content-Type %q", ct)
			}
			want := `{"queryId":"query_N","columnNames":["ID","AMOUNT"],"columnTypes":["STRING","DOUBLE"]}
["o2",25.0]
["o3",40.0]
`
			if maskQueryIDs(string(body)) != want {
				t.Errorf("body:\n%s\nwant:\n%s", body, want)
			}
		})
		t.Run(c.name+"/json", func(t *testing.T) {
			status, body, resp := e.post(t, c.client, "/query-stream", "application/json", sql)
			if status != 200 || resp.ProtoMajor != c.proto {
				t.Fatalf("status %d: %s", status, body)
			}
			var arr []any
			if err := json.Unmarshal(body, &arr); err != nil {
				t.Fatalf("not one JSON array: %v: %s", err, body)
			}
			if len(arr) != 3 || arr[0].(map[string]any)["columnNames"] == nil {
				t.Fatalf("array = %v", arr)
			}
			if row := arr[2].([]any); row[0] != "o3" || row[1] != 40.0 {
				t.Errorf("row = %v", row)
			}
		})
	}
}

// lines reads a streamed response line by line.
type lines struct {
	resp *http.Response
	sc   *bufio.Scanner
}

func (e *env) open(t *testing.T, c *http.Client, path, accept string, body any) *lines {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: status %d: %s", path, resp.StatusCode, b)
	}
	return &lines{resp: resp, sc: bufio.NewScanner(resp.Body)}
}

func (l *lines) next(t *testing.T) string {
	t.Helper()
	if !l.sc.Scan() {
		t.Fatalf("the stream ended: %v", l.sc.Err())
	}
	return l.sc.Text()
}

func (l *lines) end(t *testing.T) {
	t.Helper()
	if l.sc.Scan() {
		t.Fatalf("the stream goes on: %s", l.sc.Text())
	}
	if err := l.sc.Err(); err != nil {
		t.Fatalf("the stream ended with %v", err)
	}
}

func TestQueryStreamPushAndCloseQuery(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	rows := []string{`["o1","apple"]`, `["o2","pear"]`, `["o3","fig"]`}
	for _, c := range []struct {
		name   string
		client *http.Client
	}{{"http1", e.h1}, {"http2", e.h2}} {
		t.Run(c.name, func(t *testing.T) {
			l := e.open(t, c.client, "/query-stream", "application/vnd.ksqlapi.delimited.v1",
				map[string]any{"sql": "SELECT id, item FROM orders EMIT CHANGES;", "properties": map[string]any{"auto.offset.reset": "earliest"}})
			header := decode(t, []byte(l.next(t)))
			qid, _ := header["queryId"].(string)
			if qid == "" || !slices.Equal(toStrings(header["columnNames"]), []string{"ID", "ITEM"}) {
				t.Fatalf("header = %v", header)
			}
			for _, want := range rows {
				if got := l.next(t); got != want {
					t.Fatalf("row %s, want %s", got, want)
				}
			}
			// A row inserted now arrives too.
			e.ksql(t, "INSERT INTO orders (id, item, amount) VALUES ('x', '"+c.name+"', 1.0);", nil)
			want := `["x","` + c.name + `"]`
			if got := l.next(t); got != want {
				t.Fatalf("row %s, want %s", got, want)
			}
			rows = append(rows, want)
			status, body, _ := e.post(t, c.client, "/close-query", "", map[string]any{"queryId": qid})
			if status != 200 {
				t.Fatalf("close-query: %d %s", status, body)
			}
			l.end(t)
			status, body, _ = e.post(t, c.client, "/close-query", "", map[string]any{"queryId": qid})
			if m := decode(t, body); status != 400 || m["error_code"] != float64(40000) {
				t.Errorf("second close-query: %d %s", status, body)
			}
		})
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestQueryStreamPushJSONWithLimit(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	status, body, _ := e.post(t, e.h2, "/query-stream", "application/json",
		map[string]any{"sql": "SELECT * FROM orders EMIT CHANGES LIMIT 2;", "properties": map[string]any{"auto.offset.reset": "earliest"}})
	var arr []any
	if err := json.Unmarshal(body, &arr); status != 200 || err != nil {
		t.Fatalf("status %d, %v: %s", status, err, body)
	}
	if len(arr) != 3 || arr[0].(map[string]any)["queryId"] == "" {
		t.Fatalf("array = %s", body)
	}
	if row := arr[1].([]any); row[0] != "o1" || row[2] != 5.5 {
		t.Errorf("row = %v", row)
	}
}

func TestQueryOldEndpoint(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	status, body, _ := e.post(t, e.h1, "/query", "",
		map[string]any{"ksql": "SELECT id, amount FROM orders EMIT CHANGES LIMIT 2;", "streamsProperties": map[string]any{"auto.offset.reset": "earliest"}})
	var arr []map[string]any
	if err := json.Unmarshal(body, &arr); status != 200 || err != nil {
		t.Fatalf("status %d, %v: %s", status, err, body)
	}
	if len(arr) != 4 {
		t.Fatalf("got %s", body)
	}
	if h := arr[0]["header"].(map[string]any); h["schema"] != "`ID` STRING, `AMOUNT` DOUBLE" || h["queryId"] == "" {
		t.Errorf("header = %v", h)
	}
	if cols := arr[1]["row"].(map[string]any)["columns"].([]any); cols[0] != "o1" || cols[1] != 5.5 {
		t.Errorf("row = %v", cols)
	}
	if arr[3]["finalMessage"] != "Limit Reached" {
		t.Errorf("final = %v", arr[3])
	}
}

func TestInsertsStream(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	body := []byte(`{"target":"orders"}
{"ID":"p9","ITEM":"plum","AMOUNT":12.5}
{"id":"p10","item":"date","amount":3}`)
	// JSON form: one array of acks.
	status, out, resp := e.post(t, e.h2, "/inserts-stream", "application/json", body)
	if status != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("status %d: %s", status, out)
	}
	var acks []map[string]any
	if err := json.Unmarshal(out, &acks); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(acks) != 2 || acks[0]["status"] != "ok" || acks[0]["seq"] != 0.0 || acks[1]["seq"] != 1.0 {
		t.Errorf("acks = %s", out)
	}
	// Delimited form, with a bad row that ends the stream with an error ack.
	status, out, _ = e.post(t, e.h2, "/inserts-stream", "", []byte(`{"target":"ORDERS"}
{"ID":"o11","ITEM":"lime","AMOUNT":1}
{"ID":"o12","NOPE":1}
{"ID":"o13","ITEM":"never","AMOUNT":1}
`))
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if status != 200 || len(got) != 2 || got[0] != `{"status":"ok","seq":0}` {
		t.Fatalf("status %d: %s", status, out)
	}
	if m := decode(t, []byte(got[1])); m["status"] != "error" || m["seq"] != 1.0 || m["error_code"] != float64(40001) || !strings.Contains(m["message"].(string), "no column NOPE") {
		t.Errorf("error ack = %s", got[1])
	}
	// The rows are in the stream.
	status, out, _ = e.post(t, e.h2, "/query-stream", "", map[string]any{"sql": "SELECT id, item, amount FROM orders WHERE id LIKE 'p%';"})
	if want := "[\"p9\",\"plum\",12.5]\n[\"p10\",\"date\",3.0]\n"; status != 200 || !strings.HasSuffix(string(out), want) {
		t.Errorf("rows after inserts: %s", out)
	}
	// HTTP/1.1 is refused, as in ksqlDB.
	status, out, _ = e.post(t, e.h1, "/inserts-stream", "", body)
	if m := decode(t, out); status != 400 || m["error_code"] != float64(40004) {
		t.Errorf("HTTP/1.1: %d %s", status, out)
	}
	// An unknown target.
	status, out, _ = e.post(t, e.h2, "/inserts-stream", "", []byte(`{"target":"nope"}`+"\n"))
	if m := decode(t, out); status != 400 || !strings.Contains(m["message"].(string), "unknown stream") {
		t.Errorf("unknown target: %d %s", status, out)
	}
	// A stream over the processing log is read, never written: refused
	// before any row is read, with ksqlDB's message.
	e.ksql(t, "CREATE STREAM my_log (level STRING) WITH (KAFKA_TOPIC='sluice_processing_log', VALUE_FORMAT='JSON');", nil)
	status, out, _ = e.post(t, e.h2, "/inserts-stream", "", []byte(`{"target":"my_log"}`+"\n"+`{"LEVEL":"x"}`+"\n"))
	if m := decode(t, out); status != 400 || m["error_code"] != float64(40001) || !strings.HasPrefix(m["message"].(string), "Cannot insert values into read-only topic: sluice_processing_log") {
		t.Errorf("a stream over the processing log: %d %s", status, out)
	}
	// So is the processing log's own stream.
	status, out, _ = e.post(t, e.h2, "/inserts-stream", "", []byte(`{"target":"SLUICE_PROCESSING_LOG"}`+"\n"))
	if m := decode(t, out); status != 400 || !strings.HasPrefix(m["message"].(string), "Cannot insert values into read-only topic: sluice_processing_log") {
		t.Errorf("the processing log: %d %s", status, out)
	}
}

func TestInfoHealthcheck(t *testing.T) {
	e := newEnv(t)
	get := func(path string) (int, map[string]any) {
		resp, err := e.h1.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, decode(t, b)
	}
	status, info := get("/info")
	si := info["KsqlServerInfo"].(map[string]any)
	if status != 200 || si["version"] != "test-version" || si["ksqlServiceId"] != "sluice" || si["serverStatus"] != "RUNNING" || si["kafkaClusterId"] == "" {
		t.Errorf("/info: %d %v", status, info)
	}
	status, hc := get("/healthcheck")
	if status != 200 || hc["isHealthy"] != true || hc["details"].(map[string]any)["kafka"].(map[string]any)["isHealthy"] != true {
		t.Errorf("/healthcheck: %d %v", status, hc)
	}
	status, _ = get("/")
	if status != 200 {
		t.Errorf("/ redirects to /info: %d", status)
	}
	status, nf := get("/status/stream/NOPE/create")
	if status != 404 || nf["error_code"] != float64(40400) {
		t.Errorf("unknown command: %d %v", status, nf)
	}
}

func TestRoutesAreServed(t *testing.T) {
	e := newEnv(t)
	for _, r := range rest.Routes() {
		path := strings.ReplaceAll(r.Path, "{commandId...}", "stream/X/create")
		req, err := http.NewRequest(r.Method, e.url+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := e.h2.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound && !strings.Contains(string(b), "Command not found") || resp.StatusCode == http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d %s", r.Method, path, resp.StatusCode, b)
		}
	}
}

func TestCloseEndsStreams(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	l := e.open(t, e.h2, "/query-stream", "", map[string]any{"sql": "SELECT id FROM orders EMIT CHANGES;"})
	l.next(t) // header
	e.handler.Close()
	l.end(t)
}

// TestInsertsStreamAcksAsRowsArrive writes rows one at a time into an open
// request and reads each ack before sending the next; Close ends the
// request.
func TestInsertsStreamAcksAsRowsArrive(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, e.url+"/inserts-stream", pr)
	if err != nil {
		t.Fatal(err)
	}
	// The handler answers once it has read the target.
	go func() { _, _ = io.WriteString(pw, `{"target":"orders"}`+"\n") }()
	resp, err := e.h2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for i, row := range []string{`{"ID":"q1","ITEM":"a","AMOUNT":1}`, `{"ID":"q2","ITEM":"b","AMOUNT":2}`} {
		if _, err := io.WriteString(pw, row+"\n"); err != nil {
			t.Fatal(err)
		}
		if !sc.Scan() {
			t.Fatalf("no ack for row %d: %v", i, sc.Err())
		}
		if want := `{"status":"ok","seq":` + string(rune('0'+i)) + `}`; sc.Text() != want {
			t.Fatalf("ack %s, want %s", sc.Text(), want)
		}
	}
	e.handler.Close()
	for sc.Scan() {
		t.Errorf("unexpected line after Close: %s", sc.Text())
	}
	pw.Close()
}

// TestInsertsStreamTypes inserts values of every kind of column and reads
// them back as ksqlDB writes them.
func TestInsertsStreamTypes(t *testing.T) {
	e := newEnv(t)
	e.ksql(t, "CREATE STREAM typed (k VARCHAR KEY, a ARRAY<INT>, m MAP<STRING, DOUBLE>, s STRUCT<x INT, y VARCHAR>, d DECIMAL(4, 2), ts TIMESTAMP, b BYTES, bi BIGINT, f BOOLEAN) WITH (KAFKA_TOPIC='typed', VALUE_FORMAT='JSON', PARTITIONS=1);", nil)
	status, out, _ := e.post(t, e.h2, "/inserts-stream", "", []byte(`{"target":"typed"}
{"k":"r1","a":[1,null,3],"m":{"p":1.5,"q":2},"s":{"X":7,"y":"why"},"d":12.5,"ts":"2020-01-02T03:04:05.006","b":"aGk=","bi":12345678901,"f":true}
`))
	if status != 200 || strings.TrimSpace(string(out)) != `{"status":"ok","seq":0}` {
		t.Fatalf("insert: %d %s", status, out)
	}
	status, out, _ = e.post(t, e.h2, "/query-stream", "", map[string]any{"sql": "SELECT * FROM typed;"})
	want := `{"queryId":"query_N","columnNames":["K","A","M","S","D","TS","B","BI","F"],"columnTypes":["STRING","ARRAY<INTEGER>","MAP<STRING, DOUBLE>","STRUCT<` + "`X` INTEGER, `Y` STRING" + `>","DECIMAL(4, 2)","TIMESTAMP","BYTES","BIGINT","BOOLEAN"]}
["r1",[1,null,3],{"p":1.5,"q":2.0},{"X":7,"Y":"why"},12.50,"2020-01-02T03:04:05.006","aGk=",12345678901,true]
`
	if status != 200 || maskQueryIDs(string(out)) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	// A value the column cannot take is refused, naming the column.
	for row, want := range map[string]string{
		`{"k":"r2","s":{"z":1}}`:  "value for column S: STRUCT<`X` INTEGER, `Y` STRING> has no field z",
		`{"k":"r2","b":"%%%"}`:    "value for column B: BYTES are given in base64",
		`{"k":"r2","a":{"x":1}}`:  "value for column A: a JSON object cannot be a ARRAY<INTEGER>",
		`{"k":"r2","f":"maybe"}`:  "value for column F: ",
		`{"k":"r2","d":123.456}`:  "value for column D: ",
		`{"k":"r2","ts":"never"}`: "value for column TS: ",
	} {
		status, out, _ := e.post(t, e.h2, "/inserts-stream", "", []byte(`{"target":"typed"}`+"\n"+row+"\n"))
		if status != 200 || !strings.Contains(string(out), `"status":"error"`) || !strings.Contains(string(out), want) {
			t.Errorf("%s: %d %s, want an error saying %q", row, status, out, want)
		}
	}
}

// TestScriptsWithoutOneStatement checks the answers to requests of no
// statement (blanks or comments only) and, on the query endpoints, of
// several.
func TestScriptsWithoutOneStatement(t *testing.T) {
	e := newEnv(t)
	for _, sql := range []string{"", "  \n", "-- nothing to run\n", ";;"} {
		if ents := e.ksql(t, sql, nil); len(ents) != 0 {
			t.Errorf("/ksql %q = %v, want no entity", sql, ents)
		}
	}
	for _, c := range []struct{ sql, msg string }{
		{"-- nothing to run", "no query found; send one SELECT statement, such as SELECT * FROM s EMIT CHANGES;"},
		{"SELECT 1 FROM a; SELECT 2 FROM b;", "Expected exactly one statement: send one query per request"},
	} {
		status, body, _ := e.post(t, e.h2, "/query-stream", "", map[string]any{"sql": c.sql})
		if m := decode(t, body); status != 400 || m["error_code"] != float64(40001) || m["message"] != c.msg {
			t.Errorf("/query-stream %q: %d %s; want 400 and %q", c.sql, status, body, c.msg)
		}
	}
}

// pullQueryID matches the id of a pull query, which the engine numbers by
// time.
var pullQueryID = regexp.MustCompile(`"query_[0-9]+"`)

// maskQueryIDs writes every pull query id in s as "query_N".
func maskQueryIDs(s string) string { return pullQueryID.ReplaceAllString(s, `"query_N"`) }
