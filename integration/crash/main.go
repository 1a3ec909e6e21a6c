package main

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-sql/sluice/internal/oracle"
	"github.com/sluice-sql/sluice/kafka"
)

func main() {
	if err := run(); err != nil {
		if !errors.Is(err, errFailed) {
			fmt.Println("crash: error:", err)
		}
		os.Exit(1)
	}
}

// options are the harness's flags.
type options struct {
	bootstrap string
	server    string
	cycles    int
	guarantee string
	seed      uint64
	dir       string
	keep      bool
}

func parseOptions() (options, error) {
	var o options
	var seed string
	flag.StringVar(&o.bootstrap, "bootstrap", os.Getenv("SLUICE_CRASH_KAFKA"), "Kafka `brokers` (comma-separated)")
	flag.StringVar(&o.server, "server", "bin/sluice-server", "the sluice-server `binary` to run")
	flag.IntVar(&o.cycles, "cycles", 10, "kill and restart cycles")
	flag.StringVar(&o.guarantee, "guarantee", "exactly_once_v2", "processing guarantee of the server: at_least_once or exactly_once_v2")
	flag.StringVar(&seed, "seed", os.Getenv("SEED"), "driver and kill `seed` (default random; printed)")
	flag.StringVar(&o.dir, "dir", "", "work `directory` for the server's data and logs (default a temporary one, removed after a clean run)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory and the run's topics")
	flag.Parse()
	if flag.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	if o.bootstrap == "" {
		return o, errors.New("--bootstrap (or SLUICE_CRASH_KAFKA) must name the Kafka brokers: `make crash` starts one")
	}
	if o.cycles < 1 {
		return o, fmt.Errorf("--cycles %d: want at least 1", o.cycles)
	}
	if o.guarantee != "at_least_once" && o.guarantee != "exactly_once_v2" {
		return o, fmt.Errorf("--guarantee %q: want at_least_once or exactly_once_v2", o.guarantee)
	}
	if seed != "" {
		v, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			return o, fmt.Errorf("seed %q: want an unsigned integer", seed)
		}
		o.seed = v
	} else {
		o.seed = rand.Uint64()
	}
	return o, nil
}

// Shape of the run.
const (
	partitions = 4
	keys       = 64
	windowMs   = 10_000
	graceMs    = 5_000
	batch      = 25                   // orders per produce call
	pace       = 5 * time.Millisecond // between produce calls while a server runs
	tail       = 1_000                // orders after the last restart
)

func run() error {
	o, err := parseOptions()
	if err != nil {
		return err
	}
	fmt.Printf("crash: seed %d (SEED=%d replays it), %d cycles, %s\n", o.seed, o.seed, o.cycles, o.guarantee)
	h, err := newHarness(o)
	if err != nil {
		return err
	}
	defer h.close()
	tally, err := h.run()
	if err != nil {
		h.failed = true
		return fmt.Errorf("%w (seed %d; work directory %s and the run's topics kept)", err, o.seed, h.dir)
	}
	bad := tally.Missing + tally.Wrong
	if o.guarantee == "exactly_once_v2" {
		bad += tally.Duplicated
	}
	if bad > 0 {
		h.failed = true
		fmt.Printf("crash: FAIL: the outputs differ from the oracle (seed %d; work directory %s and the run's topics kept)\n", o.seed, h.dir)
	}
	// The last line, whatever the outcome.
	fmt.Printf("crash: %d cycles, %d records, %d missing, %d duplicated, %d wrong\n",
		o.cycles, h.drv.Orders(), tally.Missing, tally.Duplicated, tally.Wrong)
	if bad > 0 {
		return errFailed
	}
	return nil
}

// errFailed: the run ended, its outputs differ from the oracle; it has
// said so.
var errFailed = errors.New("outputs differ from the oracle")

