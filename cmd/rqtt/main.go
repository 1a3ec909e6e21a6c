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

	"github.com/sluice-sql/sluice/internal/rqtt"
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

// run is the rqtt command; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("rqtt", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		runRE, jsonOut string
		verbose        bool
		workers        int
	)
	fl.StringVar(&runRE, "run", "", "run only the cases whose ID matches this regular expression")
	fl.BoolVar(&verbose, "v", false, "print each failure with its first difference")
	fl.StringVar(&jsonOut, "json", "", "write every run's result to this file")
	fl.IntVar(&workers, "workers", 0, "runs at once (default: the CPUs)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: rqtt [flags] DIR|FILE...")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return exitUsage
	}
	opts := rqtt.Options{Verbose: verbose, Workers: workers, Out: stdout}
	if runRE != "" {
		re, err := regexp.Compile(runRE)
		if err != nil {
			fmt.Fprintf(stderr, "rqtt: --run: %v\n", err)
			return exitUsage
		}
		opts.Run = re
	}
	var paths []string
	for _, p := range fl.Args() {
		_, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stdout, "rqtt: %s is absent; nothing to run there\n", p)
			if os.Getenv("CI") == "true" {
				fmt.Fprintf(stderr, "rqtt: %s is required under CI\n", p)
				return exitFailed
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "rqtt: %v\n", err)
			return exitUsage
		}
		paths = append(paths, p)
	}
	files, err := rqtt.LoadPaths(paths)
	if err != nil {
		fmt.Fprintf(stderr, "rqtt: %v\n", err)
		return exitUsage
	}
	rep := rqtt.RunFiles(ctx, files, opts)
	if jsonOut != "" {
		if err := rep.WriteJSON(jsonOut); err != nil {
			fmt.Fprintf(stderr, "rqtt: %v\n", err)
			return exitFailed
		}
	}
	rep.WriteSummary(stdout)
	if rep.Failed > 0 {
		return exitFailed
	}
	return exitOK
}
