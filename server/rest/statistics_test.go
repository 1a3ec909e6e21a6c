package rest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sql/sluice/kafka"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
	"github.com/sluice-sql/sluice/server"
)

// TestDescribeExtendedStatistics checks that DESCRIBE EXTENDED's entity
// carries each query's runtime figures, as the engine prints them.
func TestDescribeExtendedStatistics(t *testing.T) {
	e := newEnv(t)
	e.ksql(t, ordersDDL, nil)
	ents := e.ksql(t, "CREATE STREAM big AS SELECT id, item, amount FROM orders WHERE amount > 10;", map[string]any{"auto.offset.reset": "earliest"})
	qid, _ := ents[0]["commandStatus"].(map[string]any)["queryId"].(string)
	desc := e.ksql(t, "DESCRIBE orders EXTENDED;", nil)[0]["sourceDescription"].(map[string]any)
	st, _ := desc["statistics"].(string)
	if qid == "" || !strings.HasPrefix(st, qid+": total-messages: ") || !strings.Contains(st, "  filtered-messages: 0") || !strings.Contains(st, "  dropped-null-messages: 0") {
		t.Errorf("DESCRIBE EXTENDED statistics of %s = %q", qid, st)
	}
}

// figures are a query's counts, as REST's sluiceStatistics and gRPC's
// QueryDescription give them.
type figures struct {
	in, out, filtered, errors, late, nullsDropped int64
}

func (f figures) String() string {
	return fmt.Sprintf("in %d out %d filtered %d errors %d late %d nulls %d", f.in, f.out, f.filtered, f.errors, f.late, f.nullsDropped)
}

func grpcFigures(q *sluicev1.QueryDescription) figures {
	return figures{q.GetRecordsIn(), q.GetRecordsOut(), q.GetFiltered(), q.GetErrors(), q.GetLate(), q.GetNullsDropped()}
}

func restFigures(t *testing.T, s any) figures {
	t.Helper()
	m, ok := s.(map[string]any)
	if !ok {
		t.Fatalf("sluiceStatistics = %v, want an object", s)
	}
	n := func(k string) int64 {
		v, ok := m[k].(float64)
		if !ok {
			t.Fatalf("sluiceStatistics.%s = %v, want a number: %v", k, m[k], m)
		}
		return int64(v)
	}
	return figures{n("recordsIn"), n("recordsOut"), n("filtered"), n("errors"), n("late"), n("nullsDropped")}
}

// counts is a RuntimeStats line up to its lag: the counts only.
func counts(line string) string {
	c, _, _ := strings.Cut(line, "  lag:")
	c, _, _ = strings.Cut(c, "  last-message:")
	return c
}

// grpcEntities runs sql over the gRPC API and returns the entities it
// answers, one a statement.
func grpcEntities(t *testing.T, c sluicev1.SluiceClient, sql string) []*sluicev1.Entity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := c.Execute(ctx, &sluicev1.ExecuteRequest{Sql: sql})
	if err != nil {
		t.Fatal(err)
	}
	var out []*sluicev1.Entity
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("gRPC Execute %q: %v", sql, err)
		}
		if en := m.GetEntity(); en != nil {
			out = append(out, en)
		}
	}
}

