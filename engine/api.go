package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
)

// This file is the engine's typed API: what SHOW, DESCRIBE, EXPLAIN, pull
// queries, TERMINATE, PAUSE, RESUME and INSERT VALUES give as rendered
// tables and messages, as values an API server converts without parsing
// text. Errors are *StatementError, as Execute's are. Each call runs as
// one statement does in Execute: under the server's statement timeout, and
// stopped when ctx ends before it commits (see statement.go).

// ColumnRole says where a source's column is read from.
type ColumnRole uint8

// The column roles.
const (
	RoleKey ColumnRole = iota + 1
	RoleValue
	RoleHeader
)

// SourceColumn is a column of a stream or table.
type SourceColumn struct {
	types.Column
	Role ColumnRole
	// Header is the header key a HEADER('key') column reads; empty for a
	// HEADERS column and the other roles.
	Header string
}

// SourceInfo describes a stream or table.
type SourceInfo struct {
	Name                   string
	Kind                   catalog.Kind
	Topic                  string
	Partitions             int32
	KeyFormat, ValueFormat string
	Windowed               bool
	// Timestamp names the column holding record time; empty for ROWTIME.
	Timestamp string
	Columns   []SourceColumn
	SQL       string
	// Writers and Readers are the persistent queries writing into and
	// reading from the source.
	Writers, Readers []string
	ReadOnly         bool
}

// QueryInfo describes a persistent or push query.
type QueryInfo struct {
	ID string
	// Push is true for a running push query.
	Push bool
	// Status is what SHOW QUERIES shows: RUNNING, PAUSED, ...
	Status          string
	Sink, SinkTopic string
	SQL             string
	Sources         []string
	Columns         []types.Column
	Stats           exec.Stats
}

// Sources lists the streams (kind catalog.Stream) or tables, by name.
func (e *Engine) Sources(kind catalog.Kind) []SourceInfo {
	var out []SourceInfo
	for _, src := range e.cat.Sources() {
		if src.Kind == kind {
			out = append(out, e.sourceInfo(src))
		}
	}
	return out
}

// DescribeSource describes a stream or table.
func (e *Engine) DescribeSource(name string) (SourceInfo, error) {
	src, ok := e.cat.Source(name)
	if !ok {
		return SourceInfo{}, apiError(CodeBadStatement, "%s does not exist; SHOW STREAMS and SHOW TABLES list the sources%s", name, e.didYouMean(name))
	}
	return e.sourceInfo(src), nil
}

func (e *Engine) sourceInfo(src *catalog.Source) SourceInfo {
	si := SourceInfo{
		Name: src.Name, Kind: src.Kind, Topic: src.Topic, Partitions: src.Partitions,
		KeyFormat: src.KeyFormat, ValueFormat: src.ValueFormat, Windowed: src.Window != nil,
		Timestamp: src.Timestamp, SQL: src.SQL, ReadOnly: src.IsSource,
		Writers: e.cat.Writers(src.Name), Readers: e.cat.Readers(src.Name),
	}
	for _, c := range src.Key {
		si.Columns = append(si.Columns, SourceColumn{Column: c, Role: RoleKey})
	}
	for _, c := range src.Value {
		si.Columns = append(si.Columns, SourceColumn{Column: c, Role: RoleValue})
	}
	for i, c := range src.Headers {
		si.Columns = append(si.Columns, SourceColumn{Column: c, Role: RoleHeader, Header: src.HeaderKeys[i]})
	}
	return si
}

// Queries lists the persistent queries, then the running push queries, by
// id.
func (e *Engine) Queries() []QueryInfo {
	var out []QueryInfo
	for _, q := range e.cat.Queries() {
		out = append(out, e.persistentInfo(q))
	}
	e.mu.Lock()
	ids := make([]string, 0, len(e.transient))
	for id := range e.transient {
		ids = append(ids, id)
	}
	e.mu.Unlock()
	sort.Strings(ids)
	for _, id := range ids {
		if qi, ok := e.pushInfo(id); ok {
			out = append(out, qi)
		}
	}
	return out
}

// DescribeQuery describes a persistent query or a running push query.
func (e *Engine) DescribeQuery(id string) (QueryInfo, error) {
	if pid, ok := e.findQuery(id); ok {
		q, _ := e.cat.Query(pid)
		return e.persistentInfo(q), nil
	}
	if qi, ok := e.pushInfo(id); ok {
		return qi, nil
	}
	return QueryInfo{}, apiError(CodeBadStatement, "unknown query id %s; SHOW QUERIES lists the running queries", id)
}

func (e *Engine) persistentInfo(q *catalog.Query) QueryInfo {
	qi := QueryInfo{ID: q.ID, Status: e.queryStatus(q.ID), Sink: q.Sink, SQL: q.SQL, Sources: q.Sources(), Columns: q.Plan.Output}
	if q.Plan.Sink != nil {
		qi.SinkTopic = q.Plan.Sink.Topic
	}
	e.mu.Lock()
	if rq := e.running[q.ID]; rq != nil {
		qi.Stats = rq.Stats()
	}
	e.mu.Unlock()
	return qi
}

