package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
)

// execErr runs one statement and returns its error's message ("" when it
// ran).
func execErr(h *harness, s *engine.Session, sql string) string {
	res, err := h.eng.Execute(h.ctx, s, sql)
	for _, r := range res {
		if r.Stream != nil {
			r.Stream.Close()
		}
	}
	if err == nil {
		return ""
	}
	var se *engine.StatementError
	if errors.As(err, &se) {
		return se.Message()
	}
	return err.Error()
}

// topicEnd is the sum of a topic's end offsets.
func topicEnd(t *testing.T, h *harness, topic string) int64 {
	t.Helper()
	bounds, err := h.client.ListOffsets(h.ctx, topic)
	if err != nil {
		t.Fatalf("offsets of %s: %v", topic, err)
	}
	var n int64
	for _, b := range bounds {
		n += b.End
	}
	return n
}

// TestProtectedTopics tries every statement that registers a source over a
// topic, writes one, PRINTs or deletes one against each kind of topic the
// server keeps for itself or that ksql.readonly.topics lists: each is
// refused with ksqlDB's message and the rule, and writes nothing. A source
// over such a topic that got into the catalog some other way (a catalog
// written before these rules) is still not written or deleted.
func TestProtectedTopics(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	s := engine.NewSession()
	s.Properties["auto.offset.reset"] = "earliest"
	mustExec(h.ctx, t, h.eng, s, "CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=2);")
	mustExec(h.ctx, t, h.eng, s, "CREATE TABLE per_item AS SELECT item, COUNT(*) AS n FROM orders GROUP BY item;")
	for _, name := range []string{"_schemas", "connect-configs", "_confluent-metrics"} {
		if err := h.client.CreateTopic(h.ctx, kafka.TopicSpec{Name: name, Partitions: 1}); err != nil && !errors.Is(err, kafka.ErrTopicExists) {
			t.Fatal(err)
		}
	}
	topics := []struct{ kind, topic, rule string }{
		{"command log", "_sluice-sluice-command-log", "internal topic of Sluice"},
		{"changelog", "_sluice-sluice-CTAS_PER_ITEM_1-aggregate-changelog", "internal topic of Sluice"},
		{"repartition", "_sluice-sluice-CTAS_PER_ITEM_1-repartition", "internal topic of Sluice"},
		{"another service's", "_sluice-other-command-log", "internal topic of Sluice"},
		{"registry journal", "_schemas", "ksql.readonly.topics (_schemas)"},
		{"Kafka Connect's", "connect-configs", "ksql.readonly.topics (connect-configs)"},
		{"Confluent's", "_confluent-metrics", "ksql.readonly.topics (_confluent.*)"},
	}
	cmdLog := topicEnd(t, h, "_sluice-sluice-command-log")
	for i, tc := range topics {
		t.Run(tc.kind, func(t *testing.T) {
			before := map[string]int64{}
			// The command log is counted once all ran: the DROP below
			// writes it.
			if tc.topic != "_sluice-other-command-log" && tc.kind != "command log" {
				before[tc.topic] = topicEnd(t, h, tc.topic)
			}
			want := func(sql, head string) {
				t.Helper()
				msg := execErr(h, s, sql)
				if !strings.HasPrefix(msg, head+tc.topic+"\n") || !strings.Contains(msg, tc.rule) {
					t.Errorf("%s\n got: %q\nwant: %q then the rule (%s)", sql, msg, head+tc.topic, tc.rule)
				}
			}
			register := "Cannot create a source over read-only topic: "
			want(fmt.Sprintf("CREATE STREAM s%d (v VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='KAFKA');", i, tc.topic), register)
			want(fmt.Sprintf("CREATE STREAM s%d (v VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='KAFKA', PARTITIONS=1);", i, tc.topic), register)
			want(fmt.Sprintf("CREATE OR REPLACE STREAM orders (id VARCHAR KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');", tc.topic), register)
			want(fmt.Sprintf("CREATE TABLE t%d (k VARCHAR PRIMARY KEY, v VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');", i, tc.topic), register)
			want(fmt.Sprintf("CREATE SOURCE STREAM ss%d (v VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='KAFKA');", i, tc.topic), register)
			want(fmt.Sprintf("CREATE SOURCE TABLE st%d (k VARCHAR PRIMARY KEY, v VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');", i, tc.topic), register)
			sink := "Cannot insert into read-only topic: "
			want(fmt.Sprintf("CREATE STREAM cs%d WITH (KAFKA_TOPIC='%s') AS SELECT * FROM orders;", i, tc.topic), sink)
			want(fmt.Sprintf("CREATE TABLE ct%d WITH (KAFKA_TOPIC='%s') AS SELECT item, COUNT(*) AS n FROM orders GROUP BY item;", i, tc.topic), sink)
			if tc.topic != "_sluice-other-command-log" {
				want(fmt.Sprintf("PRINT '%s' FROM BEGINNING LIMIT 1;", tc.topic), "Cannot print read-only topic: ")
			}

			// A source over the topic in the catalog, as a catalog
			// written before these rules could hold.
			name := fmt.Sprintf("LEGACY%d", i)
			src := &catalog.Source{Name: name, Kind: catalog.Stream, Topic: tc.topic, Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON",
				Key:   []types.Column{{Name: "ID", Type: types.StringType}},
				Value: []types.Column{{Name: "ITEM", Type: types.StringType}, {Name: "QTY", Type: types.IntType}}}
			if err := h.eng.Catalog().Apply(&catalog.Command{Kind: catalog.CreateSource, Source: src}); err != nil {
				t.Fatal(err)
			}
			want(fmt.Sprintf("INSERT INTO %s (id, item, qty) VALUES ('a', 'b', 1);", name), "Cannot insert values into read-only topic: ")
			want(fmt.Sprintf("INSERT INTO %s SELECT * FROM orders;", name), sink)
			want(fmt.Sprintf("DROP STREAM %s DELETE TOPIC;", name), "Cannot delete read-only topic: ")
			var row engine.InsertRow
			row.Add("ITEM", "x", types.StringType)
			if _, err := h.eng.Insert(h.ctx, name, []engine.InsertRow{row}); err == nil || !strings.Contains(err.Error(), "Cannot insert values into read-only topic: "+tc.topic) {
				t.Errorf("the API's insert into %s: %v", name, err)
			}
			if err := h.eng.CheckInsert(name); err == nil || !strings.Contains(err.Error(), "Cannot insert values into read-only topic: "+tc.topic) {
				t.Errorf("CheckInsert(%s): %v", name, err)
			}
			mustExec(h.ctx, t, h.eng, s, fmt.Sprintf("DROP STREAM %s;", name))
			for topic, end := range before {
				if got := topicEnd(t, h, topic); got != end {
					t.Errorf("%s went from %d to %d records", topic, end, got)
				}
			}
		})
	}
	// One DROP of a legacy source a subtest made, and the CREATE TABLE AS
	// SELECT, are all the statements that wrote commands.
	if got := topicEnd(t, h, "_sluice-sluice-command-log"); got != cmdLog+int64(len(topics)) {
		t.Errorf("the command log went from %d to %d records; only the %d DROPs write", cmdLog, got, len(topics))
	}
	if _, err := h.client.DescribeTopic(h.ctx, "_sluice-other-command-log"); !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Errorf("a refused CREATE with PARTITIONS created its topic: %v", err)
	}

	// The processing log is read, registered and printed, never written
	// or deleted.
	t.Run("processing log", func(t *testing.T) {
		const pl = "sluice_processing_log"
		before := topicEnd(t, h, pl)
		mustExec(h.ctx, t, h.eng, s, "CREATE STREAM my_log (level STRING, message STRING) WITH (KAFKA_TOPIC='"+pl+"', VALUE_FORMAT='JSON');")
		if msg := execErr(h, s, "PRINT '"+pl+"' FROM BEGINNING LIMIT 1;"); msg != "" {
			t.Errorf("PRINT of the processing log: %s", msg)
		}
		mustExec(h.ctx, t, h.eng, s, "CREATE STREAM errors_only AS SELECT * FROM my_log WHERE level = 'ERROR';")
		for _, c := range []struct{ sql, head string }{
			{"INSERT INTO my_log (level) VALUES ('x');", "Cannot insert values into read-only topic: "},
			{"INSERT INTO SLUICE_PROCESSING_LOG (LEVEL) VALUES ('x');", "Cannot insert values into read-only topic: "},
			{"INSERT INTO my_log SELECT * FROM errors_only;", "Cannot insert into read-only topic: "},
			{"CREATE STREAM into_log WITH (KAFKA_TOPIC='" + pl + "') AS SELECT * FROM orders;", "Cannot insert into read-only topic: "},
			{"TERMINATE CSAS_ERRORS_ONLY_2;", ""},
			{"DROP STREAM errors_only DELETE TOPIC;", ""},
			{"DROP STREAM my_log DELETE TOPIC;", "Cannot delete read-only topic: "},
		} {
			sql, head := c.sql, c.head
			msg := execErr(h, s, sql)
			if head == "" {
				if msg != "" {
					t.Errorf("%s: %s", sql, msg)
				}
				continue
			}
			if !strings.HasPrefix(msg, head+pl+"\n") || !strings.Contains(msg, "processing log") {
				t.Errorf("%s\n got: %q\nwant: %q then the rule", sql, msg, head+pl)
			}
		}
		if got := topicEnd(t, h, pl); got != before {
			t.Errorf("the processing log went from %d to %d records", before, got)
		}
	})
}

