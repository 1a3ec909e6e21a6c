package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/render"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
	"github.com/sluice-sql/sluice/server"
)

// executor runs the corpus's statements: on the engine directly, or
// through the gRPC server in front of it. Both must print the same.
type executor interface {
	// Execute runs the statements of sql in order in session s, and returns
	// one result per statement that succeeded and the first failure.
	Execute(ctx context.Context, s *engine.Session, sql string) ([]result, error)
	// Close releases the executor; the engine stays open.
	Close()
}

// result is one statement's outcome as the corpus prints it: a message, a
// table (a listing, a description or a pull query's rows, drawn as the
// shell draws them) or a push query's stream.
type result struct {
	message string
	table   *render.Table
	stream  rowStream
}

// rowStream is a running push query.
type rowStream interface {
	// ID names the transient query.
	ID() string
	// Columns are the output column names.
	Columns() []string
	// Next returns the next row's values and their types; io.EOF when the
	// query has ended. It skips tombstones.
	Next(ctx context.Context) ([]any, []*types.Type, error)
	// NextRow is Next with tombstones, which it marks.
	NextRow(ctx context.Context) (row []any, ts []*types.Type, tombstone bool, err error)
	// Close stops the query; when it returns the query's resources are
	// released.
	Close()
}

// pushQuerier is an executor with a call of its own for push queries.
type pushQuerier interface {
	// PushQuery runs sql, one push query, in session s.
	PushQuery(ctx context.Context, s *engine.Session, sql string) ([]result, error)
}

// newExecutor returns an executor over eng.
type newExecutor func(t *testing.T, eng *engine.Engine) executor

// inProcess calls the engine directly.
func inProcess(_ *testing.T, eng *engine.Engine) executor { return engineExecutor{eng} }

type engineExecutor struct{ eng *engine.Engine }

func (x engineExecutor) Execute(ctx context.Context, s *engine.Session, sql string) ([]result, error) {
	res, err := x.eng.Execute(ctx, s, sql)
	out := make([]result, len(res))
	for i, r := range res {
		switch r.Kind {
		case engine.ResultStatus:
			out[i] = result{message: r.Message}
		case engine.ResultEntity:
			out[i] = result{table: render.Entity(wire.EncodeEntity(r.Statement, r.Entity))}
		case engine.ResultRows:
			if !r.Stream.Pull {
				out[i] = result{stream: engineStream{r.Stream}}
				continue
			}
			t, rerr := pulledRows(ctx, r.Stream)
			if rerr != nil {
				return out[:i], rerr
			}
			out[i] = result{table: t}
		}
	}
	return out, err
}

// pulledRows draws a pull query's rows as the shell does: encoded as the
// server sends them.
func pulledRows(ctx context.Context, st *engine.Stream) (*render.Table, error) {
	defer st.Close()
	typed := st.TypedColumns()
	var rows []*sluicev1.Row
	for {
		row, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			return render.Rows(&sluicev1.StreamHeader{Columns: wire.EncodeColumns(st.Columns)}, rows), nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, wire.EncodeRow(row, typed))
	}
}

func (engineExecutor) Close() {}

type engineStream struct{ st *engine.Stream }

func (s engineStream) ID() string { return s.st.ID }

func (s engineStream) Columns() []string {
	names := make([]string, len(s.st.Columns))
	for i, c := range s.st.Columns {
		names[i] = c.Name
	}
	return names
}

func (s engineStream) Next(ctx context.Context) ([]any, []*types.Type, error) {
	return skipTombstones(ctx, s)
}

