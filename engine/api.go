package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
)

// This file is the engine's typed calls (api.Engine): what SHOW, DESCRIBE,
// EXPLAIN, pull queries, TERMINATE, PAUSE, RESUME and INSERT VALUES give,
// for an API server that calls them directly. Errors are
// *StatementError, as Execute's are. Each call runs as one statement does
// in Execute: under the server's statement timeout, and stopped when ctx
// ends before it commits (see statement.go).

// InsertRow is one row to insert (see api.InsertRow).
type InsertRow = api.InsertRow

// Sources lists the streams or the tables, by name.
func (e *Engine) Sources(kind api.SourceKind) []api.SourceInfo {
	var out []api.SourceInfo
	for _, src := range e.cat.Sources() {
		if api.SourceKind(src.Kind) == kind {
			out = append(out, e.sourceInfo(src))
		}
	}
	return out
}

// DescribeSource describes a stream or table.
func (e *Engine) DescribeSource(ctx context.Context, name string, extended bool) (*api.SourceDescription, error) {
	d, ok := e.describeSource(ctx, name, extended)
	if !ok {
		return nil, apiError(CodeBadStatement, "Could not find STREAM/TABLE '%s' in the Metastore\nSHOW STREAMS and SHOW TABLES list the sources.%s", name, e.didYouMean(name))
	}
	return d, nil
}

// Queries lists the persistent queries, then the running push queries, by
// id, with their figures.
func (e *Engine) Queries(ctx context.Context) []api.QueryInfo {
	var out []api.QueryInfo
	for _, q := range e.cat.Queries() {
		out = append(out, e.persistentInfo(ctx, q, true))
	}
	e.mu.Lock()
	ids := make([]string, 0, len(e.transient))
	for id := range e.transient {
		ids = append(ids, id)
	}
	e.mu.Unlock()
	sort.Strings(ids)
	for _, id := range ids {
		if qi, ok := e.pushInfo(ctx, id); ok {
			out = append(out, qi)
		}
	}
	return out
}

// DescribeQuery describes a persistent query or a running push query.
func (e *Engine) DescribeQuery(ctx context.Context, id string) (api.QueryInfo, error) {
	if pid, ok := e.findQuery(id); ok {
		q, _ := e.cat.Query(pid)
		return e.persistentInfo(ctx, q, true), nil
	}
	if qi, ok := e.pushInfo(ctx, id); ok {
		return qi, nil
	}
	return api.QueryInfo{}, apiError(CodeBadStatement, "unknown query id %s; SHOW QUERIES lists the running queries", id)
}

// Topics lists the Kafka topics by name; internal ones (names starting
// with '_') only when all is set.
func (e *Engine) Topics(ctx context.Context, all bool) ([]api.Topic, error) {
	var topics []api.Topic
	err := e.call(ctx, func(ctx context.Context) error {
		var err error
		topics, err = e.listTopics(ctx, all)
		return err
	})
	if err != nil {
		return nil, apiStatementError("SHOW TOPICS", err)
	}
	return topics, nil
}

// Explain plans sql, a SELECT or CREATE ... AS SELECT statement, in
// session s without running it.
func (e *Engine) Explain(ctx context.Context, s *Session, sql string) (*api.QueryDescription, error) {
	st, err := e.parseOne(s, sql)
	if err != nil {
		return nil, err
	}
	var d *api.QueryDescription
	err = e.call(ctx, func(ctx context.Context) error {
		var err error
		d, err = e.explanation(ctx, s, &ast.Explain{Source: ast.Source{Pos: st.Position()}, Statement: st})
		return err
	})
	if err != nil {
		return nil, statementError(st, err)
	}
	return d, nil
}

// ExplainQuery describes a persistent query with its plan.
func (e *Engine) ExplainQuery(ctx context.Context, id string) (*api.QueryDescription, error) {
	var d *api.QueryDescription
	err := e.call(ctx, func(ctx context.Context) error {
		var err error
		d, err = e.explanation(ctx, nil, &ast.Explain{QueryID: id})
		return err
	})
	if err != nil {
		return nil, apiStatementError("EXPLAIN "+id, err)
	}
	return d, nil
}

// PullQuery runs sql, one SELECT without EMIT CHANGES, in session s.
func (e *Engine) PullQuery(ctx context.Context, s *Session, sql string) (*Stream, error) {
	st, err := e.parseOne(s, sql)
	if err != nil {
		return nil, err
	}
	sel, ok := st.(*ast.Select)
	if !ok || sel.Query.Emit == ast.EmitChanges {
		return nil, statementError(st, userError(st.Position(), "a pull query is a SELECT without EMIT CHANGES; run push queries with PushQuery and other statements with Execute"))
	}
	var rows *Stream
	err = e.call(ctx, func(ctx context.Context) error {
		var err error
		rows, err = e.pullRows(ctx, s, sel)
		return err
	})
	if err != nil {
		return nil, statementError(st, err)
	}
	return rows, nil
}

// Terminate ends the persistent query or push query id, or with all
// every persistent query, and says so.
func (e *Engine) Terminate(ctx context.Context, id string, all bool) (string, error) {
	st := &ast.Terminate{QueryID: id, All: all}
	if err := needQuery("TERMINATE", id, all); err != nil {
		return "", err
	}
	var r Result
	err := e.call(ctx, func(ctx context.Context) error {
		var err error
		r, err = e.terminate(ctx, st)
		return err
	})
	if err != nil {
		return "", apiStatementError("TERMINATE "+orAll(id, all), err)
	}
	return r.Message, nil
}

