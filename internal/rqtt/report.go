package rqtt

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

	"github.com/sluice-sql/sluice/internal/qtt"
)

// Options configure RunFiles.
type Options struct {
	// Run selects the runs whose ID it matches; nil runs all.
	Run *regexp.Regexp
	// Workers is how many runs go at once; runtime.NumCPU() when zero.
	Workers int
	// Timeout bounds each run; DefaultTimeout when zero.
	Timeout time.Duration
	// Verbose prints each failure's ID and first difference (both sides
	// of the response) after its file's line.
	Verbose bool
	// Out receives a line per file as files complete (in file order),
	// each skipped run with its reason, and failures with Verbose; nil
	// prints nothing.
	Out io.Writer
}

// FileReport counts the outcomes of one file's runs; Runnable are those
// not skipped.
type FileReport struct {
	File     string `json:"file"`
	Runnable int    `json:"runnable"`
	Passed   int    `json:"passed"`
	Failed   int    `json:"failed"`
	Skipped  int    `json:"skipped"`
}

// Report is the outcome of RunFiles.
type Report struct {
	Files   []FileReport `json:"files"`
	Results []Result     `json:"results"`
	Passed  int          `json:"passed"`
	Failed  int          `json:"failed"`
	Skipped int          `json:"skipped"`
	// Skips counts skipped runs by reason.
	Skips   map[string]int `json:"skips"`
	Elapsed time.Duration  `json:"elapsedNs"`
}

// RunFiles runs every selected run of files and returns the report. Runs
// are independent (each has its own broker, engine and REST handler), so
// they go in parallel; lines are still printed in file order.
func RunFiles(ctx context.Context, files []*File, opts Options) *Report {
	start := time.Now()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
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
				s.res = RunOne(ctx, s.run, opts.Timeout)
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
	rep := &Report{Skips: map[string]int{}}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	for i, f := range files {
		fr := FileReport{File: f.Stem}
		var failures, skips []Result
		for _, s := range perFile[i] {
			<-s.done
			r := s.res
			rep.Results = append(rep.Results, r)
			switch r.Status {
			case qtt.Pass:
				fr.Passed++
			case qtt.Fail:
				fr.Failed++
				failures = append(failures, r)
			case qtt.Skip:
				fr.Skipped++
				rep.Skips[r.Reason]++
				skips = append(skips, r)
			}
		}
		if len(perFile[i]) == 0 {
			continue
		}
		fr.Runnable = fr.Passed + fr.Failed
		rep.Files = append(rep.Files, fr)
		rep.Passed += fr.Passed
		rep.Failed += fr.Failed
		rep.Skipped += fr.Skipped
		fmt.Fprintf(out, "%s: %d runnable, %d passed, %d failed, %d skipped\n", f.Stem, fr.Runnable, fr.Passed, fr.Failed, fr.Skipped)
		for _, r := range skips {
			fmt.Fprintf(out, "  SKIP %s: %s\n", r.ID, r.Reason)
		}
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

// WriteTable prints the per-file table: file, runnable, passed, failed,
// skipped, and the totals.
func (r *Report) WriteTable(w io.Writer) {
	width := len("total")
	for _, f := range r.Files {
		width = max(width, len(f.File))
	}
	fmt.Fprintf(w, "%-*s %8s %6s %6s %7s\n", width, "file", "runnable", "passed", "failed", "skipped")
	for _, f := range r.Files {
		fmt.Fprintf(w, "%-*s %8d %6d %6d %7d\n", width, f.File, f.Runnable, f.Passed, f.Failed, f.Skipped)
	}
	fmt.Fprintf(w, "%-*s %8d %6d %6d %7d\n", width, "total", r.Passed+r.Failed, r.Passed, r.Failed, r.Skipped)
}

// WriteSummary prints the skips counted by reason and then exactly one
// final line "rqtt: N passed, M failed, K skipped".
func (r *Report) WriteSummary(w io.Writer) {
	reasons := make([]string, 0, len(r.Skips))
	for reason := range r.Skips {
		reasons = append(reasons, reason)
	}
	sort.Strings(reasons)
	for _, reason := range reasons {
		fmt.Fprintf(w, "skipped %d: %s\n", r.Skips[reason], reason)
	}
	fmt.Fprintf(w, "rqtt: %d passed, %d failed, %d skipped\n", r.Passed, r.Failed, r.Skipped)
}

// WriteJSON writes the report, every run's result included, to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
