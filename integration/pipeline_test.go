package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/oracle"
	"github.com/sluice-sql/sluice/kafka"
)

// pipeline is an engine on the real broker running three persistent
// queries over keyed input on 4-partition topics, a seeded driver feeding
// them, and an oracle computing from the same input what they must
// output (package internal/oracle):
//
//	orders (stream, key CUST) ──WHERE AMOUNT >= 50──────────────▶ BIG_*
//	       ├──WINDOW TUMBLING (SIZE 10 SECONDS) COUNT(*) BY CUST─▶ COUNTS_*
//	       └──JOIN customers (table, key ID) ON CUST = ID───────▶ ENRICHED_*
type pipeline struct {
	t   *testing.T
	ctx context.Context
	tag string // in every name the pipeline creates
	cl  kafka.Client
	drv kafka.Client // the driver's client (franz: it waits out outages)
	eng *engine.Engine
	// servers, when set, are the server processes the pipeline runs on
	// instead of eng.
	servers *servers
	sess    *engine.Session
	// engCfg opens the engine again on the same data (restartEngine).
	engCfg engine.Config

	orders, customers   string // input topics
	big, counts, joined string // sink names

	seed uint64

	mu  sync.Mutex
	src *oracle.Driver // the orders and the oracle
}

const (
	partitions   = 4
	customerKeys = 64 // keys of orders; customers has rows for 3/4 of them
	windowMs     = 10_000
	stepMs       = 7     // event time per order
	jitterMs     = 3_000 // out of order by up to this (grace is ksqlDB's default, 24 h)
	graceMs      = 24 * 60 * 60 * 1000
)

// driverSeed is SLUICE_TEST_SEED or a random seed; either way it is logged.
func driverSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("SLUICE_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SLUICE_TEST_SEED=%q: %v", s, err)
		}
		return v
	}
	return rand.Uint64()
}

// driverRecords is SLUICE_TEST_RECORDS or def.
func driverRecords(t *testing.T, def int) int {
	t.Helper()
	if s := os.Getenv("SLUICE_TEST_RECORDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("SLUICE_TEST_RECORDS=%q: want a record count", s)
		}
		return v
	}
	return def
}