// harness is one run: the broker client, the driver, the server in turn.
type harness struct {
	o      options
	id     string
	dir    string
	tmp    bool
	failed bool
	cl     kafka.Client
	prod   kafka.Producer
	drv    *oracle.Driver
	rng    *rand.Rand // kill choices, apart from the driver's sequence
	srv    *server
	starts int
	// lastHit is the failpoint that ended the last server, "" if none;
	// hits counts the failpoints hit, missed those set and not hit, and
	// sigkills the cycles the harness ended at a record count.
	lastHit          string
	hits             map[string]int
	missed, sigkills int

	filter, count, join string // sink topics
}

func newHarness(o options) (*harness, error) {
	b := make([]byte, 4)
	if _, err := crand.Read(b); err != nil {
		return nil, err
	}
	h := &harness{o: o, id: hex.EncodeToString(b), dir: o.dir, hits: map[string]int{}}
	if h.dir == "" {
		d, err := os.MkdirTemp("", "sluice-crash-")
		if err != nil {
			return nil, err
		}
		h.dir, h.tmp = d, true
	} else if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return nil, err
	}
	var err error
	h.cl, err = kafka.NewFranz(kafka.Config{Brokers: strings.Split(o.bootstrap, ","), ClientID: "sluice-crash"})
	if err != nil {
		return nil, err
	}
	h.prod, err = h.cl.NewProducer(kafka.ProducerOptions{ClientID: "sluice-crash-driver"})
	if err != nil {
		return nil, err
	}
	h.rng = rand.New(rand.NewPCG(o.seed^0xc4a54, o.seed))
	// Most orders come within the grace period of their window; one in
	// twenty comes 6 to 12 s after its place, which closes its window
	// (10 s, grace 5 s) or not depending on where in it the order falls.
	h.drv = oracle.New(oracle.Config{
		Orders: "orders_" + h.id, Customers: "customers_" + h.id, Partitions: partitions,
		Keys: keys, WindowMs: windowMs, GraceMs: graceMs,
		StepMs: 5, JitterMs: 3_000, LatePct: 5, LateMs: 6_000,
		// Half an hour back: old enough that the run stays behind the
		// broker's clock, young enough for the topics' retention.
		Base:      time.Now().Add(-30*time.Minute).UnixMilli() / windowMs * windowMs,
		MinAmount: 50,
	}, o.seed)
	h.filter, h.count, h.join = "crash_big_"+h.id, "crash_counts_"+h.id, "crash_enriched_"+h.id
	return h, nil
}

func (h *harness) close() {
	if h.srv != nil {
		h.srv.kill()
	}
	if !h.o.keep && !h.failed {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if topics, err := h.cl.ListTopics(ctx); err == nil {
			for _, t := range topics {
				if strings.Contains(strings.ToLower(t.Name), h.id) {
					_ = h.cl.DeleteTopic(ctx, t.Name)
				}
			}
		}
		if h.tmp {
			_ = os.RemoveAll(h.dir)
		}
	}
	h.prod.Close()
	h.cl.Close()
}

// kill is how one cycle ends.
type kill struct {
	budget    int    // orders after which the harness kills the server itself
	failpoint string // name=N passed to the server, or ""
}

func (k kill) String() string {
	if k.failpoint == "" {
		return fmt.Sprintf("SIGKILL at %d records", k.budget)
	}
	return "failpoint " + k.failpoint
}

func (h *harness) pickKill() kill {
	k := kill{budget: 300 + h.rng.IntN(2200)}
	if h.lastHit == "txn-committed" && h.rng.IntN(2) == 0 {
		// Pebble is behind the committed changelog now: the restart
		// restores, so kill it there too, often.
		k.failpoint = fmt.Sprintf("restore=%d", 1+h.rng.IntN(2))
		return k
	}
	switch h.rng.IntN(5) {
	case 0, 1:
	case 2:
		k.failpoint = fmt.Sprintf("txn-committed=%d", 1+h.rng.IntN(40))
	case 3:
		k.failpoint = fmt.Sprintf("cache-flush=%d", 1+h.rng.IntN(15))
	case 4:
		k.failpoint = fmt.Sprintf("restore=%d", 1+h.rng.IntN(4))
	}
	return k
}

