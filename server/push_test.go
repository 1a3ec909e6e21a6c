package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// TestPushBackpressureBounded: a push query whose rows come as fast as
// the server asks, to a client that reads none. The server takes rows
// from the query only while its buffer has room (plus what the transport's
// flow-control window holds), then the client is dropped after the stall
// timeout and the query is closed.
func TestPushBackpressureBounded(t *testing.T) {
	const maxRows, rowBytes = 50, 1000
	var pulled atomic.Int64
	closed := make(chan struct{})
	eng := &fakeEngine{exec: func(context.Context, *api.Session, string) ([]api.Result, error) {
		pad := strings.Repeat("x", rowBytes)
		st := api.NewStream("transient_1", api.Columns([]types.Column{{Name: "PAD", Type: types.StringType}}, 0), func(ctx context.Context) ([]any, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			pulled.Add(1)
			return []any{pad}, nil
		}, func() {
			select {
			case <-closed:
			default:
				close(closed)
			}
		}, nil)
		return []api.Result{{Statement: "SELECT pad FROM s EMIT CHANGES;", Kind: api.ResultRows, Stream: st}}, nil
	}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(eng, Options{PushMaxRows: maxRows, PushMaxBytes: 1 << 20, PushStallTimeout: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	drops := make(chan string, 1)
	srv.onDrop = func(id string) { drops <- id }
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(1<<16), grpc.WithInitialConnWindowSize(1<<16))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call, err := sluicev1.NewSluiceClient(conn).PushQuery(ctx, &sluicev1.PushQueryRequest{Sql: "SELECT pad FROM s EMIT CHANGES;"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-drops:
	case <-ctx.Done():
		t.Fatal("the client was not dropped")
	}
	<-closed
	// The buffer, one row waiting for room, and what the stream and
	// connection windows (64 KiB each, both directions' buffers) hold.
	bound := int64(maxRows + 1 + 4*(1<<16)/rowBytes)
	t.Logf("pulled %d rows (bound %d)", pulled.Load(), bound)
	if n := pulled.Load(); n > bound {
		t.Errorf("the server took %d rows from the query for a client that read none; want at most %d", n, bound)
	}
	rows := 0
	for {
		m, err := call.Recv()
		if err != nil {
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "push query transient_1 dropped: client did not keep up: 50 rows") {
				t.Errorf("after %d rows: %v", rows, err)
			}
			break
		}
		if m.GetRow() != nil {
			rows++
		}
	}
	if rows == 0 || int64(rows) >= pulled.Load() {
		t.Errorf("the client read %d of %d rows pulled, want some but not the buffered ones", rows, pulled.Load())
	}
}