// newPipeline creates the topics, opens an engine with client cl and
// starts the queries. scenario names the test in topic names; settings
// are SET statements run before the queries are created.
func newPipeline(t *testing.T, a adapter, brokers []string, scenario string, settings ...string) *pipeline {
	t.Helper()
	p := newPipelineState(t, a, brokers, scenario)
	p.engCfg = engine.Config{
		Kafka: p.cl, DataDir: filepath.Join(t.TempDir(), "data"),
		ServiceID: p.serviceID(), Logger: testLogger(t),
	}
	eng, err := engine.Open(p.ctx, p.engCfg)
	if err != nil {
		t.Fatal(err)
	}
	p.eng = eng
	t.Cleanup(func() {
		if err := p.eng.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	p.setup(settings...)
	return p
}

// pipelines counts the pipelines this test binary made.
var pipelines atomic.Int32

// newPipelineState returns a pipeline with its clients and its oracle,
// and no engine yet.
func newPipelineState(t *testing.T, a adapter, brokers []string, scenario string) *pipeline {
	t.Helper()
	tag := scenario + "_" + a.name + "_" + runID
	if n := pipelines.Add(1); n > 1 {
		// A test run again (-count) gets names of its own: the topics
		// the previous run deleted may still be on their way out.
		tag += "_" + strconv.Itoa(int(n))
	}
	seed := driverSeed(t)
	t.Logf("driver seed %d (SLUICE_TEST_SEED=%d replays it)", seed, seed)
	p := &pipeline{
		t: t, ctx: context.Background(), tag: tag,
		cl:        newClient(t, a, brokers),
		drv:       newClient(t, adapters[0], brokers),
		sess:      engine.NewSession(),
		orders:    "orders_" + tag,
		customers: "customers_" + tag,
		big:       "big_" + tag,
		counts:    "counts_" + tag,
		joined:    "enriched_" + tag,
		seed:      seed,
	}
	p.src = oracle.New(oracle.Config{
		Orders: p.orders, Customers: p.customers, Partitions: partitions, Keys: customerKeys,
		WindowMs: windowMs, GraceMs: graceMs, StepMs: stepMs, JitterMs: jitterMs,
		// Ten minutes ago, so that the records are neither older than the
		// topics' retention (the broker would delete them) nor too far in
		// the future for log.message.timestamp.after.max.ms.
		Base:      time.Now().Add(-10*time.Minute).UnixMilli() / windowMs * windowMs,
		MinAmount: 50,
	}, seed)
	t.Cleanup(p.cleanup)
	return p
}

// serviceID is the service id of the pipeline's engine or servers.
func (p *pipeline) serviceID() string { return "it_" + p.tag }

// setup creates the input streams and tables, fills the customers table
// and starts the three queries; settings are SET statements run before
// the queries are created.
func (p *pipeline) setup(settings ...string) {
	t := p.t
	t.Helper()
	ctx := p.ctx
	p.exec(`SET 'auto.offset.reset'='earliest';`)
	for _, st := range settings {
		p.exec(st)
	}
	p.exec(fmt.Sprintf(`CREATE STREAM %s (cust VARCHAR KEY, seq BIGINT, amount BIGINT)
  WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d);`, p.orders, p.orders, partitions))
	p.exec(fmt.Sprintf(`CREATE TABLE %s (id VARCHAR PRIMARY KEY, name VARCHAR)
  WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d);`, p.customers, p.customers, partitions))

	// The table first, so that every order meets its customer whatever
	// the order the join reads its two inputs in.
	p.produceRecords(ctx, p.src.Customers())

	p.exec(fmt.Sprintf(`CREATE STREAM %s AS SELECT cust, seq, amount FROM %s WHERE amount >= 50;`, p.big, p.orders))
	p.exec(fmt.Sprintf(`CREATE TABLE %s AS SELECT cust, COUNT(*) AS n FROM %s
  WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY cust;`, p.counts, p.orders))
	p.exec(fmt.Sprintf(`CREATE STREAM %s AS SELECT o.cust, seq, amount, name FROM %s o
  JOIN %s c ON o.cust = c.id;`, p.joined, p.orders, p.customers))
	p.flush(2 * time.Minute)
}

func (p *pipeline) exec(sql string) []engine.Result {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	if p.servers != nil {
		p.servers.exec(ctx, p.sess, sql)
		return nil
	}
	res, err := p.eng.Execute(ctx, p.sess, sql)
	if err != nil {
		p.t.Fatalf("%s: %v", sql, err)
	}
	return res
}

func (p *pipeline) produceRecords(ctx context.Context, recs []*kafka.Record) {
	p.t.Helper()
	pr, err := p.drv.NewProducer(kafka.ProducerOptions{ClientID: "sluice-it-driver"})
	if err != nil {
		p.t.Fatal(err)
	}
	defer pr.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := pr.Produce(ctx, recs); err != nil {
		p.t.Fatalf("driver: %v", err)
	}
}

// nextOrders returns the next n orders of the seeded sequence and adds
// them to the oracle.
func (p *pipeline) nextOrders(n int) []*kafka.Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.src.Next(n)
}

// drive produces n orders in batches of batch from a goroutine; after
// each acknowledged batch it sends the count of orders produced so far on
// the returned channel, which it closes at the end. A fault injected
// meanwhile hits the driver as well as the engine: the driver's produce
// waits out an outage.
func (p *pipeline) drive(n, batch int) <-chan int {
	ch := make(chan int, n/batch+1)
	go func() {
		defer close(ch)
		pr, err := p.drv.NewProducer(kafka.ProducerOptions{ClientID: "sluice-it-driver"})
		if err != nil {
			p.t.Errorf("driver: %v", err)
			return
		}
		defer pr.Close()
		for done := 0; done < n; {
			k := min(batch, n-done)
			recs := p.nextOrders(k)
			ctx, cancel := context.WithTimeout(p.ctx, 3*time.Minute)
			// A broker going down can fail a batch before it is sent (no
			// producer id yet): send it again. A batch that was partly
			// written then repeats records, which check reports.
			for attempt := 1; ; attempt++ {
				err = pr.Produce(ctx, recs)
				if err == nil || !kafka.Temporary(err) || ctx.Err() != nil {
					break
				}
				if attempt == 1 {
					p.t.Logf("driver: %v; producing the batch again", err)
				}
				pause(ctx, 100*time.Millisecond)
			}
			cancel()
			if err != nil {
				p.t.Errorf("driver: %v", err)
				return
			}
			done += k
			ch <- done
		}
	}()
	return ch
}

// pause waits for d or until ctx is done; the driver's retry backoff.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// waitProduced reads progress from ch until at least n orders are
// produced (or the driver ended).
func waitProduced(ch <-chan int, n int) {
	for done := range ch {
		if done >= n {
			return
		}
	}
}

func drain(ch <-chan int) {
	for range ch {
	}
}

func (p *pipeline) flush(timeout time.Duration) {
	p.t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	flush := p.eng.Flush
	if p.servers != nil {
		flush = p.servers.flush
	}
	if err := flush(ctx); err != nil {
		p.t.Fatalf("flush: %v (queries: %s)", err, p.queryStates())
	}
	p.t.Logf("timing: flush took %s", time.Since(start).Round(time.Millisecond))
}

// queryStates is SHOW QUERIES' query id and status columns.
func (p *pipeline) queryStates() string {
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	var tb *table
	if p.servers != nil {
		var err error
		if tb, err = p.servers.table(ctx, "SHOW QUERIES;"); err != nil {
			return err.Error()
		}
	} else {
		res, err := p.eng.Execute(ctx, p.sess, "SHOW QUERIES;")
		if err != nil {
			return err.Error()
		}
		tb = resultTable(res[0])
	}
	id, status := -1, -1
	for i, c := range tb.Columns {
		switch strings.ToLower(c) {
		case "query id":
			id = i
		case "status":
			status = i
		}
	}
	var out []string
	for _, row := range tb.Rows {
		if id < 0 || status < 0 {
			out = append(out, strings.Join(row, " | "))
			continue
		}
		out = append(out, row[id]+"="+row[status])
	}
	return strings.Join(out, ", ")
}

// checkRunningN fails unless SHOW QUERIES shows n queries, every one
// RUNNING.
func (p *pipeline) checkRunningN(n int) {
	p.t.Helper()
	states := p.queryStates()
	for _, s := range strings.Split(states, ", ") {
		if !strings.HasSuffix(s, "=RUNNING") {
			p.t.Fatalf("a query is not RUNNING: %s", states)
		}
	}
	if got := len(strings.Split(states, ", ")); got != n {
		p.t.Fatalf("%d queries, want %d: %s", got, n, states)
	}
}

// check flushes the engine, reads the three outputs and compares them
// with the oracle: nothing may be missing or wrong; duplicates and
// over-counts are logged and must not exceed maxDup. With maxDup 0 a
// count update seen twice is a duplicate too (exactly-once).
func (p *pipeline) check(maxDup int) {
	p.t.Helper()
	p.checkDup(maxDup, maxDup == 0)
}

// checkDup is check, exactlyOnce saying whether a repeated count update
// is a duplicate.
func (p *pipeline) checkDup(maxDup int, exactlyOnce bool) {
	p.t.Helper()
	p.flush(5 * time.Minute)
	p.checkRunningN(3)
	start := time.Now()
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Minute)
	defer cancel()

	// The input holds what the driver produced: a loss below is Sluice's.
	bounds, err := p.cl.ListOffsets(ctx, p.orders)
	if err != nil {
		p.t.Fatal(err)
	}
	in := int64(0)
	for _, b := range bounds {
		in += b.End - b.Start
	}
	switch {
	case in < int64(p.produced()):
		p.t.Errorf("%s holds %d records (offsets %+v); the driver produced %d", p.orders, in, bounds, p.produced())
	case in > int64(p.produced()):
		p.t.Logf("%s holds %d records; the driver produced %d (it sent a batch again)", p.orders, in, p.produced())
	}

	out := oracle.Outputs{
		Filter: readAll(p.t, ctx, p.cl, p.sinkTopic(p.big)),
		Join:   readAll(p.t, ctx, p.cl, p.sinkTopic(p.joined)),
		Count:  readAll(p.t, ctx, p.cl, p.sinkTopic(p.counts)),
	}
	p.t.Logf("timing: reading the outputs took %s", time.Since(start).Round(time.Millisecond))

	p.mu.Lock()
	defer p.mu.Unlock()
	filter, join, counts := p.src.Want()
	p.t.Logf("oracle: %d orders; %d filter rows, %d join rows, %d windows", p.src.Orders(), total(filter), total(join), len(counts))
	p.t.Logf("read: %d filter rows, %d join rows, %d count updates", len(out.Filter), len(out.Join), len(out.Count))
	// Duplicated rows and over-counts are allowed up to maxDup; anything
	// missing or wrong fails.
	res := p.src.Check(out, exactlyOnce)
	p.t.Logf("outputs: %s", res)
	p.report(res)
	if res.Duplicated > maxDup {
		p.t.Errorf("%d duplicates and over-counts, more than the %d allowed (seed %d)", res.Duplicated, maxDup, p.seed)
	}
}