func (s engineStream) NextRow(ctx context.Context) ([]any, []*types.Type, bool, error) {
	r, err := s.st.NextRow(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	row := r.Values
	ts := make([]*types.Type, len(row))
	for i := range row {
		if i < len(s.st.Columns) {
			ts[i] = s.st.Columns[i].Type
		}
	}
	return row, ts, r.Tombstone, nil
}

func (s engineStream) Close() { s.st.Close() }

// overGRPC serves eng with server.New on a loopback port and calls it as
// the shell does: the session travels with each request and comes back in
// the response stream; rows are decoded with wire.DecodeValue; errors are
// rebuilt from the status's StatementError detail.
func overGRPC(t *testing.T, eng *engine.Engine) executor {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	x := &grpcExecutor{t: t, served: make(chan error, 1)}
	x.srv = server.New(eng, server.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		GRPCOptions: []grpc.ServerOption{grpc.ChainStreamInterceptor(
			func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
				x.calls.Add(1)
				defer x.calls.Done()
				return handler(srv, ss)
			})},
	})
	go func() { x.served <- x.srv.Serve(lis) }()
	x.conn, err = grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	x.client = sluicev1.NewSluiceClient(x.conn)
	return x
}

type grpcExecutor struct {
	t      *testing.T
	srv    *server.Server
	served chan error
	conn   *grpc.ClientConn
	client sluicev1.SluiceClient
	// calls counts the server's Execute handlers still running: a push
	// query the client cancelled is closed when its handler returns.
	calls sync.WaitGroup
}

// Execute sends sql as one request. A push query's rows follow its header
// in the response stream, and the server runs the statements after it only
// once it ends, so a push query is the last result Execute returns.
func (x *grpcExecutor) Execute(ctx context.Context, s *engine.Session, sql string) ([]result, error) {
	ctx, cancel := context.WithCancel(ctx)
	call, err := x.client.Execute(ctx, &sluicev1.ExecuteRequest{Sql: sql, Properties: s.Properties, Variables: s.Variables})
	if err != nil {
		cancel()
		return nil, statusError(err, 0)
	}
	var res []result
	gotSession := false
	for {
		m, err := call.Recv()
		if errors.Is(err, io.EOF) {
			cancel()
			if !gotSession {
				return res, errors.New("bug: the response stream has no session")
			}
			return res, nil
		}
		if err != nil {
			cancel()
			return res, statusError(err, len(res))
		}
		if _, ok := m.GetPayload().(*sluicev1.ExecuteResponse_Session); !ok && int(m.GetStatementIndex()) != len(res) {
			cancel()
			return res, fmt.Errorf("bug: statement_index %d, want %d", m.GetStatementIndex(), len(res))
		}
		switch p := m.GetPayload().(type) {
		case *sluicev1.ExecuteResponse_Session:
			if gotSession || len(res) > 0 {
				cancel()
				return res, errors.New("bug: the session is not the first message of the response stream")
			}
			gotSession = true
			s.Properties = nonNil(p.Session.GetProperties())
			s.Variables = nonNil(p.Session.GetVariables())
		case *sluicev1.ExecuteResponse_Message:
			res = append(res, result{message: p.Message.GetText()})
		case *sluicev1.ExecuteResponse_Entity:
			res = append(res, result{table: render.Entity(p.Entity)})
		case *sluicev1.ExecuteResponse_StreamHeader:
			h := p.StreamHeader
			if h.GetPull() {
				t, err := pullRows(call.Recv, h, len(res))
				if err != nil {
					cancel()
					return res, err
				}
				res = append(res, result{table: t})
				continue
			}
			names := make([]string, len(h.GetColumns()))
			for i, c := range h.GetColumns() {
				names[i] = c.GetName()
			}
			st := &grpcStream{x: x, recv: call.Recv, cancel: cancel, id: h.GetQueryId(), names: names, index: len(res)}
			return append(res, result{stream: st}), nil
		default:
			cancel()
			return res, fmt.Errorf("bug: unexpected %T outside a push query", p)
		}
	}
}

