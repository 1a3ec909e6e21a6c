package main

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memSampler watches the engine's memory while it runs, for --memprofile:
// it keeps the split of the resident set at its peak (the Go heap's live
// objects, the rest of what the Go runtime holds, and what lies outside
// the Go runtime: Pebble's block cache and memtables, which it allocates
// with malloc) and writes a heap profile whenever the heap's objects pass
// their largest size so far by a tenth, so that the profile on disk is
// the one nearest the heap's peak.
type memSampler struct {
	path    string
	stop    chan struct{}
	done    sync.WaitGroup
	samples []metrics.Sample

	peak       memSplit // at the largest RSS seen
	heapPeak   uint64   // largest heap objects seen
	profiledAt uint64   // heap objects when the profile was last written
	err        error
}

// memSplit is one reading of the process's memory, in bytes.
type memSplit struct {
	rss        uint64 // resident set (statm)
	rssFile    uint64 // of which file pages (statm's shared: the binary's text mostly)
	heapLive   uint64 // live heap after the last GC
	heapObjs   uint64 // heap objects now, live and garbage not yet swept
	heapGoal   uint64 // the GC's heap goal
	goTotal    uint64 // everything the Go runtime has mapped
	goReleased uint64 // of which returned to the OS
}

var memMetrics = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/goal:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
}

func startMemSampler(path string) *memSampler {
	m := &memSampler{path: path, stop: make(chan struct{})}
	for _, name := range memMetrics {
		m.samples = append(m.samples, metrics.Sample{Name: name})
	}
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				m.sample()
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *memSampler) sample() {
	metrics.Read(m.samples)
	rss, file := statm()
	s := memSplit{
		rss:        rss,
		rssFile:    file,
		heapLive:   m.samples[0].Value.Uint64(),
		heapObjs:   m.samples[1].Value.Uint64(),
		heapGoal:   m.samples[2].Value.Uint64(),
		goTotal:    m.samples[3].Value.Uint64(),
		goReleased: m.samples[4].Value.Uint64(),
	}
	if s.rss >= m.peak.rss {
		m.peak = s
	}
	if s.heapObjs > m.heapPeak {
		m.heapPeak = s.heapObjs
	}
	if m.err == nil && s.heapObjs > m.profiledAt+m.profiledAt/10 {
		m.profiledAt = s.heapObjs
		m.err = writeHeapProfile(m.path)
	}
}

// Stop ends the sampling and writes the split at the peak to w.
func (m *memSampler) Stop(w io.Writer) error {
	close(m.stop)
	m.done.Wait()
	p := m.peak
	mib := func(b uint64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }
	goResident := p.goTotal - p.goReleased
	outside := uint64(0)
	if p.rss > goResident {
		outside = p.rss - goResident
	}
	fmt.Fprintf(w, "memory at peak RSS (MiB): rss %s = go runtime %s (heap objects %s, live after last GC %s, goal %s; stacks, metadata and free spans %s) + outside the Go runtime %s (file pages %s); largest heap objects %s\n",
		mib(p.rss), mib(goResident), mib(p.heapObjs), mib(p.heapLive), mib(p.heapGoal), mib(goResident-min(goResident, p.heapObjs)), mib(outside), mib(p.rssFile), mib(m.heapPeak))
	return m.err
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// statm returns the resident set now and its file-backed part, 0 if
// unknown.
func statm() (rss, file uint64) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, 0
	}
	page := uint64(os.Getpagesize())
	r, err1 := strconv.ParseUint(f[1], 10, 64)
	s, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0
	}
	return r * page, s * page
}
