// Package connect is Sluice's end-to-end test of the connector statements
// against a real Kafka Connect worker, Debezium's connectors and
// PostgreSQL: `make test-connect` starts them (scripts/kafka.sh,
// scripts/connect.sh) and runs it.
//
//	SLUICE_TEST_CONNECT   the Connect worker's REST URL
//	SLUICE_TEST_KAFKA     the broker it and Sluice use
//	SLUICE_TEST_PG_PORT   the throw-away PostgreSQL's port (127.0.0.1,
//	                      user postgres, trusted)
//
// Without SLUICE_TEST_CONNECT the test skips (make test-kafka runs
// ./integration/... without a worker); with it, under CI=true, a missing
// psql, PostgreSQL or connector plugin fails the test instead of skipping
// it.
package connect

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/kafka"
)

// need fails under CI=true and skips otherwise.
func need(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// env is what the test runs against.
type env struct {
	t      *testing.T
	eng    *engine.Engine
	sess   *engine.Session
	psql   string
	pgPort string
	run    string // suffix of this run's names
}

func setup(t *testing.T) *env {
	url := os.Getenv("SLUICE_TEST_CONNECT")
	if url == "" {
		t.Skip("SLUICE_TEST_CONNECT is not set: run make test-connect (scripts/connect.sh runs a Kafka Connect worker and PostgreSQL)")
	}
	brokers := os.Getenv("SLUICE_TEST_KAFKA")
	pgPort := os.Getenv("SLUICE_TEST_PG_PORT")
	if brokers == "" || pgPort == "" {
		need(t, "SLUICE_TEST_KAFKA and SLUICE_TEST_PG_PORT must be set with SLUICE_TEST_CONNECT (make test-connect sets them)")
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		need(t, "psql is not installed (Debian: postgresql-client)")
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, psql: psql, pgPort: pgPort, run: hex.EncodeToString(b), sess: engine.NewSession()}
	if _, err := e.sqlErr("select 1"); err != nil {
		need(t, "PostgreSQL does not answer on 127.0.0.1:%s: %v", pgPort, err)
	}

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := connect.New(connect.Options{URL: url, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	plugins, err := c.Plugins(ctx)
	if err != nil {
		need(t, "the Connect worker at %s: %v", url, err)
	}
	for _, class := range []string{"io.debezium.connector.postgresql.PostgresConnector", "io.debezium.connector.jdbc.JdbcSinkConnector"} {
		if !slices.ContainsFunc(plugins, func(p connect.Plugin) bool { return p.Class == class }) {
			need(t, "the Connect worker has no %s plugin (scripts/connect.sh fetch installs it): %v", class, plugins)
		}
	}
	cl, err := kafka.NewFranz(kafka.Config{Brokers: strings.Split(brokers, ","), ClientID: "sluice-connect-it", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	eng, err := engine.Open(context.Background(), engine.Config{Kafka: cl, DataDir: filepath.Join(t.TempDir(), "state"),
		ServiceID: "sluice-connect-" + e.run, Logger: quiet, Connect: c,
		ConnectTopics: []string{"connect-configs", "connect-offsets", "connect-status"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	e.eng = eng
	e.exec("SET 'auto.offset.reset' = 'earliest';")
	return e
}

// sqlErr runs statements in PostgreSQL and returns psql's unaligned
// output.
func (e *env) sqlErr(sql string) (string, error) {
	cmd := exec.Command(e.psql, "-h", "127.0.0.1", "-p", e.pgPort, "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-Atq", "-c", sql)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func (e *env) sql(sql string) string {
	e.t.Helper()
	out, err := e.sqlErr(sql)
	if err != nil {
		e.t.Fatalf("PostgreSQL: %s: %v", sql, err)
	}
	return out
}

// execErr runs Sluice statements.
func (e *env) execErr(sql string) ([]engine.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := e.eng.Execute(ctx, e.sess, sql)
	for _, r := range res {
		if r.Stream != nil {
			r.Stream.Close()
		}
	}
	return res, err
}

func (e *env) exec(sql string) []engine.Result {
	e.t.Helper()
	res, err := e.execErr(sql)
	if err != nil {
		e.t.Fatalf("%s\n%v", sql, err)
	}
	return res
}

// eventually polls cond until it holds (the barrier) or the deadline
// passes, and then fails with what cond last said.
func (e *env) eventually(what string, limit time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	start := time.Now()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		ok, last := cond()
		if ok {
			e.t.Logf("timing: %s after %s", what, time.Since(start).Round(time.Millisecond))
			return
		}
		select {
		case <-deadline.C:
			e.t.Fatalf("%s: not within %s; last: %s", what, limit, last)
		case <-poll.C:
		}
	}
}

func (e *env) describe(name string) (*api.ConnectorDescription, error) {
	res, err := e.execErr("DESCRIBE CONNECTOR " + name + ";")
	if err != nil {
		return nil, err
	}
	return res[0].Entity.(*api.ConnectorDescription), nil
}

// counts reads the JDBC sink's table: "status=n" pairs, sorted.
func (e *env) counts(table string) string {
	out, err := e.sqlErr("select status || '=' || orders from " + table + " order by status")
	if err != nil {
		return err.Error()
	}
	return strings.Join(strings.Fields(out), " ")
}

const pgPassword = "pw-hunter2-not-used"

func TestConnectPipeline(t *testing.T) {
	start := time.Now()
	e := setup(t)
	orders := "orders_" + e.run
	counts := "order_counts_" + e.run
	e.sql(fmt.Sprintf("create table %s (id serial primary key, amount numeric(10,2), status text);"+
		"insert into %s (amount, status) values (10.50, 'paid'), (250.00, 'new'), (99.99, 'paid'), (500.00, 'shipped');", orders, orders))
	t.Cleanup(func() {
		for _, c := range []string{"ORDERS_SRC", "COUNTS_SINK", "BROKEN_SINK"} {
			_, _ = e.execErr("DROP CONNECTOR IF EXISTS " + c + ";")
		}
		_, _ = e.sqlErr(fmt.Sprintf("drop table if exists %s; drop table if exists %s; select pg_drop_replication_slot('sluice_%s');", orders, counts, e.run))
	})

	// The source: Debezium reads the table's changes into a topic, rows
	// flat (ExtractNewRecordState), a delete as a tombstone, the key the
	// row's id, DECIMAL as its text (decimal.handling.mode=string).
	prefix := "pg_" + e.run
	topic := prefix + ".public." + orders
	res := e.exec(fmt.Sprintf(`CREATE SOURCE CONNECTOR orders_src WITH (
  'connector.class'='io.debezium.connector.postgresql.PostgresConnector',
  'database.hostname'='127.0.0.1', 'database.port'='%s', 'database.user'='postgres',
  'database.password'='%s', 'database.dbname'='postgres',
  'topic.prefix'='%s', 'table.include.list'='public.%s',
  'plugin.name'='pgoutput', 'slot.name'='sluice_%s', 'publication.name'='sluice_%s', 'publication.autocreate.mode'='filtered',
  'decimal.handling.mode'='string',
  'transforms'='unwrap,key',
  'transforms.unwrap.type'='io.debezium.transforms.ExtractNewRecordState',
  'transforms.unwrap.delete.tombstone.handling.mode'='tombstone',
  'transforms.key.type'='org.apache.kafka.connect.transforms.ExtractField$Key',
  'transforms.key.field'='id',
  'key.converter'='org.apache.kafka.connect.json.JsonConverter', 'key.converter.schemas.enable'='false',
  'value.converter'='org.apache.kafka.connect.json.JsonConverter', 'value.converter.schemas.enable'='false',
  'topic.creation.default.replication.factor'='1', 'topic.creation.default.partitions'='1');`,
		e.pgPort, pgPassword, prefix, orders, e.run, e.run))
	info := res[0].Entity.(*api.ConnectorInfo)
	if info.Name != "ORDERS_SRC" || info.Type != "source" || info.Config["database.password"] != "[hidden]" || strings.Contains(res[0].Statement, pgPassword) {
		t.Fatalf("CREATE SOURCE CONNECTOR answered %+v (statement %q)", info, res[0].Statement)
	}
	// The barrier: the connector runs and has written its topic.
	e.eventually("the source connector's topic", 2*time.Minute, func() (bool, string) {
		d, err := e.describe("orders_src")
		if err != nil {
			return false, err.Error()
		}
		running := d.Connector.State == "RUNNING" && len(d.Tasks) > 0 && d.Tasks[0].State == "RUNNING"
		return running && slices.Contains(d.Topics, topic), fmt.Sprintf("%+v", d)
	})

	e.exec(fmt.Sprintf(`CREATE TABLE orders (id INT PRIMARY KEY, amount DECIMAL(10, 2), status STRING)
  WITH (KAFKA_TOPIC='%s', KEY_FORMAT='JSON', VALUE_FORMAT='JSON');
CREATE STREAM order_changes (id INT KEY, amount DECIMAL(10, 2), status STRING)
  WITH (KAFKA_TOPIC='%s', KEY_FORMAT='JSON', VALUE_FORMAT='JSON');
CREATE TABLE order_counts WITH (KAFKA_TOPIC='%s', PARTITIONS=1,
    KEY_FORMAT='JSON', KEY_SCHEMAS_ENABLE=true,
    VALUE_FORMAT='JSON', VALUE_SCHEMAS_ENABLE=true) AS
  SELECT status, COUNT(*) AS orders FROM orders GROUP BY status;
CREATE STREAM high_value_orders WITH (KAFKA_TOPIC='high_value_orders_%s', PARTITIONS=1) AS
  SELECT id, amount, status FROM order_changes WHERE amount > 100;`, topic, topic, strings.ToUpper(counts), e.run))

	// DESCRIBE CONNECTOR names the Sluice sources over its topic.
	d, err := e.describe("orders_src")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range d.Sources {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "ORDERS,ORDER_CHANGES" || d.Class != "io.debezium.connector.postgresql.PostgresConnector" || d.Type != "source" {
		t.Errorf("DESCRIBE CONNECTOR: sources %v, %+v", names, d)
	}

	// The sink: Debezium's JDBC sink upserts the counts by their key, with
	// JsonConverter reading the schema from Connect's envelope.
	e.exec(fmt.Sprintf(`CREATE SINK CONNECTOR counts_sink WITH (
  'connector.class'='io.debezium.connector.jdbc.JdbcSinkConnector',
  'topics'='%s',
  'connection.url'='jdbc:postgresql://127.0.0.1:%s/postgres?user=postgres&password=%s',
  'connection.username'='postgres', 'connection.password'='%s',
  'insert.mode'='upsert', 'primary.key.mode'='record_key',
  'schema.evolution'='basic', 'collection.name.format'='%s',
  'key.converter'='org.apache.kafka.connect.json.JsonConverter', 'key.converter.schemas.enable'='true',
  'value.converter'='org.apache.kafka.connect.json.JsonConverter', 'value.converter.schemas.enable'='true');`,
		strings.ToUpper(counts), e.pgPort, pgPassword, pgPassword, counts))
	e.eventually("the counts in PostgreSQL after the snapshot", 2*time.Minute, func() (bool, string) {
		got := e.counts(counts)
		return got == "new=1 paid=2 shipped=1", got
	})

	// Updates and an insert.
	e.sql(fmt.Sprintf("update %s set status = 'paid' where amount = 250.00; insert into %s (amount, status) values (120.00, 'new');", orders, orders))
	e.eventually("the counts after an update and an insert", 2*time.Minute, func() (bool, string) {
		got := e.counts(counts)
		return got == "new=1 paid=3 shipped=1", got
	})
	// A delete: a count goes down.
	e.sql(fmt.Sprintf("delete from %s where amount = 10.50;", orders))
	e.eventually("the counts after a delete", 2*time.Minute, func() (bool, string) {
		got := e.counts(counts)
		return got == "new=1 paid=2 shipped=1", got
	})
	// The high-value orders: every change of an order over 100.
	e.eventually("the high-value orders", time.Minute, func() (bool, string) {
		got, err := e.pull("SELECT id, amount, status FROM high_value_orders;")
		if err != nil {
			return false, err.Error()
		}
		return got == "2 250.00 new, 2 250.00 paid, 4 500.00 shipped, 5 120.00 new", got
	})
	t.Logf("timing: the pipeline took %s", time.Since(start).Round(time.Millisecond))

	// SHOW CONNECTORS lists both, running.
	l := e.exec("SHOW CONNECTORS;")[0].Entity.(*api.ConnectorList)
	for _, want := range []api.ConnectorSummary{
		{Name: "COUNTS_SINK", Type: "sink", Class: "io.debezium.connector.jdbc.JdbcSinkConnector", State: "RUNNING (1/1 tasks RUNNING)"},
		{Name: "ORDERS_SRC", Type: "source", Class: "io.debezium.connector.postgresql.PostgresConnector", State: "RUNNING (1/1 tasks RUNNING)"},
	} {
		if !slices.Contains(l.Connectors, want) {
			t.Errorf("SHOW CONNECTORS lacks %+v: %+v", want, l.Connectors)
		}
	}
	d, err = e.describe("counts_sink")
	if err != nil {
		t.Fatal(err)
	}
	if d.Config["connection.url"] != "jdbc:postgresql://127.0.0.1:"+e.pgPort+"/postgres?user=postgres&password=[hidden]" {
		t.Errorf("DESCRIBE CONNECTOR shows connection.url %q", d.Config["connection.url"])
	}

	// A bad configuration: Connect's messages.
	_, err = e.execErr(fmt.Sprintf("CREATE SOURCE CONNECTOR bad WITH ('connector.class'='io.debezium.connector.postgresql.PostgresConnector', 'database.password'='%s', 'topic.prefix'='x');", pgPassword))
	if err == nil || !strings.Contains(err.Error(), "Validation error: ") || !strings.Contains(err.Error(), "database.hostname - ") || strings.Contains(err.Error(), pgPassword) {
		t.Errorf("bad configuration: %v", err)
	}
	_, err = e.execErr("CREATE SOURCE CONNECTOR bad WITH ('connector.class'='io.confluent.connect.jdbc.JdbcSourceConnector');")
	if err == nil || !strings.Contains(err.Error(), "is not installed") || !strings.Contains(err.Error(), "io.debezium.connector.postgresql.PostgresConnector (source 3.6.1.Final)") {
		t.Errorf("class not installed: %v", err)
	}

	// A failing task: FAILED with its trace in DESCRIBE CONNECTOR. (The
	// JDBC sink's validation takes a configuration without
	// connection.username, which its task then refuses.)
	e.exec(fmt.Sprintf(`CREATE SINK CONNECTOR broken_sink WITH ('connector.class'='io.debezium.connector.jdbc.JdbcSinkConnector',
  'topics'='%s', 'connection.url'='jdbc:postgresql://127.0.0.1:1/nowhere',
  'connection.password'='%s', 'key.converter'='org.apache.kafka.connect.json.JsonConverter',
  'value.converter'='org.apache.kafka.connect.json.JsonConverter');`, strings.ToUpper(counts), pgPassword))
	e.eventually("the broken sink's task FAILED", 2*time.Minute, func() (bool, string) {
		d, err := e.describe("broken_sink")
		if err != nil {
			return false, err.Error()
		}
		return len(d.Tasks) > 0 && d.Tasks[0].State == "FAILED" && d.Tasks[0].Trace != "", fmt.Sprintf("%+v", d.Tasks)
	})
	d, _ = e.describe("broken_sink")
	if strings.Contains(fmt.Sprint(d), pgPassword) {
		t.Errorf("DESCRIBE CONNECTOR shows the password: %+v", d)
	}
	l = e.exec("SHOW SINK CONNECTORS;")[0].Entity.(*api.ConnectorList)
	if i := slices.IndexFunc(l.Connectors, func(c api.ConnectorSummary) bool { return c.Name == "BROKEN_SINK" }); i < 0 || l.Connectors[i].State != "WARNING (0/1 tasks RUNNING)" {
		t.Errorf("SHOW SINK CONNECTORS: %+v", l.Connectors)
	}

	// Connect's own topics are read-only.
	if _, err := e.execErr("CREATE STREAM configs (v STRING) WITH (KAFKA_TOPIC='connect-configs', VALUE_FORMAT='KAFKA');"); err == nil ||
		!strings.Contains(err.Error(), "Cannot create a source over read-only topic: connect-configs") {
		t.Errorf("connect-configs: %v", err)
	}

	res = e.exec("DROP CONNECTOR broken_sink; DROP CONNECTOR IF EXISTS broken_sink;")
	if _, ok := res[0].Entity.(*api.ConnectorDropped); !ok {
		t.Errorf("DROP CONNECTOR answered %#v", res[0].Entity)
	}
	if w, ok := res[1].Entity.(*api.Warning); !ok || w.Message != "Connector 'BROKEN_SINK' does not exist." {
		t.Errorf("DROP CONNECTOR IF EXISTS answered %#v", res[1].Entity)
	}
	t.Logf("timing: TestConnectPipeline took %s", time.Since(start).Round(time.Millisecond))
}

// pull runs a pull query and returns its rows as "a b c" lines joined
// by ", ", sorted.
func (e *env) pull(sql string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.eng.Execute(ctx, e.sess, sql)
	if err != nil {
		return "", err
	}
	var rows []string
	for _, r := range res {
		if r.Stream == nil {
			continue
		}
		for {
			row, err := r.Stream.Next(ctx)
			if err != nil {
				break
			}
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = fmt.Sprint(v)
			}
			rows = append(rows, strings.Join(cells, " "))
		}
		r.Stream.Close()
	}
	sort.Strings(rows)
	return strings.Join(rows, ", "), nil
}
