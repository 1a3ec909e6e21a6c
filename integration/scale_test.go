package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/oracle"
	"github.com/sluice-sql/sluice/internal/wire"
	"github.com/sluice-sql/sluice/kafka"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// TestScaleOut runs the pipeline on two sluice-server processes of one
// cluster (same service id, --cluster): they split the partitions, both
// answer pull queries for every key, and when one is killed (SIGKILL)
// mid-stream the other takes its partitions, restores their state from
// the changelogs, and the oracle check holds: under at_least_once the
// killed server's uncommitted work is done again, within the duplicates
// allowed; under exactly_once_v2 the survivor fences the killed server's
// transactions and nothing is duplicated. The killed server then
// restarts and takes its share back.
func TestScaleOut(t *testing.T) {
	brokers := requireKafka(t)
	requireNodes(t, 1)
	bin := buildServer(t)
	for _, g := range []struct{ name, set, tag string }{
		{"at_least_once", "", "scale"},
		{"exactly_once_v2", `SET 'processing.guarantee'='exactly_once_v2';`, "scaleeos"},
	} {
		t.Run(g.name, func(t *testing.T) { scaleOut(t, brokers, bin, g.tag, g.set) })
	}
}

// scaleOut is TestScaleOut under the guarantee settings set ("" for the
// default, at_least_once).
func scaleOut(t *testing.T, brokers []string, bin, scenario, set string) {
	start := time.Now()
	eos := set != ""
	p := newPipelineState(t, adapters[0], brokers, scenario)
	s := &servers{t: t, bin: bin, brokers: brokers, service: p.serviceID(), cl: p.cl}
	t.Cleanup(s.stopAll)
	a := s.start("a")
	b := s.start("b")
	p.servers = s
	var settings []string
	if eos {
		settings = append(settings, set)
	}
	p.setup(settings...)
	t.Logf("timing: two servers up and the queries started in %s", time.Since(start).Round(time.Millisecond))
	if eos {
		tb, err := s.table(context.Background(), "SHOW QUERIES EXTENDED;")
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range tb.Rows {
			if !slices.Contains(row, "exactly_once_v2") {
				t.Fatalf("query %s does not run exactly_once_v2: %q", row[0], row)
			}
		}
	}

	// Both servers own partitions, and either answers for every key.
	s.waitOwners(a, 2)
	s.waitOwners(b, 2)
	n := driverRecords(t, 4000)
	drain(p.drive(n/2, 250))
	p.flush(5 * time.Minute)
	keys := []string{"c00", "c01", "c05", "c17", "c42", "c63"}
	want := p.windowCounts(keys)
	for _, srv := range []*server{a, b} {
		if got := s.pullCounts(srv, p.counts, keys); !equalCounts(got, want) {
			t.Fatalf("pull on server %s: got %v, want %v", srv.name, got, want)
		}
	}

	// Kill b in the middle of the second half.
	owned := s.slotsOf(a, b.addr)
	progress := p.drive(n-n/2, 250)
	waitProduced(progress, n/4)
	s.kill(b)
	killed := time.Now()
	// At-least-once does again what b had not committed, and nothing
	// else; exactly-once does nothing twice.
	maxDup := 0
	if !eos {
		maxDup = s.uncommitted(owned)
		t.Logf("server b left %d input records uncommitted", maxDup)
	}
	drain(progress)
	s.waitOwners(a, 1)
	t.Logf("timing: server a owned every partition %s after the kill", time.Since(killed).Round(time.Millisecond))
	p.checkDup(maxDup, eos)

	// The survivor answers for every key: at least the oracle's counts
	// (at-least-once may count a record twice), exactly them under
	// exactly-once.
	want = p.windowCounts(keys)
	got := s.pullCounts(a, p.counts, keys)
	if eos && !equalCounts(got, want) {
		t.Errorf("pull on a after the kill: got %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] < w {
			t.Errorf("pull on a after the kill: window %s count %d, want %d", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("pull on a after the kill: window %s is not in the input", k)
		}
	}

	// b restarts on its data directory: it rejoins, takes partitions
	// back (restoring what it missed from the changelogs), and the
	// oracle still holds.
	restarted := time.Now()
	b = s.startIn("b", b.dir)
	s.waitOwners(a, 2)
	s.waitOwners(b, 2)
	t.Logf("timing: server b owned partitions again %s after its restart", time.Since(restarted).Round(time.Millisecond))
	// a hands the partitions back having committed what it processed:
	// no more duplicates than before.
	drain(p.drive(n/4, 250))
	p.checkDup(maxDup, eos)
	want = p.windowCounts(keys)
	for _, srv := range []*server{a, b} {
		got := s.pullCounts(srv, p.counts, keys)
		for k, w := range want {
			if got[k] < w || eos && got[k] != w {
				t.Errorf("pull on %s after the restart: window %s count %d, want %d", srv.name, k, got[k], w)
			}
		}
	}
	t.Logf("timing: %s took %s", t.Name(), time.Since(start).Round(time.Millisecond))
}

// windowCounts is the oracle's count per window of keys, by windowKey.
func (p *pipeline) windowCounts(keys []string) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	_, _, counts := p.src.Want()
	for k, n := range counts {
		for _, key := range keys {
			if strings.HasPrefix(k, key+"@") {
				out[k] = n
			}
		}
	}
	return out
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// buildServer builds cmd/server into the test's temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sluice-server")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/server")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/server: %v\n%s", err, out)
	}
	return bin
}