// restart is what the harness measured of one restart.
type restart struct {
	cycle    int
	recovery time.Duration // -1: killed before it recovered
}

func (h *harness) run() (oracle.Tally, error) {
	var restarts []restart
	for c := 1; c <= h.o.cycles; c++ {
		k := h.pickKill()
		if c == 1 {
			// The first server runs the setup: a failpoint could end it
			// between two statements.
			k.failpoint = ""
		}
		var err error
		h.srv, err = h.start(k.failpoint)
		if err != nil {
			return oracle.Tally{}, err
		}
		if c == 1 {
			if err := h.setup(); err != nil {
				return oracle.Tally{}, err
			}
		} else {
			rec, err := h.awaitRecovery()
			if err != nil {
				return oracle.Tally{}, fmt.Errorf("cycle %d: %w", c, err)
			}
			restarts = append(restarts, restart{c, rec})
			if rec < 0 {
				h.noteHit()
				fmt.Printf("crash: cycle %d: killed by %s during recovery, after %s\n", c, h.srv.failpointHit(), time.Since(h.srv.start).Round(time.Millisecond))
				h.srv = nil
				continue
			}
		}
		how, n, err := h.cycle(k)
		if err != nil {
			return oracle.Tally{}, fmt.Errorf("cycle %d: %w", c, err)
		}
		recovery := "first start"
		if c > 1 {
			recovery = "recovered in " + restarts[len(restarts)-1].recovery.Round(time.Millisecond).String()
		}
		fmt.Printf("crash: cycle %d: %s; %d records in the cycle; %s\n", c, how, n, recovery)
		// Records keep coming while the server is down.
		if d := h.rng.IntN(300); d > 0 {
			if err := h.produce(d); err != nil {
				return oracle.Tally{}, err
			}
		}
	}
	var err error
	h.srv, err = h.start("")
	if err != nil {
		return oracle.Tally{}, err
	}
	rec, err := h.awaitRecovery()
	if err != nil {
		return oracle.Tally{}, fmt.Errorf("last restart: %w", err)
	}
	if rec < 0 {
		return oracle.Tally{}, fmt.Errorf("the last server died without a failpoint set: %s", h.srv.tail())
	}
	restarts = append(restarts, restart{h.o.cycles + 1, rec})
	fmt.Printf("crash: last restart: recovered in %s\n", rec.Round(time.Millisecond))
	summarize(restarts)
	var hits []string
	for _, name := range slices.Sorted(maps.Keys(h.hits)) {
		hits = append(hits, fmt.Sprintf("%s %d", name, h.hits[name]))
	}
	fmt.Printf("crash: kills: %d by the harness at a record count (%d of them with a failpoint set that was not hit), %d at failpoints (%s)\n",
		h.sigkills, h.missed, h.o.cycles-h.sigkills, strings.Join(hits, ", "))
	for done := 0; done < tail; done += batch {
		if err := h.produce(batch); err != nil {
			return oracle.Tally{}, err
		}
		if h.srv.exited() {
			return oracle.Tally{}, fmt.Errorf("the last server died: %s", h.srv.tail())
		}
		pause(pace)
	}
	start := time.Now()
	if err := h.awaitDrained(); err != nil {
		return oracle.Tally{}, err
	}
	fmt.Printf("crash: drained in %s\n", time.Since(start).Round(time.Millisecond))
	return h.check()
}

// summarize prints the min, median and max recovery time of restarts.
func summarize(rs []restart) {
	var ds []time.Duration
	killed := 0
	for _, r := range rs {
		if r.recovery < 0 {
			killed++
			continue
		}
		ds = append(ds, r.recovery)
	}
	if len(ds) == 0 {
		fmt.Printf("crash: recovery: no restart recovered (%d killed during recovery)\n", killed)
		return
	}
	slices.Sort(ds)
	fmt.Printf("crash: recovery over %d restarts: min %s, median %s, max %s (%d more killed during recovery)\n",
		len(ds), ds[0].Round(time.Millisecond), ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond), killed)
}

