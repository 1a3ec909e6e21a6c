package exec

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// The engine-only benchmarks (BenchmarkEngine*) feed in-memory records
// shaped like Nexmark bids straight into a task's decoding, operators and
// sink, without a broker, and report records/s on one goroutine (so per
// core) and allocs/record. Run them with
//
//	go test -run '^$' -bench Engine -count 3 ./exec
//
// BenchmarkEngineStreamTableJoin (join_bench_test.go) is the join's.

// bidSource declares the bids as an unkeyed stream; bidsByBidder as one
// keyed by bidder, as the repartition of a GROUP BY bidder leaves them,
// and bidsByAuction by auction.
const (
	bidSource = `CREATE STREAM bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime BIGINT, extra VARCHAR)
  WITH (KAFKA_TOPIC='bid', VALUE_FORMAT='JSON', PARTITIONS=1);`
	bidsByBidder = `CREATE STREAM bid (bidder BIGINT KEY, auction BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime BIGINT, extra VARCHAR)
  WITH (KAFKA_TOPIC='bid', VALUE_FORMAT='JSON', KEY_FORMAT='KAFKA', PARTITIONS=1);`
	bidsByAuction = `CREATE STREAM bid (auction BIGINT KEY, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime BIGINT, extra VARCHAR)
  WITH (KAFKA_TOPIC='bid', VALUE_FORMAT='JSON', KEY_FORMAT='KAFKA', PARTITIONS=1);`
)

// planQuery plans query (a CREATE ... AS SELECT) over the sources
// created by ddl.
func planQuery(b testing.TB, ddl, query string) *topology.Graph {
	cat := catalog.New()
	stmts, err := parser.Parse(ddl + query)
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.CreateSource:
			spec, err := planner.PlanCreateSource(cat, st, planner.Defaults{})
			if err != nil {
				b.Fatal(err)
			}
			if err := cat.Apply(&catalog.Command{Kind: catalog.CreateSource, Source: spec.Source}); err != nil {
				b.Fatal(err)
			}
		case *ast.CreateAsSelect:
			opts := planner.QueryOptions{
				QueryID: "CSAS_BENCH_1", Sink: st.Name, SinkPos: st.NamePos, SinkProps: st.Props,
				OffsetReset: "earliest", InternalPrefix: "_bench-",
			}
			if st.Kind == ast.Table {
				opts.QueryID, opts.SinkKind = "CTAS_BENCH_1", catalog.Table
			}
			p, err := planner.PlanSelect(cat, st.Query, opts)
			if err != nil {
				b.Fatal(err)
			}
			return p.Graph
		}
	}
	b.Fatal("no query")
	return nil
}

// bidRecords returns n Nexmark-like bids, a millisecond apart, over
// 10,000 bidders and 1,000 auctions; keyed by bidder (8 bytes, big
// endian, as the KAFKA format writes a BIGINT) when keyed.
func bidRecords(n int, keyed bool) []*kafka.Record {
	recs := make([]*kafka.Record, n)
	channels := []string{"Google", "Facebook", "Baidu", "Apple"}
	for i := range recs {
		bidder, auction := int64(1000+(i*7919)%10_000), int64(1000+(i*31)%1_000)
		r := &kafka.Record{Topic: "bid", Offset: int64(i), Timestamp: time.UnixMilli(int64(1_436_918_400_000 + i))}
		r.Value = fmt.Appendf(nil, `{"auction":%d,"bidder":%d,"price":%d,"channel":%q,"url":"https://www.nexmark.com/%s/item.htm?query=1&channel_id=%d","dateTime":%d,"extra":"%s"}`,
			auction, bidder, 100+(i*13)%10_000, channels[i%4], channels[i%4], i%997, r.Timestamp.UnixMilli(), "xxxxxxxxxxxxxxxx")
		if keyed {
			r.Key = []byte{0, 0, 0, 0, 0, 0, byte(bidder >> 8), byte(bidder)}
		}
		recs[i] = r
	}
	return recs
}

// engineTask is an offline task of g over a fresh state store when g
// keeps state, producing into a fake producer.
func engineTask(b testing.TB, g *topology.Graph) *task {
	q := &Query{graph: g, deps: Deps{ProcessingLog: "plog", Now: time.Now, Logger: discardLogger(), StateNamespace: g.QueryID}}
	if len(complete(b, g).Physical.Stores) > 0 {
		q.deps.State = openStore(b, b.TempDir())
	}
	tk := &task{q: q, nKey: len(g.Source.Key), nValue: len(g.Source.Value), tsCol: -1, window: g.Source.Window}
	if _, err := newTaskParts(tk, testStage(b, g, 0)); err != nil {
		b.Fatal(err)
	}
	tk.producer = &discardProducer{}
	tk.mode = newAtLeastOnce(tk)
	return tk
}

// discardProducer acknowledges records, giving them offsets, and keeps
// none.
type discardProducer struct{ next int64 }

