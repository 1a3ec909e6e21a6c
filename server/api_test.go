package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/internal/wire"
	"github.com/sluice-sql/sluice/kafka"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// world is an engine on a playground broker with the server in front.
type world struct {
	eng    *engine.Engine
	client kafka.Client
	srv    *Server
	addr   string
}

func newWorld(t *testing.T, opts Options) *world {
	t.Helper()
	return newWorldWith(t, opts, nil)
}

// newWorldWith is newWorld with configure changing the engine's
// configuration.
func newWorldWith(t *testing.T, opts Options, configure func(*engine.Config)) *world {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: dir + "/kafka"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := engine.Config{Kafka: client, DataDir: dir + "/state", Logger: quiet}
	if configure != nil {
		configure(&cfg)
	}
	eng, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = quiet
	srv := New(eng, opts)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return &world{eng: eng, client: client, srv: srv, addr: lis.Addr().String()}
}

// dial opens a connection of its own with fixed flow-control windows, so
// that what a client leaves unread stays bounded by them.
func (w *world) dial(t *testing.T) sluicev1.SluiceClient {
	t.Helper()
	conn, err := grpc.NewClient(w.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(1<<16), grpc.WithInitialConnWindowSize(1<<16))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return sluicev1.NewSluiceClient(conn)
}

func (w *world) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := w.eng.Execute(context.Background(), nil, sql); err != nil {
		t.Fatal(err)
	}
}