// report fails the test on what res found missing or wrong.
func (p *pipeline) report(res oracle.Tally) {
	p.t.Helper()
	if res.Missing == 0 && res.Wrong == 0 {
		return
	}
	for _, n := range res.Notes {
		p.t.Error(n)
	}
	p.t.Errorf("%d missing, %d wrong (seed %d)", res.Missing, res.Wrong, p.seed)
}

// compareRows compares a multiset of output rows with the oracle's; it
// returns the duplicates, having failed the test on anything missing or
// unexpected.
func (p *pipeline) compareRows(what string, want, got map[string]int) int {
	p.t.Helper()
	res := oracle.CompareRows(what, want, got)
	p.t.Logf("%s: %d rows, %s", what, total(got), res)
	p.report(res)
	return res.Duplicated
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// produced is how many orders the driver made.
func (p *pipeline) produced() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.src.Orders()
}

func (p *pipeline) decode(r *kafka.Record, v any) {
	p.t.Helper()
	if err := json.Unmarshal(r.Value, v); err != nil {
		p.t.Fatalf("%s[%d]@%d: value %q: %v", r.Topic, r.Partition, r.Offset, r.Value, err)
	}
}

// sinkTopic is the topic of a query's sink.
func (p *pipeline) sinkTopic(name string) string {
	p.t.Helper()
	if p.servers != nil {
		return p.servers.sinkTopic(p.t, strings.ToUpper(name))
	}
	src, err := p.eng.DescribeSource(p.ctx, strings.ToUpper(name), false)
	if err != nil {
		p.t.Fatal(err)
	}
	return src.Source.Topic
}