// PushQuery runs sql with the PushQuery call.
func (x *grpcExecutor) PushQuery(ctx context.Context, s *engine.Session, sql string) ([]result, error) {
	ctx, cancel := context.WithCancel(ctx)
	call, err := x.client.PushQuery(ctx, &sluicev1.PushQueryRequest{Sql: sql, Session: &sluicev1.Session{Properties: s.Properties, Variables: s.Variables}})
	if err != nil {
		cancel()
		return nil, statusError(err, 0)
	}
	m, err := call.Recv()
	if err != nil {
		cancel()
		return nil, statusError(err, 0)
	}
	h := m.GetHeader()
	if h == nil {
		cancel()
		return nil, fmt.Errorf("bug: PushQuery sent %T before its header", m.GetPayload())
	}
	names := make([]string, len(h.GetColumns()))
	for i, c := range h.GetColumns() {
		names[i] = c.GetName()
	}
	st := &grpcStream{x: x, cancel: cancel, id: h.GetQueryId(), names: names, recv: func() (*sluicev1.ExecuteResponse, error) {
		m, err := call.Recv()
		if err != nil {
			return nil, err
		}
		// The same payloads as Execute's, without a statement index.
		out := &sluicev1.ExecuteResponse{}
		switch p := m.GetPayload().(type) {
		case *sluicev1.PushQueryResponse_Row:
			out.Payload = &sluicev1.ExecuteResponse_Row{Row: p.Row}
		case *sluicev1.PushQueryResponse_End:
			out.Payload = &sluicev1.ExecuteResponse_StreamEnd{StreamEnd: p.End}
		case *sluicev1.PushQueryResponse_Header:
			out.Payload = &sluicev1.ExecuteResponse_StreamHeader{StreamHeader: p.Header}
		}
		return out, nil
	}}
	return []result{{stream: st}}, nil
}

// pullRows reads a pull query's rows, after their header h, up to their
// end.
func pullRows(recv func() (*sluicev1.ExecuteResponse, error), h *sluicev1.StreamHeader, index int) (*render.Table, error) {
	var rows []*sluicev1.Row
	for {
		m, err := recv()
		if err != nil {
			return nil, statusError(err, index)
		}
		switch p := m.GetPayload().(type) {
		case *sluicev1.ExecuteResponse_Row:
			rows = append(rows, p.Row)
		case *sluicev1.ExecuteResponse_StreamEnd:
			switch p.StreamEnd.GetReason() {
			case sluicev1.EndReason_END_REASON_COMPLETED, sluicev1.EndReason_END_REASON_LIMIT_REACHED:
				return render.Rows(h, rows), nil
			}
			return nil, fmt.Errorf("pull query ended: %s %s", p.StreamEnd.GetReason(), p.StreamEnd.GetMessage())
		default:
			return nil, fmt.Errorf("bug: unexpected %T in a pull query's rows", p)
		}
	}
}

// Close stops the server; the engine stays open.
func (x *grpcExecutor) Close() {
	x.conn.Close()
	x.srv.Stop()
	if err := <-x.served; err != nil {
		x.t.Errorf("serve: %v", err)
	}
}

// wait returns once every Execute handler of the server has returned.
func (x *grpcExecutor) wait() { x.calls.Wait() }

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// statusError rebuilds the engine's error from a failed call's status.
// index is the index of the statement the client expects to have failed.
func statusError(err error, index int) error {
	st := status.Convert(err)
	for _, d := range st.Details() {
		se, ok := d.(*sluicev1.StatementError)
		if !ok {
			continue
		}
		if int(se.GetStatementIndex()) != index {
			return fmt.Errorf("bug: error for statement_index %d, want %d: %s", se.GetStatementIndex(), index, se.GetMessage())
		}
		want := codes.InvalidArgument
		if se.GetCode() >= engine.CodeServerError {
			want = codes.Internal
		}
		if st.Code() != want {
			return fmt.Errorf("bug: status %s for error code %d: %s", st.Code(), se.GetCode(), se.GetMessage())
		}
		if se.GetStatement() == "" && se.GetLine() == 0 {
			return errors.New(se.GetMessage())
		}
		return &engine.StatementError{Statement: se.GetStatement(), Line: int(se.GetLine()), Col: int(se.GetColumn()),
			Msg: se.GetMessage(), Code: int(se.GetCode())}
	}
	return fmt.Errorf("%s: %s", st.Code(), st.Message())
}

