package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/bench/nexmark"
	"github.com/sluice-sql/sluice/kafka"
)

// latencyQueries are the queries the latency mode measures, its default.
var latencyQueries = []string{"q0", "q7", "q20"}

// latencyConfig is the latency mode's settings.
type latencyConfig struct {
	bootstrap  string
	rate       int64
	load       time.Duration
	warmup     time.Duration
	grace      time.Duration
	partitions int32
	seed       uint64
	xmx        string
	tune       engineMemory
	// cpuprofile is a directory for a CPU profile of Sluice's engine
	// per query, "" for none.
	cpuprofile string
}

// How long a system may take to show its first rows; how long, at least,
// to catch up once the load ends (twice the load's length when longer:
// a system still behind by then fell behind); how often unanswered probes
// are sent again.
const (
	readyTimeout = 5 * time.Minute
	minCatchUp   = time.Minute
	probeResend  = 10 * time.Second
	stopTimeout  = 90 * time.Second
	busyMachine  = 0.9
)

// latencyRow is one line of the latency results, as written to --out.
type latencyRow struct {
	Query  string `json:"query"`
	System string `json:"system"`
	// Rate is the offered rate, events per wall-second; Events how many
	// the load produced, in LoadSeconds, of which those appended in the
	// first WarmupSeconds are not measured.
	Rate          int64   `json:"rate"`
	Events        int64   `json:"events"`
	LoadSeconds   float64 `json:"load_s"`
	WarmupSeconds float64 `json:"warmup_s"`
	GraceMillis   int64   `json:"grace_ms"`
	// ProducedRate is the rate the load reached; LoadSlipMillis how far
	// at worst the producer fell behind its schedule.
	ProducedRate   float64 `json:"produced_rate"`
	LoadSlipMillis int64   `json:"load_slip_ms"`
	// ReadySeconds is how long after its start the system first wrote
	// the rows of the warm-up probes.
	ReadySeconds float64 `json:"ready_s"`
	// Rows is how many output rows were measured; the percentiles and the
	// maximum are their latencies in milliseconds, FirstTenth and
	// LastTenth the median latency of the first and last tenth of them
	// in the order of their inputs.
	Rows       int   `json:"rows"`
	P50        int64 `json:"p50_ms"`
	P99        int64 `json:"p99_ms"`
	Max        int64 `json:"max_ms"`
	FirstTenth int64 `json:"first_tenth_p50_ms"`
	LastTenth  int64 `json:"last_tenth_p50_ms"`
	// EndLag is how long after the load the rows of the probes appended
	// right after it came out, in milliseconds: the backlog the system
	// had when the load ended.
	EndLag int64 `json:"end_lag_ms"`
	KeptUp bool  `json:"kept_up"`
	// LoadCPU is the system's CPU-seconds per wall-second during the load,
	// DriverCPU this driver's (generating and producing the load);
	// MachineBusy the share of the machine's CPU time that went to
	// anything (the system, the broker, this driver, whatever else runs).
	LoadCPU     float64 `json:"load_cpu"`
	DriverCPU   float64 `json:"driver_cpu"`
	MachineBusy float64 `json:"machine_busy"`
	// CaughtUp is false when the system had not caught up CatchUpSeconds
	// after the load: the figures are then those of the rows out by
	// then, and EndLag is -1.
	CaughtUp       bool    `json:"caught_up"`
	CatchUpSeconds float64 `json:"catch_up_timeout_s"`
	// What could not be measured (see tally and missing); Missing is -1
	// where the input does not say (q20).
	Unmatched  int `json:"unmatched"`
	Unclosed   int `json:"unclosed"`
	NotFinal   int `json:"not_final"`
	Duplicates int `json:"duplicates"`
	Missing    int `json:"missing"`
	// Negative counts rows appended before their cause: a closing rule
	// that is wrong for the system.
	Negative int    `json:"negative"`
	Error    string `json:"error,omitempty"`
}

