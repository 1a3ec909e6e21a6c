package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// The steady state of a run: the events per CPU-second and per
// wall-second between the moments a system has consumed steadyFrom and
// steadyTo of its input, which leave out the start (a JVM's class loading
// and JIT warm-up, group joins, topic creation) and the drain's tail.
const (
	sampleEvery = 500 * time.Millisecond
	steadyFrom  = 0.2
	steadyTo    = 0.9
)

// sample is one reading of a running child: how long after its start,
// its CPU time so far and its input position.
type sample struct {
	at, cpu time.Duration
	pos     int64
}

// position reads how many input records a system has consumed.
type position func(ctx context.Context) (int64, error)

// committedPosition is the position of consumer groups over topics: the
// sum of their committed offsets (less each partition's start offset).
// Each system commits an input offset only once it has processed the
// records before it; groups lists the groups, and may grow while the
// child starts (nil: none known yet).
func committedPosition(c kafka.Client, groups func() []string, topics []string) position {
	return func(ctx context.Context) (int64, error) {
		var sum int64
		for _, t := range topics {
			offs, err := c.ListOffsets(ctx, t)
			if err != nil {
				return 0, err
			}
			for _, g := range groups() {
				committed, err := c.FetchOffsets(ctx, g, t)
				if err != nil {
					return 0, err
				}
				for i, o := range committed {
					if i < len(offs) && o > offs[i].Start {
						sum += o - offs[i].Start
					}
				}
			}
		}
		return sum, nil
	}
}

// inputSize is the number of records topics hold.
func inputSize(ctx context.Context, c kafka.Client, topics []string) (int64, error) {
	var n int64
	for _, t := range topics {
		offs, err := c.ListOffsets(ctx, t)
		if err != nil {
			return 0, err
		}
		for _, o := range offs {
			n += o.End - o.Start
		}
	}
	return n, nil
}

// sampler reads a child's CPU time (from /proc) and input position every
// sampleEvery until stopped.
type sampler struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	samples []sample
	err     error
}

func startSampler(ctx context.Context, pid int, start time.Time, pos position) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	tick := time.NewTicker(sampleEvery)
	go func() {
		defer close(s.done)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			cpu, err := processCPU(pid)
			if err != nil {
				// The child has exited between two readings.
				continue
			}
			p, err := pos(ctx)
			if err != nil {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
				continue
			}
			s.mu.Lock()
			s.samples = append(s.samples, sample{at: time.Since(start), cpu: cpu, pos: p})
			s.mu.Unlock()
		}
	}()
	return s
}

// Stop ends the sampling and returns the samples.
func (s *sampler) Stop() []sample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// steady returns the events per CPU-second and per wall-second between
// the first sample at or past steadyFrom of total and the first at or
// past steadyTo; ok is false when the samples do not span that stretch
// (a run too short for two readings in it, or a position that moves only
// in large steps).
func steady(samples []sample, total int64) (perCPU, perWall float64, ok bool) {
	if total <= 0 {
		return 0, 0, false
	}
	from, to := -1, -1
	for i, s := range samples {
		if from < 0 && float64(s.pos) >= steadyFrom*float64(total) {
			from = i
		}
		if float64(s.pos) >= steadyTo*float64(total) {
			to = i
			break
		}
	}
	if from < 0 || to <= from {
		return 0, 0, false
	}
	a, b := samples[from], samples[to]
	events := float64(b.pos - a.pos)
	cpu, wall := (b.cpu - a.cpu).Seconds(), (b.at - a.at).Seconds()
	if events <= 0 || cpu <= 0 || wall <= 0 {
		return 0, 0, false
	}
	return events / cpu, events / wall, true
}

// setSteady fills r's steady-state figures from the samples of its run
// and a last one at its end (when the child, having drained its input,
// exited after wall and cpu, at position end). Like the whole-run figures
// they count the generated events (r.Events), of which a query reading
// some topics only consumes its share: a position of half the query's
// input is half the events.
func setSteady(r *row, samples []sample, total int64, wall, cpu time.Duration, end int64) {
	samples = append(samples, sample{at: wall, cpu: cpu, pos: end})
	perCPU, perWall, ok := steady(samples, total)
	if ok {
		scale := float64(r.Events) / float64(total)
		r.SteadyEventsPerCPU, r.SteadyEventsPerWall = perCPU*scale, perWall*scale
	}
	r.Samples = len(samples)
	for _, s := range samples {
		r.Trace = append(r.Trace, [3]int64{s.at.Milliseconds(), s.cpu.Milliseconds(), s.pos})
	}
}

// processCPU is the user and system CPU time process pid has used so far,
// all its threads included (fields utime and stime of /proc/PID/stat).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted from 3 follow its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// utime and stime are fields 14 and 15, so 11 and 12 after the name.
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc stat times")
	}
	return time.Duration(ut+st) * time.Second / time.Duration(clockTicks()), nil
}

var (
	ticksOnce sync.Once
	ticks     int64
)

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times
// (getconf CLK_TCK; 100 where it cannot be asked).
func clockTicks() int64 {
	ticksOnce.Do(func() {
		ticks = 100
		if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
				ticks = n
			}
		}
	})
	return ticks
}
