package server

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
	"github.com/sluice-sql/sluice/server/auth"
)

// Forwarder runs pull queries on the other servers of a cluster with their
// typed PullQuery RPC: its PullQuery is engine.ClusterConfig.Forward. The
// caller's credentials (see auth.Caller: the Authorization of the REST
// request or gRPC call being answered) go with the forwarded call. Safe for concurrent use.
type Forwarder struct {
	dial []grpc.DialOption

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

// NewForwarder returns a Forwarder that dials the servers with opts (their
// transport credentials).
func NewForwarder(opts ...grpc.DialOption) *Forwarder {
	return &Forwarder{dial: opts, conns: map[string]*grpc.ClientConn{}}
}

func (f *Forwarder) conn(addr string) (*grpc.ClientConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.conns[addr]; ok {
		return c, nil
	}
	c, err := grpc.NewClient(addr, f.dial...)
	if err != nil {
		return nil, err
	}
	f.conns[addr] = c
	return c, nil
}

// PullQuery runs sql in session s on the server at addr.
func (f *Forwarder) PullQuery(ctx context.Context, addr string, s *engine.Session, sql string) (engine.PullResult, error) {
	c, err := f.conn(addr)
	if err != nil {
		return engine.PullResult{}, fmt.Errorf("dial %s: %w", addr, err)
	}
	if h := auth.Caller(ctx); h != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", h)
	}
	req := &sluicev1.PullQueryRequest{Sql: sql, Session: &sluicev1.Session{Properties: s.Properties, Variables: s.Variables}}
	resp, err := sluicev1.NewSluiceClient(c).PullQuery(ctx, req)
	if err != nil {
		return engine.PullResult{}, err
	}
	res := engine.PullResult{Rows: make([][]any, len(resp.GetRows()))}
	for i, r := range resp.GetRows() {
		row := make([]any, len(r.GetValues()))
		for j, v := range r.GetValues() {
			row[j], _ = wire.DecodeValue(v)
		}
		res.Rows[i] = row
	}
	return res, nil
}

// Close closes the connections.
func (f *Forwarder) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for addr, c := range f.conns {
		_ = c.Close()
		delete(f.conns, addr)
	}
}
