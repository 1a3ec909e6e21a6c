package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-sql/sluice/bench/nexmark"
	"github.com/sluice-sql/sluice/kafka"
)

// Scale-out. With --servers N (N > 1) the driver runs Sluice's query on N
// engine processes of one cluster (the same service id, each one server
// of engine.ClusterConfig): the first runs the statement, the others take
// it from the command log, and the cluster's group splits every input's
// partitions between them. Each server runs until its standard input is
// closed, which the driver does once the query's consumer groups have
// committed the end of every partition of its inputs and then of its
// repartition topics. The row's CPU time is the servers' together, its
// peak RSS the largest server's, its wall time the cluster's; it has no
// steady figures (the sampler follows one process).

// runCluster runs q on servers engine processes of one cluster.
func runCluster(ctx context.Context, c kafka.Client, bootstrap string, q nexmark.Query, events int64, servers int, tune engineMemory) row {
	r := row{Query: q.Name, System: fmt.Sprintf("sluice×%d", servers), Events: events}
	fail := func(err error) row { r.Error = err.Error(); return r }
	output := outputTopic(systemSluice, q)
	if err := c.DeleteTopic(ctx, output); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
		return fail(err)
	}
	if err := waitGone(ctx, c, output); err != nil {
		return fail(err)
	}
	self, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	service := fmt.Sprintf("nexmark-%s-%d", q.Name, time.Now().UnixNano())
	defer deleteTopics(ctx, c, "_sluice-"+service+"-", service+"_processing_log")
	base, err := os.MkdirTemp("", "nexmark-"+q.Name+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(base)
	groupsFile := filepath.Join(base, "groups")
	type server struct {
		cmd    *exec.Cmd
		stdin  interface{ Close() error }
		stdout strings.Builder
		exited chan error
	}
	all := make([]*server, servers)
	stopAll := func() {
		for _, s := range all {
			if s != nil && s.cmd.Process != nil {
				_ = s.cmd.Process.Kill()
			}
		}
	}
	start := time.Now()
	for i := range all {
		dir := filepath.Join(base, fmt.Sprint(i))
		args := []string{"engine", "--bootstrap", bootstrap, "--query", q.Name, "--data-dir", dir, "--service-id", service,
			"--until-eof", "--cluster-server", fmt.Sprint(i)}
		if i == 0 {
			args = append(args, "--groups", groupsFile)
		}
		args = append(args, tune.args()...)
		s := &server{exited: make(chan error, 1)}
		s.cmd = exec.CommandContext(ctx, self, args...)
		s.cmd.Stderr = os.Stderr
		s.cmd.Stdout = &s.stdout
		in, err := s.cmd.StdinPipe()
		if err != nil {
			stopAll()
			return fail(err)
		}
		s.stdin = in
		if err := s.cmd.Start(); err != nil {
			stopAll()
			return fail(fmt.Errorf("engine %d: %w", i, err))
		}
		all[i] = s
		go func() { s.exited <- s.cmd.Wait() }()
	}
	// Any server exiting before the drain is a failure.
	exited := make(chan error, 1)
	for i, s := range all {
		go func() {
			err := <-s.exited
			s.exited <- err
			select {
			case exited <- fmt.Errorf("engine %d: %w", i, orExitedEarly(err)):
			default:
			}
		}()
	}
	groups := func() []string {
		b, _ := os.ReadFile(groupsFile)
		return strings.Fields(string(b))
	}
	err = waitClusterDrained(ctx, c, groups, q.Inputs, "_sluice-"+service+"-", exited)
	for _, s := range all {
		_ = s.stdin.Close()
	}
	if err != nil {
		stopAll()
		return fail(err)
	}
	var cpu time.Duration
	for i, s := range all {
		if err := <-s.exited; err != nil {
			return fail(fmt.Errorf("engine %d: %w", i, err))
		}
		ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			return fail(errors.New("no resource usage for an engine process"))
		}
		cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		var report struct {
			PeakRSS int64 `json:"peak_rss_bytes"`
		}
		if err := json.Unmarshal([]byte(s.stdout.String()), &report); err != nil {
			return fail(fmt.Errorf("engine %d report %q: %w", i, s.stdout.String(), err))
		}
		r.PeakRSSBytes = max(r.PeakRSSBytes, report.PeakRSS)
	}
	wall := time.Since(start)
	r.WallSeconds, r.CPUSeconds = wall.Seconds(), cpu.Seconds()
	r.EventsPerWall = float64(events) / wall.Seconds()
	r.EventsPerCPU = float64(events) / cpu.Seconds()
	if err := summarizeOutput(ctx, c, q, output, &r); err != nil {
		return fail(err)
	}
	return r
}

func orExitedEarly(err error) error {
	if err == nil {
		return errors.New("exited before the query drained its input")
	}
	return err
}

// waitClusterDrained waits until the query's consumer groups (groups(),
// written by the first server once the query runs) have committed the end
// of every partition of inputs, and then of the repartition topics whose
// names start with internal; each topic is the input of one of the
// groups.
func waitClusterDrained(ctx context.Context, c kafka.Client, groups func() []string, inputs []string, internal string, exited <-chan error) error {
	deadline := time.Now().Add(drainTimeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not drained after %s", drainTimeout)
		}
		gs := groups()
		if len(gs) == 0 {
			continue
		}
		if done, err := anyCommittedToEnd(ctx, c, gs, inputs); err != nil || !done {
			continue
		}
		topics, err := c.ListTopics(ctx)
		if err != nil {
			continue
		}
		var parts []string
		for _, t := range topics {
			if strings.HasPrefix(t.Name, internal) && strings.Contains(t.Name, "repartition") {
				parts = append(parts, t.Name)
			}
		}
		if done, err := anyCommittedToEnd(ctx, c, gs, parts); err == nil && done {
			return nil
		}
	}
}

// anyCommittedToEnd says whether every topic of topics has a group of
// groups that committed the end of each of its partitions.
func anyCommittedToEnd(ctx context.Context, c kafka.Client, groups []string, topics []string) (bool, error) {
	for _, t := range topics {
		found := false
		for _, g := range groups {
			done, err := committedToEnd(ctx, c, g, []string{t})
			if err != nil {
				return false, err
			}
			if done {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}
