package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// TestClusterSplitsAndFailsOver runs two engines of one cluster over the
// playground broker: the second joins and takes half the partitions, a
// statement run on one starts the query on both, pull queries gather
// every partition from either, and when one leaves the other takes its
// partitions and restores their state.
func TestClusterSplitsAndFailsOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()

	var mu sync.Mutex
	engines := map[string]*engine.Engine{}
	forwards := 0
	forward := func(ctx context.Context, addr string, s *engine.Session, sql string) (engine.PullResult, error) {
		mu.Lock()
		e := engines[addr]
		forwards++
		mu.Unlock()
		if e == nil {
			return engine.PullResult{}, fmt.Errorf("no server at %s", addr)
		}
		st, err := e.PullQuery(ctx, s, sql)
		if err != nil {
			return engine.PullResult{}, err
		}
		rows, err := allRows(ctx, st)
		return engine.PullResult{Columns: st.TypedColumns(), Rows: rows}, err
	}
	open := func(addr string) *engine.Engine {
		t.Helper()
		e := openClusterEngine(ctx, t, broker.Addr(), dir, "scale", addr, forward)
		mu.Lock()
		engines[addr] = e
		mu.Unlock()
		return e
	}
	a := open("a:1")
	defer a.Close()
	if err := a.WaitCluster(ctx, 1); err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession()
	mustExec(ctx, t, a, s, `SET 'auto.offset.reset'='earliest';
		CREATE STREAM clicks (user_id VARCHAR KEY, ms BIGINT, page VARCHAR) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=4);
		CREATE TABLE per_user AS SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id;
		CREATE TABLE per_page AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page;`)
	insert := func(e *engine.Engine, from, to int) {
		t.Helper()
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "INSERT INTO clicks (user_id, ms, page) VALUES ('u%d', %d, 'p%d');\n", i%10, i, i%5)
		}
		mustExec(ctx, t, e, s, b.String())
	}
	insert(a, 0, 40)

	b := open("b:2")
	closedB := false
	defer func() {
		if !closedB {
			b.Close()
		}
	}()
	for _, e := range []*engine.Engine{a, b} {
		if err := e.WaitCluster(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	insert(b, 40, 80)
	flush(ctx, t, a, b)
	// SHOW QUERIES EXTENDED and DESCRIBE EXTENDED say who owns what.
	res, err := a.Execute(ctx, s, "SHOW QUERIES EXTENDED; DESCRIBE per_user EXTENDED;")
	if err != nil {
		t.Fatal(err)
	}
	show := tableOf(t, res[0])
	if col := slices.Index(show.Columns, "Partitions"); col < 0 || !strings.Contains(show.Rows[0][col], "a:1 (this server) owns ") ||
		!strings.Contains(show.Rows[0][col], "b:2 owns ") {
		t.Errorf("SHOW QUERIES EXTENDED: %v %v", show.Columns, show.Rows)
	}
	if footer := tableOf(t, res[1]).Footer; !strings.Contains(footer, "Cluster              : a:1 (this server) owns ") {
		t.Errorf("DESCRIBE EXTENDED:\n%s", footer)
	}
	for name, e := range map[string]*engine.Engine{"a": a, "b": b} {
		if got := counts(ctx, t, e, "SELECT * FROM per_user;"); !allCount(got, 8) {
			t.Fatalf("pull on %s: got %v, want 10 users with 8 clicks each", name, got)
		}
		if got := counts(ctx, t, e, "SELECT * FROM per_user WHERE user_id IN ('u1', 'u2', 'u7');"); len(got) != 3 || got["u1"] != 8 || got["u7"] != 8 {
			t.Fatalf("key lookups on %s: got %v", name, got)
		}
		// per_page's state is placed by its repartition topic.
		if got := counts(ctx, t, e, "SELECT * FROM per_page WHERE page IN ('p0', 'p3', 'p9');"); len(got) != 2 || got["p0"] != 16 || got["p3"] != 16 {
			t.Fatalf("key lookups of a repartitioned table on %s: got %v", name, got)
		}
	}
	// A key lookup goes only to the key's owner: from a, those of the
	// keys a owns are answered without forwarding.
	mu.Lock()
	forwards = 0
	mu.Unlock()
	for i := range 10 {
		if got := counts(ctx, t, a, fmt.Sprintf("SELECT * FROM per_user WHERE user_id = 'u%d';", i)); got[fmt.Sprintf("u%d", i)] != 8 {
			t.Fatalf("lookup of u%d on a: got %v", i, got)
		}
	}
	mu.Lock()
	if forwards == 0 || forwards == 10 {
		t.Errorf("10 key lookups on a forwarded %d times; want those of the keys b owns only", forwards)
	}
	mu.Unlock()

	// A query created on b runs on a too.
	mustExec(ctx, t, b, s, `CREATE STREAM big AS SELECT * FROM clicks WHERE ms >= 70;`)
	waitFor(ctx, t, "a runs the query b created", func() bool {
		for _, q := range a.Queries(ctx) {
			if strings.HasPrefix(q.ID, "CSAS_BIG") && q.Status == "RUNNING" {
				return true
			}
		}
		return false
	})
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// TERMINATE on a ends it on b.
	var big string
	for _, q := range b.Queries(ctx) {
		if strings.HasPrefix(q.ID, "CSAS_BIG") {
			big = q.ID
		}
	}
	mustExec(ctx, t, a, s, "TERMINATE "+big+";")
	waitFor(ctx, t, "b no longer runs the query a terminated", func() bool {
		for _, q := range b.Queries(ctx) {
			if q.ID == big {
				return false
			}
		}
		return true
	})

	// b leaves: a takes its partitions and restores their counts.
	closedB = true
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	delete(engines, "b:2")
	mu.Unlock()
	if err := a.WaitCluster(ctx, 1); err != nil {
		t.Fatal(err)
	}
	insert(a, 80, 100)
	flush(ctx, t, a)
	if got := counts(ctx, t, a, "SELECT * FROM per_user;"); !allCount(got, 10) {
		t.Fatalf("after failover: got %v, want 10 users with 10 clicks each", got)
	}
}

// openClusterEngine opens an engine of the cluster service on the broker
// at brokerAddr, with its data in dir/addr.
func openClusterEngine(ctx context.Context, t *testing.T, brokerAddr, dir, service, addr string, forward func(context.Context, string, *engine.Session, string) (engine.PullResult, error)) *engine.Engine {
	t.Helper()
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{brokerAddr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	e, err := engine.Open(ctx, engine.Config{
		Kafka: client, DataDir: filepath.Join(dir, addr), ServiceID: service,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Cluster: &engine.ClusterConfig{Address: addr, SessionTimeout: 6 * time.Second, Forward: forward},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustExec(ctx context.Context, t *testing.T, e *engine.Engine, s *engine.Session, sql string) {
	t.Helper()
	if _, err := e.Execute(ctx, s, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func flush(ctx context.Context, t *testing.T, es ...*engine.Engine) {
	t.Helper()
	for _, e := range es {
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// counts runs a pull query on per_user and returns the counts by user.
func counts(ctx context.Context, t *testing.T, e *engine.Engine, sql string) map[string]int64 {
	t.Helper()
	st, err := e.PullQuery(ctx, engine.NewSession(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	rows, err := allRows(ctx, st)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out := map[string]int64{}
	for _, row := range rows {
		user := fmt.Sprint(row[0])
		if _, dup := out[user]; dup {
			t.Fatalf("%s: %s twice in %v", sql, user, rows)
		}
		n, _ := row[1].(int64)
		out[user] = n
	}
	return out
}

func allCount(got map[string]int64, n int64) bool {
	if len(got) != 10 {
		return false
	}
	for _, c := range got {
		if c != n {
			return false
		}
	}
	return true
}

// waitFor polls cond until it holds; what says what it waits for.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("waiting until %s: %v", what, ctx.Err())
		}
	}
}