// cleanup deletes every topic whose name holds the pipeline's tag: its
// inputs, outputs, command and processing logs, changelogs.
func (p *pipeline) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topics, err := p.drv.ListTopics(ctx)
	if err != nil {
		p.t.Logf("cleanup: %v", err)
		return
	}
	for _, ti := range topics {
		if strings.Contains(strings.ToLower(ti.Name), p.tag) {
			_ = p.drv.DeleteTopic(ctx, ti.Name)
		}
	}
}

// TestPipeline runs the pipeline on each adapter without faults: the
// outputs must equal the oracle, with no duplicates.
func TestPipeline(t *testing.T) {
	brokers := requireKafka(t)
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			start := time.Now()
			p := newPipeline(t, a, brokers, "plain")
			n := driverRecords(t, 4000)
			drain(p.drive(n, 250))
			p.check(0)
			t.Logf("timing: %s took %s", t.Name(), time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestPipelineExactlyOnce runs the pipeline's queries under
// exactly_once_v2 on the franz-go adapter: the outputs, read with
// read_committed, must equal the oracle with no duplicate, and the
// queries must have restarted from their transactions' positions after
// a restart of the engine in the middle of the stream.
func TestPipelineExactlyOnce(t *testing.T) {
	brokers := requireKafka(t)
	a := adapters[0]
	if a.name != "franz" {
		t.Fatalf("the first adapter is %s; exactly-once needs franz", a.name)
	}
	start := time.Now()
	p := newPipeline(t, a, brokers, "eos", `SET 'processing.guarantee'='exactly_once_v2';`)
	n := driverRecords(t, 4000)
	ch := p.drive(n, 250)
	waitProduced(ch, n/2)
	p.restartEngine()
	drain(ch)
	p.check(0)
	for _, row := range resultTable(p.exec("SHOW QUERIES EXTENDED;")[0]).Rows {
		if !slices.Contains(row, "exactly_once_v2") {
			t.Errorf("query %s does not run exactly_once_v2: %q", row[0], row)
		}
	}
	t.Logf("timing: %s took %s", t.Name(), time.Since(start).Round(time.Millisecond))
}

// restartEngine closes the engine and opens it again on the same data
// directory: its queries resume where they committed.
func (p *pipeline) restartEngine() {
	p.t.Helper()
	start := time.Now()
	if err := p.eng.Close(); err != nil {
		p.t.Fatalf("close engine: %v", err)
	}
	closed := time.Now()
	eng, err := engine.Open(p.ctx, p.engCfg)
	if err != nil {
		p.t.Fatalf("open engine again: %v", err)
	}
	p.eng = eng
	p.t.Logf("timing: engine restart took %s (close %s)", time.Since(start).Round(time.Millisecond), closed.Sub(start).Round(time.Millisecond))
}
