package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-sql/sluice/bench/nexmark"
	"github.com/sluice-sql/sluice/kafka"
)

// The systems the driver runs.
const (
	systemSluice   = "sluice"
	systemKStreams = "kstreams"
	systemFlink    = "flink"
)

var allSystems = []string{systemSluice, systemKStreams, systemFlink}

// peer is a JVM implementation of the queries under bench/peers.
type peer struct {
	name string
	// dir is its Maven project.
	dir string
	// main is the class to run.
	main string
	// drains says the child runs until its standard input is closed, which
	// the driver does once the application's consumer group has committed
	// the end of its input and repartition topics (Kafka Streams). Without
	// it the child reads bounded sources and exits by itself (Flink).
	drains bool
	// jsonWindowKeys says windowed outputs carry the window in a JSON key
	// (window_start, window_end) rather than in Kafka Streams' binary
	// windowed key.
	jsonWindowKeys bool
	// classpath is set once the project is built; err says why it cannot run.
	classpath string
	err       error
}

// javaOpts are the JVM options of every peer: the fixed heap the table
// states.
func javaOpts(xmx string) []string {
	return []string{"-Xmx" + xmx}
}

func newPeers(dir string) map[string]*peer {
	return map[string]*peer{
		systemKStreams: {name: systemKStreams, dir: filepath.Join(dir, "kstreams"), main: "sluice.bench.kstreams.Nexmark", drains: true},
		systemFlink:    {name: systemFlink, dir: filepath.Join(dir, "flink"), main: "sluice.bench.flink.Nexmark", jsonWindowKeys: true},
	}
}

// build packages the peer's Maven project unless its jar and class path
// file are there, and reads the class path.
func (p *peer) build() {
	if _, err := exec.LookPath("java"); err != nil {
		p.err = errors.New("no java on PATH (the peers need Java 17)")
		return
	}
	target := filepath.Join(p.dir, "target")
	cpFile := filepath.Join(target, "classpath.txt")
	jar := filepath.Join(target, filepath.Base(p.dir)+".jar")
	if _, err := os.Stat(cpFile); err != nil || !exists(jar) || newerSources(p.dir, jar) {
		if _, err := exec.LookPath("mvn"); err != nil {
			p.err = errors.New("no mvn on PATH to build " + p.dir)
			return
		}
		fmt.Fprintf(os.Stderr, "nexmark: building %s with Maven\n", p.dir)
		// finalName is fixed in the pom so that the jar's name is known.
		cmd := exec.Command("mvn", "-q", "-B", "package")
		cmd.Dir = p.dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			p.err = fmt.Errorf("mvn package in %s: %v: %s", p.dir, err, lastLines(string(out), 5))
			return
		}
	}
	b, err := os.ReadFile(cpFile)
	if err != nil {
		p.err = err
		return
	}
	abs, _ := filepath.Abs(jar)
	p.classpath = abs + string(os.PathListSeparator) + strings.TrimSpace(string(b))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// newerSources says whether a file under dir/src or dir/pom.xml is newer
// than built.
func newerSources(dir, built string) bool {
	st, err := os.Stat(built)
	if err != nil {
		return true
	}
	newer := false
	check := func(path string, info os.FileInfo) {
		if info.ModTime().After(st.ModTime()) {
			newer = true
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "pom.xml")); err == nil {
		check("", info)
	}
	_ = filepath.Walk(filepath.Join(dir, "src"), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			check(path, info)
		}
		return nil
	})
	return newer
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// outputTopic is the topic system writes q's result to.
func outputTopic(system string, q nexmark.Query) string {
	if system == systemSluice {
		return strings.ToUpper(q.Name)
	}
	return strings.ToUpper(system + "-" + q.Name)
}

