package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// TestClusterAppliesCommandsInLogOrder races two servers of a cluster,
// each declaring the same stream name with its own columns: every round,
// exactly one statement succeeds, the other is refused, and both servers
// end with the winner's columns, whatever each had seen when it checked
// its statement.
func TestClusterAppliesCommandsInLogOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	open := func(addr string) *engine.Engine {
		t.Helper()
		e := openClusterEngine(ctx, t, broker.Addr(), dir, "order", addr, nil)
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	// Without a query there is nothing to split: the servers tail the
	// command log from the start, which is all this test needs.
	a, b := open("a:1"), open("b:2")
	column := map[*engine.Engine]string{a: "FROM_A", b: "FROM_B"}
	const rounds = 10
	for i := range rounds {
		name := fmt.Sprintf("S%d", i)
		var wg sync.WaitGroup
		errs := map[*engine.Engine]error{}
		var mu sync.Mutex
		for _, e := range []*engine.Engine{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sql := fmt.Sprintf("CREATE STREAM %s (%s INT) WITH (KAFKA_TOPIC='t%d', VALUE_FORMAT='JSON', PARTITIONS=1);", name, column[e], i)
				_, err := e.Execute(ctx, engine.NewSession(), sql)
				mu.Lock()
				errs[e] = err
				mu.Unlock()
			}()
		}
		wg.Wait()
		var winner *engine.Engine
		switch {
		case errs[a] == nil && errs[b] != nil:
			winner = a
		case errs[b] == nil && errs[a] != nil:
			winner = b
		default:
			t.Fatalf("round %d: a: %v, b: %v; want exactly one statement to succeed", i, errs[a], errs[b])
		}
		want := column[winner]
		if i == 0 {
			for e, err := range errs {
				if err != nil {
					t.Logf("refused on the server of %s: %v", column[e], err)
				}
			}
		}
		for _, e := range []*engine.Engine{a, b} {
			waitFor(ctx, t, fmt.Sprintf("%s on %s has column %s", name, column[e], want), func() bool {
				d, err := e.DescribeSource(ctx, name, false)
				if err != nil {
					return false
				}
				for _, c := range d.Source.Columns {
					if c.Name == want {
						return true
					}
				}
				t.Fatalf("round %d: %s on the server of %s has columns %v, want the winner's %s", i, name, column[e], d.Source.Columns, want)
				return false
			})
		}
	}
}
