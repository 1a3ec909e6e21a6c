package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-sql/sluice/bench/nexmark"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// row is one line of the results, as written to --out.
type row struct {
	Query         string  `json:"query"`
	System        string  `json:"system"`
	Events        int64   `json:"events"`
	EventsPerCPU  float64 `json:"events_per_cpu_s"`
	EventsPerWall float64 `json:"events_per_wall_s"`
	PeakRSSBytes  int64   `json:"peak_rss_bytes"`
	Checksum      string  `json:"checksum"`
	OutputRows    int     `json:"output_rows"`
	ResultRows    int     `json:"result_rows"`
	WallSeconds   float64 `json:"wall_s"`
	CPUSeconds    float64 `json:"cpu_s"`
	// The steady state: events per CPU-second and per wall-second between
	// 20 % and 90 % of the input consumed (see steady), 0 when the run's
	// Samples do not span it.
	SteadyEventsPerCPU  float64 `json:"steady_events_per_cpu_s"`
	SteadyEventsPerWall float64 `json:"steady_events_per_wall_s"`
	Samples             int     `json:"steady_samples"`
	// Trace holds the samples: milliseconds since the child's start, its
	// CPU milliseconds, its input position.
	Trace [][3]int64 `json:"trace,omitempty"`
	// TaskTime splits the wall time of Sluice's task goroutines, summed
	// over the tasks (exec.TaskTime), in seconds.
	TaskTime       *taskTime `json:"task_time_s,omitempty"`
	ChecksumsMatch *bool     `json:"checksums_match,omitempty"`
	Error          string    `json:"error,omitempty"`
}

// taskTime is exec.TaskTime in seconds.
type taskTime struct {
	Poll    float64 `json:"poll"`
	Work    float64 `json:"work"`
	Produce float64 `json:"produce"`
	Commit  float64 `json:"commit"`
	Persist float64 `json:"persist"`
}

// String gives each part's share of the whole.
func (tt *taskTime) String() string {
	total := tt.Poll + tt.Work + tt.Produce + tt.Commit + tt.Persist
	if total <= 0 {
		return "no task time"
	}
	pct := func(v float64) float64 { return 100 * v / total }
	return fmt.Sprintf("%.1f task-s: poll %.0f %%, work %.0f %%, produce %.0f %%, commit %.0f %%, persist %.0f %%",
		total, pct(tt.Poll), pct(tt.Work), pct(tt.Produce), pct(tt.Commit), pct(tt.Persist))
}

