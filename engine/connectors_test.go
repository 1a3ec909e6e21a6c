package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/connect/connecttest"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/engine/api"
)

// openConnect opens an engine whose Kafka Connect worker is w (a stream s
// over topic s exists), logging into logs.
func openConnect(t *testing.T, url string, logs *syncBuffer) *engine.Engine {
	t.Helper()
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := connect.New(connect.Options{URL: url, Backoff: time.Millisecond, Attempts: 3, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return openBounded(t, func(cfg *engine.Config) {
		cfg.Connect = c
		cfg.Logger = log
	})
}

const pgCreate = `CREATE SOURCE CONNECTOR pg WITH (
  'connector.class'='io.debezium.connector.postgresql.PostgresConnector',
  'database.hostname'='127.0.0.1',
  'database.password'='pw-hunter2',
  'connection.url'='jdbc:postgresql://h/db?user=u&password=urlpw-hunter3',
  'topic.prefix'='pg');`

func execOne(t *testing.T, eng *engine.Engine, sql string) (engine.Result, error) {
	t.Helper()
	res, err := eng.Execute(context.Background(), nil, sql)
	if err != nil {
		return engine.Result{}, err
	}
	if len(res) != 1 {
		t.Fatalf("%s: %d results", sql, len(res))
	}
	return res[0], nil
}

func mustOne(t *testing.T, eng *engine.Engine, sql string) engine.Result {
	t.Helper()
	r, err := execOne(t, eng, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return r
}

// refused runs sql and returns its error, failing unless it is a
// *StatementError that shows none of the secrets.
func refused(t *testing.T, eng *engine.Engine, sql string) *engine.StatementError {
	t.Helper()
	_, err := execOne(t, eng, sql)
	var se *engine.StatementError
	if !errors.As(err, &se) {
		t.Fatalf("%s: err = %v; want a StatementError", sql, err)
	}
	noSecrets(t, err.Error())
	return se
}

func noSecrets(t *testing.T, s string) {
	t.Helper()
	for _, secret := range []string{"pw-hunter2", "urlpw-hunter3"} {
		if strings.Contains(s, secret) {
			t.Errorf("%q shows the secret %s", s, secret)
		}
	}
}

func TestCreateConnector(t *testing.T) {
	w := connecttest.New()
	defer w.Close()
	var logs syncBuffer
	eng := openConnect(t, w.URL, &logs)

	r := mustOne(t, eng, pgCreate)
	info, ok := r.Entity.(*api.ConnectorInfo)
	if !ok {
		t.Fatalf("CREATE answered %#v", r)
	}
	if info.Name != "PG" || info.Type != "source" || info.Config["database.password"] != "[hidden]" ||
		info.Config["connection.url"] != "jdbc:postgresql://h/db?user=u&password=[hidden]" || info.Config["name"] != "PG" {
		t.Errorf("info = %+v", info)
	}
	noSecrets(t, r.Statement)
	if !strings.Contains(r.Statement, "'database.password'='[hidden]'") {
		t.Errorf("statement text %q", r.Statement)
	}
	// The worker got the real values.
	cfg := w.Config("PG")
	if cfg["database.password"] != "pw-hunter2" || cfg["connection.url"] != "jdbc:postgresql://h/db?user=u&password=urlpw-hunter3" || cfg["name"] != "PG" {
		t.Errorf("the worker has %v", cfg)
	}

	// IF NOT EXISTS: a warning, nothing sent. Without it: ksqlDB's 409.
	calls := len(w.Calls())
	r = mustOne(t, eng, strings.Replace(pgCreate, "CONNECTOR pg", "CONNECTOR IF NOT EXISTS pg", 1))
	if wn, ok := r.Entity.(*api.Warning); !ok || wn.Message != "Connector PG already exists" {
		t.Errorf("IF NOT EXISTS answered %#v", r.Entity)
	}
	for _, c := range w.Calls()[calls:] {
		if strings.HasPrefix(c, "POST") {
			t.Errorf("IF NOT EXISTS of an existing connector called %s", c)
		}
	}
	se := refused(t, eng, strings.Replace(pgCreate, "CONNECTOR pg", "CONNECTOR `pg`", 1))
	if se.Msg != "Connector pg already exists" || se.Code != 40900 || !strings.Contains(se.Hint, "DROP CONNECTOR") {
		t.Errorf("existing (case aside): %+v", se)
	}
	noSecrets(t, logs.String())
}

func TestCreateConnectorRefusals(t *testing.T) {
	w := connecttest.New()
	defer w.Close()
	w.Validate = func(class string, cfg map[string]string) map[string][]string {
		if class != "io.debezium.connector.postgresql.PostgresConnector" || cfg["database.hostname"] == "h" {
			return nil
		}
		errs := map[string][]string{}
		if cfg["database.hostname"] == "" {
			errs["database.hostname"] = []string{"The 'database.hostname' value is invalid: A value is required"}
		}
		if p := cfg["database.port"]; p != "" && p != "5432" {
			// Connect repeats a message at times, and some connectors echo
			// the value they refuse.
			errs["database.port"] = []string{"The 'database.port' value is invalid: An integer is expected", "The 'database.port' value is invalid: An integer is expected"}
		}
		if pw := cfg["database.password"]; pw != "" && len(pw) < 20 {
			errs["database.password"] = []string{"Password " + pw + " is too short"}
		}
		return errs
	}
	var logs syncBuffer
	eng := openConnect(t, w.URL, &logs)

	se := refused(t, eng, "CREATE SOURCE CONNECTOR c WITH ('database.password'='pw-hunter2', 'topic.prefix'='p')")
	if se.Msg != "Validation error: Connector config {database.password=[hidden], name=C, topic.prefix=p} contains no connector type" || se.Code != 40001 {
		t.Errorf("no class: %+v", se)
	}
	if se := refused(t, eng, "CREATE SOURCE CONNECTOR c WITH ('connector.class'=' ')"); se.Msg != "Validation error: Connector type cannot be empty" {
		t.Errorf("empty class: %+v", se)
	}
	se = refused(t, eng, "CREATE SOURCE CONNECTOR c WITH ('connector.class'='io.confluent.connect.jdbc.JdbcSourceConnector', 'connection.password'='pw-hunter2')")
	if se.Msg != "Validation error: Connector class io.confluent.connect.jdbc.JdbcSourceConnector is not installed on the Kafka Connect worker at "+w.URL ||
		se.Hint != "installed: io.debezium.connector.jdbc.JdbcSinkConnector (sink 3.4.0.Final), io.debezium.connector.postgresql.PostgresConnector (source 3.6.1.Final)" {
		t.Errorf("class not installed: %+v", se)
	}
	se = refused(t, eng, "CREATE SINK CONNECTOR c WITH ('connector.class'='PostgresConnector')")
	if se.Msg != "io.debezium.connector.postgresql.PostgresConnector is a source connector, not a sink connector" || se.Hint != "write CREATE SOURCE CONNECTOR" {
		t.Errorf("kind: %+v", se)
	}
	se = refused(t, eng, "CREATE SOURCE CONNECTOR c WITH ('connector.class'='Postgres', 'database.port'='x', 'database.password'='pw-hunter2')")
	want := "Validation error: database.hostname - The 'database.hostname' value is invalid: A value is required"
	if se.Msg != want || se.Hint != "database.password - Password [hidden] is too short\ndatabase.port - The 'database.port' value is invalid: An integer is expected" {
		t.Errorf("validation:\nmsg  %q\nhint %q", se.Msg, se.Hint)
	}
	if len(w.Names()) != 0 {
		t.Errorf("refused configurations made connectors %v", w.Names())
	}

	// The worker refusing the create itself, after trying again on 5xx:
	// its message, secrets hidden.
	w.FailNext("POST", "/connectors", 3, 500, "Request timed out: could not reach the leader with password pw-hunter2")
	se = refused(t, eng, "CREATE SOURCE CONNECTOR c WITH ('connector.class'='Postgres', 'database.hostname'='h', 'database.password'='pw-hunter2')")
	if se.Msg != "Failed to create connector: Request timed out: could not reach the leader with password [hidden]" || se.Code != 50000 {
		t.Errorf("worker failing: %+v", se)
	}
	// The existence check failing.
	w.FailNext("GET", "/connectors", 1, 403, "Forbidden: pw-hunter2")
	se = refused(t, eng, "CREATE SOURCE CONNECTOR c WITH ('connector.class'='Postgres', 'database.password'='pw-hunter2')")
	if se.Msg != "Failed to check for existing connector: Forbidden: [hidden]" || se.Code != 40300 {
		t.Errorf("existence check failing: %+v", se)
	}
	noSecrets(t, logs.String())
}

func TestCreateConnectorRetriesRebalance(t *testing.T) {
	w := connecttest.New()
	defer w.Close()
	var logs syncBuffer
	eng := openConnect(t, w.URL, &logs)
	w.FailNext("", "/connectors", 2, 409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
	mustOne(t, eng, "CREATE SINK CONNECTOR out WITH ('connector.class'='io.debezium.connector.jdbc.JdbcSinkConnector', 'topics'='s')")
	if got := w.Names(); len(got) != 1 || got[0] != "OUT" {
		t.Fatalf("connectors %v", got)
	}
	if !strings.Contains(logs.String(), "trying again") {
		t.Errorf("no retry logged: %s", logs.String())
	}
	se := refused(t, eng, "DROP CONNECTOR nope")
	if se.Msg != "Failed to drop connector: Connector NOPE not found" || se.Code != 40400 || !strings.Contains(se.Hint, "IF EXISTS") {
		t.Errorf("drop missing: %+v", se)
	}
}

func TestDropConnector(t *testing.T) {
	w := connecttest.New()
	defer w.Close()
	var logs syncBuffer
	eng := openConnect(t, w.URL, &logs)
	mustOne(t, eng, pgCreate)
	r := mustOne(t, eng, "DROP CONNECTOR pg")
	if d, ok := r.Entity.(*api.ConnectorDropped); !ok || d.Name != "PG" {
		t.Errorf("DROP answered %#v", r.Entity)
	}
	if len(w.Names()) != 0 {
		t.Errorf("left %v", w.Names())
	}
	r = mustOne(t, eng, "DROP CONNECTOR IF EXISTS pg")
	if wn, ok := r.Entity.(*api.Warning); !ok || wn.Message != "Connector 'PG' does not exist." {
		t.Errorf("DROP IF EXISTS answered %#v", r.Entity)
	}
}

func TestDescribeConnector(t *testing.T) {
	w := connecttest.New()
	defer w.Close()
	var logs syncBuffer
	eng := openConnect(t, w.URL, &logs)
	mustOne(t, eng, pgCreate)
	w.SetTopics("PG", "s", "other")
	w.FailTask("PG", 0, "org.postgresql.util.PSQLException: FATAL: password authentication failed (password pw-hunter2)\n\tat org.postgresql...")

	r := mustOne(t, eng, "DESCRIBE CONNECTOR pg")
	d, ok := r.Entity.(*api.ConnectorDescription)
	if !ok {
		t.Fatalf("DESCRIBE answered %#v", r)
	}
	if d.Name != "PG" || d.Class != "io.debezium.connector.postgresql.PostgresConnector" || d.Type != "source" ||
		d.Connector.State != "RUNNING" || d.Connector.WorkerID != connecttest.WorkerID {
		t.Errorf("description %+v", d)
	}
	if len(d.Tasks) != 1 || d.Tasks[0].State != "FAILED" || !strings.Contains(d.Tasks[0].Trace, "password authentication failed (password [hidden])") {
		t.Errorf("tasks %+v", d.Tasks)
	}
	if strings.Join(d.Topics, ",") != "other,s" || len(d.Sources) != 1 || d.Sources[0].Name != "S" {
		t.Errorf("topics %v, sources %+v", d.Topics, d.Sources)
	}
	if d.Config["database.password"] != "[hidden]" || d.Config["database.hostname"] != "127.0.0.1" {
		t.Errorf("config %v", d.Config)
	}

	// SHOW: ksqlDB's summary of the state.
	mustOne(t, eng, "CREATE SINK CONNECTOR out WITH ('connector.class'='JdbcSinkConnector', 'topics'='s')")
	r = mustOne(t, eng, "SHOW CONNECTORS")
	l := r.Entity.(*api.ConnectorList)
	if len(l.Connectors) != 2 || l.Connectors[0] != (api.ConnectorSummary{Name: "OUT", Type: "sink", Class: "JdbcSinkConnector", State: "RUNNING (1/1 tasks RUNNING)"}) ||
		l.Connectors[1] != (api.ConnectorSummary{Name: "PG", Type: "source", Class: "io.debezium.connector.postgresql.PostgresConnector", State: "WARNING (0/1 tasks RUNNING)"}) {
		t.Errorf("SHOW CONNECTORS %+v", l.Connectors)
	}
	for sql, want := range map[string]string{"LIST SOURCE CONNECTORS": "PG", "SHOW SINK CONNECTORS": "OUT"} {
		l := mustOne(t, eng, sql).Entity.(*api.ConnectorList)
		if len(l.Connectors) != 1 || l.Connectors[0].Name != want {
			t.Errorf("%s: %+v", sql, l.Connectors)
		}
	}
	// A sink's configured topics are its topics, and s is a source over one.
	d = mustOne(t, eng, "DESCRIBE CONNECTOR out").Entity.(*api.ConnectorDescription)
	if strings.Join(d.Topics, ",") != "s" || len(d.Sources) != 1 {
		t.Errorf("sink: topics %v sources %v", d.Topics, d.Sources)
	}

	// The topics endpoint failing is a warning, not an error.
	w.FailNext("GET", "/connectors/PG/topics", 3, 500, "boom")
	d = mustOne(t, eng, "DESCRIBE CONNECTOR pg").Entity.(*api.ConnectorDescription)
	if len(d.Warnings) != 1 || d.Warnings[0] != "Could not list related topics due to error: boom" {
		t.Errorf("warnings %v", d.Warnings)
	}

	se := refused(t, eng, "DESCRIBE CONNECTOR nope")
	if se.Msg != "Failed to query connector status: Connector NOPE not found" || se.Code != 40400 || se.Hint == "" {
		t.Errorf("describe missing: %+v", se)
	}
	noSecrets(t, logs.String())
}

func TestConnectorWorkerUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var logs syncBuffer
	eng := openConnect(t, "http://"+addr, &logs)
	for _, sql := range []string{pgCreate, "DROP CONNECTOR pg", "DESCRIBE CONNECTOR pg", "SHOW CONNECTORS"} {
		se := refused(t, eng, sql)
		if se.Code != 50000 || !strings.Contains(se.Msg, "Kafka Connect is unreachable at http://"+addr) || !strings.Contains(se.Msg, connect.URLFlag) {
			t.Errorf("%s: %+v", sql, se)
		}
	}
	noSecrets(t, logs.String())
}

func TestConnectorStatementTimeout(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	// A worker that never answers: the client's timeout names its flag.
	slow, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	go func() {
		for {
			c, err := slow.Accept()
			if err != nil {
				return
			}
			go func() { <-block; c.Close() }()
		}
	}()
	log := slog.New(slog.DiscardHandler)
	c, err := connect.New(connect.Options{URL: "http://" + slow.Addr().String(), Timeout: 100 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	eng := openBounded(t, func(cfg *engine.Config) { cfg.Connect = c })
	se := refused(t, eng, "SHOW CONNECTORS")
	if se.Code != 50000 || !strings.Contains(se.Msg, "did not answer within 100ms ("+connect.TimeoutSetting+")") {
		t.Errorf("timeout: %+v", se)
	}
}
