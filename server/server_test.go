package server

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// fakeEngine answers Execute with exec; its other calls fail.
type fakeEngine struct {
	api.Unimplemented
	exec func(ctx context.Context, s *api.Session, sql string) ([]api.Result, error)
}

func (f *fakeEngine) Execute(ctx context.Context, s *api.Session, sql string, _ ...api.Options) ([]api.Result, error) {
	return f.exec(ctx, s, sql)
}

// feed is a push query stream fed by a test.
type feed struct {
	rows      chan []any
	closed    chan struct{}
	closeOnce sync.Once
	// nexting is signalled each time Next starts waiting.
	nexting chan struct{}
}

func newFeed() *feed {
	return &feed{rows: make(chan []any), closed: make(chan struct{}), nexting: make(chan struct{}, 16)}
}

func (f *feed) stream(cols []types.Column) *api.Stream {
	return api.NewStream("transient_1", api.Columns(cols, 0), func(ctx context.Context) ([]any, error) {
		f.nexting <- struct{}{}
		select {
		case r, ok := <-f.rows:
			if !ok {
				return nil, io.EOF
			}
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, func() { f.closeOnce.Do(func() { close(f.closed) }) }, nil)
}

func start(t *testing.T, eng Engine) (*Server, *grpc.ClientConn, chan error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(eng, Options{Version: "test", ServiceID: "svc", Playground: true, KafkaBootstrapServers: "127.0.0.1:9092"})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
	})
	return srv, conn, served
}

