package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// Prompts of the interactive shell.
const (
	Prompt             = "sluice> "
	ContinuationPrompt = "      > "
)

const helpText = `Statements end with ';' and may span several lines; the shell sends
each one to the server when its ';' is typed.

  exit, quit, Ctrl-D          leave the shell
  Ctrl-C                      stop a running push query, or clear the line
  help                        this text
  clear                       clear the screen
  TAB                         complete keywords, streams, tables, columns
                              and functions (names come from the server)
  RUN SCRIPT '<file>';        run the statements of a file
  SET 'name' = 'value';       set a session property (UNSET to revert)
  DEFINE name = 'value';      define a variable, used as ${name}
                              (UNDEFINE name; SHOW VARIABLES;)
  OUTPUT TABULAR|JSON|CSV;    print rows as tables, JSON lines or CSV
  \o table|json|csv           the same, without ';'
  \x [on|off|auto]            vertical output, one block per row: \x alone
                              toggles; auto (the default) goes vertical when
                              a table would be wider than the terminal

Session properties and variables last until you leave the shell.`

// banner is printed when the interactive shell starts.
const banner = `=================================================
=     ___  _     _   _  ___  ___  ___           =
=    / __|| |   | | | ||_ _|/ __|| __|          =
=    \__ \| |__ | |_| | | || (__ | _|           =
=    |___/|____| \___/ |___|\___||___|          =
=                                               =
=        Streaming SQL for Apache Kafka(R)      =
=================================================`

// PrintBanner writes the start-up banner: Sluice, the server's address and
// what it says about itself. A server that cannot be reached is reported
// and the shell starts anyway.
func (s *Shell) PrintBanner(ctx context.Context, version string) {
	fmt.Fprintln(s.out, banner)
	fmt.Fprintln(s.out, "Copyright 2026 The Sluice Authors")
	fmt.Fprintln(s.out)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := s.client.Info(ctx, &sluicev1.InfoRequest{})
	if err != nil {
		fmt.Fprintf(s.out, "CLI %s, Server at %s\n", versionString(version), s.Server)
		fmt.Fprintf(s.errOut, "Warning: cannot reach the Sluice server at %s: %v\n", s.Server, err)
	} else {
		fmt.Fprintf(s.out, "CLI %s, Server %s located at %s\n", versionString(version), versionString(info.GetVersion()), s.Server)
		kafka := "Kafka at " + info.GetKafkaBootstrapServers()
		if info.GetPlayground() {
			kafka = "Kafka playground (single-node development broker) at " + info.GetKafkaBootstrapServers()
		}
		fmt.Fprintf(s.out, "Service %q, %s\n", info.GetServiceId(), kafka)
		if u := info.GetSchemaRegistryUrl(); u != "" {
			fmt.Fprintf(s.out, "Schema registry at %s\n", u)
		}
	}
	fmt.Fprintln(s.out, "Having trouble? Type 'help' (case-insensitive) for a rundown of how things work!")
	fmt.Fprintln(s.out)
}

// Command runs one of the shell's backslash commands (\x, \o) and reports
// whether line was one. A bad command is reported on stderr.
func (s *Shell) Command(line string) bool {
	ok, err := s.command(line)
	if err != nil {
		fmt.Fprintln(s.errOut, "Error: "+err.Error())
	}
	return ok
}