func (w *world) produce(t *testing.T, recs []*kafka.Record) {
	t.Helper()
	p, err := w.client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Produce(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
}

// startPush starts a push query and reads its header.
func startPush(t *testing.T, ctx context.Context, c sluicev1.SluiceClient, sql string) grpc.ServerStreamingClient[sluicev1.PushQueryResponse] {
	t.Helper()
	call, err := c.PushQuery(ctx, &sluicev1.PushQueryRequest{Sql: sql})
	if err != nil {
		t.Fatal(err)
	}
	m, err := call.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if m.GetHeader() == nil {
		t.Fatalf("first message %v, want a header", m)
	}
	return call
}

// TestSlowPushClientDropped runs two push queries on one source (sharing
// its read), on connections of their own. The fast client reads every row
// while the slow one reads none; the slow one's buffer fills up to the
// limits and no further, and once it stalled the client is dropped with
// RESOURCE_EXHAUSTED, while the fast one receives everything.
func TestSlowPushClientDropped(t *testing.T) {
	const maxRows, records = 100, 20_000
	w := newWorld(t, Options{PushMaxRows: maxRows, PushMaxBytes: 1 << 20, PushStallTimeout: 2 * time.Second})
	drops := make(chan string, 2)
	w.srv.onDrop = func(id string) { drops <- id }
	w.exec(t, `CREATE STREAM s (id VARCHAR KEY, n INT, pad VARCHAR) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const sql = `SELECT n, pad FROM s EMIT CHANGES;`
	fast := startPush(t, ctx, w.dial(t), sql)
	slow := startPush(t, ctx, w.dial(t), sql)

	pad := strings.Repeat("x", 200)
	var recs []*kafka.Record
	for n := range records {
		recs = append(recs, &kafka.Record{Topic: "s", Partition: -1, Key: []byte("k"), Value: fmt.Appendf(nil, `{"N":%d,"PAD":%q}`, n, pad), Timestamp: time.UnixMilli(1)})
	}
	w.produce(t, recs)

	for n := range records {
		m, err := fast.Recv()
		if err != nil {
			t.Fatalf("fast client, row %d: %v", n, err)
		}
		v, _ := wire.DecodeValue(m.GetRow().GetValues()[0])
		if v != int64(n) {
			t.Fatalf("fast client, row %d: n = %v", n, v)
		}
	}

	var dropped string
	select {
	case dropped = <-drops:
	case <-ctx.Done():
		t.Fatal("the slow client was not dropped")
	}
	got := 0
	var err error
	for {
		var m *sluicev1.PushQueryResponse
		if m, err = slow.Recv(); err != nil {
			break
		}
		if m.GetRow() == nil {
			t.Fatalf("slow client: %v, want rows then an error", m)
		}
		got++
	}
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("slow client: %v, want RESOURCE_EXHAUSTED", err)
	}
	re := regexp.MustCompile(`^push query (\S+) dropped: client did not keep up: (\d+) rows / (\d+) bytes buffered \(limits 100 rows / 1048576 bytes\)`)
	sub := re.FindStringSubmatch(st.Message())
	if sub == nil {
		t.Fatalf("slow client: message %q", st.Message())
	}
	if sub[1] != dropped {
		t.Errorf("the error names %s, %s was dropped", sub[1], dropped)
	}
	if rows, _ := strconv.Atoi(sub[2]); rows > maxRows {
		t.Errorf("%d rows buffered, over the limit %d", rows, maxRows)
	}
	if bytes, _ := strconv.Atoi(sub[3]); bytes > 1<<20 {
		t.Errorf("%d bytes buffered, over the limit", bytes)
	}
	if got >= records {
		t.Errorf("the slow client received all %d rows; it should have been dropped", got)
	}
	// The dropped client's query is gone; the fast one's runs on.
	for _, q := range w.eng.Queries(context.Background()) {
		if q.ID == sub[1] {
			t.Errorf("the dropped query %s still runs", q.ID)
		}
	}
	if n := len(w.eng.Queries(context.Background())); n != 1 {
		t.Errorf("%d queries run, want the fast client's only", n)
	}
}

// TestTypedRPCs drives the typed calls over a real engine.
func TestTypedRPCs(t *testing.T) {
	w := newWorld(t, Options{})
	c := w.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w.exec(t, `CREATE STREAM s (id VARCHAR KEY, n INT, d DECIMAL(4, 1), tags ARRAY<STRING>) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE t AS SELECT id, COUNT(*) AS c FROM s GROUP BY id EMIT CHANGES;`)

	// Insert typed and JSON rows.
	ins, err := c.Insert(ctx, &sluicev1.InsertRequest{Target: "S", Rows: []*sluicev1.InsertRow{
		{Values: map[string]*sluicev1.Value{
			"ID": wire.EncodeValue("a", types.StringType), "N": wire.EncodeValue(int64(1), types.BigintType),
			"ROWTIME": wire.EncodeValue(int64(1000), types.BigintType),
		}},
		{Json: `{"ID": "b", "N": 2, "D": 1.5, "TAGS": ["x", "y"]}`},
	}})
	if err != nil || ins.GetRows() != 2 {
		t.Fatalf("Insert: %v, %v", ins, err)
	}
	_, err = c.Insert(ctx, &sluicev1.InsertRequest{Target: "S", Rows: []*sluicev1.InsertRow{{Json: `{"NOPE": 1}`}}})
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "has no column NOPE") {
		t.Errorf("Insert into a missing column: %v", err)
	}
	if err := w.eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// Pull query: typed rows.
	pull, err := c.PullQuery(ctx, &sluicev1.PullQueryRequest{Sql: `SELECT id, n, d, tags FROM s;`})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range pull.GetRows() {
		var cells []string
		for _, v := range r.GetValues() {
			x, typ := wire.DecodeValue(v)
			cells = append(cells, types.FormatValue(x, typ))
		}
		rows = append(rows, strings.Join(cells, " | "))
	}
	if got, want := strings.Join(rows, "\n"), "a | 1 | null | null\nb | 2 | 1.5 | [x, y]"; got != want {
		t.Errorf("pull rows:\n%s\nwant\n%s", got, want)
	}
	if cols := pull.GetColumns(); len(cols) != 4 || cols[2].GetType() != "DECIMAL(4, 1)" {
		t.Errorf("pull columns: %v", cols)
	}
	if _, err := c.PullQuery(ctx, &sluicev1.PullQueryRequest{Sql: `SELECT * FROM s EMIT CHANGES;`}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("PullQuery with a push query: %v", err)
	}

	// List and describe.
	list, err := c.List(ctx, &sluicev1.ListRequest{Kind: sluicev1.ListKind_LIST_KIND_STREAMS})
	// S, and the processing log every server declares.
	if err != nil || len(list.GetSources()) != 2 || list.GetSources()[0].GetName() != "S" || list.GetSources()[1].GetName() != "SLUICE_PROCESSING_LOG" {
		t.Fatalf("List streams: %v, %v", list, err)
	}
	list, err = c.List(ctx, &sluicev1.ListRequest{Kind: sluicev1.ListKind_LIST_KIND_QUERIES})
	if err != nil || len(list.GetQueries()) != 1 {
		t.Fatalf("List queries: %v, %v", list, err)
	}
	qid := list.GetQueries()[0].GetId()
	if q := list.GetQueries()[0]; q.GetType() != sluicev1.QueryType_QUERY_TYPE_PERSISTENT || q.GetSink() != "T" || q.GetStatus() != "RUNNING" {
		t.Errorf("query: %v", q)
	}
	list, err = c.List(ctx, &sluicev1.ListRequest{Kind: sluicev1.ListKind_LIST_KIND_TOPICS})
	if err != nil || len(list.GetTopics()) == 0 {
		t.Fatalf("List topics: %v, %v", list, err)
	}
	for _, tp := range list.GetTopics() {
		if strings.HasPrefix(tp.GetName(), "_") {
			t.Errorf("internal topic %s listed without all", tp.GetName())
		}
	}
	if _, err := c.List(ctx, &sluicev1.ListRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("List without a kind: %v", err)
	}
	d, err := c.Describe(ctx, &sluicev1.DescribeRequest{Target: &sluicev1.DescribeRequest_Source{Source: "T"}})
	if err != nil {
		t.Fatal(err)
	}
	src := d.GetSource()
	if src.GetKind() != sluicev1.SourceKind_SOURCE_KIND_TABLE || len(src.GetColumns()) != 2 ||
		src.GetColumns()[0].GetRole() != sluicev1.ColumnRole_COLUMN_ROLE_KEY || src.GetColumns()[1].GetType() != "BIGINT" ||
		len(src.GetWriters()) != 1 {
		t.Errorf("Describe T: %v", src)
	}
	d, err = c.Describe(ctx, &sluicev1.DescribeRequest{Target: &sluicev1.DescribeRequest_QueryId{QueryId: qid}})
	if err != nil || d.GetQuery().GetId() != qid || len(d.GetQuery().GetColumns()) != 2 || d.GetQuery().GetRecordsIn() != 2 {
		t.Errorf("Describe %s: %v, %v", qid, d, err)
	}
	if _, err := c.Describe(ctx, &sluicev1.DescribeRequest{Target: &sluicev1.DescribeRequest_Source{Source: "NOPE"}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Describe NOPE: %v", err)
	}

	// Explain a statement and a query.
	ex, err := c.Explain(ctx, &sluicev1.ExplainRequest{Target: &sluicev1.ExplainRequest_Sql{Sql: `SELECT n FROM s WHERE n > 1 EMIT CHANGES;`}})
	if err != nil || !strings.Contains(ex.GetPlan(), "FILTER") {
		t.Errorf("Explain sql: %v, %v", ex, err)
	}
	ex, err = c.Explain(ctx, &sluicev1.ExplainRequest{Target: &sluicev1.ExplainRequest_QueryId{QueryId: qid}})
	if err != nil || len(ex.GetColumns()) != 2 || !strings.Contains(ex.GetDescription(), qid) {
		t.Errorf("Explain %s: %v, %v", qid, ex, err)
	}
	// The processing topology comes as text and as values.
	if stages := ex.GetValue().GetTopology().GetStages(); !strings.HasPrefix(ex.GetTopology(), "Sub-topology: 0\n") ||
		len(stages) == 0 || stages[len(stages)-1].GetSinkRole() != "sink" {
		t.Errorf("Explain %s topology: %q, %v", qid, ex.GetTopology(), stages)
	}

	// Pause, resume, terminate.
	for _, call := range []func() (*sluicev1.QueryControlResponse, error){
		func() (*sluicev1.QueryControlResponse, error) {
			return c.Pause(ctx, &sluicev1.PauseRequest{QueryId: qid})
		},
		func() (*sluicev1.QueryControlResponse, error) {
			return c.Resume(ctx, &sluicev1.ResumeRequest{QueryId: qid})
		},
		func() (*sluicev1.QueryControlResponse, error) {
			return c.Terminate(ctx, &sluicev1.TerminateRequest{QueryId: qid})
		},
	} {
		r, err := call()
		if err != nil {
			t.Fatal(err)
		}
		t.Log(r.GetMessage())
	}
	if _, err := c.Terminate(ctx, &sluicev1.TerminateRequest{QueryId: qid}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Terminate twice: %v", err)
	}
	if _, err := c.Pause(ctx, &sluicev1.PauseRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Pause without a query: %v", err)
	}

	// PushQuery with a row limit, and a statement that is not a push query.
	call, err := c.PushQuery(ctx, &sluicev1.PushQueryRequest{Sql: `SELECT id FROM s EMIT CHANGES;`, Limit: 2,
		Session: &sluicev1.Session{Properties: map[string]string{"auto.offset.reset": "earliest"}}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for {
		m, err := call.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch p := m.GetPayload().(type) {
		case *sluicev1.PushQueryResponse_Header:
			kinds = append(kinds, "header")
		case *sluicev1.PushQueryResponse_Row:
			kinds = append(kinds, "row")
		case *sluicev1.PushQueryResponse_End:
			kinds = append(kinds, p.End.GetReason().String())
		}
	}
	if got := strings.Join(kinds, " "); got != "header row row END_REASON_LIMIT_REACHED" {
		t.Errorf("PushQuery limit 2: %s", got)
	}
	call, err = c.PushQuery(ctx, &sluicev1.PushQueryRequest{Sql: `SHOW STREAMS;`})
	if err == nil {
		_, err = call.Recv()
	}
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "PushQuery runs one push query") {
		t.Errorf("PushQuery SHOW STREAMS: %v", err)
	}
}

// TestUnimplementedCalls: a call the engine does not implement is answered
// UNIMPLEMENTED.
func TestUnimplementedCalls(t *testing.T) {
	_, conn, _ := start(t, &fakeEngine{exec: func(context.Context, *api.Session, string) ([]api.Result, error) {
		return nil, errors.New("no")
	}})
	c := sluicev1.NewSluiceClient(conn)
	ctx := context.Background()
	if _, err := c.PullQuery(ctx, &sluicev1.PullQueryRequest{Sql: "SELECT * FROM s;"}); status.Code(err) != codes.Unimplemented {
		t.Errorf("PullQuery: %v", err)
	}
	if _, err := c.Terminate(ctx, &sluicev1.TerminateRequest{QueryId: "Q"}); status.Code(err) != codes.Unimplemented {
		t.Errorf("Terminate: %v", err)
	}
}

// TestInsertJSONShapes: a JSON row's objects become a MAP or a STRUCT as
// its column says, and BYTES are read as base64, as over REST.
func TestInsertJSONShapes(t *testing.T) {
	w := newWorld(t, Options{})
	c := w.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w.exec(t, `CREATE STREAM j (id VARCHAR KEY, m MAP<STRING, INT>, s STRUCT<a INT, b VARCHAR>, b BYTES) WITH (KAFKA_TOPIC='j', VALUE_FORMAT='JSON', PARTITIONS=1);`)
	if _, err := c.Insert(ctx, &sluicev1.InsertRequest{Target: "J", Rows: []*sluicev1.InsertRow{
		{Json: `{"ID": "x", "M": {"k": 1}, "S": {"a": 2, "B": "two"}, "B": "aGk="}`},
	}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Insert(ctx, &sluicev1.InsertRequest{Target: "J", Rows: []*sluicev1.InsertRow{{Json: `{"ID": "y", "M": [1]}`}}})
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "value for column M: a JSON array cannot be a MAP<STRING, INTEGER>") {
		t.Errorf("Insert of an array into a map: %v", err)
	}
	if err := w.eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pull, err := c.PullQuery(ctx, &sluicev1.PullQueryRequest{Sql: `SELECT m['k'] AS k, s->b AS b, b AS raw FROM j;`})
	if err != nil {
		t.Fatal(err)
	}
	if rows := pull.GetRows(); len(rows) != 1 || rows[0].GetValues()[0].GetIntValue() != 1 ||
		rows[0].GetValues()[1].GetStringValue() != "two" || string(rows[0].GetValues()[2].GetBytesValue()) != "hi" {
		t.Errorf("rows = %v", rows)
	}
}