func (e *Engine) pushInfo(id string) (QueryInfo, bool) {
	e.mu.Lock()
	tq := e.transient[id]
	e.mu.Unlock()
	if tq == nil {
		return QueryInfo{}, false
	}
	g := tq.Graph()
	return QueryInfo{ID: id, Push: true, Status: "RUNNING", Sources: []string{g.Source.Name}, Columns: g.Output, Stats: tq.Stats()}, true
}

// Topics lists the Kafka topics by name; internal ones (names starting
// with '_') only when all is set.
func (e *Engine) Topics(ctx context.Context, all bool) ([]kafka.TopicInfo, error) {
	var topics []kafka.TopicInfo
	err := e.call(ctx, func(ctx context.Context) error {
		var err error
		if topics, err = e.cfg.Kafka.ListTopics(ctx); err != nil {
			return apiError(CodeServerError, "cannot list topics: %v", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := topics[:0]
	for _, tp := range topics {
		if all || !strings.HasPrefix(tp.Name, "_") {
			out = append(out, tp)
		}
	}
	return out, nil
}

// Explanation is the plan of a statement or a persistent query.
type Explanation struct {
	// Description is the "Name : value" lines EXPLAIN prints above the
	// plan.
	Description string
	// Columns are a persistent query's output columns.
	Columns []types.Column
	// Plan is the execution plan, one step a line.
	Plan string
}

// Explain plans sql, a SELECT or CREATE ... AS SELECT statement, in
// session s without running it.
func (e *Engine) Explain(ctx context.Context, s *Session, sql string) (Explanation, error) {
	st, err := e.parseOne(s, sql)
	if err != nil {
		return Explanation{}, err
	}
	var r Result
	err = e.call(ctx, func(ctx context.Context) error {
		var err error
		r, err = e.explain(ctx, s, &ast.Explain{Source: ast.Source{Pos: st.Position()}, Statement: st})
		return err
	})
	if err != nil {
		return Explanation{}, statementError(st, err)
	}
	return Explanation{Description: r.Table.Title, Plan: strings.TrimPrefix(r.Table.Footer, "Execution plan\n")}, nil
}

// ExplainQuery shows the plan of a persistent query.
func (e *Engine) ExplainQuery(ctx context.Context, id string) (Explanation, error) {
	var r Result
	err := e.call(ctx, func(ctx context.Context) error {
		var err error
		r, err = e.explain(ctx, nil, &ast.Explain{QueryID: id})
		return err
	})
	if err != nil {
		return Explanation{}, apiStatementError("EXPLAIN "+id, err)
	}
	ex := Explanation{Description: r.Table.Title, Plan: strings.TrimPrefix(r.Table.Footer, "Execution plan\n")}
	if pid, ok := e.findQuery(id); ok {
		if q, ok := e.cat.Query(pid); ok {
			ex.Columns = q.Plan.Output
		}
	}
	return ex, nil
}

// PullResult is a pull query's rows.
type PullResult struct {
	Columns []types.Column
	Rows    [][]any
}

// PullQuery runs sql, one SELECT without EMIT CHANGES, in session s.
func (e *Engine) PullQuery(ctx context.Context, s *Session, sql string) (PullResult, error) {
	st, err := e.parseOne(s, sql)
	if err != nil {
		return PullResult{}, err
	}
	sel, ok := st.(*ast.Select)
	if !ok || sel.Query.Emit == ast.EmitChanges {
		return PullResult{}, statementError(st, userError(st.Position(), "a pull query is a SELECT without EMIT CHANGES; run push queries with PushQuery and other statements with Execute"))
	}
	var res PullResult
	var cols []types.Column
	err = e.call(ctx, func(ctx context.Context) error {
		var err error
		cols, err = e.pull(ctx, s, sel, func(row []any) bool {
			res.Rows = append(res.Rows, append([]any(nil), row...))
			return true
		}, nil)
		return err
	})
	if err != nil {
		return PullResult{}, statementError(st, err)
	}
	res.Columns = cols
	return res, nil
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

// InsertRow is one row to insert: column names and their values with the
// values' types (as wire.DecodeValue gives them). ROWTIME sets the record
// time.
type InsertRow struct {
	Names  []string
	Values []any
	Types  []*types.Type
}

// Add appends a column's value and its type to the row.
func (r *InsertRow) Add(name string, v any, t *types.Type) {
	r.Names = append(r.Names, name)
	r.Values = append(r.Values, v)
	r.Types = append(r.Types, t)
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
	st, err := script.Next(s.variable)
	if errors.Is(err, io.EOF) {
		return nil, &StatementError{Statement: sql, Line: 1, Col: 1, Msg: "no statement found; write one statement", Code: CodeBadStatement}
	}
	if err != nil {
		return nil, syntaxError(sql, err)
	}
	if _, err := script.Next(s.variable); !errors.Is(err, io.EOF) {
		return nil, &StatementError{Statement: sql, Line: 1, Col: 1, Msg: "give exactly one statement; send several with Execute", Code: CodeBadStatement}
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
		return se
	}
	out := &StatementError{Statement: stmt, Msg: err.Error(), Code: CodeBadStatement}
	var ie *internalError
	if errors.As(err, &ie) {
		out.Code = CodeServerError
	}
	return out
}
