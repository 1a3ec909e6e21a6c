package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/planner/bind"
)

// Execute runs the statements of sql in order in session s. It stops at the
// first failing statement and returns the results of those before it with
// the error, a *StatementError naming the statement and position.
//
// Each statement runs under the server's statement timeout and stops, with
// nothing applied, when ctx ends before it commits (see statement.go);
// a push query's stream then runs until it is closed.
func (e *Engine) Execute(ctx context.Context, s *Session, sql string, opts ...Options) ([]Result, error) {
	if s == nil {
		s = NewSession()
	}
	if err := checkSession(s); err != nil {
		return nil, err
	}
	var o Options
	for _, x := range opts {
		if x.Admit != nil {
			o.Admit = x.Admit
		}
		o.Single = o.Single || x.Single
	}
	script, err := parser.NewScript(sql)
	if err != nil {
		return nil, syntaxError(sql, err)
	}
	if o.Single {
		if err := single(sql); err != nil {
			return nil, err
		}
	}
	var out []Result
	for i := 0; ; i++ {
		// Each statement is parsed after the ones before it ran, so that a
		// DEFINE applies to the statements after it.
		st, err := script.Next(s.Variable)
		if err == io.EOF {
			break
		}
		start, end := script.Span()
		if err != nil {
			return out, spanned(syntaxError(sql, err), start, end)
		}
		if o.Admit != nil {
			p := st.Position()
			info := api.StatementInfo{Kind: statementKind(st), Index: i, Text: st.SQL(), Start: start, End: end, Line: p.Line, Col: p.Col}
			if err := o.Admit(info); err != nil {
				return out, spanned(statementError(st, err), start, end)
			}
		}
		r, err := e.executeStatement(ctx, s, st)
		if err != nil {
			return out, spanned(statementError(st, err), start, end)
		}
		r.Statement, r.Start, r.End = st.SQL(), start, end
		r.Command = commandID(st)
		if r.Command != "" && r.CommandSeq >= 0 {
			msg := r.Message
			if msg == "" {
				msg = "Done"
			}
			e.statuses.record(api.CommandStatus{ID: r.Command, Status: api.StatusSuccess, Message: msg, QueryID: r.QueryID, Seq: r.CommandSeq})
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, &StatementError{Statement: sql, Line: 1, Col: 1, Msg: "no statement found; write a statement such as SHOW STREAMS;", Code: CodeBadStatement, Cause: api.ErrNoStatement}
	}
	return out, nil
}

// single fails unless sql holds exactly one statement. Statements are
// told apart by their ';' only, so that a variable a DEFINE before would
// set does not matter.
func single(sql string) error {
	script, err := parser.NewScript(sql)
	if err != nil {
		return syntaxError(sql, err)
	}
	n := 0
	for {
		_, err := script.Next(func(string) (string, bool) { return "", true })
		if err == io.EOF {
			break
		}
		n++
		if n > 1 {
			start, end := script.Span()
			return &StatementError{Statement: sql, Start: start, End: end, Line: 1, Col: 1, Code: CodeBadStatement,
				Msg: "Expected exactly one statement: send one query per request", Cause: api.ErrNotSingle}
		}
		if err != nil {
			// The statement fails again, at its position, when it runs.
			continue
		}
	}
	return nil
}

// spanned sets the statement offsets of err, a *StatementError, and
// splits a message of several lines into ksqlDB's message (its first line)
// and Sluice's hint (the rest).
func spanned(err *StatementError, start, end int) *StatementError {
	if err.Start == 0 && err.End == 0 {
		err.Start, err.End = start, end
	}
	splitHint(err)
	return err
}

// splitHint moves the lines of err's message after its first into Hint.
func splitHint(err *StatementError) {
	if err.Hint != "" {
		return
	}
	if msg, hint, ok := strings.Cut(err.Msg, "\n"); ok {
		err.Msg, err.Hint = msg, hint
	}
}

// statementKind says what st is for api.Options.Admit.
func statementKind(st ast.Statement) api.StatementKind {
	switch st := st.(type) {
	case *ast.Select:
		if st.Query.Emit == ast.EmitChanges {
			return api.StatementPush
		}
		return api.StatementPull
	case *ast.Print:
		return api.StatementPrint
	}
	return api.StatementOther
}

// commandID names a statement's command as ksqlDB does:
// stream/`NAME`/create, terminate/ID/execute; empty for statements that
// are not commands.
func commandID(st ast.Statement) string {
	kind := func(k ast.SourceKind) string { return strings.ToLower(k.String()) }
	switch st := st.(type) {
	case *ast.CreateSource:
		return kind(st.Kind) + "/`" + st.Name + "`/create"
	case *ast.CreateAsSelect:
		return kind(st.Kind) + "/`" + st.Name + "`/create"
	case *ast.InsertInto:
		return "stream/`" + st.Target + "`/create"
	case *ast.Drop:
		return kind(st.Kind) + "/`" + st.Name + "`/drop"
	case *ast.AlterSource:
		return kind(st.Kind) + "/`" + st.Name + "`/alter"
	case *ast.CreateType:
		return "type/`" + st.Name + "`/create"
	case *ast.DropType:
		return "type/`" + st.Name + "`/drop"
	case *ast.Terminate:
		if st.All {
			return "terminate/ALL/execute"
		}
		return "terminate/" + st.QueryID + "/execute"
	case *ast.Replay:
		return "replay/" + st.QueryID + "/execute"
	case *ast.PauseResume:
		verb := "pause"
		if st.Resume {
			verb = "resume"
		}
		if st.All {
			return verb + "/ALL/execute"
		}
		return verb + "/" + st.QueryID + "/execute"
	}
	return ""
}

// executeStatement runs one statement in its own statement context.
func (e *Engine) executeStatement(ctx context.Context, s *Session, st ast.Statement) (Result, error) {
	sctx, cancel := e.statementContext(ctx)
	defer cancel()
	if sctx.Err() != nil {
		// The client went away while the statements before ran.
		return Result{}, e.interrupted(sctx, sctx.Err())
	}
	r, err := e.executeOne(sctx, s, st)
	r.CommandSeq = -1
	if state, ok := sctx.Value(stmtKey{}).(*stmtState); ok {
		r.CommandSeq = state.lastCommand.Load() - 1
	}
	return r, e.interrupted(sctx, err)
}

// syntaxError turns a parser error into a StatementError.
func syntaxError(sql string, err error) *StatementError {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return &StatementError{Statement: pe.Statement, Line: pe.Line, Col: pe.Col, Msg: pe.Msg, Hint: pe.Hint, Syntax: pe.Syntax, Code: CodeBadStatement}
	}
	return &StatementError{Statement: sql, Msg: err.Error(), Code: CodeBadStatement}
}