// recvAll reads a stream to its end and returns its messages and final error.
func recvAll(t *testing.T, s grpc.ServerStreamingClient[sluicev1.ExecuteResponse]) ([]*sluicev1.ExecuteResponse, error) {
	t.Helper()
	var out []*sluicev1.ExecuteResponse
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

func TestExecuteMessagesTablesAndSession(t *testing.T) {
	eng := &fakeEngine{exec: func(_ context.Context, s *api.Session, sql string) ([]api.Result, error) {
		if sql != "SET 'a'='2'; SHOW STREAMS;" {
			t.Errorf("sql = %q", sql)
		}
		if s.Properties["a"] != "1" || s.Variables["v"] != "x" {
			t.Errorf("session = %+v", s)
		}
		s.Properties["a"] = "2"
		delete(s.Variables, "v")
		return []api.Result{
			{Statement: "SET 'a'='2';", Kind: api.ResultStatus, Message: "changed"},
			{Statement: "SHOW STREAMS;", Start: 13, End: 25, Kind: api.ResultEntity, Entity: &api.SourceList{
				Kind: api.SourceStream, Sources: []api.SourceInfo{{Name: "S", Kind: api.SourceStream, Topic: "t", KeyFormat: "KAFKA", ValueFormat: "JSON"}},
			}},
		}, nil
	}}
	_, conn, _ := start(t, eng)
	c := sluicev1.NewSluiceClient(conn)
	stream, err := c.Execute(context.Background(), &sluicev1.ExecuteRequest{
		Sql:        "SET 'a'='2'; SHOW STREAMS;",
		Properties: map[string]string{"a": "1"},
		Variables:  map[string]string{"v": "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := recvAll(t, stream)
	if err != nil {
		t.Fatal(err)
	}
	want := []*sluicev1.ExecuteResponse{
		{Payload: &sluicev1.ExecuteResponse_Session{Session: &sluicev1.Session{Properties: map[string]string{"a": "2"}, Variables: map[string]string{}}}},
		{Payload: &sluicev1.ExecuteResponse_Message{Message: &sluicev1.MessageResult{Statement: "SET 'a'='2';", Text: "changed"}}},
		{StatementIndex: 1, StatementStart: 13, StatementEnd: 25, Payload: &sluicev1.ExecuteResponse_Entity{Entity: &sluicev1.Entity{
			Statement: "SHOW STREAMS;", Kind: &sluicev1.Entity_Sources{Sources: &sluicev1.SourceList{
				Kind: sluicev1.SourceKind_SOURCE_KIND_STREAM, Sources: []*sluicev1.SourceDescription{{
					Name: "S", Kind: sluicev1.SourceKind_SOURCE_KIND_STREAM, Topic: "t", KeyFormat: "KAFKA", ValueFormat: "JSON"}},
			}},
		}}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("message %d:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
}

func TestExecuteStatementError(t *testing.T) {
	eng := &fakeEngine{exec: func(context.Context, *api.Session, string) ([]api.Result, error) {
		return []api.Result{{Statement: "A;", Kind: api.ResultStatus, Message: "ok"}},
			&api.StatementError{Statement: "B;", Line: 1, Col: 4, Msg: "no such stream B; create it first", Code: 40001}
	}}
	_, conn, _ := start(t, eng)
	stream, err := sluicev1.NewSluiceClient(conn).Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "A; B;"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := recvAll(t, stream)
	if len(got) != 2 || got[0].GetSession() == nil || got[1].GetMessage().GetText() != "ok" {
		t.Errorf("messages before the error = %v", got)
	}
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code = %v, want InvalidArgument (%v)", st.Code(), err)
	}
	want := &sluicev1.StatementError{StatementIndex: 1, Statement: "B;", Line: 1, Column: 4, Message: "no such stream B; create it first", Code: 40001}
	details := st.Details()
	if len(details) != 1 {
		t.Fatalf("details = %v", details)
	}
	if d, ok := details[0].(*sluicev1.StatementError); !ok || !proto.Equal(d, want) {
		t.Errorf("detail = %v, want %v", details[0], want)
	}
	if st.Message() != "line 1:4: no such stream B; create it first\nStatement: B;" {
		t.Errorf("message = %q", st.Message())
	}
}

func TestExecuteServerError(t *testing.T) {
	eng := &fakeEngine{exec: func(context.Context, *api.Session, string) ([]api.Result, error) {
		return nil, errors.New("disk on fire")
	}}
	_, conn, _ := start(t, eng)
	stream, err := sluicev1.NewSluiceClient(conn).Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "A;"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = recvAll(t, stream)
	if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "disk on fire" {
		t.Errorf("status = %v", st)
	}
}

var pushCols = []types.Column{
	{Name: "ID", Type: types.BigintType},
	{Name: "S", Type: types.StructOf(types.Field{Name: "A", Type: types.IntType})},
}

func pushEngine(f *feed) *fakeEngine {
	return &fakeEngine{exec: func(context.Context, *api.Session, string) ([]api.Result, error) {
		return []api.Result{{Statement: "SELECT * FROM s EMIT CHANGES LIMIT 2;", Kind: api.ResultRows, Stream: f.stream(pushCols)}}, nil
	}}
}

func TestPushQueryRowsAndEnd(t *testing.T) {
	f := newFeed()
	_, conn, _ := start(t, pushEngine(f))
	stream, err := sluicev1.NewSluiceClient(conn).Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "x"})
	if err != nil {
		t.Fatal(err)
	}
	mustRecv := func() *sluicev1.ExecuteResponse {
		t.Helper()
		m, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if mustRecv().GetSession() == nil {
		t.Fatal("first message is not the session")
	}
	h := mustRecv().GetStreamHeader()
	wantHeader := &sluicev1.StreamHeader{Statement: "SELECT * FROM s EMIT CHANGES LIMIT 2;", QueryId: "transient_1", Columns: []*sluicev1.Column{
		{Name: "ID", Type: "BIGINT"}, {Name: "S", Type: "STRUCT<`A` INTEGER>"},
	}}
	if !proto.Equal(h, wantHeader) {
		t.Fatalf("header = %v", h)
	}
	for i := int64(1); i <= 2; i++ {
		f.rows <- []any{i, types.StructValue{int32(i * 10)}}
		row := mustRecv().GetRow()
		if got := row.GetValues()[0].GetIntValue(); got != i {
			t.Errorf("row %d: ID = %d", i, got)
		}
		if got := row.GetValues()[1].GetStructValue().GetFields()[0]; got.GetName() != "A" || got.GetValue().GetIntValue() != i*10 {
			t.Errorf("row %d: S = %v", i, got)
		}
	}
	close(f.rows)
	end := mustRecv().GetStreamEnd()
	if end.GetReason() != sluicev1.EndReason_END_REASON_COMPLETED {
		t.Errorf("end = %v", end)
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("after end: %v", err)
	}
	<-f.closed
}

func TestPushQueryClientCancel(t *testing.T) {
	f := newFeed()
	_, conn, _ := start(t, pushEngine(f))
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := sluicev1.NewSluiceClient(conn).Execute(ctx, &sluicev1.ExecuteRequest{Sql: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // session, header
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	<-f.nexting
	cancel()
	<-f.closed // the server closed the engine's stream
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("after cancel: %v", err)
	}
}

func TestGracefulStopEndsPushQueries(t *testing.T) {
	f := newFeed()
	srv, conn, served := start(t, pushEngine(f))
	stream, err := sluicev1.NewSluiceClient(conn).Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // session, header
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	<-f.nexting
	stopped := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(stopped)
	}()
	m, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if m.GetStreamEnd().GetReason() != sluicev1.EndReason_END_REASON_SERVER_SHUTDOWN {
		t.Errorf("got %v, want a shutdown end", m)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("after end: %v", err)
	}
	<-stopped
	<-f.closed
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func TestHealthAndInfo(t *testing.T) {
	_, conn, _ := start(t, &fakeEngine{})
	h, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "sluice.v1.Sluice"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health = %v, %v", h, err)
	}
	info, err := sluicev1.NewSluiceClient(conn).Info(context.Background(), &sluicev1.InfoRequest{})
	want := &sluicev1.InfoResponse{Version: "test", ServiceId: "svc", KafkaBootstrapServers: "127.0.0.1:9092", Playground: true}
	if err != nil || !proto.Equal(info, want) {
		t.Errorf("info = %v, %v", info, err)
	}
}

// TestInvalidUTF8 checks that strings that are not UTF-8 (data read from
// Kafka) reach the client with U+FFFD in place of their bad bytes, where
// protobuf would refuse to send them.
func TestInvalidUTF8(t *testing.T) {
	f := newFeed()
	cols := []types.Column{{Name: "V", Type: types.StringType}, {Name: "M", Type: types.MapOf(types.StringType, types.StringType)}}
	eng := &fakeEngine{exec: func(_ context.Context, _ *api.Session, sql string) ([]api.Result, error) {
		switch sql {
		case "table":
			return []api.Result{{Statement: "table", Kind: api.ResultEntity, Entity: &api.PropertyList{
				Properties: []api.Property{{Name: "p\xff", Scope: "SESSION", Value: "x\xfe\xffy"}},
			}}}, nil
		case "error":
			return nil, &api.StatementError{Statement: "error", Msg: "bad value 'a\xffb'", Code: api.CodeBadStatement}
		}
		return []api.Result{{Statement: "push", Kind: api.ResultRows, Stream: f.stream(cols)}}, nil
	}}
	_, conn, _ := start(t, eng)
	c := sluicev1.NewSluiceClient(conn)

	stream, err := c.Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "table"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := recvAll(t, stream)
	if err != nil {
		t.Fatal(err)
	}
	wantEntity := &sluicev1.Entity{Statement: "table", Kind: &sluicev1.Entity_Properties{Properties: &sluicev1.PropertyList{
		Properties: []*sluicev1.Property{{Name: "p\uFFFD", Scope: "SESSION", Value: "x\uFFFD\uFFFDy"}}}}}
	if len(got) != 2 || !proto.Equal(got[1].GetEntity(), wantEntity) {
		t.Errorf("entity = %v, want %v", got, wantEntity)
	}

	stream, err = c.Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "error"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = recvAll(t, stream)
	st := status.Convert(err)
	if len(st.Details()) != 1 || st.Details()[0].(*sluicev1.StatementError).GetMessage() != "bad value 'a\uFFFDb'" {
		t.Errorf("status = %v, details %v", st, st.Details())
	}

	stream, err = c.Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "push"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // session, header
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	f.rows <- []any{"\xffa", &types.MapValue{Keys: []any{"k\xff"}, Values: []any{"v\xff"}}}
	m, err := stream.Recv()
	if err != nil {
		t.Fatalf("row: %v", err)
	}
	vals := m.GetRow().GetValues()
	entry := vals[1].GetMapValue().GetEntries()[0]
	if vals[0].GetStringValue() != "\uFFFDa" || entry.GetKey().GetStringValue() != "k\uFFFD" || entry.GetValue().GetStringValue() != "v\uFFFD" {
		t.Errorf("row = %v", m.GetRow())
	}
	close(f.rows)
	if _, err := recvAll(t, stream); err != nil {
		t.Errorf("after the row: %v", err)
	}
}
