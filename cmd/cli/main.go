package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
	"google.golang.org/grpc"

	"github.com/sluice-sql/sluice/cmd/cli/shell"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1 // a statement failed
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// keyValues is a repeatable name=value flag.
type keyValues map[string]string

func (kv keyValues) String() string { return "" }

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want name=value, got %q", s)
	}
	kv[strings.TrimSpace(k)] = v
	return nil
}

const exitStatusHelp = `
Exit status (for scripts):
  0    every statement succeeded (or the interactive shell was left)
  1    a statement failed: the run stops there and the error, with its
       position, is printed on standard error
  2    usage error: bad flags or arguments
  130  interrupted by Ctrl-C (SIGINT) while a statement ran
`

// run is the sluice command; it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sluice", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		server, file, execute, history string
		output                         string
		showVersion                    bool
		defines, props                 = keyValues{}, keyValues{}
		cf                             connFlags
	)
	cf.register(fs)
	fs.StringVar(&server, "server", "127.0.0.1:8089", "address of the sluice-server gRPC API")
	fs.StringVar(&file, "file", "", "run the statements of a script `file` (- for standard input) and exit")
	fs.StringVar(&file, "f", "", "shorthand for --file")
	fs.StringVar(&execute, "execute", "", "run the given `statements` and exit")
	fs.StringVar(&execute, "e", "", "shorthand for --execute")
	fs.Var(defines, "define", "define a session variable `name=value` (repeatable)")
	fs.Var(defines, "d", "shorthand for --define")
	fs.Var(props, "property", "set a session property `name=value` (repeatable)")
	fs.StringVar(&history, "history", defaultHistory(), "history `file` of the interactive shell; empty for none")
	fs.StringVar(&output, "output", "tabular", "how rows print: `tabular`, json or csv (as OUTPUT does)")
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: sluice [flags]\n\nSluice's SQL shell. Without -e or -f it reads statements interactively\n"+
			"at a terminal, else from standard input (sluice < setup.sql).\n\nFlags:")
		fs.PrintDefaults()
		fmt.Fprint(stderr, exitStatusHelp)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sluice: unexpected argument %q (statements go in -e or -f)\n", fs.Arg(0))
		return exitUsage
	}
	if showVersion {
		fmt.Fprintln(stdout, "sluice", version)
		return exitOK
	}
	if file != "" && execute != "" {
		fmt.Fprintln(stderr, "sluice: give -e or -f, not both")
		return exitUsage
	}
	server = strings.TrimPrefix(strings.TrimPrefix(server, "http://"), "grpc://")

	var ok bool
	dial, err := cf.dialOptions(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "sluice:", err)
		return exitUsage
	}
	conn, err := grpc.NewClient(server, dial...)
	if err != nil {
		fmt.Fprintf(stderr, "sluice: bad server address %q: %v\n", server, err)
		return exitUsage
	}
	defer conn.Close()
	sh := shell.New(sluicev1.NewSluiceClient(conn), stdout, stderr)
	sh.Server = server
	if sh.Format, ok = shell.ParseFormat(output); !ok {
		fmt.Fprintf(stderr, "sluice: --output takes tabular, json or csv, not %q\n", output)
		return exitUsage
	}
	for k, v := range defines {
		sh.Variables[k] = v
	}
	for k, v := range props {
		sh.Properties[k] = v
	}

	interactive := file == "" && execute == "" && isTerminal(stdin) && isTerminal(stdout)
	if interactive {
		sh.PrintBanner(ctx, version)
		if err := sh.RunInteractive(ctx, history); err != nil {
			fmt.Fprintln(stderr, "sluice:", err)
			return exitFailed
		}
		return exitOK
	}

	source, text := "", execute
	if t := strings.TrimSpace(execute); t != "" && !strings.HasSuffix(t, ";") {
		text = t + ";" // -e "SHOW STREAMS" is common enough to accept
	}
	switch {
	case file == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "sluice: reading standard input:", err)
			return exitFailed
		}
		source, text = "<stdin>", string(b)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(stderr, "sluice:", err)
			return exitFailed
		}
		source, text = file, string(b)
	case execute == "":
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "sluice: reading standard input:", err)
			return exitFailed
		}
		source, text = "<stdin>", string(b)
	}
	if isTerminal(stdout) {
		sh.TermWidth, sh.TermHeight = shell.TerminalSize()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	switch err := sh.Run(ctx, source, text); {
	case err == nil:
		return exitOK
	case errors.Is(err, shell.ErrInterrupted):
		return exitInterrupted
	default:
		return exitFailed
	}
}

func defaultHistory() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".sluice_history")
}

func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && readline.IsTerminal(int(file.Fd()))
}