// runLatency measures the latency of queries on systems, one run each.
func runLatency(ctx context.Context, c kafka.Client, lc latencyConfig, queries []nexmark.Query, systems []string, peers map[string]*peer, out string) error {
	for _, q := range queries {
		found := false
		for _, n := range latencyQueries {
			found = found || q.Name == n
		}
		if !found {
			return fmt.Errorf("the latency mode measures %s, not %s", strings.Join(latencyQueries, ", "), q.Name)
		}
	}
	if lc.grace < 0 || lc.grace >= windowMillis*time.Millisecond {
		return fmt.Errorf("--latency-grace %s: must be at least 0 and less than q7's %d ms window", lc.grace, windowMillis)
	}
	if lc.warmup >= lc.load {
		return fmt.Errorf("--latency-warmup %s leaves nothing of --latency-seconds %s to measure", lc.warmup, lc.load)
	}
	// A throughput run after this one must load its events again.
	if err := c.DeleteTopic(ctx, markerTopic); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
		return err
	}
	var rows []latencyRow
	fmt.Printf("%-5s %-8s %9s %8s %8s %8s %10s %8s  %s\n", "query", "system", "rows", "p50 ms", "p99 ms", "max ms", "end lag ms", "cpu", "kept up")
	for _, q := range queries {
		for _, s := range systems {
			r := latencyRun(ctx, c, lc, s, peers[s], q)
			rows = append(rows, r)
			printLatencyRow(os.Stdout, r)
		}
	}
	var table strings.Builder
	printLatencyTable(&table, rows, lc)
	fmt.Printf("\n%s", table.String())
	if out == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(rows, "", "  ")
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(strings.TrimSuffix(out, filepath.Ext(out))+".md", []byte(table.String()), 0o644)
}