// setup creates the inputs, produces the customers table and creates the
// three queries, on the first server.
func (h *harness) setup() error {
	orders, customers := "orders_"+h.id, "customers_"+h.id
	if err := h.ksql(fmt.Sprintf(`CREATE STREAM %s (cust VARCHAR KEY, seq BIGINT, amount BIGINT)
  WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d);
CREATE TABLE %s (id VARCHAR PRIMARY KEY, name VARCHAR)
  WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d);`,
		orders, orders, partitions, customers, customers, partitions)); err != nil {
		return err
	}
	// The whole table before any order: every order meets its customer
	// whatever the order the join reads its inputs in.
	if err := h.send(h.drv.Customers()); err != nil {
		return err
	}
	return h.ksql(fmt.Sprintf(`CREATE STREAM %s WITH (KAFKA_TOPIC='%s') AS
  SELECT cust, seq, amount FROM %s WHERE amount >= 50;
CREATE TABLE %s WITH (KAFKA_TOPIC='%s') AS
  SELECT cust, COUNT(*) AS n FROM %s
  WINDOW TUMBLING (SIZE %d SECONDS, GRACE PERIOD %d SECONDS) GROUP BY cust;
CREATE STREAM %s WITH (KAFKA_TOPIC='%s') AS
  SELECT o.cust, seq, amount, name FROM %s o JOIN %s c ON o.cust = c.id;`,
		h.filter, h.filter, orders,
		h.count, h.count, orders, windowMs/1000, graceMs/1000,
		h.join, h.join, orders, customers))
}

// cycle feeds the running server until k ends it and returns how it
// ended and how many orders the cycle produced.
func (h *harness) cycle(k kill) (string, int, error) {
	n := 0
	for n < k.budget {
		if h.srv.exited() {
			break
		}
		m := min(batch, k.budget-n)
		if err := h.produce(m); err != nil {
			return "", n, err
		}
		n += m
		pause(pace)
	}
	if h.srv.exited() {
		if fp := h.noteHit(); fp != "" {
			h.srv = nil
			return "killed by " + fp, n, nil
		}
		return "", n, fmt.Errorf("the server died by itself: %s", h.srv.tail())
	}
	h.srv.kill()
	if fp := h.noteHit(); fp != "" {
		// It hit the failpoint as the harness killed it.
		h.srv = nil
		return "killed by " + fp, n, nil
	}
	h.srv = nil
	h.sigkills++
	if k.failpoint != "" {
		h.missed++
		return fmt.Sprintf("failpoint %s not hit, SIGKILL at %d records", k.failpoint, n), n, nil
	}
	return k.String(), n, nil
}

// noteHit counts the failpoint that ended the server, if one did, and
// returns its "<name> hit <N>".
func (h *harness) noteHit() string {
	fp := h.srv.failpointHit()
	h.lastHit, _, _ = strings.Cut(fp, " ")
	if fp != "" {
		h.hits[h.lastHit]++
	}
	return fp
}

func (h *harness) produce(n int) error { return h.send(h.drv.Next(n)) }

func (h *harness) send(recs []*kafka.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.prod.Produce(ctx, recs); err != nil {
		return fmt.Errorf("driver: %w", err)
	}
	return nil
}

// pause waits d between two produce calls of the paced driver.
func pause(d time.Duration) {
	t := time.NewTimer(d)
	<-t.C
}

// start runs a server on the run's data directory, with failpoint set
// when not empty, and waits until it prints its HTTP address.
func (h *harness) start(failpoint string) (*server, error) {
	h.starts++
	args := []string{
		"--bootstrap-servers", h.o.bootstrap,
		"--data-dir", filepath.Join(h.dir, "data"),
		"--service-id", "crash_" + h.id,
		"--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0",
		"--shutdown-timeout", "1s",
		"--processing-guarantee", h.o.guarantee,
	}
	cmd := exec.Command(h.o.server, args...)
	cmd.Env = append(os.Environ(), "SLUICE_FAILPOINTS="+failpoint)
	logPath := filepath.Join(h.dir, fmt.Sprintf("server-%03d.log", h.starts))
	return startServer(cmd, logPath)
}