// servers are sluice-server processes of one cluster.
type servers struct {
	t       *testing.T
	bin     string
	brokers []string
	service string
	cl      kafka.Client

	mu   sync.Mutex
	live []*server
}

// server is one sluice-server process.
type server struct {
	name string
	dir  string // its data directory is dir/data
	cmd  *exec.Cmd
	addr string
	log  string // its log file
	conn *grpc.ClientConn
	api  sluicev1.SluiceClient
	done chan struct{}
}

// start starts a server with a new data directory and waits until it
// serves.
func (s *servers) start(name string) *server {
	s.t.Helper()
	return s.startIn(name, s.t.TempDir())
}

// startIn starts a server on data directory dir (that of a server that
// ran before: a restart) and waits until it serves.
func (s *servers) startIn(name, dir string) *server {
	t := s.t
	t.Helper()
	logPath := filepath.Join(dir, fmt.Sprintf("server-%d.log", time.Now().UnixNano()))
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "--cluster", "--bootstrap-servers", strings.Join(s.brokers, ","),
		"--service-id", s.service, "--data-dir", filepath.Join(dir, "data"),
		"--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--cluster-session-timeout", "6s")
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	srv := &server{name: name, dir: dir, cmd: cmd, log: logPath, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "Sluice server listening on "); ok {
				addr <- a
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(srv.done)
	}()
	select {
	case srv.addr = <-addr:
	case <-srv.done:
		t.Fatalf("server %s exited at start:\n%s", name, readLog(logPath))
	case <-time.After(2 * time.Minute):
		t.Fatalf("server %s did not start in 2 minutes:\n%s", name, readLog(logPath))
	}
	srv.conn, err = grpc.NewClient(srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	srv.api = sluicev1.NewSluiceClient(srv.conn)
	s.mu.Lock()
	s.live = append(s.live, srv)
	s.mu.Unlock()
	t.Logf("server %s listening on %s (log %s)", name, srv.addr, logPath)
	return srv
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// kill kills a server with SIGKILL: no commit, no leaving the group.
func (s *servers) kill(srv *server) {
	s.t.Helper()
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		s.t.Fatal(err)
	}
	<-srv.done
	_ = srv.conn.Close()
	s.mu.Lock()
	for i, l := range s.live {
		if l == srv {
			s.live = append(s.live[:i], s.live[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	s.t.Logf("killed server %s", srv.name)
}

// stopAll stops the live servers with SIGTERM; it logs their logs when
// the test failed.
func (s *servers) stopAll() {
	s.mu.Lock()
	live := s.live
	s.live = nil
	s.mu.Unlock()
	for _, srv := range live {
		_ = srv.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-srv.done:
		case <-time.After(30 * time.Second):
			_ = srv.cmd.Process.Kill()
			<-srv.done
		}
		_ = srv.conn.Close()
		if s.t.Failed() || os.Getenv("SLUICE_TEST_KAFKA_LOG") != "" {
			s.t.Logf("server %s log:\n%s", srv.name, readLog(srv.log))
		}
	}
}

// first is the first live server.
func (s *servers) first() *server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.live) == 0 {
		s.t.Fatal("no live server")
	}
	return s.live[0]
}

// exec runs sql on the first live server.
func (s *servers) exec(ctx context.Context, sess *engine.Session, sql string) {
	s.t.Helper()
	if _, err := s.execute(ctx, s.first(), sess, sql); err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
}

// execute runs sql on srv and returns the last table result, if any. A
// SET changes sess.
func (s *servers) execute(ctx context.Context, srv *server, sess *engine.Session, sql string) (*table, error) {
	var props map[string]string
	if sess != nil {
		props = sess.Properties
	}
	stream, err := srv.api.Execute(ctx, &sluicev1.ExecuteRequest{Sql: sql, Properties: props})
	if err != nil {
		return nil, err
	}
	var tb *table
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return tb, nil
		}
		if err != nil {
			return nil, err
		}
		if ss := m.GetSession(); ss != nil && sess != nil {
			sess.Properties = ss.GetProperties()
		}
		if t := entityTable(m.GetEntity()); t != nil {
			tb = t
		}
	}
}