// command runs line if it is a backslash command; err says what is wrong
// with a bad one.
func (s *Shell) command(line string) (ok bool, err error) {
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ";"))
	if len(f) == 0 || !strings.HasPrefix(f[0], "\\") {
		return false, nil
	}
	arg := ""
	if len(f) > 1 {
		arg = strings.ToLower(f[1])
	}
	switch f[0] {
	case "\\x":
		switch arg {
		case "":
			if s.Vertical == VerticalOn {
				s.Vertical = VerticalOff
			} else {
				s.Vertical = VerticalOn
			}
		case "on":
			s.Vertical = VerticalOn
		case "off":
			s.Vertical = VerticalOff
		case "auto":
			s.Vertical = VerticalAuto
		default:
			return true, fmt.Errorf("\\x takes on, off or auto, not %q", f[1])
		}
		fmt.Fprintf(s.info(), "Vertical output is %s.\n", s.Vertical)
	case "\\o":
		if arg == "" {
			fmt.Fprintf(s.info(), "Output format: %s\n", s.Format)
			return true, nil
		}
		fm, ok := ParseFormat(arg)
		if !ok {
			return true, fmt.Errorf("\\o takes table, json or csv, not %q", f[1])
		}
		s.Format = fm
		fmt.Fprintf(s.info(), "Output format: %s\n", s.Format)
	default:
		return true, fmt.Errorf("unknown command %s; type help for the shell's commands", f[0])
	}
	return true, nil
}

// RunInteractive reads statements from the terminal with line editing and
// history (saved in historyFile unless it is empty) and runs each as it is
// completed by ';', until exit, quit, Ctrl-D or the end of ctx. Ctrl-C
// stops a running statement (push queries print "Query terminated") or
// clears the line being typed. A failing statement is reported and the
// shell goes on.
func (s *Shell) RunInteractive(ctx context.Context, historyFile string) error {
	var buf strings.Builder
	names := &catalogNames{sh: s}
	s.OnDDL = names.invalidate
	rl, err := readline.NewEx(&readline.Config{
		AutoComplete:           &completer{names: names, pending: buf.String},
		Prompt:                 Prompt,
		HistoryFile:            historyFile,
		DisableAutoSaveHistory: true,
		InterruptPrompt:        "^C",
		EOFPrompt:              "exit",
		HistorySearchFold:      true,
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	s.Interactive = true

	// While a statement runs the terminal is not in raw mode, so Ctrl-C
	// arrives as SIGINT: it cancels the running statement.
	var (
		mu         sync.Mutex
		cancelStmt context.CancelFunc
	)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-sigs:
				mu.Lock()
				if cancelStmt != nil {
					cancelStmt()
				}
				mu.Unlock()
			case <-done:
				return
			}
		}
	}()

	for ctx.Err() == nil {
		rl.SetPrompt(promptFor(buf.String()))
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			continue
		}
		if errors.Is(err, io.EOF) {
			if e := unterminated("", buf.String()); e != nil {
				_ = s.report(e)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if buf.Len() == 0 {
			switch strings.ToLower(strings.TrimSuffix(strings.TrimSpace(line), ";")) {
			case "":
				continue
			case "exit", "quit":
				return nil
			case "help":
				fmt.Fprintln(s.out, helpText)
				continue
			case "clear":
				fmt.Fprint(s.out, "\x1b[H\x1b[2J")
				continue
			}
			if s.Command(line) {
				continue
			}
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		stmts, rest := splitStatements(buf.String())
		rest = carried(buf.String(), rest)
		if len(stmts) == 0 {
			if rest == "" {
				buf.Reset()
			}
			continue
		}
		text := buf.String()
		buf.Reset()
		buf.WriteString(rest)
		_ = rl.SaveHistory(strings.Join(strings.Fields(text[:len(text)-len(rest)]), " "))

		s.TermWidth, s.TermHeight = TerminalSize()
		sctx, cancel := context.WithCancel(ctx)
		mu.Lock()
		cancelStmt = cancel
		mu.Unlock()
		for _, st := range stmts {
			if s.runStatement(sctx, "", st) != nil {
				break // reported; the shell goes on
			}
		}
		mu.Lock()
		cancelStmt = nil
		mu.Unlock()
		cancel()
	}
	return nil
}

// TerminalSize returns the size of the terminal on the standard output, or
// zeros.
func TerminalSize() (width, height int) {
	w, h, err := readline.GetSize(int(os.Stdout.Fd()))
	if err != nil || w <= 0 {
		return 0, 0
	}
	return w, h
}

// versionString writes a release version as v1.2.3 and other builds (dev)
// as they are.
func versionString(v string) string {
	if v != "" && v[0] >= '0' && v[0] <= '9' {
		return "v" + v
	}
	return v
}