// TestReadOnlyTopicsSetting: ksql.readonly.topics replaces ksqlDB's list;
// the server's own topics stay protected whatever it says.
func TestReadOnlyTopicsSetting(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	if err := h.shut(); err != nil {
		t.Fatal(err)
	}
	list, err := engine.ParseReadOnlyTopics(" audit-.* , ledger")
	if err != nil {
		t.Fatal(err)
	}
	h.configure = func(c *engine.Config) { c.ReadOnlyTopics = list }
	h.open()
	s := engine.NewSession()
	for _, name := range []string{"audit-2026", "ledger", "connect-configs"} {
		if err := h.client.CreateTopic(h.ctx, kafka.TopicSpec{Name: name, Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for topic, refused := range map[string]string{
		"audit-2026":                 "ksql.readonly.topics (audit-.*)",
		"ledger":                     "ksql.readonly.topics (ledger)",
		"connect-configs":            "",
		"_sluice-sluice-command-log": "internal topic of Sluice",
	} {
		sql := fmt.Sprintf("CREATE STREAM `%s` (v VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='KAFKA');", strings.ReplaceAll(topic, "-", "_"), topic)
		msg := execErr(h, s, sql)
		if refused == "" && msg != "" || refused != "" && !strings.Contains(msg, refused) {
			t.Errorf("%s: %q, want refused: %q", sql, msg, refused)
		}
	}
	if _, err := engine.ParseReadOnlyTopics("good,(bad"); err == nil || !strings.Contains(err.Error(), `"(bad" is not a regular expression`) {
		t.Errorf("a bad pattern: %v", err)
	}
}

// syncBuffer is a log destination safe for the engine's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCommandLogBadRecords writes garbage and forged commands straight
// into the command log with a Kafka client, as anyone who can write the
// topic could; the engine starts again with the rest of its catalog and
// every query running, each bad record skipped with an error naming its
// offset, and the commands that depend on a skipped one skipped and
// named. A record of a newer plan version stops the start.
func TestCommandLogBadRecords(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	s := engine.NewSession()
	s.Properties["auto.offset.reset"] = "earliest"
	mustExec(h.ctx, t, h.eng, s, "CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=1);")
	mustExec(h.ctx, t, h.eng, s, "CREATE STREAM big AS SELECT * FROM orders WHERE qty > 10;")
	mustExec(h.ctx, t, h.eng, s, "INSERT INTO orders (id, item, qty) VALUES ('o1', 'apple', 20);")
	if err := h.eng.Flush(h.ctx); err != nil {
		t.Fatal(err)
	}
	const log = "_sluice-sluice-command-log"
	// A real command of the log, to forge others from.
	recs, err := kafka.ReadAll(h.ctx, h.client, log)
	if err != nil {
		t.Fatal(err)
	}
	var csas *catalog.Command
	for _, r := range recs {
		if c, err := catalog.DecodeCommand(r.Value); err == nil && c.Kind == catalog.CreateQuery {
			csas = c
		}
	}
	if csas == nil {
		t.Fatal("no create_query in the command log")
	}
	if err := h.shut(); err != nil {
		t.Fatal(err)
	}

	forge := func(edit func(c *catalog.Command)) []byte {
		b, _ := json.Marshal(csas)
		var c catalog.Command
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		edit(&c)
		out, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ghost := &catalog.Source{Name: "GHOST", Kind: catalog.Stream, Topic: log, Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "KAFKA",
		Value: []types.Column{{Name: "V", Type: types.StringType}}}
	ghostCmd, _ := (&catalog.Command{Kind: catalog.CreateSource, Source: ghost}).Encode()
	bad := []struct {
		value []byte
		why   string
	}{
		{[]byte("this is not a command"), "undecodable"},
		{nil, "a null value"},
		{[]byte(`{"kind":"create_source"}`), "create_source without a source"},
		{[]byte(`{"kind":"launch_missiles"}`), `unknown command kind "launch_missiles"`},
		{ghostCmd, "Cannot create a source over read-only topic: " + log},
		// A query over GHOST, whose CREATE was skipped just before.
		{forge(func(c *catalog.Command) {
			c.Query.ID, c.Query.Sink, c.Source.Name, c.Source.Topic = "CSAS_HAUNTED_9", "HAUNTED", "HAUNTED", "haunted"
			c.Query.Plan.Source.Name = "GHOST"
		}), "depends on source GHOST, whose command at offset"},
		{forge(func(c *catalog.Command) {
			c.Query.ID, c.Query.Sink, c.Source.Name = "CSAS_INTO_LOG_9", "INTO_LOG", "INTO_LOG"
			c.Source.Topic = log
		}), "Cannot insert into read-only topic: " + log},
		{[]byte(`{"kind":"terminate_query","queryId":"CSAS_HAUNTED_9"}`), "depends on query CSAS_HAUNTED_9, whose command at offset"},
		{[]byte(`{"kind":"drop_source","name":"NOBODY"}`), "the catalog refuses it"},
	}
	prod, err := h.client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var offsets []int64
	for _, b := range bad {
		r := &kafka.Record{Topic: log, Partition: 0, Value: b.value}
		if err := prod.Produce(h.ctx, []*kafka.Record{r}); err != nil {
			t.Fatal(err)
		}
		offsets = append(offsets, r.Offset)
	}

	logs := &syncBuffer{}
	h.configure = func(c *engine.Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) }
	h.open()
	skipped := h.eng.SkippedCommands()
	if len(skipped) != len(bad) {
		t.Fatalf("%d records skipped, want %d: %+v", len(skipped), len(bad), skipped)
	}
	for i, sc := range skipped {
		if sc.Offset != offsets[i] || !strings.Contains(sc.Reason, bad[i].why) {
			t.Errorf("skipped record %d: offset %d, %q; want offset %d, %q", i, sc.Offset, sc.Reason, offsets[i], bad[i].why)
		}
		line := fmt.Sprintf("level=ERROR msg=\"command log: a record is skipped\" topic=%s offset=%d", log, offsets[i])
		if !strings.Contains(logs.String(), line) {
			t.Errorf("no log line %q in:\n%s", line, logs)
		}
	}
	for _, name := range []string{"GHOST", "HAUNTED", "INTO_LOG"} {
		if _, ok := h.eng.Catalog().Source(name); ok {
			t.Errorf("a forged source %s is in the catalog", name)
		}
	}
	// The rest of the catalog is there and its query runs.
	mustExec(h.ctx, t, h.eng, s, "INSERT INTO orders (id, item, qty) VALUES ('o2', 'pear', 30);")
	if err := h.eng.Flush(h.ctx); err != nil {
		t.Fatal(err)
	}
	out, err := kafka.ReadAll(h.ctx, h.client, "BIG")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Errorf("BIG holds %d records after the restart, want 2", len(out))
	}
	for _, q := range h.eng.Queries(h.ctx) {
		if q.Status != "RUNNING" {
			t.Errorf("query %s is %s after the restart", q.ID, q.Status)
		}
	}

	// A record of a newer plan version stops the start, naming it.
	if err := h.shut(); err != nil {
		t.Fatal(err)
	}
	r := &kafka.Record{Topic: log, Partition: 0, Value: []byte(`{"kind":"create_type","version":99,"typeName":"T"}`)}
	if err := prod.Produce(h.ctx, []*kafka.Record{r}); err != nil {
		t.Fatal(err)
	}
	h.configure = func(c *engine.Config) { c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) }
	err = h.openErr()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("offset %d a record of plan version 99", r.Offset)) {
		t.Errorf("a newer plan version: %v", err)
	}
	if err == nil {
		_ = h.shut()
	}
}