// latencyRun runs one query on one system under the paced load and
// measures its rows.
func latencyRun(ctx context.Context, c kafka.Client, lc latencyConfig, system string, p *peer, q nexmark.Query) latencyRow {
	r := latencyRow{Query: q.Name, System: system, Rate: lc.rate, LoadSeconds: lc.load.Seconds(), WarmupSeconds: lc.warmup.Seconds(), GraceMillis: lc.grace.Milliseconds(), Missing: -1}
	fail := func(err error) latencyRow {
		r.Error = err.Error()
		fmt.Fprintf(os.Stderr, "nexmark: %s on %s: %v\n", q.Name, system, err)
		return r
	}
	if p != nil && p.err != nil {
		return fail(p.err)
	}
	output := outputTopic(system, q)
	if err := resetLatencyTopics(ctx, c, lc.partitions, output); err != nil {
		return fail(err)
	}
	probes, err := probeAuctions(lc.partitions)
	if err != nil {
		return fail(err)
	}
	prod, err := c.NewProducer(kafka.ProducerOptions{ClientID: "nexmark-latency"})
	if err != nil {
		return fail(err)
	}
	defer prod.Close()
	ch, err := startLatencyChild(ctx, c, lc, system, p, q, output)
	if err != nil {
		return fail(err)
	}
	defer ch.cleanup()
	jsonKeys := p != nil && p.jsonWindowKeys
	parse := func(rec *kafka.Record) (outRow, error) { return parseOutput(q.Name, jsonKeys, rec) }

	// Ready: the system wrote the rows of probes at an event time before
	// the load's.
	warm := windowStart(time.Now().UnixMilli() - 60_000)
	rd, err := newOutputReader(c, output, lc.partitions, parse)
	if err != nil {
		return fail(err)
	}
	err = awaitProbes(ctx, prod, rd, ch, q.Name, probes, warm, lc.grace.Milliseconds(), readyTimeout)
	rd.close()
	if err != nil {
		return fail(fmt.Errorf("not ready: %w", err))
	}
	r.ReadySeconds = time.Since(ch.started).Seconds()
	fmt.Fprintf(os.Stderr, "nexmark: %s on %s ready after %.1f s; %d events at %d/s\n", q.Name, system, r.ReadySeconds, int64(lc.load.Seconds()*float64(lc.rate)), lc.rate)

	// The load, with event time following the wall clock. It starts
	// halfway through a window, so that q7's windows close at the same
	// points of every run's load.
	start := time.UnixMilli(windowStart(time.Now().UnixMilli()) + windowMillis/2)
	if start.Before(time.Now()) {
		start = start.Add(windowMillis * time.Millisecond)
	}
	time.Sleep(time.Until(start))
	cfg := nexmark.Config{Seed: lc.seed, EventsPerSecond: lc.rate, BaseTime: start.UnixMilli(), Pad: true}
	events := int64(lc.load.Seconds() * float64(lc.rate))
	cpu0, _ := processCPU(ch.cmd.Process.Pid)
	self0, _ := processCPU(os.Getpid())
	busy0, total0 := machineCPU()
	slip, err := paceLoad(ctx, prod, cfg, events, start)
	loadEnd := time.Now()
	cpu1, _ := processCPU(ch.cmd.Process.Pid)
	self1, _ := processCPU(os.Getpid())
	busy1, total1 := machineCPU()
	if err != nil {
		return fail(fmt.Errorf("load: %w", err))
	}
	r.Events, r.LoadSlipMillis = events, slip.Milliseconds()
	r.ProducedRate = float64(events) / loadEnd.Sub(start).Seconds()
	r.LoadCPU = (cpu1 - cpu0).Seconds() / loadEnd.Sub(start).Seconds()
	r.DriverCPU = (self1 - self0).Seconds() / loadEnd.Sub(start).Seconds()
	if total1 > total0 {
		r.MachineBusy = float64(busy1-busy0) / float64(total1-total0)
	}

	// Drained: the rows of probes appended right after the load are out.
	end := windowStart(cfg.Time(events-1)) + 2*windowMillis
	rd, err = newOutputReader(c, output, lc.partitions, parse)
	if err != nil {
		return fail(err)
	}
	defer rd.close()
	catchUp := max(minCatchUp, 2*lc.load)
	r.CatchUpSeconds = catchUp.Seconds()
	drainErr := awaitProbes(ctx, prod, rd, ch, q.Name, probes, end, lc.grace.Milliseconds(), catchUp)
	r.CaughtUp = drainErr == nil
	if drainErr != nil && !errors.Is(drainErr, errProbesLate) {
		ch.stop()
		return fail(fmt.Errorf("catching up: %w", drainErr))
	}
	if err := ch.stop(); err != nil {
		return fail(err)
	}
	ends, err := c.ListStableOffsets(ctx, output)
	if err != nil {
		return fail(err)
	}
	if err := rd.readTo(ctx, ends); err != nil {
		return fail(err)
	}
	in, err := readInputs(ctx, c, q, lc.partitions)
	if err != nil {
		return fail(err)
	}
	rule := perPartition
	if system == systemFlink {
		rule = watermark
	}
	grace := lc.grace.Milliseconds()
	all, t := measure(q.Name, rule, grace, in, rd.rows)
	from, to := start.Add(lc.warmup).UnixMilli(), loadEnd.UnixMilli()
	var load []measured
	for _, m := range all {
		switch {
		case m.auction < firstAuctionID:
			if m.eventTime == probeRow(q.Name, end) {
				r.EndLag = max(r.EndLag, m.latency)
			}
		case m.cause >= from && m.cause <= to:
			load = append(load, m)
			if m.latency < 0 {
				r.Negative++
			}
		}
	}
	r.Unmatched, r.Unclosed, r.NotFinal, r.Duplicates = t.unmatched, t.unclosed, t.notFinal, t.duplicates
	if r.CaughtUp {
		r.Missing = missing(q.Name, rule, grace, in, rd.rows, firstAuctionID, from, to)
	}
	s := summarize(load)
	r.Rows, r.P50, r.P99, r.Max, r.FirstTenth, r.LastTenth = s.rows, s.p50, s.p99, s.max, s.firstTenth, s.lastTenth
	r.KeptUp = keptUp(s, r.EndLag) && r.CaughtUp
	if !r.CaughtUp {
		r.EndLag = -1
	}
	if s.rows == 0 {
		return fail(errNoRows)
	}
	return r
}

// resetLatencyTopics recreates the event topics and output, every one
// stamped by the broker (message.timestamp.type=LogAppendTime), so that a
// record's timestamp is when it was appended.
func resetLatencyTopics(ctx context.Context, c kafka.Client, partitions int32, output string) error {
	topics := []string{nexmark.PersonTopic, nexmark.AuctionTopic, nexmark.BidTopic, output}
	for _, t := range topics {
		if err := c.DeleteTopic(ctx, t); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
			return err
		}
	}
	if err := waitGone(ctx, c, topics...); err != nil {
		return err
	}
	for _, t := range topics {
		spec := kafka.TopicSpec{Name: t, Partitions: partitions, Configs: map[string]string{"message.timestamp.type": "LogAppendTime"}}
		if err := c.CreateTopic(ctx, spec); err != nil {
			return fmt.Errorf("create %s: %w", t, err)
		}
		if err := kafka.AwaitTopic(ctx, c, t, partitions); err != nil {
			return err
		}
	}
	return nil
}

