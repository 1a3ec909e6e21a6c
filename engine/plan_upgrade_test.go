package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// topicRecorder is a Kafka client that notes the topics it creates.
type topicRecorder struct {
	kafka.Client
	mu      sync.Mutex
	created map[string]kafka.TopicSpec
}

func (c *topicRecorder) CreateTopic(ctx context.Context, spec kafka.TopicSpec) error {
	c.mu.Lock()
	c.created[spec.Name] = spec
	c.mu.Unlock()
	return c.Client.CreateTopic(ctx, spec)
}

func (c *topicRecorder) spec(name string) (kafka.TopicSpec, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.created[name]
	return s, ok
}

// oldCommand returns the command log value of cmd as a server wrote it
// before plans had a version: its plan without version, physical plan and
// operator settings.
func oldCommand(t *testing.T, cmd *catalog.Command, edit func(plan map[string]any)) []byte {
	t.Helper()
	b, err := cmd.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	plan := v["query"].(map[string]any)["plan"].(map[string]any)
	delete(plan, "version")
	delete(plan, "physical")
	for _, st := range plan["steps"].([]any) {
		delete(st.(map[string]any), "withOld")
		delete(st.(map[string]any), "passAll")
	}
	if edit != nil {
		edit(plan)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A server starting on a command log whose plans were stored before the
// physical plan existed upgrades them: it creates each query's internal
// topics as the upgraded plan gives them, runs the query, and deletes
// them when the query is terminated. A plan that cannot be upgraded is
// skipped loudly, and a query whose source topic no longer has the
// partitions its plan was made for does not start, the log saying why;
// neither stops the start.
func TestStoredPlansUpgradeAtStart(t *testing.T) {
	// The commands, as a server writes them today.
	first := newHarness(t, kafka.NewFranz, inProcess)
	s := engine.NewSession()
	s.Properties["auto.offset.reset"] = "earliest"
	for _, sql := range []string{
		"CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=2);",
		"CREATE TABLE pages AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page;",
		"CREATE STREAM views (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='views', VALUE_FORMAT='JSON', PARTITIONS=2);",
		"CREATE TABLE viewers AS SELECT user_id, COUNT(*) AS n FROM views GROUP BY user_id;",
	} {
		mustExec(first.ctx, t, first.eng, s, sql)
	}
	const log = "_sluice-sluice-command-log"
	recs, err := kafka.ReadAll(first.ctx, first.client, log)
	if err != nil {
		t.Fatal(err)
	}
	first.close()
	var values [][]byte
	// The topics the old cluster held: the sources' and the sinks', which
	// their statements created.
	topics := []kafka.TopicSpec{{Name: "clicks", Partitions: 2}, {Name: "views", Partitions: 3}}
	for _, r := range recs {
		cmd, err := catalog.DecodeCommand(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Kind == catalog.CreateQuery && cmd.Source != nil {
			topics = append(topics, kafka.TopicSpec{Name: cmd.Source.Topic, Partitions: cmd.Source.Partitions})
		}
		switch {
		case cmd.Kind == catalog.CreateQuery && cmd.Query.ID == "CTAS_PAGES_1":
			values = append(values, oldCommand(t, cmd, nil))
			// The same query under another name, with a plan no server
			// wrote: its aggregate lacks its columns.
			broken := oldCommand(t, cmd, func(plan map[string]any) {
				for _, st := range plan["steps"].([]any) {
					if st := st.(map[string]any); st["kind"] == "aggregate" {
						st["schema"] = []any{}
					}
				}
			})
			broken = []byte(strings.NewReplacer("CTAS_PAGES_1", "CTAS_BROKEN_9", `"PAGES"`, `"BROKEN"`).Replace(string(broken)))
			values = append(values, broken)
		case cmd.Kind == catalog.CreateQuery:
			values = append(values, oldCommand(t, cmd, nil))
		default:
			values = append(values, r.Value)
		}
	}

	// A new cluster, whose command log holds them as an older server
	// wrote them; the topic of VIEWS has gained a partition since.
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	if err := h.shut(); err != nil {
		t.Fatal(err)
	}
	for _, tp := range topics {
		if err := h.client.CreateTopic(h.ctx, tp); err != nil {
			t.Fatal(err)
		}
	}
	prod, err := h.client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var brokenAt int64 = -1
	for _, v := range values {
		r := &kafka.Record{Topic: log, Partition: 0, Value: v}
		if err := prod.Produce(h.ctx, []*kafka.Record{r}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(v), "CTAS_BROKEN_9") {
			brokenAt = r.Offset
		}
	}
	for i, page := range []string{"home", "cart", "home"} {
		r := &kafka.Record{Topic: "clicks", Partition: int32(i % 2), Key: []byte("u" + page), Value: []byte(`{"page":"` + page + `"}`)}
		if err := prod.Produce(h.ctx, []*kafka.Record{r}); err != nil {
			t.Fatal(err)
		}
	}

	logs := &syncBuffer{}
	var rec *topicRecorder
	h.configure = func(c *engine.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		rec = &topicRecorder{Client: c.Kafka, created: map[string]kafka.TopicSpec{}}
		c.Kafka = rec
	}
	h.open()

	q, ok := h.eng.Catalog().Query("CTAS_PAGES_1")
	if !ok {
		t.Fatal("CTAS_PAGES_1 is not in the catalog")
	}
	if q.Plan.Version != topology.Version || q.Plan.Physical == nil {
		t.Fatalf("the stored plan of CTAS_PAGES_1 is of version %d after the start, physical %v", q.Plan.Version, q.Plan.Physical != nil)
	}
	var internal []string
	for _, tp := range q.Plan.Physical.Topics {
		if tp.Role == topology.SinkTopic {
			continue
		}
		internal = append(internal, tp.Name)
		spec, ok := rec.spec(tp.Name)
		if !ok {
			t.Errorf("the %s topic %s was not created", tp.Role, tp.Name)
			continue
		}
		if spec.Partitions != 2 || spec.Configs["cleanup.policy"] != tp.Config["cleanup.policy"] {
			t.Errorf("the %s topic %s was created with %d partitions and %v, its plan says %d and %v", tp.Role, tp.Name, spec.Partitions, spec.Configs, tp.Partitions, tp.Config)
		}
	}
	if len(internal) != 2 {
		t.Errorf("CTAS_PAGES_1's internal topics: %q, want a repartition topic and a changelog", internal)
	}
	fctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
	defer cancel()
	if err := h.eng.Flush(fctx); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	out, err := kafka.ReadAll(h.ctx, h.client, "PAGES")
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]string{}
	for _, r := range out {
		last[string(r.Key)] = string(r.Value)
	}
	if last["home"] != `{"N":2}` || last["cart"] != `{"N":1}` {
		t.Errorf("PAGES after the start: %v", last)
	}

	// The plan that cannot be upgraded is skipped, naming the query.
	skipped := h.eng.SkippedCommands()
	if len(skipped) != 1 || skipped[0].Offset != brokenAt || !strings.Contains(skipped[0].Reason, "CTAS_BROKEN_9") || !strings.Contains(skipped[0].Reason, "cannot be upgraded") {
		t.Errorf("skipped commands: %+v, want the record at offset %d", skipped, brokenAt)
	}
	if _, ok := h.eng.Catalog().Query("CTAS_BROKEN_9"); ok {
		t.Error("CTAS_BROKEN_9 is in the catalog")
	}

	// VIEWERS's source has 3 partitions, its plan 2: it does not start,
	// and creates no topic.
	want := "query CTAS_VIEWERS_2 reads topic views, which has 3 partitions, but the query was planned for 2"
	if !strings.Contains(logs.String(), want) || !strings.Contains(logs.String(), "TERMINATE CTAS_VIEWERS_2") {
		t.Errorf("no log line saying %q and what to do in:\n%s", want, logs)
	}
	vq, ok := h.eng.Catalog().Query("CTAS_VIEWERS_2")
	if !ok {
		t.Fatal("CTAS_VIEWERS_2 is not in the catalog")
	}
	for _, tp := range vq.Plan.Physical.Topics {
		if _, ok := rec.spec(tp.Name); ok && tp.Role != topology.SinkTopic {
			t.Errorf("the %s topic %s of a query that did not start was created", tp.Role, tp.Name)
		}
	}

	// Terminating the query deletes the internal topics its plan lists.
	mustExec(h.ctx, t, h.eng, s, "TERMINATE CTAS_PAGES_1;")
	for _, name := range internal {
		if _, err := h.client.DescribeTopic(h.ctx, name); !errors.Is(err, kafka.ErrUnknownTopic) {
			t.Errorf("the topic %s of the terminated query: %v", name, err)
		}
	}
}

// A push query that repartitions owns its repartition topic, named for
// its run once planned and created as its completed plan gives it, for as
// long as its stream: its rows come through it, and closing the stream
// deletes it.
func TestPushQueryRepartitionTopic(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	s := engine.NewSession()
	s.Properties["auto.offset.reset"] = "earliest"
	mustExec(h.ctx, t, h.eng, s, "CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=2);")
	mustExec(h.ctx, t, h.eng, s, "INSERT INTO clicks (user_id, page) VALUES ('u1', 'home');")
	mustExec(h.ctx, t, h.eng, s, "INSERT INTO clicks (user_id, page) VALUES ('u2', 'home');")
	res, err := h.eng.Execute(h.ctx, s, "SELECT page, COUNT(*) AS n FROM clicks GROUP BY page EMIT CHANGES;")
	if err != nil {
		t.Fatal(err)
	}
	st := res[0].Stream
	defer st.Close()
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	var last []any
	for i := 0; i < 2; i++ {
		if last, err = st.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(last) != 2 || last[0] != "home" || last[1] != int64(2) {
		t.Errorf("the push query's last row: %v", last)
	}
	repartitions := func() []kafka.TopicInfo {
		t.Helper()
		all, err := h.client.ListTopics(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []kafka.TopicInfo
		for _, tp := range all {
			if strings.HasPrefix(tp.Name, "_sluice-sluice-transient_CLICKS_") && strings.HasSuffix(tp.Name, "-repartition") {
				out = append(out, tp)
			}
		}
		return out
	}
	if got := repartitions(); len(got) != 1 || got[0].Partitions != 2 {
		t.Errorf("the push query's repartition topics: %+v, want one of 2 partitions", got)
	}
	st.Close()
	if got := repartitions(); len(got) != 0 {
		t.Errorf("repartition topics after the stream closed: %+v", got)
	}
}

// The physical plan a query is stored with lists its sink topic as it is:
// CREATE OR REPLACE keeps the sink's partition count, which the plan of
// the new version takes.
func TestPhysicalPlanListsReplacedSink(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	s := engine.NewSession()
	mustExec(h.ctx, t, h.eng, s, "CREATE STREAM narrow (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='narrow', VALUE_FORMAT='JSON', PARTITIONS=1);")
	mustExec(h.ctx, t, h.eng, s, "CREATE STREAM wider WITH (PARTITIONS=3) AS SELECT * FROM narrow;")
	mustExec(h.ctx, t, h.eng, s, "CREATE OR REPLACE STREAM wider AS SELECT * FROM narrow WHERE v > 0;")
	q, ok := h.eng.Catalog().Query("CSAS_WIDER_1")
	if !ok {
		t.Fatal("no query CSAS_WIDER_1")
	}
	if q.Plan.Sink.Partitions != 3 || q.Plan.Physical == nil || len(q.Plan.Steps) == 0 {
		t.Fatalf("the replaced plan's sink: %d partitions, physical %v, steps %d", q.Plan.Sink.Partitions, q.Plan.Physical != nil, len(q.Plan.Steps))
	}
	found := false
	for _, tp := range q.Plan.Physical.Topics {
		if tp.Role == topology.SinkTopic {
			found = true
			if tp.Name != "WIDER" || tp.Partitions != 3 {
				t.Errorf("the physical plan's sink topic: %+v, want WIDER of 3 partitions", tp)
			}
		}
	}
	if !found {
		t.Errorf("no sink topic in the physical plan: %+v", q.Plan.Physical.Topics)
	}
}
