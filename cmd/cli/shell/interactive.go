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

  exit, quit, Ctrl-D        leave the shell
  Ctrl-C                    stop a running push query, or clear the line
  help                      this text
  RUN SCRIPT '<file>';      run the statements of a file
  SET 'name' = 'value';     set a session property (UNSET to revert)
  DEFINE name = 'value';    define a variable, used as ${name}

Session properties and variables last until you leave the shell.`

// PrintBanner writes the start-up banner: Sluice, the server's address and
// what it says about itself. A server that cannot be reached is reported
// and the shell starts anyway.
func (s *Shell) PrintBanner(ctx context.Context, version string) {
	fmt.Fprintf(s.out, "Sluice %s: streaming SQL over Kafka\n", version)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := s.client.Info(ctx, &sluicev1.InfoRequest{})
	if err != nil {
		fmt.Fprintf(s.errOut, "Warning: cannot reach the Sluice server at %s: %v\n", s.Server, err)
	} else {
		kafka := "Kafka at " + info.GetKafkaBootstrapServers()
		if info.GetPlayground() {
			kafka = "Kafka playground (single-node development broker) at " + info.GetKafkaBootstrapServers()
		}
		fmt.Fprintf(s.out, "Server %s at %s, service %q, %s\n", info.GetVersion(), s.Server, info.GetServiceId(), kafka)
	}
	fmt.Fprintln(s.out, "Type 'help' for help, 'exit' or Ctrl-D to leave.")
	fmt.Fprintln(s.out)
}

// RunInteractive reads statements from the terminal with line editing and
// history (saved in historyFile unless it is empty) and runs each as it is
// completed by ';', until exit, quit, Ctrl-D or the end of ctx. Ctrl-C
// stops a running statement (push queries print "Query terminated") or
// clears the line being typed. A failing statement is reported and the
// shell goes on.
func (s *Shell) RunInteractive(ctx context.Context, historyFile string) error {
	rl, err := readline.NewEx(&readline.Config{
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

	var buf strings.Builder
	for ctx.Err() == nil {
		if buf.Len() == 0 {
			rl.SetPrompt(Prompt)
		} else {
			rl.SetPrompt(ContinuationPrompt)
		}
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			continue
		}
		if errors.Is(err, io.EOF) {
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
			}
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		stmts, rest := splitStatements(buf.String())
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

		s.TermWidth = readline.GetScreenWidth()
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