const markerTopic = "nexmark-loaded"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "engine" {
		if err := runEngine(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "nexmark engine:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nexmark:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("nexmark", flag.ContinueOnError)
	bootstrap := fs.String("bootstrap", os.Getenv("SLUICE_TEST_KAFKA"), "Kafka `brokers` (default $SLUICE_TEST_KAFKA)")
	events := fs.Int64("events", 1_000_000, "events to load and process")
	queries := fs.String("queries", "", "comma-separated queries to run (default all)")
	partitions := fs.Int("partitions", 4, "partitions of each event topic")
	rate := fs.Int64("rate", 100_000, "event-time rate in events per second")
	seed := fs.Uint64("seed", 1, "generator seed")
	out := fs.String("out", "bench/out/latest.json", "file for the result rows (JSON)")
	systemsFlag := fs.String("systems", strings.Join(allSystems, ","), "comma-separated systems to run: sluice, kstreams, flink")
	peersDir := fs.String("peers-dir", "bench/peers", "`directory` of the peers' Maven projects")
	xmx := fs.String("xmx", "1g", "the peers' fixed JVM heap (-Xmx)")
	cpuprofile := fs.String("cpuprofile", "", "`directory` for a pprof CPU profile of Sluice's engine per query (QUERY.prof; QUERY.latency.prof in the latency mode, over the whole run)")
	memprofile := fs.String("memprofile", "", "`directory` for a pprof heap profile of Sluice's engine per query, taken near the heap's peak (QUERY.heap.prof); the split of the peak RSS goes to standard error")
	servers := fs.Int("servers", 1, "run Sluice's query on this many engine processes of one cluster (scale-out; whole-run figures only)")
	latency := fs.Bool("latency", false, "measure latency at a fixed rate instead of throughput (q0, q7 and q20 by default)")
	latencyRate := fs.Int64("latency-rate", 10_000, "the latency mode's rate, in events per wall-second")
	latencySeconds := seconds(60 * time.Second)
	fs.Var(&latencySeconds, "latency-seconds", "how long the latency mode's load lasts, in seconds (or a duration: 90s, 2m)")
	latencyWarmup := seconds(10 * time.Second)
	fs.Var(&latencyWarmup, "latency-warmup", "how much of the start of the latency mode's load is not measured, in seconds or a duration")
	latencyGrace := seconds(0)
	fs.Var(&latencyGrace, "latency-grace", "the grace period of q7's windows in the latency mode, in seconds or a duration (500ms)")
	var tune engineMemory
	tune.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bootstrap == "" {
		return errors.New("--bootstrap or SLUICE_TEST_KAFKA names the broker (scripts/kafka.sh up starts one)")
	}
	if *latency && *queries == "" {
		*queries = strings.Join(latencyQueries, ",")
	}
	chosen, err := pick(*queries)
	if err != nil {
		return err
	}
	outSet := false
	fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
	if *latency && !outSet {
		*out = "bench/out/latency.json"
	}
	systems, err := pickSystems(*systemsFlag)
	if err != nil {
		return err
	}
	peers := newPeers(*peersDir)
	for _, s := range systems {
		if p := peers[s]; p != nil {
			p.build()
			if p.err != nil {
				fmt.Fprintf(os.Stderr, "nexmark: %s cannot run: %v\n", s, p.err)
			}
		}
	}
	ctx := context.Background()
	client, err := kafka.NewFranz(kafka.Config{Brokers: strings.Split(*bootstrap, ","), ClientID: "nexmark"})
	if err != nil {
		return err
	}
	defer client.Close()
	if *latency {
		if *latencyRate <= 0 {
			return errors.New("--latency-rate must be positive")
		}
		lc := latencyConfig{bootstrap: *bootstrap, rate: *latencyRate, load: time.Duration(latencySeconds), warmup: time.Duration(latencyWarmup),
			grace: time.Duration(latencyGrace), partitions: int32(*partitions), seed: *seed, xmx: *xmx, tune: tune, cpuprofile: *cpuprofile}
		return runLatency(ctx, client, lc, chosen, systems, peers, *out)
	}
	if err := keepForever(ctx, strings.Split(*bootstrap, ",")); err != nil {
		return err
	}
	cfg := nexmark.Config{Seed: *seed, EventsPerSecond: *rate, Pad: true}
	if err := ensureLoaded(ctx, client, cfg, *events, int32(*partitions)); err != nil {
		return err
	}
	var rows []row
	fmt.Printf("%-5s %-8s %10s %14s %14s %10s %10s  %s\n", "query", "system", "events", "events/cpu-s", "events/wall-s", "peak RSS", "rows", "checksum")
	for _, q := range chosen {
		var ref *row
		for _, s := range systems {
			var r row
			if p := peers[s]; p != nil {
				r = runPeer(ctx, client, *bootstrap, p, q, *events, int32(*partitions), *xmx)
			} else {
				if *servers > 1 {
					r = runCluster(ctx, client, *bootstrap, q, *events, *servers, tune)
				} else {
					r = runQuery(ctx, client, *bootstrap, q, *events, *cpuprofile, *memprofile, tune)
				}
			}
			if s == systemSluice && r.Error == "" {
				ref = &r
			}
			if s != systemSluice && ref != nil && r.Error == "" {
				match := r.Checksum == ref.Checksum
				r.ChecksumsMatch = &match
			}
			rows = append(rows, r)
			printRow(r)
		}
	}
	var table strings.Builder
	printTable(&table, rows, chosen, systems, *events, *xmx)
	fmt.Printf("\n%s", table.String())
	if *out != "" {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(rows, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			return err
		}
		md := strings.TrimSuffix(*out, filepath.Ext(*out)) + ".md"
		if err := os.WriteFile(md, []byte(table.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// seconds is a flag of a duration given in seconds (60, 0.5) or as a
// duration (90s, 500ms).
type seconds time.Duration

func (s *seconds) String() string { return time.Duration(*s).String() }

func (s *seconds) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		*s = seconds(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return errors.New("not seconds nor a duration")
	}
	*s = seconds(d)
	return nil
}

func pick(list string) ([]nexmark.Query, error) {
	if list == "" {
		return nexmark.Queries, nil
	}
	var out []nexmark.Query
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(strings.ToLower(name))
		found := false
		for _, q := range nexmark.Queries {
			if q.Name == name {
				out = append(out, q)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown query %q", name)
		}
	}
	return out, nil
}

// ensureLoaded loads the events unless the marker topic says the same ones
// are there already.
func ensureLoaded(ctx context.Context, c kafka.Client, cfg nexmark.Config, events int64, partitions int32) error {
	marker := fmt.Sprintf("events=%d rate=%d seed=%d partitions=%d pad=%t", events, cfg.EventsPerSecond, cfg.Seed, partitions, cfg.Pad)
	if recs, err := kafka.ReadAll(ctx, c, markerTopic); err == nil && len(recs) > 0 && string(recs[len(recs)-1].Value) == marker && held(ctx, c) == events {
		fmt.Fprintf(os.Stderr, "nexmark: reusing the %d events loaded before (%s)\n", events, marker)
		return nil
	}
	for _, t := range []string{nexmark.PersonTopic, nexmark.AuctionTopic, nexmark.BidTopic, markerTopic} {
		if err := c.DeleteTopic(ctx, t); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
			return err
		}
	}
	if err := waitGone(ctx, c, nexmark.PersonTopic, nexmark.AuctionTopic, nexmark.BidTopic, markerTopic); err != nil {
		return err
	}
	if err := nexmark.CreateTopics(ctx, c, partitions); err != nil {
		return err
	}
	p, err := c.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		return err
	}
	defer p.Close()
	start := time.Now()
	if _, err := nexmark.Load(ctx, p, cfg, 0, events, 20_000); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "nexmark: loaded %d events in %s\n", events, time.Since(start).Round(time.Millisecond))
	if err := c.CreateTopic(ctx, kafka.TopicSpec{Name: markerTopic, Partitions: 1}); err != nil && !errors.Is(err, kafka.ErrTopicExists) {
		return err
	}
	return p.Produce(ctx, []*kafka.Record{{Topic: markerTopic, Partition: 0, Value: []byte(marker)}})
}

// held returns how many events the event topics hold, -1 if unknown.
func held(ctx context.Context, c kafka.Client) int64 {
	var n int64
	for _, t := range []string{nexmark.PersonTopic, nexmark.AuctionTopic, nexmark.BidTopic} {
		offs, err := c.ListOffsets(ctx, t)
		if err != nil {
			return -1
		}
		for _, o := range offs {
			n += o.End - o.Start
		}
	}
	return n
}

// waitGone waits until deleted topics are gone from the broker's metadata.
func waitGone(ctx context.Context, c kafka.Client, topics ...string) error {
	deadline := time.Now().Add(60 * time.Second)
	for _, t := range topics {
		for {
			_, err := c.DescribeTopic(ctx, t)
			if errors.Is(err, kafka.ErrUnknownTopic) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("topic %s still exists after its deletion", t)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// runQuery runs q in a child engine process and summarises its output.
// When profiles names a directory, the engine writes its CPU profile to
// QUERY.prof there; when heapProfiles does, its heap profile to
// QUERY.heap.prof.
func runQuery(ctx context.Context, c kafka.Client, bootstrap string, q nexmark.Query, events int64, profiles, heapProfiles string, tune engineMemory) row {
	r := row{Query: q.Name, System: "sluice", Events: events}
	fail := func(err error) row { r.Error = err.Error(); return r }
	output := outputTopic(systemSluice, q)
	if err := c.DeleteTopic(ctx, output); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
		return fail(err)
	}
	if err := waitGone(ctx, c, output); err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "nexmark-"+q.Name+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	service := fmt.Sprintf("nexmark-%s-%d", q.Name, time.Now().UnixNano())
	// The engine's internal topics and its processing log, once summed up.
	defer deleteTopics(ctx, c, "_sluice-"+service+"-", service+"_processing_log")
	args := []string{"engine", "--bootstrap", bootstrap, "--query", q.Name, "--data-dir", dir, "--service-id", service}
	if profiles != "" {
		if err := os.MkdirAll(profiles, 0o755); err != nil {
			return fail(err)
		}
		args = append(args, "--cpuprofile", filepath.Join(profiles, q.Name+".prof"))
	}
	args = append(args, tune.args()...)
	if heapProfiles != "" {
		if err := os.MkdirAll(heapProfiles, 0o755); err != nil {
			return fail(err)
		}
		args = append(args, "--memprofile", filepath.Join(heapProfiles, q.Name+".heap.prof"))
	}
	groupsFile := filepath.Join(dir, "groups")
	args = append(args, "--groups", groupsFile)
	total, err := inputSize(ctx, c, q.Inputs)
	if err != nil {
		return fail(err)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	var stdout strings.Builder
	cmd.Stdout = &stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("engine: %w", err))
	}
	groups := func() []string {
		b, _ := os.ReadFile(groupsFile)
		return strings.Fields(string(b))
	}
	pos := committedPosition(c, groups, q.Inputs)
	smp := startSampler(ctx, cmd.Process.Pid, start, pos)
	runErr := cmd.Wait()
	samples := smp.Stop()
	if runErr != nil {
		return fail(fmt.Errorf("engine: %w", runErr))
	}
	var report struct {
		PeakRSS  int64     `json:"peak_rss_bytes"`
		TaskTime *taskTime `json:"task_time_s"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil {
		return fail(fmt.Errorf("engine report %q: %w", stdout.String(), err))
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return fail(errors.New("no resource usage for the engine process"))
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	r.WallSeconds, r.CPUSeconds = wall.Seconds(), cpu.Seconds()
	r.EventsPerWall = float64(events) / wall.Seconds()
	r.EventsPerCPU = float64(events) / cpu.Seconds()
	r.PeakRSSBytes = report.PeakRSS
	if r.TaskTime = report.TaskTime; r.TaskTime != nil {
		fmt.Fprintf(os.Stderr, "%s sluice task wall time: %s\n", q.Name, r.TaskTime)
	}
	end, err := pos(ctx)
	if err != nil {
		return fail(err)
	}
	setSteady(&r, samples, total, wall, cpu, end)
	if err := summarizeOutput(ctx, c, q, output, &r); err != nil {
		return fail(err)
	}
	return r
}

// summarizeOutput reads Sluice's output topic and sets r's checksum and
// row counts.
func summarizeOutput(ctx context.Context, c kafka.Client, q nexmark.Query, output string, r *row) error {
	recs, err := kafka.ReadAll(ctx, c, output)
	if err != nil {
		return err
	}
	res, err := nexmark.Summarize(q, recs)
	if err != nil {
		return err
	}
	r.Checksum, r.OutputRows, r.ResultRows = res.Checksum, res.Rows, res.Final
	return nil
}

// runEngine is the child: it runs one query from the start of its inputs
// until it has drained them, then exits.
func runEngine(args []string) error {
	fs := flag.NewFlagSet("nexmark engine", flag.ContinueOnError)
	bootstrap := fs.String("bootstrap", "", "Kafka brokers")
	query := fs.String("query", "", "query to run")
	dataDir := fs.String("data-dir", "", "state directory")
	service := fs.String("service-id", "nexmark", "service id")
	groupsFile := fs.String("groups", "", "`file` to write the consumer groups of the query's tasks to, once it runs, for the driver to read its input position")
	cpuprofile := fs.String("cpuprofile", "", "`file` for a pprof CPU profile of the whole run")
	memprofile := fs.String("memprofile", "", "`file` for a pprof heap profile taken near the heap's peak; the split of the peak RSS goes to standard error")
	finalGrace := fs.Int64("final-grace-ms", -1, "the latency mode: run q7 emitting final rows only, its windows with this grace")
	untilEOF := fs.Bool("until-eof", false, "run until standard input is closed instead of until the inputs are drained")
	clusterServer := fs.Int("cluster-server", -1, "run as server `n` of a cluster of engines with the same --service-id; server 0 runs the statement, the others take it from the command log")
	var tune engineMemory
	tune.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	stateMemory, err := tune.apply()
	if err != nil {
		return err
	}
	if *memprofile != "" {
		m := startMemSampler(*memprofile)
		defer func() {
			if err := m.Stop(os.Stderr); err != nil {
				fmt.Fprintln(os.Stderr, "nexmark engine: heap profile:", err)
			}
		}()
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	qs, err := pick(*query)
	if err != nil {
		return err
	}
	ctx := context.Background()
	client, err := kafka.NewFranz(kafka.Config{Brokers: strings.Split(*bootstrap, ","), ClientID: *service})
	if err != nil {
		return err
	}
	defer client.Close()
	cfg := engine.Config{Kafka: client, DataDir: *dataDir, ServiceID: *service, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StateMemory: stateMemory}
	if *clusterServer >= 0 {
		// The address is where the others would forward pull queries,
		// which the benchmark runs none of.
		cfg.Cluster = &engine.ClusterConfig{Address: fmt.Sprintf("127.0.0.1:%d", 1+*clusterServer)}
	}
	eng, err := engine.Open(ctx, cfg)
	if err != nil {
		return err
	}
	sess := engine.NewSession()
	sql := qs[0].SQL
	if *finalGrace >= 0 {
		sql = finalSQL(qs[0], *finalGrace)
	}
	if *clusterServer <= 0 {
		if _, err := eng.Execute(ctx, sess, "SET 'auto.offset.reset'='earliest';"+nexmark.Sources+sql); err != nil {
			eng.Close()
			return err
		}
	}
	if *untilEOF {
		if err := writeGroups(ctx, eng, *groupsFile); err != nil {
			eng.Close()
			return err
		}
		if err := runUntilEOF(ctx, eng); err != nil {
			eng.Close()
			return err
		}
		if err := eng.Close(); err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(struct {
			PeakRSS int64 `json:"peak_rss_bytes"`
		}{peakRSS()})
	}
	if err := writeGroups(ctx, eng, *groupsFile); err != nil {
		eng.Close()
		return err
	}
	if err := eng.Flush(ctx); err != nil {
		eng.Close()
		return err
	}
	for _, q := range eng.Queries(ctx) {
		if strings.HasPrefix(q.Status, "ERROR") {
			eng.Close()
			return fmt.Errorf("query %s: %s", q.ID, q.Status)
		}
	}
	tt := &taskTime{}
	for _, m := range eng.Metrics(ctx) {
		tt.Poll += m.Time.Poll.Seconds()
		tt.Work += m.Time.Work.Seconds()
		tt.Produce += m.Time.Produce.Seconds()
		tt.Commit += m.Time.Commit.Seconds()
		tt.Persist += m.Time.Persist.Seconds()
	}
	if err := eng.Close(); err != nil {
		return err
	}
	// The peak RSS of this process alone: the kernel's maxrss of a child
	// also counts its parent's memory at the exec.
	return json.NewEncoder(os.Stdout).Encode(struct {
		PeakRSS  int64     `json:"peak_rss_bytes"`
		TaskTime *taskTime `json:"task_time_s"`
	}{peakRSS(), tt})
}

// writeGroups writes the consumer groups of the engine's queries to file,
// when one is named, for the driver to read their input positions.
func writeGroups(ctx context.Context, eng *engine.Engine, file string) error {
	if file == "" {
		return nil
	}
	var groups []string
	for _, q := range eng.Queries(ctx) {
		groups = append(groups, eng.ConsumerGroup(q.ID))
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(groups, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// finalSQL is q's statement as the latency mode runs it on Sluice: q7
// emits each window once, when it closes, with a grace of graceMs. Its
// retention is longer than the default (size plus grace), with which
// EMIT FINAL drops a window whose closing row takes stream time past its
// end plus grace instead of exactly to it; a final window leaves the
// state once emitted whatever its retention.
func finalSQL(q nexmark.Query, graceMs int64) string {
	if q.Name != "q7" {
		return q.SQL
	}
	return fmt.Sprintf(`CREATE TABLE q7 AS SELECT auction, MAX(price) AS maxprice FROM bid
  WINDOW TUMBLING (SIZE 10 SECONDS, RETENTION 1 MINUTE, GRACE PERIOD %d MILLISECONDS) GROUP BY auction EMIT FINAL;`, graceMs)
}

// runUntilEOF runs the engine's queries until standard input is closed;
// a query that fails ends it with its error.
func runUntilEOF(ctx context.Context, eng *engine.Engine) error {
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-eof:
			return nil
		case <-tick.C:
		}
		for _, q := range eng.Queries(ctx) {
			if strings.HasPrefix(q.Status, "ERROR") {
				return fmt.Errorf("query %s: %s", q.ID, q.Status)
			}
		}
	}
}

// peakRSS returns the process's peak resident set (VmHWM), 0 if unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