func (p *discardProducer) Produce(_ context.Context, recs []*kafka.Record) error {
	for _, r := range recs {
		r.Partition, r.Offset = 0, p.next
		p.next++
	}
	return nil
}

func (p *discardProducer) Close() {}

// report adds the records/s and allocs/record metrics for n records
// handled in d with allocs allocations, and records/cpu-s: per second of
// the CPU time the process used meanwhile (garbage collection included),
// which a machine busy with other work leaves as it is.
func report(b *testing.B, n int, d time.Duration, allocs uint64, cpu time.Duration) {
	b.ReportMetric(float64(n)/d.Seconds(), "records/s")
	b.ReportMetric(float64(n)/cpu.Seconds(), "records/cpu-s")
	b.ReportMetric(float64(allocs)/float64(n), "allocs/record")
}

// cpuTime is the user and system CPU time the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// allocCount is the number of heap allocations so far.
func allocCount() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// measure runs batch over the polls of recs until about b.N records went
// through, and reports the figures.
func measure(b *testing.B, recs []*kafka.Record, poll int, batch func(recs []*kafka.Record)) {
	b.ReportAllocs()
	b.ResetTimer()
	allocs, cpu := allocCount(), cpuTime()
	start := time.Now()
	n := 0
	for n < b.N {
		for from := 0; from < len(recs) && n < b.N; from += poll {
			batch(recs[from:min(from+poll, len(recs))])
			n += min(poll, len(recs)-from)
		}
	}
	d := time.Since(start)
	b.StopTimer()
	report(b, n, d, allocCount()-allocs, cpuTime()-cpu)
}

// BenchmarkEngineDecode decodes the JSON value of bids into source rows,
// 1,000 records a batch.
func BenchmarkEngineDecode(b *testing.B) {
	benchDecode(b, `CREATE STREAM q0 AS SELECT * FROM bid;`)
}

// BenchmarkEngineDecodePruned is BenchmarkEngineDecode for a query that
// reads one of the seven value columns: the decoder skips the others,
// checking them without converting them.
func BenchmarkEngineDecodePruned(b *testing.B) {
	benchDecode(b, `CREATE STREAM q AS SELECT auction FROM bid;`)
}

func benchDecode(b *testing.B, query string) {
	tk := engineTask(b, planQuery(b, bidSource, query))
	measure(b, bidRecords(10_000, false), 1_000, func(recs []*kafka.Record) {
		tk.polled = recs
		tk.decode(recs)
		if tk.in.Len() != len(recs) {
			b.Fatalf("decoded %d of %d records", tk.in.Len(), len(recs))
		}
		clear(tk.arena)
		tk.in.Reset()
	})
}

// decoded returns the task's first operator fed with decoded bids:
// every batch of recs decoded once, before the clock starts.
func decodedBatches(b *testing.B, tk *task, recs []*kafka.Record, poll int) []Batch {
	var out []Batch
	for from := 0; from < len(recs); from += poll {
		var in Batch
		for _, r := range recs[from:min(from+poll, len(recs))] {
			tk.arena = nil
			tk.in.Reset()
			tk.decode([]*kafka.Record{r})
			if tk.in.Len() != 1 {
				b.Fatal("bid not decoded")
			}
			in.Append(tk.in.Row(0), tk.in.Time(0), tk.in.Kind(0))
		}
		out = append(out, in)
	}
	tk.in.Reset()
	return out
}

// benchOperator measures the task's first operator alone on decoded bids.
func benchOperator(b *testing.B, query string) {
	tk := engineTask(b, planQuery(b, bidSource, query))
	const poll = 1_000
	batches := decodedBatches(b, tk, bidRecords(10_000, false), poll)
	ctx := context.Background()
	var emitted int
	discard := emitterFunc(func(_ context.Context, out *Batch) error {
		emitted += out.Len()
		return nil
	})
	k := 0
	measure(b, make([]*kafka.Record, poll*len(batches)), poll, func([]*kafka.Record) {
		if err := tk.ops[0].OnBatch(ctx, 0, &batches[k%len(batches)], discard); err != nil {
			b.Fatal(err)
		}
		k++
	})
	if emitted == 0 {
		b.Fatal("the operator emitted nothing")
	}
}

// BenchmarkEngineFilter is q2's WHERE on decoded bids.
func BenchmarkEngineFilter(b *testing.B) {
	benchOperator(b, `CREATE STREAM q2 AS SELECT auction, price FROM bid WHERE auction % 123 = 0 OR price > 5000;`)
}

// BenchmarkEngineProject is q1's projection, with DOUBLE arithmetic, on
// decoded bids.
func BenchmarkEngineProject(b *testing.B) {
	benchOperator(b, `CREATE STREAM q1 AS SELECT auction, bidder, price * 0.908e0 AS price, dateTime, extra FROM bid;`)
}