// grpcStream reads a push query's rows from an Execute or PushQuery
// response stream.
type grpcStream struct {
	x      *grpcExecutor
	recv   func() (*sluicev1.ExecuteResponse, error)
	cancel context.CancelFunc
	id     string
	names  []string
	index  int
	ended  bool
}

func (s *grpcStream) ID() string        { return s.id }
func (s *grpcStream) Columns() []string { return s.names }

func (s *grpcStream) Next(ctx context.Context) ([]any, []*types.Type, error) {
	return skipTombstones(ctx, s)
}

func (s *grpcStream) NextRow(ctx context.Context) ([]any, []*types.Type, bool, error) {
	if s.ended {
		return nil, nil, false, io.EOF
	}
	defer context.AfterFunc(ctx, s.cancel)()
	m, err := s.recv()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, false, ctx.Err()
		}
		return nil, nil, false, statusError(err, s.index)
	}
	if int(m.GetStatementIndex()) != s.index {
		return nil, nil, false, fmt.Errorf("bug: statement_index %d in push query %d", m.GetStatementIndex(), s.index)
	}
	switch p := m.GetPayload().(type) {
	case *sluicev1.ExecuteResponse_Row:
		vals := p.Row.GetValues()
		if len(vals) != len(s.names) {
			return nil, nil, false, fmt.Errorf("bug: row of %d values for %d columns", len(vals), len(s.names))
		}
		row := make([]any, len(vals))
		ts := make([]*types.Type, len(vals))
		for i, v := range vals {
			row[i], ts[i] = wire.DecodeValue(v)
		}
		return row, ts, p.Row.GetTombstone(), nil
	case *sluicev1.ExecuteResponse_StreamEnd:
		switch r := p.StreamEnd.GetReason(); r {
		case sluicev1.EndReason_END_REASON_COMPLETED, sluicev1.EndReason_END_REASON_LIMIT_REACHED:
		default:
			return nil, nil, false, fmt.Errorf("push query ended: %s", r)
		}
		s.ended = true
		return nil, nil, false, io.EOF
	default:
		return nil, nil, false, fmt.Errorf("bug: unexpected %T in a push query", p)
	}
}

// skipTombstones reads s's next row that is not a tombstone.
func skipTombstones(ctx context.Context, s rowStream) ([]any, []*types.Type, error) {
	for {
		row, ts, tombstone, err := s.NextRow(ctx)
		if err != nil || !tombstone {
			return row, ts, err
		}
	}
}

// Close cancels the call and waits until the server has closed the query,
// as engine.Stream.Close does.
func (s *grpcStream) Close() {
	s.cancel()
	s.x.wait()
}

// textTable is a listing, a description or a pull query's rows drawn as
// the shell draws them, its cells as text.
type textTable struct {
	Title, Footer string
	Columns       []string
	Rows          [][]string
}

// tableOf draws r, an entity or a pull query's rows.
func tableOf(t *testing.T, r engine.Result) textTable {
	t.Helper()
	var rt *render.Table
	switch {
	case r.Kind == engine.ResultEntity:
		rt = render.Entity(wire.EncodeEntity(r.Statement, r.Entity))
	case r.Kind == engine.ResultRows && r.Stream.Pull:
		var err error
		if rt, err = pulledRows(context.Background(), r.Stream); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("%q: result of kind %d, want an entity or a pull query's rows", r.Statement, r.Kind)
	}
	out := textTable{Title: rt.Title, Footer: rt.Footer, Columns: rt.Columns}
	for _, row := range rt.Rows {
		out.Rows = append(out.Rows, rt.Cells(row))
	}
	return out
}

// allRows reads a finished stream's rows and closes it.
func allRows(ctx context.Context, st *engine.Stream) ([][]any, error) {
	defer st.Close()
	var rows [][]any
	for {
		row, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}