// TestStatisticsMatchGRPC runs a persistent query over records it keeps,
// filters, fails on and drops, and checks that SHOW QUERIES EXTENDED and
// DESCRIBE ... EXTENDED over REST give the figures the gRPC API gives for
// the same engine.
func TestStatisticsMatchGRPC(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	ents := e.ksql(t, "CREATE STREAM big AS SELECT id, item, amount FROM orders WHERE amount > 10;", map[string]any{"auto.offset.reset": "earliest"})
	qid, _ := ents[0]["commandStatus"].(map[string]any)["queryId"].(string)
	if qid == "" {
		t.Fatalf("CSAS answered %v", ents)
	}
	// A record that is not JSON, and one with no value.
	ctx := context.Background()
	p, err := e.client.NewProducer(kafka.ProducerOptions{ClientID: "rest-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Produce(ctx, []*kafka.Record{
		{Topic: "orders", Key: []byte("bad"), Value: []byte("{not json"), Timestamp: time.Now()},
		{Topic: "orders", Key: []byte("gone"), Timestamp: time.Now()},
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// EXPLAIN: ksqlDB's queryDescription, the processing topology in
	// "topology".
	ex := e.ksql(t, "EXPLAIN "+qid+";", nil)
	if len(ex) != 1 || ex[0]["@type"] != "queryDescription" {
		t.Fatalf("EXPLAIN %s = %v", qid, ex)
	}
	qd := ex[0]["queryDescription"].(map[string]any)
	if topo, _ := qd["topology"].(string); !strings.HasPrefix(topo, "Sub-topology: 0\n  Source: orders (stream ORDERS") ||
		!strings.Contains(topo, "\n  Sink: BIG (sink, partitions: ") || strings.Contains(qd["executionPlan"].(string), "Sub-topology") {
		t.Errorf("EXPLAIN %s: topology %q, executionPlan %q", qid, qd["topology"], qd["executionPlan"])
	}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(e.eng, server.Options{Version: "test"})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := sluicev1.NewSluiceClient(conn)

	// SHOW QUERIES EXTENDED: ksqlDB's query_descriptions, each with the
	// query's figures.
	overREST := e.ksql(t, "SHOW QUERIES EXTENDED;", nil)
	if len(overREST) != 1 || overREST[0]["@type"] != "query_descriptions" {
		t.Fatalf("SHOW QUERIES EXTENDED = %v", overREST)
	}
	restQueries := map[string]map[string]any{}
	var restIDs []string
	for _, d := range overREST[0]["queryDescriptions"].([]any) {
		d := d.(map[string]any)
		id := d["id"].(string)
		restQueries[id] = d
		restIDs = append(restIDs, id)
	}
	overGRPC := grpcEntities(t, c, "SHOW QUERIES EXTENDED;")
	if len(overGRPC) != 1 || overGRPC[0].GetQueries() == nil {
		t.Fatalf("gRPC SHOW QUERIES EXTENDED = %v", overGRPC)
	}
	var grpcIDs []string
	for _, q := range overGRPC[0].GetQueries().GetQueries() {
		grpcIDs = append(grpcIDs, q.GetId())
		d := restQueries[q.GetId()]
		if d == nil {
			continue
		}
		got, want := restFigures(t, d["sluiceStatistics"]), grpcFigures(q)
		if got != want {
			t.Errorf("%s: REST figures %v, gRPC %v", q.GetId(), got, want)
		}
		if st, _ := d["statistics"].(string); !strings.HasPrefix(st, q.GetId()+": total-messages: ") || counts(st) != counts(runtimeStats(q)) {
			t.Errorf("%s: REST statistics %q, gRPC figures %v", q.GetId(), st, want)
		}
		if d["statementText"] != q.GetSql() || d["queryType"] != "PERSISTENT" || d["state"] != q.GetState() {
			t.Errorf("%s: REST description %v, gRPC %v", q.GetId(), d, q)
		}
		if plan, _ := d["executionPlan"].(string); !strings.Contains(plan, "Execution plan\n") || !strings.Contains(d["topology"].(string), "Sub-topology: 0\n") {
			t.Errorf("%s: executionPlan %q, topology %q", q.GetId(), plan, d["topology"])
		}
	}
	if !slices.Equal(restIDs, grpcIDs) || !slices.Contains(restIDs, qid) {
		t.Fatalf("SHOW QUERIES EXTENDED lists %v over REST, %v over gRPC; want %s among them", restIDs, grpcIDs, qid)
	}
	if f := restFigures(t, restQueries[qid]["sluiceStatistics"]); f.in == 0 || f.out == 0 || f.filtered == 0 || f.errors == 0 || f.nullsDropped == 0 {
		t.Errorf("%s: figures %v; want records in, out, filtered, failed and dropped for the test to mean something", qid, f)
	}

	// DESCRIBE ... EXTENDED of the query's source (a reader) and sink (a
	// writer).
	for _, name := range []string{"ORDERS", "BIG"} {
		overREST := e.ksql(t, "DESCRIBE "+name+" EXTENDED;", nil)
		desc := overREST[0]["sourceDescription"].(map[string]any)
		overGRPC := grpcEntities(t, c, "DESCRIBE "+name+" EXTENDED;")
		if len(overGRPC) != 1 || overGRPC[0].GetSource() == nil {
			t.Fatalf("gRPC DESCRIBE %s EXTENDED = %v", name, overGRPC)
		}
		detail := overGRPC[0].GetSource()
		ids := func(key string) []string {
			var out []string
			for _, q := range desc[key].([]any) {
				out = append(out, q.(map[string]any)["id"].(string))
			}
			return out
		}
		grpcIDs := func(qs []*sluicev1.QueryDescription) []string {
			var out []string
			for _, q := range qs {
				out = append(out, q.GetId())
			}
			return out
		}
		if got, want := ids("writeQueries"), grpcIDs(detail.GetWriters()); !slices.Equal(got, want) {
			t.Errorf("%s: writeQueries %v, gRPC writers %v", name, got, want)
		}
		if got, want := ids("readQueries"), grpcIDs(detail.GetReaders()); !slices.Equal(got, want) {
			t.Errorf("%s: readQueries %v, gRPC readers %v", name, got, want)
		}
		var want []string
		for _, q := range append(detail.GetWriters(), detail.GetReaders()...) {
			if q.GetRunning() {
				want = append(want, counts(runtimeStats(q)))
			}
		}
		var got []string
		for line := range strings.SplitSeq(desc["statistics"].(string), "\n") {
			got = append(got, counts(line))
		}
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: statistics\n%s\nthe gRPC figures say\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if es, _ := desc["errorStats"].(string); !strings.Contains(es, qid+": failed-messages: ") {
			t.Errorf("%s: errorStats %q", name, es)
		}
	}
}

// runtimeStats is the counts part of render.RuntimeStats's line for q,
// spelled out so that the test does not share the code it checks.
func runtimeStats(q *sluicev1.QueryDescription) string {
	return fmt.Sprintf("%s: total-messages: %d  messages-out: %d  filtered-messages: %d  failed-messages: %d  late-messages: %d  dropped-null-messages: %d",
		q.GetId(), q.GetRecordsIn(), q.GetRecordsOut(), q.GetFiltered(), q.GetErrors(), q.GetLate(), q.GetNullsDropped())
}