// server is one run of sluice-server.
type server struct {
	cmd     *exec.Cmd
	start   time.Time
	http    string
	logPath string
	done    chan struct{}

	mu       sync.Mutex
	hit      string   // the failpoint line, once printed
	lastLogs []string // the last lines of stderr
}

func startServer(cmd *exec.Cmd, logPath string) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	s.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if _, a, ok := strings.Cut(line, "/metrics) on "); ok {
				addr <- strings.TrimSpace(a)
			}
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			s.mu.Lock()
			if strings.HasPrefix(line, "failpoint ") && strings.HasSuffix(line, ": killing") {
				s.hit = strings.TrimSuffix(strings.TrimPrefix(line, "failpoint "), ": killing")
			}
			s.lastLogs = append(s.lastLogs, line)
			if len(s.lastLogs) > 20 {
				s.lastLogs = s.lastLogs[1:]
			}
			s.mu.Unlock()
		}
	}()
	go func() {
		wg.Wait()
		_ = cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	t := time.NewTimer(2 * time.Minute)
	defer t.Stop()
	select {
	case s.http = <-addr:
		return s, nil
	case <-s.done:
		if s.failpointHit() != "" {
			return s, nil
		}
		return nil, fmt.Errorf("sluice-server exited at start: %s", s.tail())
	case <-t.C:
		s.kill()
		return nil, fmt.Errorf("sluice-server did not print its HTTP address within 2 minutes: %s", s.tail())
	}
}

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits for the process to end.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// failpointHit is "<name> hit <N>" once the server said it kills itself
// at a failpoint, else "".
func (s *server) failpointHit() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hit
}

// tail is the end of the server's stderr and where its whole log is.
func (s *server) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	status := "running"
	if s.cmd.ProcessState != nil {
		status = s.cmd.ProcessState.String()
	}
	return fmt.Sprintf("%s; log %s ends:\n%s", status, s.logPath, strings.Join(s.lastLogs, "\n"))
}

// ksql runs statements through POST /ksql, with the run's processing
// guarantee set on the queries they create.
func (h *harness) ksql(stmts string) error {
	body, _ := json.Marshal(map[string]any{
		"ksql":              stmts,
		"streamsProperties": map[string]any{"auto.offset.reset": "earliest", "processing.guarantee": h.o.guarantee},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+h.srv.http+"/ksql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/vnd.ksql.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("POST /ksql: %w", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /ksql %q: %s: %s", stmts, resp.Status, out)
	}
	return nil
}

// queryMetrics are the figures /metrics gives for one query.
type queryMetrics struct {
	persistent bool
	status     string
	in         float64
	lag        float64
	hasLag     bool
}

// metrics reads the server's /metrics.
func (h *harness) metrics(ctx context.Context) (map[string]*queryMetrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h.srv.http+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	qs := map[string]*queryMetrics{}
	get := func(q string) *queryMetrics {
		m := qs[q]
		if m == nil {
			m = &queryMetrics{}
			qs[q] = m
		}
		return m
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		l := parseLabels(labels)
		q, ok := l["query"]
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
		switch name {
		case "sluice_query_info":
			m := get(q)
			m.persistent = l["type"] == "PERSISTENT"
			m.status = l["status"]
		case "sluice_query_records_in_total":
			get(q).in = v
		case "sluice_query_consumer_lag_records":
			m := get(q)
			m.lag, m.hasLag = v, true
		}
	}
	return qs, sc.Err()
}

func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		k, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		v, rest, _ := strings.Cut(rest, `"`)
		out[k] = v
		s = strings.TrimPrefix(rest, ",")
	}
	return out
}

// poll calls ok every interval until it says done, the server exits
// (false) or timeout passes (an error).
func (h *harness) poll(what string, timeout time.Duration, ok func(map[string]*queryMetrics) bool) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if h.srv.exited() {
			return false, nil
		}
		qs, err := h.metrics(ctx)
		if err == nil && ok(qs) {
			return true, nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("%s: not within %s (last /metrics error: %v; queries: %s); %s", what, timeout, last, describe(qs), h.srv.tail())
		case <-h.srv.done:
		case <-tick.C:
		}
	}
}

