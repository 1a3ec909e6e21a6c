package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/internal/render"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// ErrInterrupted is returned by Run when its context ended while a
// statement ran (the user pressed Ctrl-C); the statements after it did not
// run.
var ErrInterrupted = errors.New("interrupted")

// Error is a failed statement as the shell reports it.
type Error struct {
	// Source names the script the statement came from; empty for typed or
	// -e input.
	Source string
	// Line and Col locate the error in the source (1-based): where the
	// server says, else the statement's start. Line is zero for errors
	// that concern no statement (the server cannot be reached).
	Line, Col int
	// Statement is the failing statement's text.
	Statement string
	// StmtLine and StmtCol locate the error in Statement (1-based); zero
	// when the error has no position of its own.
	StmtLine, StmtCol int
	// Message says what went wrong and what to do.
	Message string
	// Code is the server's ksqlDB-style error code; zero when unknown.
	Code int
}

// Error returns the report printed to the user: the position and message,
// then the statement with a caret under the place of the error:
//
//	Error: script.sql:3:15: B does not exist.
//	SHOW STREAMS and SHOW TABLES list the sources you can query.
//	SELECT * FROM B EMIT CHANGES;
//	              ^
func (e *Error) Error() string {
	if e.Line == 0 {
		return "Error: " + e.Message
	}
	where := fmt.Sprintf("line %d:%d", e.Line, e.Col)
	if e.Source != "" {
		where = fmt.Sprintf("%s:%d:%d", e.Source, e.Line, e.Col)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Error: %s: %s", where, e.Message)
	lines := strings.Split(strings.TrimRight(e.Statement, "\n"), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		b.WriteByte('\n')
		b.WriteString(l)
		if i+1 == e.StmtLine && e.StmtCol > 0 {
			b.WriteByte('\n')
			b.WriteString(caretLine(l, e.StmtCol))
		}
	}
	return b.String()
}

// caretLine returns the line that puts a caret under column col (1-based,
// in runes) of line, keeping the line's tabs so the caret lines up.
func caretLine(line string, col int) string {
	var b strings.Builder
	n := 1
	for _, r := range line {
		if n >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		n++
	}
	for ; n < col; n++ {
		b.WriteByte(' ')
	}
	b.WriteByte('^')
	return b.String()
}

// Shell runs statements and prints their results. A Shell is used by one
// goroutine at a time.
type Shell struct {
	client   sluicev1.SluiceClient
	out      io.Writer
	errOut   io.Writer
	readFile func(string) ([]byte, error)

	// Server is the server's address, named in connection errors.
	Server string
	// Properties are the session properties sent with every statement.
	Properties map[string]string
	// Variables are the session variables sent with every statement.
	Variables map[string]string
	// TermWidth and TermHeight, when > 0, are the terminal's size: tables
	// fit its width (or go vertical, see Vertical) and push query tables
	// are redrawn in place while they fit its height. Zero when unknown.
	TermWidth, TermHeight int
	// Format is how result rows are printed (OUTPUT, \o).
	Format Format
	// Vertical says when tabular results print one block per row (\x).
	Vertical Vertical
	// OnDDL, when set, is called after a statement that may have changed
	// the catalog (CREATE, DROP, ALTER) ran.
	OnDDL func()
	// Interactive adds the hints meant for a person at a terminal.
	Interactive bool
}

// New returns a shell over client that prints results to stdout and
// errors to stderr, with an empty session.
func New(client sluicev1.SluiceClient, stdout, stderr io.Writer) *Shell {
	return &Shell{
		client:     client,
		out:        stdout,
		errOut:     stderr,
		readFile:   os.ReadFile,
		Properties: map[string]string{},
		Variables:  map[string]string{},
	}
}

// Run runs the statements of text one at a time, in order, and stops at the
// first failing one, which it reports on stderr and returns as an *Error.
// source names text in error positions (a file name, or empty). An
// unfinished statement at the end of text (no ';') is an error. If ctx ends
// while a statement runs, Run closes its output and returns ErrInterrupted.
func (s *Shell) Run(ctx context.Context, source, text string) error {
	stmts, rest := splitStatements(text)
	for _, st := range stmts {
		if err := s.runStatement(ctx, source, st); err != nil {
			return err
		}
	}
	if e := unfinished(source, text, rest); e != nil {
		return s.report(e)
	}
	return nil
}

// endOf returns the line and column just past text, 1-based.
func endOf(text string) (line, col int) {
	line, col = 1, 1
	for _, r := range text {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

var (
	runScript = regexp.MustCompile(`(?is)^RUN\s+SCRIPT\s+'((?:[^']|'')*)'\s*;$`)
	outputCmd = regexp.MustCompile(`(?is)^OUTPUT(?:\s+(\w+))?\s*;$`)
	ddl       = regexp.MustCompile(`(?is)^(CREATE|DROP|ALTER)\s`)
)

// runStatement runs one statement: the shell's RUN SCRIPT, or one Execute
// call.
func (s *Shell) runStatement(ctx context.Context, source string, st statement) error {
	if m := runScript.FindStringSubmatch(st.Text); m != nil {
		path := strings.ReplaceAll(m[1], "''", "'")
		b, err := s.readFile(path)
		if err != nil {
			return s.report(st.errorAt(source, 1, strings.IndexByte(st.Text, '\'')+1,
				fmt.Sprintf("cannot read the script: %v", err)))
		}
		return s.Run(ctx, path, string(b))
	}
	if strings.HasPrefix(st.Text, "\\") {
		if _, err := s.command(st.Text); err != nil {
			return s.report(st.errorAt(source, 1, 1, err.Error()))
		}
		return nil
	}
	if m := outputCmd.FindStringSubmatch(st.Text); m != nil {
		if m[1] == "" {
			fmt.Fprintf(s.out, "Output format: %s\n", s.Format)
			return nil
		}
		f, ok := ParseFormat(m[1])
		if !ok {
			return s.report(st.errorAt(source, 1, strings.Index(st.Text, m[1])+1,
				fmt.Sprintf("unknown output format %s: write OUTPUT TABULAR, OUTPUT JSON or OUTPUT CSV", m[1])))
		}
		s.Format = f
		return nil
	}
	if s.OnDDL != nil && ddl.MatchString(st.Text) {
		defer s.OnDDL()
	}

	if !utf8.ValidString(st.Text) {
		// Requests carry UTF-8 text only: say where the first other byte is.
		valid := st.Text[:firstInvalidUTF8(st.Text)]
		l, c := endOf(valid)
		e := st.errorAt(source, l, c, "the statement is not valid UTF-8 text; save the script as UTF-8")
		e.Statement = wire.ValidUTF8(st.Text)
		return s.report(e)
	}
	stream, err := s.client.Execute(ctx, &sluicev1.ExecuteRequest{
		Sql:        st.Text,
		Properties: s.Properties,
		Variables:  s.Variables,
	})
	if err != nil {
		return s.fail(ctx, source, st, err)
	}
	var push rowSink
	var pull *sluicev1.StreamHeader // a pull query's rows, read until their end
	var pulled []*sluicev1.Row
	shutdown := false // the server said it is shutting down
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if push != nil {
				push.end("")
			}
			return nil
		}
		if err != nil {
			if push != nil {
				if ctx.Err() != nil {
					if s.Interactive || s.TermHeight > 0 {
						fmt.Fprintln(s.out) // after the terminal's ^C
					}
					push.end("Query terminated")
					return ErrInterrupted
				}
				push.end("")
			}
			if shutdown {
				return s.report(&Error{Source: source, Line: st.Line, Col: st.Col, Statement: st.Text,
					Message: status.Convert(err).Message()})
			}
			return s.fail(ctx, source, st, err)
		}
		switch p := m.GetPayload().(type) {
		case *sluicev1.ExecuteResponse_Session:
			s.Properties = nonNil(p.Session.GetProperties())
			s.Variables = nonNil(p.Session.GetVariables())
		case *sluicev1.ExecuteResponse_Message:
			// Statements with nothing to say (INSERT VALUES) print nothing.
			if text := p.Message.GetText(); text != "" {
				fmt.Fprintln(s.info(), text)
			}
		case *sluicev1.ExecuteResponse_Entity:
			if s.Format == FormatJSON && render.Described(p.Entity) {
				// A description is one object, its figures typed.
				fmt.Fprintln(s.out, render.DescriptionJSON(p.Entity))
				continue
			}
			s.printTable(render.Entity(p.Entity))
		case *sluicev1.ExecuteResponse_StreamHeader:
			if p.StreamHeader.GetPull() {
				pull, pulled = p.StreamHeader, nil
				continue
			}
			cols := p.StreamHeader.GetColumns()
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = c.GetName()
			}
			if s.Interactive {
				fmt.Fprintln(s.info(), "Press CTRL-C to interrupt")
			}
			push = s.newRowSink(names)
		case *sluicev1.ExecuteResponse_Row:
			if pull != nil {
				pulled = append(pulled, p.Row)
				continue
			}
			if push == nil {
				continue
			}
			vals := p.Row.GetValues()
			cells := make([]string, len(vals))
			for i, v := range vals {
				cells[i] = types.FormatValue(wire.DecodeValue(v))
				if _, null := v.GetKind().(*sluicev1.Value_NullValue); p.Row.GetTombstone() && (null || v.GetKind() == nil) {
					// A delete of a table's key: as ksqlDB's CLI shows it,
					// the columns it has no value for.
					cells[i] = "<TOMBSTONE>"
				}
			}
			push.row(cells, vals)
		case *sluicev1.ExecuteResponse_StreamEnd:
			if pull != nil {
				s.printTable(render.Rows(pull, pulled))
				pull, pulled = nil, nil
				continue
			}
			if push == nil {
				continue
			}
			switch end := p.StreamEnd; end.GetReason() {
			case sluicev1.EndReason_END_REASON_SERVER_SHUTDOWN:
				push.end("Query terminated: the server is shutting down")
				shutdown = true
			case sluicev1.EndReason_END_REASON_ERROR:
				push.end("Query failed: " + end.GetMessage())
			case sluicev1.EndReason_END_REASON_CLOSED:
				push.end("Query terminated")
			case sluicev1.EndReason_END_REASON_COMPLETED:
				push.end("Query Completed")
			default:
				push.end("Limit Reached")
			}
			push = nil
		}
	}
}

