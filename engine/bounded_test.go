package engine_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/failpoint"
	"github.com/sluice-sql/sluice/kafka"
)

// openBounded opens an engine over a playground broker of its own, with
// configure changing its configuration, and a stream S to query.
func openBounded(t *testing.T, configure func(*engine.Config)) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka"), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { broker.Close() })
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	cfg := engine.Config{Kafka: client, DataDir: filepath.Join(dir, "state"), Logger: quiet}
	if configure != nil {
		configure(&cfg)
	}
	eng, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	if _, err := eng.Execute(ctx, nil, "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);"); err != nil {
		t.Fatal(err)
	}
	return eng
}

// runAsync runs sql on eng in ctx and hands back its results and error.
func runAsync(eng *engine.Engine, ctx context.Context, sql string) <-chan error {
	done := make(chan error, 1)
	go func() {
		res, err := eng.Execute(ctx, nil, sql)
		for _, r := range res {
			if r.Stream != nil {
				r.Stream.Close()
			}
		}
		done <- err
	}()
	return done
}

func hasSource(eng *engine.Engine, name string) bool {
	_, err := eng.DescribeSource(context.Background(), name, false)
	return err == nil
}

// TestStatementCancelledInPlanning holds statements where they are about
// to be planned and ends their contexts: each returns the cancellation
// with nothing applied, a statement waiting for the catalog lock gives up
// too, and the engine goes on.
func TestStatementCancelledInPlanning(t *testing.T) {
	eng := openBounded(t, nil)
	hold := failpoint.Pause(engine.PlanningPoint)
	defer hold.Release()

	for _, sql := range []string{
		"CREATE STREAM out1 AS SELECT * FROM s;",
		"SELECT * FROM s EMIT CHANGES;",
		"SELECT * FROM s;",
		"EXPLAIN SELECT * FROM s EMIT CHANGES;",
		"CREATE STREAM t (id VARCHAR KEY) WITH (KAFKA_TOPIC='t', VALUE_FORMAT='JSON', PARTITIONS=1);",
	} {
		ctx, cancel := context.WithCancel(context.Background())
		done := runAsync(eng, ctx, sql)
		<-hold.Reached()
		cancel()
		if err := <-hold.Left(); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: the held statement left with %v", sql, err)
		}
		err := <-done
		var se *engine.StatementError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || !strings.Contains(se.Message(), "cancelled") {
			t.Fatalf("%s: %v, want a cancelled statement", sql, err)
		}
	}
	if hasSource(eng, "OUT1") || hasSource(eng, "T") {
		t.Fatal("a cancelled statement was applied")
	}
	if n := eng.PushQueries(); n != 0 {
		t.Fatalf("%d push query places held after cancelled push queries", n)
	}

	// A statement waiting for the catalog lock that another one holds
	// (CREATE ... AS SELECT plans under it) gives up when its context ends.
	held, cancelHeld := context.WithCancel(context.Background())
	defer cancelHeld()
	first := runAsync(eng, held, "CREATE STREAM out2 AS SELECT * FROM s;")
	<-hold.Reached()
	ctx, cancel := context.WithCancel(context.Background())
	second := runAsync(eng, ctx, "CREATE TYPE point AS STRUCT<x INT, y INT>;")
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("a statement waiting for the lock: %v, want cancelled", err)
	}
	hold.Release()
	if err := <-first; err != nil {
		t.Fatalf("the released statement: %v", err)
	}
	if !hasSource(eng, "OUT2") {
		t.Fatal("the released statement was not applied")
	}
}