// table runs a statement giving a table on the first live server.
func (s *servers) table(ctx context.Context, sql string) (*table, error) {
	tb, err := s.execute(ctx, s.first(), nil, sql)
	if err == nil && tb == nil {
		err = fmt.Errorf("%s: no table", sql)
	}
	return tb, err
}

// sinkTopic is the topic of a source, from the first live server.
func (s *servers) sinkTopic(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := s.first().api.Describe(ctx, &sluicev1.DescribeRequest{Target: &sluicev1.DescribeRequest_Source{Source: name}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetSource().GetTopic()
}

// flush waits until each persistent query's consumer group has committed
// the end offsets of its input topics (its source and repartition
// topics) as they are now: whichever server owns a partition processed
// it. The flush barrier of servers outside the test's process.
func (s *servers) flush(ctx context.Context) error {
	inputs, err := s.queryInputs(ctx)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		if err := s.waitCommitted(ctx, in.group, in.topic); err != nil {
			return fmt.Errorf("query %s: %w", in.query, err)
		}
	}
	return nil
}

// queryInput is one topic a persistent query reads, and the consumer
// group that commits its offsets.
type queryInput struct{ query, group, topic string }

// queryInputs lists what every persistent query reads: its source and
// its repartition topics.
func (s *servers) queryInputs(ctx context.Context) ([]queryInput, error) {
	tb, err := s.table(ctx, "SHOW QUERIES;")
	if err != nil {
		return nil, err
	}
	topics, err := s.cl.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	prefix := "_sluice-" + s.service + "-"
	var out []queryInput
	for _, row := range tb.Rows {
		id := row[0]
		src, err := s.queryInput(ctx, id)
		if err != nil {
			return nil, err
		}
		group := prefix + "query-" + id
		out = append(out, queryInput{id, group, src})
		for _, ti := range topics {
			if strings.HasPrefix(ti.Name, prefix+id+"-") && strings.HasSuffix(ti.Name, "-repartition") {
				out = append(out, queryInput{id, group, ti.Name})
			}
		}
	}
	return out, nil
}

// slots are the partition slots a server owns in the cluster's
// assignment (partition p belongs to slot p mod mod), as SHOW QUERIES
// EXTENDED on srv gives them.
type slots struct {
	mod   int
	owned map[int]bool
}

func (sl slots) has(partition int) bool { return sl.owned[partition%sl.mod] }

// slotsOf reads from srv which slots the server at addr owns.
func (s *servers) slotsOf(srv *server, addr string) slots {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tb, err := s.execute(ctx, srv, nil, "SHOW QUERIES EXTENDED;")
	if err != nil || tb == nil || len(tb.Rows) == 0 {
		s.t.Fatalf("SHOW QUERIES EXTENDED on %s: %v", srv.name, err)
	}
	col := slices.Index(tb.Columns, "Partitions")
	if col < 0 {
		s.t.Fatalf("SHOW QUERIES EXTENDED on %s has no Partitions column: %v", srv.name, tb.Columns)
	}
	// "A (this server) owns 0,1; B owns 2,3 (partitions mod 4)"
	text := tb.Rows[0][col]
	owners, mod, ok := strings.Cut(text, " (partitions mod ")
	sl := slots{owned: map[int]bool{}}
	if _, err := fmt.Sscanf(mod, "%d)", &sl.mod); !ok || err != nil || sl.mod <= 0 {
		s.t.Fatalf("SHOW QUERIES EXTENDED on %s: partitions %q", srv.name, text)
	}
	for _, part := range strings.Split(owners, "; ") {
		who, list, ok := strings.Cut(part, " owns ")
		if !ok {
			s.t.Fatalf("SHOW QUERIES EXTENDED on %s: partitions %q", srv.name, text)
		}
		if strings.TrimSuffix(who, " (this server)") != addr {
			continue
		}
		for _, n := range strings.Split(list, ",") {
			var slot int
			if _, err := fmt.Sscanf(n, "%d", &slot); err != nil {
				s.t.Fatalf("SHOW QUERIES EXTENDED on %s: partitions %q", srv.name, text)
			}
			sl.owned[slot] = true
		}
	}
	if len(sl.owned) == 0 {
		s.t.Fatalf("SHOW QUERIES EXTENDED on %s: %s owns nothing in %q", srv.name, addr, text)
	}
	return sl
}

// uncommitted counts the records of the queries' inputs, on the
// partitions of sl, that their groups have not committed: what a killed
// owner of sl may have processed without committing, and so the most
// at-least-once may process again. Read right after the kill, before
// another server takes the partitions over, it bounds the duplicates
// the kill may cause: each record read again gives at most one row of
// each query (a filter, a stream-table join, a count).
func (s *servers) uncommitted(sl slots) int {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inputs, err := s.queryInputs(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	n := 0
	for _, in := range inputs {
		committed, err := s.cl.FetchOffsets(ctx, in.group, in.topic)
		if err != nil {
			s.t.Fatal(err)
		}
		bounds, err := s.cl.ListOffsets(ctx, in.topic)
		if err != nil {
			s.t.Fatal(err)
		}
		for p, b := range bounds {
			if !sl.has(p) {
				continue
			}
			from := b.Start
			if p < len(committed) && committed[p] > from {
				from = committed[p]
			}
			n += int(max(0, b.End-from))
		}
	}
	return n
}

// queryInput is the topic a persistent query reads (its first source).
func (s *servers) queryInput(ctx context.Context, id string) (string, error) {
	resp, err := s.first().api.Describe(ctx, &sluicev1.DescribeRequest{Target: &sluicev1.DescribeRequest_QueryId{QueryId: id}})
	if err != nil {
		return "", err
	}
	srcs := resp.GetQuery().GetSources()
	if len(srcs) == 0 {
		return "", fmt.Errorf("query %s reads no source", id)
	}
	d, err := s.first().api.Describe(ctx, &sluicev1.DescribeRequest{Target: &sluicev1.DescribeRequest_Source{Source: srcs[0]}})
	if err != nil {
		return "", err
	}
	return d.GetSource().GetTopic(), nil
}

// waitCommitted waits until group has committed topic's end offsets.
func (s *servers) waitCommitted(ctx context.Context, group, topic string) error {
	bounds, err := s.cl.ListOffsets(ctx, topic)
	if err != nil {
		return err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		committed, err := s.cl.FetchOffsets(ctx, group, topic)
		if err != nil {
			return err
		}
		behind := ""
		for p, b := range bounds {
			if b.End > b.Start && (p >= len(committed) || committed[p] < b.End) {
				behind = fmt.Sprintf("%s partition %d committed %d of %d", topic, p, committed[p], b.End)
			}
		}
		if behind == "" {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", behind, ctx.Err())
		}
	}
}

// waitOwners waits until SHOW QUERIES EXTENDED on srv shows the
// partitions of its queries split between n servers.
func (s *servers) waitOwners(srv *server, n int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		tb, err := s.execute(ctx, srv, nil, "SHOW QUERIES EXTENDED;")
		if err == nil && tb != nil {
			col := -1
			for i, c := range tb.Columns {
				if c == "Partitions" {
					col = i
				}
			}
			if col < 0 {
				s.t.Fatalf("SHOW QUERIES EXTENDED on %s has no Partitions column: %v", srv.name, tb.Columns)
			}
			ok := len(tb.Rows) > 0
			for _, row := range tb.Rows {
				last = row[col]
				if strings.Count(row[col], " owns ") != n || strings.Contains(row[col], "unassigned") {
					ok = false
				}
			}
			if ok {
				s.t.Logf("server %s: %s", srv.name, last)
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			s.t.Fatalf("server %s: the partitions are not split between %d servers: %q (err %v)", srv.name, n, last, err)
		}
	}
}

// pullCounts runs a pull query for keys on the windowed count table on
// srv, and returns the counts by windowKey.
func (s *servers) pullCounts(srv *server, table string, keys []string) map[string]int {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = "'" + k + "'"
	}
	sql := fmt.Sprintf("SELECT cust, windowstart, n FROM %s WHERE cust IN (%s);", table, strings.Join(quoted, ", "))
	resp, err := srv.api.PullQuery(ctx, &sluicev1.PullQueryRequest{Sql: sql})
	if err != nil {
		s.t.Fatalf("pull on server %s: %s: %v", srv.name, sql, err)
	}
	out := map[string]int{}
	for _, row := range resp.GetRows() {
		vs := row.GetValues()
		if len(vs) != 3 {
			s.t.Fatalf("pull on server %s: row of %d values", srv.name, len(vs))
		}
		key, _ := wire.DecodeValue(vs[0])
		start, _ := wire.DecodeValue(vs[1])
		n, _ := wire.DecodeValue(vs[2])
		k := oracle.WindowKey(fmt.Sprint(key), toInt64(start))
		if _, dup := out[k]; dup {
			s.t.Fatalf("pull on server %s: window %s twice", srv.name, k)
		}
		out[k] = int(toInt64(n))
	}
	return out
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case time.Time:
		return x.UnixMilli()
	}
	return -1
}