// BenchmarkEngineQ0 is q0, the pass-through: decode, project every
// column, encode and build the sink records, 1,000 records a poll.
func BenchmarkEngineQ0(b *testing.B) {
	tk := engineTask(b, planQuery(b, bidSource, `CREATE STREAM q0 AS SELECT * FROM bid;`))
	ctx := context.Background()
	measure(b, bidRecords(10_000, false), 1_000, func(recs []*kafka.Record) {
		if err := tk.process(ctx, recs); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkEngineTumblingCount is q12-like: a count per bidder in
// ten-second tumbling windows, over bids keyed by bidder (10,000 of them),
// with the state's changes produced to its changelog at each commit (and
// written to Pebble about once a second): after every poll of 1,000
// records, as a task committing each poll does, or of 10,000.
// Sparse bids are a millisecond apart, so a bidder has about one bid a
// window and nearly every bid starts a window of its own in the state;
// dense ones come ten a millisecond, about ten a bidder and window. The
// default grace period keeps every window in state for a day of stream
// time; the expiring case's windows of one second of grace leave it as
// the stream goes on.
func BenchmarkEngineTumblingCount(b *testing.B) {
	for _, c := range []struct {
		name       string
		poll, rate int
		grace      string
	}{
		{"sparse/poll=1000", 1_000, 1, ""}, {"dense/poll=1000", 1_000, 10, ""}, {"dense/poll=10000", 10_000, 10, ""},
		{"expiring/poll=1000", 1_000, 1, ", GRACE PERIOD 1 SECOND"},
	} {
		b.Run(c.name, func(b *testing.B) {
			tk := engineTask(b, planQuery(b, bidsByBidder,
				`CREATE TABLE q12 AS SELECT bidder, COUNT(*) AS n FROM bid WINDOW TUMBLING (SIZE 10 SECONDS`+c.grace+`) GROUP BY bidder EMIT CHANGES;`))
			measureStream(b, tk, bidRecords(100_000, true), c.poll, c.rate)
		})
	}
}

// BenchmarkEngineTumblingAggregates is BenchmarkEngineTumblingCount's
// dense case with a SUM, a MAX and an AVG of the price besides the count,
// as q7's tumbling max keeps.
func BenchmarkEngineTumblingAggregates(b *testing.B) {
	tk := engineTask(b, planQuery(b, bidsByBidder,
		`CREATE TABLE q7 AS SELECT bidder, COUNT(*) AS n, SUM(price) AS total, MAX(price) AS top, AVG(price) AS mean
		FROM bid WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY bidder EMIT CHANGES;`))
	measureStream(b, tk, bidRecords(100_000, true), 1_000, 10)
}

// BenchmarkEngineGroupByAggregates is BenchmarkEngineTumblingAggregates
// without the window: a COUNT, a SUM, a MAX and an AVG of the price per
// bidder (10,000 of them), ten bids a millisecond, committed after every
// poll of 1,000.
func BenchmarkEngineGroupByAggregates(b *testing.B) {
	tk := engineTask(b, planQuery(b, bidsByBidder,
		`CREATE TABLE q7g AS SELECT bidder, COUNT(*) AS n, SUM(price) AS total, MAX(price) AS top, AVG(price) AS mean
		FROM bid GROUP BY bidder EMIT CHANGES;`))
	measureStream(b, tk, bidRecords(100_000, true), 1_000, 10)
}

// BenchmarkEngineHoppingCount is Nexmark q5's window: a count per auction
// (1,000 of them) in ten-second windows advancing by two seconds, so that
// each bid goes to five windows, over bids keyed by auction, ten a
// millisecond, committed after every poll of 1,000.
func BenchmarkEngineHoppingCount(b *testing.B) {
	tk := engineTask(b, planQuery(b, bidsByAuction,
		`CREATE TABLE q5 AS SELECT auction, COUNT(*) AS n FROM bid
		WINDOW HOPPING (SIZE 10 SECONDS, ADVANCE BY 2 SECONDS) GROUP BY auction EMIT CHANGES;`))
	recs := bidRecords(100_000, true)
	for i, r := range recs {
		auction := 1000 + (i*31)%1_000
		r.Key = []byte{0, 0, 0, 0, 0, 0, byte(auction >> 8), byte(auction)}
	}
	measureStream(b, tk, recs, 1_000, 10)
}

// measureStream measures tk processing recs, poll records a batch, as a
// stream: offsets and times go on growing across rounds, rate records a
// millisecond.
func measureStream(b *testing.B, tk *task, recs []*kafka.Record, poll, rate int) {
	ctx := context.Background()
	next := int64(0)
	measure(b, recs, poll, func(batch []*kafka.Record) {
		for _, r := range batch {
			r.Offset = next
			r.Timestamp = time.UnixMilli(1_436_918_400_000 + next/int64(rate))
			next++
		}
		if err := tk.process(ctx, batch); err != nil {
			b.Fatal(err)
		}
	})
}