// statementError attaches the statement and a position to err.
func statementError(st ast.Statement, err error) *StatementError {
	var se *StatementError
	if errors.As(err, &se) {
		if se.Statement == "" {
			se.Statement = st.SQL()
		}
		return se
	}
	out := &StatementError{Statement: st.SQL(), Msg: err.Error(), Code: CodeBadStatement}
	var pe *planner.Error
	var ee *bind.Error
	switch {
	case errors.As(err, &pe):
		out.Line, out.Col, out.Msg = pe.Pos.Line, pe.Pos.Col, pe.Msg
	case errors.As(err, &ee):
		out.Line, out.Col, out.Msg = ee.Pos.Line, ee.Pos.Col, ee.Msg
	default:
		p := st.Position()
		out.Line, out.Col = p.Line, p.Col
	}
	var ie *internalError
	if errors.As(err, &ie) {
		out.Code = CodeServerError
	}
	return out
}

// internalError marks a failure of Sluice or its cluster, not of the user's
// statement.
type internalError struct{ err error }

func (e *internalError) Error() string { return e.err.Error() }
func (e *internalError) Unwrap() error { return e.err }

func internal(format string, args ...any) error {
	return &internalError{err: fmt.Errorf(format, args...)}
}

// userError is a statement the engine refuses, at a position.
func userError(pos ast.Pos, format string, args ...any) error {
	return &planner.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (e *Engine) executeOne(ctx context.Context, s *Session, st ast.Statement) (Result, error) {
	if r, ok, err := e.connectorStatement(ctx, st); ok {
		return r, err
	}
	switch st := st.(type) {
	case *ast.CreateSource:
		return e.createSource(ctx, s, st)
	case *ast.CreateAsSelect:
		return e.createAsSelect(ctx, s, st)
	case *ast.InsertValues:
		return e.insertValues(ctx, st)
	case *ast.Select:
		return e.selectQuery(ctx, s, st)
	case *ast.Show:
		return e.show(ctx, s, st)
	case *ast.Describe:
		return e.describe(ctx, st)
	case *ast.Explain:
		return e.explain(ctx, s, st)
	case *ast.Terminate:
		return e.terminate(ctx, st)
	case *ast.Replay:
		return e.replayLog(ctx, st)
	case *ast.Drop:
		return e.drop(ctx, st)
	case *ast.SetProperty:
		if st.Name == propGuarantee || st.Name == propStreamsGuarantee {
			if g, _, err := ParseGuarantee(strings.TrimSpace(st.Value)); err == nil && g == ExactlyOnceV2 {
				if err := checkTransactions(e.cfg.Kafka); err != nil {
					return Result{}, userError(st.Pos, "%v", err)
				}
			}
		}
		return setProperty(s, st)
	case *ast.UnsetProperty:
		return unsetProperty(s, st)
	case *ast.Define:
		return define(s, st)
	case *ast.Undefine:
		return undefine(s, st)
	case *ast.CreateType:
		return e.createType(ctx, st)
	case *ast.DropType:
		return e.dropType(ctx, st)
	case *ast.AlterSource:
		return e.alterSource(ctx, st)
	case *ast.Print:
		return e.print(ctx, st)
	case *ast.AssertTopic:
		return e.assertTopic(ctx, s, st)
	case *ast.AssertSchema:
		return e.assertSchema(ctx, s, st)
	case *ast.DescribeFunction:
		return describeFunction(st)
	case *ast.RunScript:
		return Result{}, userError(st.Pos, "RUN SCRIPT reads a file on the client: run it in the sluice shell, or use sluice -f %s; over the API, send the script's statements", st.Path)
	case *ast.PauseResume:
		return e.pauseResume(ctx, st)
	case *ast.InsertInto:
		return e.insertInto(ctx, s, st)
	}
	return Result{}, userError(st.Position(), "%s is not supported yet", statementName(st))
}

// statementName names a statement's kind for messages: "CREATE TYPE".
func statementName(st ast.Statement) string {
	fields := strings.Fields(strings.ToUpper(st.SQL()))
	if len(fields) > 2 {
		fields = fields[:2]
	}
	return strings.Join(fields, " ")
}