// Pause pauses (resume false) or resumes a persistent query, or with all
// every one, and says so.
func (e *Engine) Pause(ctx context.Context, id string, all, resume bool) (string, error) {
	verb := "PAUSE"
	if resume {
		verb = "RESUME"
	}
	if err := needQuery(verb, id, all); err != nil {
		return "", err
	}
	var r Result
	err := e.call(ctx, func(ctx context.Context) error {
		var err error
		r, err = e.pauseResume(ctx, &ast.PauseResume{QueryID: id, All: all, Resume: resume})
		return err
	})
	if err != nil {
		return "", apiStatementError(verb+" "+orAll(id, all), err)
	}
	return r.Message, nil
}

func needQuery(verb, id string, all bool) error {
	if (id != "") == all {
		return apiError(CodeBadStatement, "%s needs either a query id or all, not both nor neither", verb)
	}
	return nil
}

func orAll(id string, all bool) string {
	if all {
		return "ALL"
	}
	return id
}

// Insert writes rows into the stream or table target, one record each, as
// INSERT INTO target (names) VALUES (...) does; it stops at the first row
// that cannot be written and returns how many were. Each row is a
// statement of its own: written or not, under its own statement timeout,
// and not written once ctx has ended.
func (e *Engine) Insert(ctx context.Context, target string, rows []InsertRow) (int, error) {
	for i, r := range rows {
		stmt := fmt.Sprintf("INSERT INTO %s (%s) VALUES (...) -- row %d", target, strings.Join(r.Names, ", "), i+1)
		if len(r.Names) != len(r.Values) || len(r.Names) != len(r.Types) {
			return i, apiError(CodeServerError, "bug: row %d has %d names, %d values and %d types", i+1, len(r.Names), len(r.Values), len(r.Types))
		}
		vals := make([]constValue, len(r.Names))
		for j := range r.Names {
			v, t := literal(r.Values[j], r.Types[j])
			vals[j] = constValue{v: v, t: t}
		}
		err := e.call(ctx, func(ctx context.Context) error {
			_, err := e.insertRow(ctx, target, ast.Pos{}, ast.Pos{}, r.Names, vals)
			return err
		})
		if err != nil {
			return i, apiStatementError(stmt, err)
		}
	}
	return len(rows), nil
}

// literal types a BIGINT value that fits an INTEGER as INTEGER, at the top
// and in arrays, as SQL types an integer literal: so that an API client's
// integer goes into an INTEGER column as it does in INSERT VALUES.
func literal(v any, t *types.Type) (any, *types.Type) {
	switch {
	case t == nil:
	case t.Kind == types.Bigint:
		if i, ok := v.(int64); ok && i == int64(int32(i)) {
			return int32(i), types.IntType
		}
	case t.Kind == types.Array:
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			break
		}
		out := make([]any, len(arr))
		var elem *types.Type
		for i, x := range arr {
			var et *types.Type
			out[i], et = literal(x, t.Elem)
			if x != nil && elem == nil {
				elem = et
			}
			if x != nil && et != elem {
				return v, t // mixed: leave it as it is
			}
		}
		if elem == nil {
			elem = t.Elem
		}
		return out, types.ArrayOf(elem)
	}
	return v, t
}

// parseOne parses sql as exactly one statement, its variables substituted
// from s.
func (e *Engine) parseOne(s *Session, sql string) (ast.Statement, error) {
	if s == nil {
		s = NewSession()
	}
	script, err := parser.NewScript(sql)
	if err != nil {
		return nil, syntaxError(sql, err)
	}
	st, err := script.Next(s.Variable)
	if errors.Is(err, io.EOF) {
		return nil, &StatementError{Statement: sql, Line: 1, Col: 1, Msg: "no statement found; write one statement", Code: CodeBadStatement, Cause: api.ErrNoStatement}
	}
	if err != nil {
		return nil, syntaxError(sql, err)
	}
	if _, err := script.Next(s.Variable); !errors.Is(err, io.EOF) {
		return nil, &StatementError{Statement: sql, Line: 1, Col: 1, Msg: "give exactly one statement; send several with Execute", Code: CodeBadStatement, Cause: api.ErrNotSingle}
	}
	return st, nil
}

// apiError is an error of a typed call that has no statement text.
func apiError(code int, format string, args ...any) *StatementError {
	return &StatementError{Msg: fmt.Sprintf(format, args...), Code: code}
}

// call runs fn, one typed call, as a statement: in its own statement
// context, its error turned into the timeout's or the client's when that
// context ended before it committed.
func (e *Engine) call(ctx context.Context, fn func(ctx context.Context) error) error {
	sctx, cancel := e.statementContext(ctx)
	defer cancel()
	if sctx.Err() != nil {
		return e.interrupted(sctx, sctx.Err())
	}
	return e.interrupted(sctx, fn(sctx))
}

// apiStatementError is statementError for a typed call: stmt is the
// statement the call stands for.
func apiStatementError(stmt string, err error) *StatementError {
	var se *StatementError
	if errors.As(err, &se) {
		if se.Statement == "" && se.Cause != nil {
			se.Statement = stmt
		}
		splitHint(se)
		return se
	}
	out := &StatementError{Statement: stmt, Msg: err.Error(), Code: CodeBadStatement}
	var ie *internalError
	if errors.As(err, &ie) {
		out.Code = CodeServerError
	}
	splitHint(out)
	return out
}
