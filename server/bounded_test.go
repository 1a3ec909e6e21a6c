package server

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/failpoint"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// goroutinesBackTo waits until the process runs at most n goroutines, and
// fails with their stacks if it still runs more after a while: a polling
// barrier for what a call left behind to exit.
func goroutinesBackTo(t *testing.T, n int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for runtime.NumGoroutine() > n {
		select {
		case <-tick.C:
		case <-deadline:
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
	}
}

// dialOwn opens a connection of its own, closed by the returned function.
func dialOwn(t *testing.T, addr string) (sluicev1.SluiceClient, func()) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	return sluicev1.NewSluiceClient(conn), func() { conn.Close() }
}

// TestGRPCClientGoneCancelsStatement holds statements of Execute and
// PushQuery calls where they are about to be planned and cancels the
// calls: each statement's context ends, nothing is applied, and the
// goroutines of the calls exit.
func TestGRPCClientGoneCancelsStatement(t *testing.T) {
	w := newWorld(t, Options{})
	w.exec(t, "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);")
	// A first call warms what every call shares (the connection's reader,
	// the engine's clients).
	warm, closeWarm := dialOwn(t, w.addr)
	if _, err := warm.PullQuery(context.Background(), &sluicev1.PullQueryRequest{Sql: "SELECT * FROM s;"}); err != nil {
		t.Fatal(err)
	}
	closeWarm()
	hold := failpoint.Pause(engine.PlanningPoint)
	defer hold.Release()
	for _, call := range []struct {
		name string
		run  func(ctx context.Context, c sluicev1.SluiceClient) error
	}{
		{"Execute", func(ctx context.Context, c sluicev1.SluiceClient) error {
			s, err := c.Execute(ctx, &sluicev1.ExecuteRequest{Sql: "CREATE STREAM out AS SELECT * FROM s;"})
			if err != nil {
				return err
			}
			for {
				if _, err := s.Recv(); err != nil {
					return err
				}
			}
		}},
		{"PushQuery", func(ctx context.Context, c sluicev1.SluiceClient) error {
			s, err := c.PushQuery(ctx, &sluicev1.PushQueryRequest{Sql: "SELECT * FROM s EMIT CHANGES;"})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}},
		{"PullQuery", func(ctx context.Context, c sluicev1.SluiceClient) error {
			_, err := c.PullQuery(ctx, &sluicev1.PullQueryRequest{Sql: "SELECT * FROM s;"})
			return err
		}},
	} {
		base := runtime.NumGoroutine()
		c, closeConn := dialOwn(t, w.addr)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- call.run(ctx, c) }()
		<-hold.Reached()
		cancel()
		if err := <-hold.Left(); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: the held statement left with %v, want its context cancelled", call.name, err)
		}
		if err := <-done; status.Code(err) != codes.Canceled {
			t.Fatalf("%s: %v, want CANCELED", call.name, err)
		}
		closeConn()
		goroutinesBackTo(t, base)
	}
	if _, err := w.eng.DescribeSource(context.Background(), "OUT", false); err == nil {
		t.Fatal("the cancelled CREATE STREAM AS SELECT was applied")
	}
	if n := w.eng.PushQueries(); n != 0 {
		t.Fatalf("%d push query places held", n)
	}
}

// TestGRPCStatementTimeout holds statements past the engine's statement
// timeout: the calls end with DEADLINE_EXCEEDED and a detail naming the
// setting.
func TestGRPCStatementTimeout(t *testing.T) {
	w := newWorldWith(t, Options{}, func(c *engine.Config) { c.StatementTimeout = 100 * time.Millisecond })
	w.exec(t, "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);")
	hold := failpoint.Pause(engine.PlanningPoint)
	defer hold.Release()
	c := w.dial(t)
	check := func(name string, err error) {
		t.Helper()
		st := status.Convert(err)
		if st.Code() != codes.DeadlineExceeded {
			t.Fatalf("%s: %v, want DEADLINE_EXCEEDED", name, err)
		}
		var detail *sluicev1.StatementError
		for _, d := range st.Details() {
			if se, ok := d.(*sluicev1.StatementError); ok {
				detail = se
			}
		}
		if detail == nil || detail.Code != engine.CodeStatementTimeout || !strings.Contains(detail.Message, "--statement-timeout") {
			t.Fatalf("%s: detail %v", name, detail)
		}
		<-hold.Left()
	}
	s, err := c.Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "CREATE STREAM out AS SELECT * FROM s;"})
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = s.Recv()
	}
	check("Execute", err)
	p, err := c.PushQuery(context.Background(), &sluicev1.PushQueryRequest{Sql: "SELECT * FROM s EMIT CHANGES;"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Recv()
	check("PushQuery", err)
	_, err = c.PullQuery(context.Background(), &sluicev1.PullQueryRequest{Sql: "SELECT * FROM s;"})
	check("PullQuery", err)
}