// paceLoad produces events [0, events) of cfg, event n at start + n/rate
// of wall time (as soon as it can when it is late), and returns how late
// at worst a batch went out.
func paceLoad(ctx context.Context, p kafka.Producer, cfg nexmark.Config, events int64, start time.Time) (time.Duration, error) {
	const maxBatch = 5000
	rate := float64(cfg.EventsPerSecond)
	due := func(n int64) time.Time { return start.Add(time.Duration(float64(n) / rate * float64(time.Second))) }
	var slip time.Duration
	recs := make([]*kafka.Record, 0, maxBatch)
	for n := int64(0); n < events; {
		now := time.Now()
		if wait := due(n).Sub(now); wait > 0 {
			time.Sleep(wait)
			continue
		}
		slip = max(slip, now.Sub(due(n)))
		upTo := min(int64(now.Sub(start).Seconds()*rate)+1, events, n+maxBatch)
		recs = recs[:0]
		for ; n < upTo; n++ {
			e := cfg.Generate(n)
			recs = append(recs, &kafka.Record{
				Topic: nexmark.Topic(e.Kind), Partition: -1,
				Key: nexmark.AppendKey(nil, e), Value: nexmark.AppendJSON(nil, e),
				Timestamp: time.UnixMilli(cfg.Time(n)),
			})
		}
		if err := p.Produce(ctx, recs); err != nil {
			return slip, err
		}
	}
	return slip, nil
}

// awaitProbes sends the probes at event time t and waits until the
// output holds each partition's probe row, sending them again every
// probeResend while some are missing (a stream-table join may read a
// probe's bid before its auction).
func awaitProbes(ctx context.Context, p kafka.Producer, rd *outputReader, ch *latencyChild, query string, auctions []int64, t, grace int64, timeout time.Duration) error {
	want := map[int64]bool{}
	for _, id := range auctions {
		want[id] = true
	}
	at := probeRow(query, t)
	send := func() error {
		for _, batch := range probeEvents(query, auctions, t, grace) {
			recs := make([]*kafka.Record, len(batch))
			for i, e := range batch {
				recs[i] = &kafka.Record{Topic: nexmark.Topic(e.Kind), Partition: -1, Key: nexmark.AppendKey(nil, e), Value: nexmark.AppendJSON(nil, e)}
			}
			// One batch after the other: a bid is appended after its
			// auction, a closing bid after the bid.
			if err := p.Produce(ctx, recs); err != nil {
				return err
			}
		}
		return nil
	}
	if err := send(); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	resend := time.Now().Add(probeResend)
	checked := 0
	for len(want) > 0 {
		if err := ch.exitedEarly(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: no rows of %d of the %d probes after %s", errProbesLate, len(want), len(auctions), timeout)
		}
		if time.Now().After(resend) {
			if err := send(); err != nil {
				return err
			}
			resend = time.Now().Add(probeResend)
		}
		if err := rd.poll(ctx, 250*time.Millisecond); err != nil {
			return err
		}
		for ; checked < len(rd.rows); checked++ {
			o := rd.rows[checked]
			if o.eventTime(query) == at && !o.tombstone {
				delete(want, o.auction)
			}
		}
	}
	return nil
}

// errProbesLate says probes had no rows in the time given.
var errProbesLate = errors.New("probes unanswered")

// outputReader reads an output topic from its start as it grows, and
// keeps its rows.
type outputReader struct {
	cons  kafka.Consumer
	parse func(*kafka.Record) (outRow, error)
	rows  []outRow
	// next is the offset after the last record read, per partition.
	next map[int32]int64
}

