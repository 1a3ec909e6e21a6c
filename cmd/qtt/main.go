package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"regexp"

	"github.com/sluice-sql/sluice/internal/qtt"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the qtt command; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("qtt", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		runRE, family, jsonOut string
		verbose, attempt       bool
		workers                int
	)
	fl.StringVar(&runRE, "run", "", "run only the cases whose ID matches this regular expression")
	fl.BoolVar(&verbose, "v", false, "print each failure with the first differing record or the error")
	fl.StringVar(&family, "family", "", "run only the files of this family (stateless, stateful, joins)")
	fl.StringVar(&jsonOut, "json", "", "write every run's result to this file")
	fl.IntVar(&workers, "workers", 0, "runs at once (default: twice the CPUs)")
	fl.BoolVar(&attempt, "attempt-skipped", false, "no effect: nothing is skipped any more (kept for scripts)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: qtt [flags] DIR|FILE...")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return exitUsage
	}
	opts := qtt.Options{Verbose: verbose, Workers: workers, Out: stdout}
	_ = attempt // nothing is skipped any more; the flag is kept for scripts
	if runRE != "" {
		re, err := regexp.Compile(runRE)
		if err != nil {
			fmt.Fprintf(stderr, "qtt: --run: %v\n", err)
			return exitUsage
		}
		opts.Run = re
	}
	var paths []string
	for _, p := range fl.Args() {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stdout, "qtt: %s is absent; nothing to run there\n", p)
			if os.Getenv("CI") == "true" {
				fmt.Fprintf(stderr, "qtt: %s is required under CI\n", p)
				return exitFailed
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "qtt: %v\n", err)
			return exitUsage
		}
		if family == "" {
			paths = append(paths, p)
			continue
		}
		if !st.IsDir() {
			fmt.Fprintf(stderr, "qtt: --family needs a corpus directory, not the file %s\n", p)
			return exitUsage
		}
		fp, err := qtt.Family(p, family)
		if err != nil {
			fmt.Fprintf(stderr, "qtt: %v\n", err)
			return exitUsage
		}
		paths = append(paths, fp...)
	}
	files, err := qtt.LoadPaths(paths)
	if err != nil {
		fmt.Fprintf(stderr, "qtt: %v\n", err)
		return exitUsage
	}
	rep := qtt.RunFiles(ctx, files, opts)
	if jsonOut != "" {
		if err := rep.WriteJSON(jsonOut); err != nil {
			fmt.Fprintf(stderr, "qtt: %v\n", err)
			return exitFailed
		}
	}
	rep.WriteSummary(stdout)
	if rep.Failed > 0 {
		return exitFailed
	}
	return exitOK
}