// info is where messages and hints go: the standard output in tabular
// format, else the standard error so that the standard output holds rows
// only.
func (s *Shell) info() io.Writer {
	if s.Format == FormatTabular {
		return s.out
	}
	return s.errOut
}

// errorAt returns the error msg at line and col of st's text (1-based),
// positioned in the source too.
func (st statement) errorAt(source string, line, col int, msg string) *Error {
	e := &Error{Source: source, Line: st.Line + line - 1, Col: col, Statement: st.Text,
		StmtLine: line, StmtCol: col, Message: msg}
	if line == 1 {
		e.Col = st.Col + col - 1
	}
	return e
}

// fail reports a failed call. Positions the server gives are relative to
// the statement's text; fail moves them into the source.
func (s *Shell) fail(ctx context.Context, source string, st statement, err error) error {
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	e := &Error{Source: source, Line: st.Line, Col: st.Col, Statement: st.Text}
	stat := status.Convert(err)
	var detail *sluicev1.StatementError
	for _, d := range stat.Details() {
		if d, ok := d.(*sluicev1.StatementError); ok {
			detail = d
		}
	}
	switch {
	case detail != nil:
		e.Message = detail.GetMessage()
		if h := detail.GetHint(); h != "" {
			e.Message += "\n" + h
		}
		e.Code = int(detail.GetCode())
		if l, c := int(detail.GetLine()), int(detail.GetColumn()); l > 0 {
			at := st.errorAt(source, l, c, "")
			e.Line, e.Col, e.StmtLine, e.StmtCol = at.Line, at.Col, l, c
		}
	case stat.Code() == codes.Unavailable:
		e.Line, e.Col, e.Statement = 0, 0, ""
		e.Message = fmt.Sprintf("cannot reach the Sluice server at %s (%s); is sluice-server running?", s.Server, stat.Message())
	default:
		e.Message = stat.Message()
	}
	return s.report(e)
}

// report prints e on stderr and returns it.
func (s *Shell) report(e *Error) error {
	fmt.Fprintln(s.errOut, e.Error())
	return e
}

// firstInvalidUTF8 returns the byte offset of the first byte of s that is
// not part of a valid UTF-8 sequence, or len(s).
func firstInvalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return len(s)
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