// TestStatementTimeout holds a statement past the server's statement
// timeout: it fails with an error naming the setting, nothing applied.
func TestStatementTimeout(t *testing.T) {
	eng := openBounded(t, func(c *engine.Config) { c.StatementTimeout = 50 * time.Millisecond })
	hold := failpoint.Pause(engine.PlanningPoint)
	defer hold.Release()
	for _, sql := range []string{"CREATE STREAM out AS SELECT * FROM s;", "SELECT * FROM s EMIT CHANGES;", "SELECT * FROM s;"} {
		err := <-runAsync(eng, context.Background(), sql)
		var se *engine.StatementError
		if !errors.As(err, &se) || !errors.Is(err, engine.ErrStatementTimeout) || se.Code != engine.CodeStatementTimeout {
			t.Fatalf("%s: %v, want the statement timeout", sql, err)
		}
		for _, want := range []string{"statement timeout of 50ms", "--statement-timeout", "before it changed any stream"} {
			if !strings.Contains(se.Message(), want) {
				t.Errorf("%s: %q does not say %q", sql, se.Message(), want)
			}
		}
		if se.Statement != strings.TrimSuffix(sql, ";") {
			t.Errorf("%s: the error names the statement %q", sql, se.Statement)
		}
		if !errors.Is(<-hold.Left(), engine.ErrStatementTimeout) {
			t.Fatalf("%s: the hold did not end with the timeout", sql)
		}
	}
	if _, err := eng.PullQuery(context.Background(), nil, "SELECT * FROM s;"); !errors.Is(err, engine.ErrStatementTimeout) {
		t.Fatalf("PullQuery: %v, want the statement timeout", err)
	}
	<-hold.Left()
	if hasSource(eng, "OUT") {
		t.Fatal("a statement stopped by the timeout was applied")
	}
}

// TestCommittedStatementCompletes ends the context of a statement that
// has committed: it runs to its end, its query created and running.
func TestCommittedStatementCompletes(t *testing.T) {
	eng := openBounded(t, nil)
	hold := failpoint.Pause(engine.CommittedPoint)
	defer hold.Release()
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(eng, ctx, "CREATE STREAM out AS SELECT * FROM s;")
	<-hold.Reached()
	cancel()
	hold.Release()
	if err := <-done; err != nil {
		t.Fatalf("a committed statement whose client went: %v", err)
	}
	qs := eng.Queries(context.Background())
	if len(qs) != 1 || qs[0].Status != "RUNNING" || !hasSource(eng, "OUT") {
		t.Fatalf("queries %+v: want the statement's query running", qs)
	}
}

// TestPushQueryLimit opens push queries and PRINTs up to the limit: the
// next is refused with ksqlDB's message and the setting, and closing one
// gives its place back.
func TestPushQueryLimit(t *testing.T) {
	eng := openBounded(t, func(c *engine.Config) { c.MaxPushQueries = 2 })
	ctx := context.Background()
	open := func(sql string) (*engine.Stream, error) {
		res, err := eng.Execute(ctx, nil, sql)
		if err != nil {
			return nil, err
		}
		return res[0].Stream, nil
	}
	a, err := open("SELECT * FROM s EMIT CHANGES;")
	if err != nil {
		t.Fatal(err)
	}
	b, err := open("PRINT s;")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const want = "Not executing statement(s) as it would cause the number of active, push queries to exceed the configured limit. " +
		"Terminate existing PUSH queries, or increase the 'ksql.max.push.queries' setting via the 'ksql-server.properties' file. " +
		"Current push query count: 2. Configured limit: 2.\n"
	for _, sql := range []string{"SELECT * FROM s EMIT CHANGES;", "PRINT s FROM BEGINNING;"} {
		_, err := open(sql)
		var se *engine.StatementError
		if !errors.As(err, &se) || !errors.Is(err, engine.ErrPushQueryLimit) || se.Code != engine.CodeBadStatement {
			t.Fatalf("%s: %v, want the push query limit", sql, err)
		}
		if !strings.HasPrefix(se.Message(), want) || se.Msg != strings.TrimSuffix(want, "\n") || !strings.Contains(se.Message(), "--max-push-queries") {
			t.Fatalf("%s: %q", sql, se.Message())
		}
	}
	// Pull queries and other statements are not push queries.
	if _, err := eng.PullQuery(ctx, nil, "SELECT * FROM s;"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.Close()
	if n := eng.PushQueries(); n != 1 {
		t.Fatalf("%d places held, want 1", n)
	}
	c, err := open("SELECT * FROM s EMIT CHANGES;")
	if err != nil {
		t.Fatalf("after a close: %v", err)
	}
	c.Close()
}