func describe(qs map[string]*queryMetrics) string {
	var parts []string
	for id, m := range qs {
		parts = append(parts, fmt.Sprintf("%s %s in=%v lag=%v", id, m.status, m.in, m.lag))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// persistent returns the persistent queries of qs when there are the
// three of the run, every one RUNNING.
func persistent(qs map[string]*queryMetrics) []*queryMetrics {
	var out []*queryMetrics
	for _, m := range qs {
		if !m.persistent {
			continue
		}
		if m.status != "RUNNING" {
			return nil
		}
		out = append(out, m)
	}
	if len(out) != 3 {
		return nil
	}
	return out
}

// awaitRecovery waits until the three queries are RUNNING and each one
// processes records again (or has nothing to process) and returns the
// time since the process started; -1 when the server died first (at a
// failpoint).
func (h *harness) awaitRecovery() (time.Duration, error) {
	if h.srv.exited() {
		if h.srv.failpointHit() == "" {
			return 0, fmt.Errorf("the server died by itself: %s", h.srv.tail())
		}
		return -1, nil
	}
	ok, err := h.poll("recovery", 3*time.Minute, func(qs map[string]*queryMetrics) bool {
		ps := persistent(qs)
		if ps == nil {
			return false
		}
		for _, m := range ps {
			if m.in == 0 && (!m.hasLag || m.lag > 0) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	if !ok {
		if h.srv.failpointHit() == "" {
			return 0, fmt.Errorf("the server died by itself: %s", h.srv.tail())
		}
		return -1, nil
	}
	return time.Since(h.srv.start), nil
}

// awaitDrained waits until the three queries have no lag: every input
// record is processed and, as a task moves its position only after its
// commit, committed.
func (h *harness) awaitDrained() error {
	ok, err := h.poll("drain", 5*time.Minute, func(qs map[string]*queryMetrics) bool {
		ps := persistent(qs)
		if ps == nil {
			return false
		}
		for _, m := range ps {
			if !m.hasLag || m.lag > 0 {
				return false
			}
		}
		return true
	})
	if err == nil && !ok {
		err = fmt.Errorf("the last server died while draining: %s", h.srv.tail())
	}
	return err
}

// check reads the three outputs with read_committed and compares them
// with the oracle.
func (h *harness) check() (oracle.Tally, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The input holds what the driver produced: a loss below is
	// Sluice's.
	bounds, err := h.cl.ListOffsets(ctx, "orders_"+h.id)
	if err != nil {
		return oracle.Tally{}, err
	}
	in := int64(0)
	for _, b := range bounds {
		in += b.End - b.Start
	}
	if in != int64(h.drv.Orders()) {
		return oracle.Tally{}, fmt.Errorf("orders_%s holds %d records; the driver produced %d", h.id, in, h.drv.Orders())
	}
	var out oracle.Outputs
	for _, t := range []struct {
		topic string
		into  *[]*kafka.Record
	}{{h.filter, &out.Filter}, {h.join, &out.Join}, {h.count, &out.Count}} {
		recs, err := kafka.ReadAll(ctx, h.cl, t.topic)
		if err != nil {
			return oracle.Tally{}, err
		}
		*t.into = recs
	}
	filter, join, counts := h.drv.Want()
	fmt.Printf("crash: oracle: %d orders (%d late for the count); %d filter rows, %d join rows, %d windows\n",
		h.drv.Orders(), h.drv.Late(), total(filter), total(join), len(counts))
	fmt.Printf("crash: read: %d filter rows, %d join rows, %d count updates\n", len(out.Filter), len(out.Join), len(out.Count))
	t := h.drv.Check(out, h.o.guarantee == "exactly_once_v2")
	for _, n := range t.Notes {
		fmt.Println("crash:", n)
	}
	return t, nil
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