// runPeer runs q on a peer in a child JVM and summarises its output.
func runPeer(ctx context.Context, c kafka.Client, bootstrap string, p *peer, q nexmark.Query, events int64, partitions int32, xmx string) row {
	r := row{Query: q.Name, System: p.name, Events: events}
	fail := func(err error) row { r.Error = err.Error(); return r }
	if p.err != nil {
		return fail(p.err)
	}
	output := outputTopic(p.name, q)
	if err := c.DeleteTopic(ctx, output); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
		return fail(err)
	}
	if err := waitGone(ctx, c, output); err != nil {
		return fail(err)
	}
	if err := c.CreateTopic(ctx, kafka.TopicSpec{Name: output, Partitions: partitions}); err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "nexmark-"+p.name+"-"+q.Name+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	appID := fmt.Sprintf("nexmark-%s-%s-%d", p.name, q.Name, time.Now().UnixNano())
	args := append(javaOpts(xmx), "-cp", p.classpath, p.main,
		"--bootstrap", bootstrap, "--query", q.Name, "--app-id", appID, "--state-dir", dir, "--output", output)
	cmd := exec.CommandContext(ctx, "java", args...)
	var stderr tail
	cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fail(err)
	}
	defer deleteInternalTopics(ctx, c, appID)
	total, err := inputSize(ctx, c, q.Inputs)
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	// Both peers commit their input offsets under the application id:
	// Kafka Streams every second (commit.interval.ms), Flink's Kafka
	// sources at each checkpoint only, so Flink's position moves in steps
	// of the checkpoint interval.
	pos := committedPosition(c, func() []string { return []string{appID} }, q.Inputs)
	smp := startSampler(ctx, cmd.Process.Pid, start, pos)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var runErr error
	if p.drains {
		runErr = waitDrained(ctx, c, appID, q.Inputs, exited)
		stdin.Close()
		if runErr == nil {
			runErr = <-exited
		} else {
			_ = cmd.Process.Kill()
			<-exited
		}
	} else {
		runErr = <-exited
		stdin.Close()
	}
	wall := time.Since(start)
	samples := smp.Stop()
	if runErr != nil {
		if why := stderr.cause(); why != "" {
			return fail(fmt.Errorf("%s: %w: %s", p.name, runErr, why))
		}
		return fail(fmt.Errorf("%s: %w", p.name, runErr))
	}
	var report struct {
		PeakRSS int64 `json:"peak_rss_bytes"`
	}
	if err := json.Unmarshal([]byte(lastLines(stdout.String(), 1)), &report); err != nil {
		return fail(fmt.Errorf("%s report %q: %w", p.name, stdout.String(), err))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return fail(errors.New("no resource usage for the peer process"))
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	r.WallSeconds, r.CPUSeconds = wall.Seconds(), cpu.Seconds()
	r.EventsPerWall = float64(events) / wall.Seconds()
	r.EventsPerCPU = float64(events) / cpu.Seconds()
	r.PeakRSSBytes = report.PeakRSS
	end, err := pos(ctx)
	if err != nil {
		return fail(err)
	}
	setSteady(&r, samples, total, wall, cpu, end)
	recs, err := kafka.ReadAll(ctx, c, output)
	if err != nil {
		return fail(err)
	}
	sq := q
	if p.jsonWindowKeys {
		sq.Windowed = ""
	}
	res, err := nexmark.Summarize(sq, recs)
	if err != nil {
		return fail(err)
	}
	r.Checksum, r.OutputRows, r.ResultRows = res.Checksum, res.Rows, res.Final
	return r
}

// drainTimeout bounds how long a peer may take to drain its input.
const drainTimeout = 30 * time.Minute

// waitDrained polls the committed offsets of the application's consumer
// group until they reach the end of every partition of its input topics
// and then of its repartition topics. Kafka Streams commits an input
// offset only after the records it produced for it (output, changelog,
// repartition) were acknowledged, so once the inputs are committed to the
// end the repartition topics hold all they will, and once those are
// committed too the output is complete.
func waitDrained(ctx context.Context, c kafka.Client, group string, inputs []string, exited <-chan error) error {
	deadline := time.Now().Add(drainTimeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if err == nil {
				err = errors.New("exited before it drained its input")
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not drained after %s", drainTimeout)
		}
		done, err := committedToEnd(ctx, c, group, inputs)
		if err != nil || !done {
			continue
		}
		topics, err := c.ListTopics(ctx)
		if err != nil {
			continue
		}
		var internal []string
		for _, t := range topics {
			if strings.HasPrefix(t.Name, group+"-") && strings.HasSuffix(t.Name, "-repartition") {
				internal = append(internal, t.Name)
			}
		}
		if done, err := committedToEnd(ctx, c, group, internal); err == nil && done {
			return nil
		}
	}
}

// committedToEnd says whether group has committed the end offset of every
// partition of topics (an empty partition needs no commit).
func committedToEnd(ctx context.Context, c kafka.Client, group string, topics []string) (bool, error) {
	for _, t := range topics {
		offs, err := c.ListOffsets(ctx, t)
		if err != nil {
			return false, err
		}
		committed, err := c.FetchOffsets(ctx, group, t)
		if err != nil {
			return false, err
		}
		for i, o := range offs {
			if o.End == o.Start {
				continue
			}
			if i >= len(committed) || committed[i] < o.End {
				return false, nil
			}
		}
	}
	return true, nil
}

// deleteInternalTopics deletes the topics a peer's application created
// for itself (named after its application id) and its consumer group.
func deleteInternalTopics(ctx context.Context, c kafka.Client, appID string) {
	deleteTopics(ctx, c, appID+"-")
	_ = c.DeleteGroup(ctx, appID)
}

// deleteTopics deletes the topics whose names start with one of prefixes,
// so that a long run leaves the broker no bigger than it needs.
func deleteTopics(ctx context.Context, c kafka.Client, prefixes ...string) {
	topics, err := c.ListTopics(ctx)
	if err != nil {
		return
	}
	for _, t := range topics {
		for _, p := range prefixes {
			if strings.HasPrefix(t.Name, p) {
				_ = c.DeleteTopic(ctx, t.Name)
				break
			}
		}
	}
}

// tail keeps the last 64 KiB written to it: a child's standard error, for
// the reason it failed.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - 64<<10; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// cause returns the innermost exception message of a Java stack trace
// (the last "Caused by:" line, else the first line naming an exception),
// or the last line.
func (t *tail) cause() string {
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	found := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Caused by:") {
			found = strings.TrimSpace(strings.TrimPrefix(l, "Caused by:"))
		} else if found == "" && (strings.Contains(l, "Exception: ") || strings.Contains(l, "Error: ")) {
			found = l
		}
	}
	if found == "" && len(lines) > 0 {
		found = lines[len(lines)-1]
	}
	if len(found) > 300 {
		found = found[:300] + "…"
	}
	return found
}