func newOutputReader(c kafka.Client, topic string, partitions int32, parse func(*kafka.Record) (outRow, error)) (*outputReader, error) {
	cons, err := c.NewConsumer(kafka.ConsumerOptions{ClientID: "nexmark-latency-output", ReadCommitted: true, KeepControl: true})
	if err != nil {
		return nil, err
	}
	assign := map[int32]int64{}
	for p := int32(0); p < partitions; p++ {
		assign[p] = kafka.OffsetStart
	}
	cons.Assign(map[string]map[int32]int64{topic: assign})
	return &outputReader{cons: cons, parse: parse, next: map[int32]int64{}}, nil
}

func (rd *outputReader) close() { rd.cons.Close() }

// poll reads what arrives within d.
func (rd *outputReader) poll(ctx context.Context, d time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, d)
	recs, err := rd.cons.Poll(pctx)
	cancel()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	for _, rec := range recs {
		rd.next[rec.Partition] = rec.Offset + 1
		if rec.Control {
			continue
		}
		o, err := rd.parse(rec)
		if err != nil {
			return err
		}
		rd.rows = append(rd.rows, o)
	}
	return nil
}

// readTo reads until every partition is read up to its end in ends.
func (rd *outputReader) readTo(ctx context.Context, ends []kafka.Offsets) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		done := true
		for p, o := range ends {
			if o.End > o.Start && rd.next[int32(p)] < o.End {
				done = false
			}
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("output not read to its end after 5 minutes")
		}
		if err := rd.poll(ctx, time.Second); err != nil {
			return err
		}
	}
}

