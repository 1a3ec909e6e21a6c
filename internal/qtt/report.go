package qtt

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options configure RunFiles.
type Options struct {
	// Run selects the runs whose ID it matches; nil runs all.
	Run *regexp.Regexp
	// Workers is how many runs go at once; runtime.NumCPU()*2 when zero.
	Workers int
	// Timeout bounds each run; DefaultTimeout when zero.
	Timeout time.Duration
	// Verbose prints each failure's ID and detail after its file's line.
	Verbose bool
	// Out receives a line per file as files complete (in file order), and
	// failures with Verbose; nil prints nothing.
	Out io.Writer
	// Attempt runs the runs skipped for these reasons anyway, counting
	// them as passed or failed: a measure of a capability being built. The
	// floors are judged without it.
	Attempt map[string]bool
}

// FileReport counts the outcomes of one file's runs.
type FileReport struct {
	File    string `json:"file"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
}

// Report is the outcome of RunFiles.
type Report struct {
	Files   []FileReport `json:"files"`
	Results []Result     `json:"results"`
	Passed  int          `json:"passed"`
	Failed  int          `json:"failed"`
	Skipped int          `json:"skipped"`
	// Skips counts skipped runs by reason.
	Skips map[string]int `json:"skips"`
	// Unaccepted counts, per "name=value", the runs whose property the
	// engine refused to SET.
	Unaccepted map[string]int `json:"unacceptedProperties"`
	Elapsed    time.Duration  `json:"elapsedNs"`
}

// RunFiles runs every selected run of files and returns the report. Runs
// are independent (each has its own broker and engine), so they go in
// parallel; lines are still printed in file order.
func RunFiles(ctx context.Context, files []*File, opts Options) *Report {
	start := time.Now()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.NumCPU() * 2
	}
	type slot struct {
		run  Run
		res  Result
		done chan struct{}
	}
	perFile := make([][]*slot, len(files))
	jobs := make(chan *slot)
	for i, f := range files {
		for _, r := range Expand(f) {
			if opts.Run != nil && !opts.Run.MatchString(r.ID) {
				continue
			}
			perFile[i] = append(perFile[i], &slot{run: r, done: make(chan struct{})})
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				s.res = RunOne(ctx, s.run, opts.Timeout, opts.Attempt)
				close(s.done)
			}
		}()
	}
	go func() {
		for _, slots := range perFile {
			for _, s := range slots {
				jobs <- s
			}
		}
		close(jobs)
	}()
	rep := &Report{Skips: map[string]int{}, Unaccepted: map[string]int{}}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	for i, f := range files {
		fr := FileReport{File: f.Stem}
		var failures []Result
		for _, s := range perFile[i] {
			<-s.done
			r := s.res
			rep.Results = append(rep.Results, r)
			switch r.Status {
			case Pass:
				fr.Passed++
			case Fail:
				fr.Failed++
				failures = append(failures, r)
			case Skip:
				fr.Skipped++
				rep.Skips[r.Reason]++
			}
			for _, p := range r.Unaccepted {
				rep.Unaccepted[p]++
			}
		}
		if len(perFile[i]) == 0 {
			continue
		}
		rep.Files = append(rep.Files, fr)
		rep.Passed += fr.Passed
		rep.Failed += fr.Failed
		rep.Skipped += fr.Skipped
		fmt.Fprintf(out, "%s: %d passed, %d failed, %d skipped\n", f.Stem, fr.Passed, fr.Failed, fr.Skipped)
		if opts.Verbose {
			for _, r := range failures {
				fmt.Fprintf(out, "  FAIL %s\n%s\n", r.ID, indent(r.Detail, "    "))
			}
		}
	}
	wg.Wait()
	rep.Elapsed = time.Since(start)
	return rep
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// WriteSummary prints the skips by reason, the properties the engine
// refused, and then exactly one final line "qtt: N passed, M failed, K
// skipped".
func (r *Report) WriteSummary(w io.Writer) {
	for _, reason := range SkipReasons {
		if n := r.Skips[reason]; n > 0 {
			fmt.Fprintf(w, "skipped %d: %s\n", n, reason)
		}
	}
	if len(r.Unaccepted) > 0 {
		names := make([]string, 0, len(r.Unaccepted))
		for p := range r.Unaccepted {
			names = append(names, p)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, p := range names {
			parts[i] = fmt.Sprintf("%s (%d runs)", p, r.Unaccepted[p])
		}
		fmt.Fprintf(w, "properties the engine refused: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "qtt: %d passed, %d failed, %d skipped\n", r.Passed, r.Failed, r.Skipped)
}

// WriteJSON writes the report, every run's result included, to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
