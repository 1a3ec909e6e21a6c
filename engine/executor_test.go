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

// result is one statement's outcome as the corpus prints it.
type result struct {
	kind    engine.ResultKind
	message string
	table   *engine.Table
	stream  rowStream
}

// rowStream is a running push query.
type rowStream interface {
	// ID names the transient query.
	ID() string
	// Columns are the output column names.
	Columns() []string
	// Next returns the next row's values and their types; io.EOF when the
	// query has ended.
	Next(ctx context.Context) ([]any, []*types.Type, error)
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
		out[i] = result{kind: r.Kind, message: r.Message, table: r.Table}
		if r.Stream != nil {
			out[i].stream = engineStream{r.Stream}
		}
	}
	return out, err
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
	row, err := s.st.Next(ctx)
	if err != nil {
		return nil, nil, err
	}
	ts := make([]*types.Type, len(row))
	for i := range row {
		if i < len(s.st.Columns) {
			ts[i] = s.st.Columns[i].Type
		}
	}
	return row, ts, nil
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
			res = append(res, result{kind: engine.ResultMessage, message: p.Message.GetText()})
		case *sluicev1.ExecuteResponse_Table:
			tr := p.Table
			tb := &engine.Table{Title: tr.GetTitle(), Columns: tr.GetColumns(), Footer: tr.GetFooter()}
			for _, r := range tr.GetRows() {
				tb.Rows = append(tb.Rows, r.GetCells())
			}
			res = append(res, result{kind: engine.ResultTable, message: tr.GetNote(), table: tb})
		case *sluicev1.ExecuteResponse_StreamHeader:
			h := p.StreamHeader
			names := make([]string, len(h.GetColumns()))
			for i, c := range h.GetColumns() {
				names[i] = c.GetName()
			}
			st := &grpcStream{x: x, recv: call.Recv, cancel: cancel, id: h.GetQueryId(), names: names, index: len(res)}
			return append(res, result{kind: engine.ResultStream, stream: st}), nil
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
	return []result{{kind: engine.ResultStream, stream: st}}, nil
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
	if s.ended {
		return nil, nil, io.EOF
	}
	defer context.AfterFunc(ctx, s.cancel)()
	m, err := s.recv()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, statusError(err, s.index)
	}
	if int(m.GetStatementIndex()) != s.index {
		return nil, nil, fmt.Errorf("bug: statement_index %d in push query %d", m.GetStatementIndex(), s.index)
	}
	switch p := m.GetPayload().(type) {
	case *sluicev1.ExecuteResponse_Row:
		vals := p.Row.GetValues()
		if len(vals) != len(s.names) {
			return nil, nil, fmt.Errorf("bug: row of %d values for %d columns", len(vals), len(s.names))
		}
		row := make([]any, len(vals))
		ts := make([]*types.Type, len(vals))
		for i, v := range vals {
			row[i], ts[i] = wire.DecodeValue(v)
		}
		return row, ts, nil
	case *sluicev1.ExecuteResponse_StreamEnd:
		if r := p.StreamEnd.GetReason(); r != sluicev1.EndReason_END_REASON_COMPLETED {
			return nil, nil, fmt.Errorf("push query ended: %s", r)
		}
		s.ended = true
		return nil, nil, io.EOF
	default:
		return nil, nil, fmt.Errorf("bug: unexpected %T in a push query", p)
	}
}

// Close cancels the call and waits until the server has closed the query,
// as engine.Stream.Close does.
func (s *grpcStream) Close() {
	s.cancel()
	s.x.wait()
}