// scanTopic calls fn with every record topic holds now, from its start.
func scanTopic(ctx context.Context, c kafka.Client, topic string, fn func(*kafka.Record) error) error {
	bounds, err := c.ListOffsets(ctx, topic)
	if err != nil {
		return err
	}
	assign := map[int32]int64{}
	ends := map[int32]int64{}
	for p, b := range bounds {
		if b.End > b.Start {
			assign[int32(p)] = b.Start
			ends[int32(p)] = b.End
		}
	}
	if len(ends) == 0 {
		return nil
	}
	cons, err := c.NewConsumer(kafka.ConsumerOptions{ClientID: "nexmark-latency-input"})
	if err != nil {
		return err
	}
	defer cons.Close()
	cons.Assign(map[string]map[int32]int64{topic: assign})
	for len(ends) > 0 {
		recs, err := cons.Poll(ctx)
		if err != nil {
			return fmt.Errorf("read %s: %w", topic, err)
		}
		for _, rec := range recs {
			end, ok := ends[rec.Partition]
			if !ok || rec.Offset >= end {
				continue
			}
			if rec.Offset+1 >= end {
				delete(ends, rec.Partition)
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// readInputs reads back the bids (and for q20 the auctions) with the
// times the broker appended them.
func readInputs(ctx context.Context, c kafka.Client, q nexmark.Query, partitions int32) (*inputs, error) {
	in := newInputs(partitions)
	err := scanTopic(ctx, c, nexmark.BidTopic, func(rec *kafka.Record) error {
		var b struct {
			Auction, Bidder, Price, DateTime int64
		}
		if err := json.Unmarshal(rec.Value, &b); err != nil {
			return fmt.Errorf("bid at %d/%d: %w", rec.Partition, rec.Offset, err)
		}
		in.addBid(rec.Partition, bidKey{b.Auction, b.Bidder, b.Price, b.DateTime}, rec.Timestamp.UnixMilli())
		return nil
	})
	if err != nil || q.Name != "q20" {
		return in, err
	}
	err = scanTopic(ctx, c, nexmark.AuctionTopic, func(rec *kafka.Record) error {
		if len(rec.Key) != 8 {
			return fmt.Errorf("auction at %d/%d: key of %d bytes", rec.Partition, rec.Offset, len(rec.Key))
		}
		in.addAuction(int64(binary.BigEndian.Uint64(rec.Key)), rec.Timestamp.UnixMilli())
		return nil
	})
	return in, err
}

// latencyChild is a system running one query until its standard input
// is closed.
type latencyChild struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	started time.Time
	stderr  *tail
	done    chan struct{}
	err     error
	// cleanups delete what the run left on the broker and on disk.
	cleanups []func()
	once     sync.Once
}

// startLatencyChild starts q on system (p nil for Sluice), reading the
// event topics from their start and writing output.
func startLatencyChild(ctx context.Context, c kafka.Client, lc latencyConfig, system string, p *peer, q nexmark.Query, output string) (*latencyChild, error) {
	ch := &latencyChild{done: make(chan struct{}), stderr: &tail{}}
	dir, err := os.MkdirTemp("", "nexmark-latency-"+system+"-"+q.Name+"-")
	if err != nil {
		return nil, err
	}
	ch.cleanups = append(ch.cleanups, func() { os.RemoveAll(dir) })
	grace := strconv.FormatInt(lc.grace.Milliseconds(), 10)
	id := fmt.Sprintf("nexmark-latency-%s-%s-%d", system, q.Name, time.Now().UnixNano())
	var cmd *exec.Cmd
	if p == nil {
		self, err := os.Executable()
		if err != nil {
			ch.cleanup()
			return nil, err
		}
		args := append([]string{"engine", "--bootstrap", lc.bootstrap, "--query", q.Name, "--data-dir", dir, "--service-id", id,
			"--final-grace-ms", grace, "--until-eof"}, lc.tune.args()...)
		if lc.cpuprofile != "" {
			if err := os.MkdirAll(lc.cpuprofile, 0o755); err != nil {
				ch.cleanup()
				return nil, err
			}
			args = append(args, "--cpuprofile", filepath.Join(lc.cpuprofile, q.Name+".latency.prof"))
		}
		cmd = exec.CommandContext(ctx, self, args...)
		ch.cleanups = append(ch.cleanups, func() {
			deleteTopics(context.Background(), c, "_sluice-"+id+"-", id+"_processing_log")
		})
	} else {
		args := append(javaOpts(lc.xmx), "-cp", p.classpath, p.main,
			"--bootstrap", lc.bootstrap, "--query", q.Name, "--app-id", id, "--state-dir", dir, "--output", output,
			"--final-grace-ms", grace)
		cmd = exec.CommandContext(ctx, "java", args...)
		ch.cleanups = append(ch.cleanups, func() { deleteInternalTopics(context.Background(), c, id) })
	}
	cmd.Stderr = io.MultiWriter(os.Stderr, ch.stderr)
	cmd.Stdout = io.Discard
	if ch.stdin, err = cmd.StdinPipe(); err != nil {
		ch.cleanup()
		return nil, err
	}
	ch.cmd = cmd
	ch.started = time.Now()
	if err := cmd.Start(); err != nil {
		ch.cleanup()
		return nil, fmt.Errorf("%s: %w", system, err)
	}
	go func() {
		ch.err = cmd.Wait()
		close(ch.done)
	}()
	return ch, nil
}

// exitedEarly returns why the child ended, if it has: it should run
// until stopped.
func (ch *latencyChild) exitedEarly() error {
	select {
	case <-ch.done:
		if why := ch.stderr.cause(); why != "" {
			return fmt.Errorf("exited (%v): %s", ch.err, why)
		}
		return fmt.Errorf("exited: %v", ch.err)
	default:
		return nil
	}
}

// stop closes the child's standard input and waits for it to exit,
// killing it after stopTimeout.
func (ch *latencyChild) stop() error {
	ch.stdin.Close()
	select {
	case <-ch.done:
		if ch.err != nil {
			if why := ch.stderr.cause(); why != "" {
				return fmt.Errorf("stopping: %w: %s", ch.err, why)
			}
			return fmt.Errorf("stopping: %w", ch.err)
		}
		return nil
	case <-time.After(stopTimeout):
		_ = ch.cmd.Process.Kill()
		<-ch.done
		return fmt.Errorf("did not stop within %s", stopTimeout)
	}
}

// cleanup kills the child if it still runs and deletes what it left.
func (ch *latencyChild) cleanup() {
	ch.once.Do(func() {
		if ch.cmd != nil && ch.cmd.Process != nil {
			select {
			case <-ch.done:
			default:
				_ = ch.cmd.Process.Kill()
				<-ch.done
			}
		}
		for _, f := range ch.cleanups {
			f()
		}
	})
}

// machineCPU returns the machine's CPU time so far, busy and in all, in
// the kernel's ticks (the first line of /proc/stat: idle and iowait are
// not busy); zeros if unknown.
func machineCPU() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0
		}
		// guest and guest_nice (the 9th and 10th) are counted in user
		// and nice already.
		if i >= 8 {
			break
		}
		total += n
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return busy, total
}

// printLatencyRow prints one result as it comes.
func printLatencyRow(w io.Writer, r latencyRow) {
	if r.Error != "" {
		fmt.Fprintf(w, "%-5s %-8s error: %s\n", r.Query, r.System, r.Error)
		return
	}
	fmt.Fprintf(w, "%-5s %-8s %9d %8d %8d %8d %10s %8.2f  %s\n", r.Query, r.System, r.Rows, r.P50, r.P99, r.Max, endLagCell(r), r.LoadCPU, keptUpWord(r))
}

// endLagCell is the end lag, or how long it was more than.
func endLagCell(r latencyRow) string {
	if !r.CaughtUp {
		return fmt.Sprintf("> %.0f s", r.CatchUpSeconds)
	}
	return strconv.FormatInt(r.EndLag, 10)
}

func keptUpWord(r latencyRow) string {
	switch {
	case r.Error != "":
		return "–"
	case !r.KeptUp:
		return "**no**"
	case r.ProducedRate < 0.95*float64(r.Rate):
		return fmt.Sprintf("yes (load reached %.0f/s only)", r.ProducedRate)
	}
	return "yes"
}

// printLatencyTable prints the results as Markdown.
func printLatencyTable(w io.Writer, rows []latencyRow, lc latencyConfig) {
	fmt.Fprintf(w, "%d events/s for %s (the first %s not measured); q7's windows with a grace of %d ms, emitting final rows only; peers' JVM heap -Xmx%s. Latency is the broker's append time of a row less that of the input that caused it: a bid for q0, the later of a bid and its auction for q20, the event that closed the window for q7. End lag: the latency of probes appended right after the load.\n\n",
		lc.rate, lc.load, lc.warmup, lc.grace.Milliseconds(), lc.xmx)
	fmt.Fprintln(w, "| query | system | rows | p50 ms | p99 ms | max ms | end lag ms | CPU during load | kept up |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		if r.Error != "" {
			msg := r.Error
			if len(msg) > 80 {
				msg = msg[:80] + "…"
			}
			fmt.Fprintf(w, "| %s | %s | error: %s | | | | | | |\n", r.Query, r.System, strings.ReplaceAll(msg, "|", "/"))
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %s | %.2f | %s |\n", r.Query, r.System, r.Rows, r.P50, r.P99, r.Max, endLagCell(r), r.LoadCPU, keptUpWord(r))
	}
	var notes []string
	for _, r := range rows {
		var bad []string
		if r.Unmatched > 0 {
			bad = append(bad, fmt.Sprintf("%d rows matched no input", r.Unmatched))
		}
		if r.Unclosed > 0 {
			bad = append(bad, fmt.Sprintf("%d windows emitted that no event closed", r.Unclosed))
		}
		if r.NotFinal > 0 {
			bad = append(bad, fmt.Sprintf("%d windows emitted with a maximum their bids do not have", r.NotFinal))
		}
		if r.Duplicates > 0 {
			bad = append(bad, fmt.Sprintf("%d windows emitted more than once", r.Duplicates))
		}
		if r.Missing > 0 {
			bad = append(bad, fmt.Sprintf("%d rows missing", r.Missing))
		}
		if r.Negative > 0 {
			bad = append(bad, fmt.Sprintf("%d rows appended before their cause", r.Negative))
		}
		if r.LoadSlipMillis > 500 {
			bad = append(bad, fmt.Sprintf("the load went out up to %d ms late", r.LoadSlipMillis))
		}
		if !r.CaughtUp && r.Error == "" {
			bad = append(bad, fmt.Sprintf("not caught up %s after the load: the figures are those of the rows out by then", time.Duration(r.CatchUpSeconds*float64(time.Second))))
		}
		if r.MachineBusy >= busyMachine {
			bad = append(bad, fmt.Sprintf("the machine's CPUs were %.0f %% busy during the load", 100*r.MachineBusy))
		}
		if len(bad) > 0 {
			notes = append(notes, fmt.Sprintf("- %s on %s: %s.", r.Query, r.System, strings.Join(bad, ", ")))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
}
