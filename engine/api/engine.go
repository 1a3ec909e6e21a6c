package api

import (
	"context"
	"errors"

	"github.com/sluice-sql/sluice/internal/types"
)

// Engine is what the servers serve: *engine.Engine implements it. Every
// call but the listings runs as one statement does in Execute: under the
// server's statement timeout, and stopped when ctx ends before it commits.
// Errors are *StatementError.
type Engine interface {
	// Execute runs the statements of sql in order in session s. It stops
	// at the first failing statement and returns the results of those
	// before it with the error.
	Execute(ctx context.Context, s *Session, sql string, opts ...Options) ([]Result, error)
	// Sources lists the streams or the tables, by name.
	Sources(kind SourceKind) []SourceInfo
	// DescribeSource describes a stream or table; extended adds the
	// runtime figures of the queries writing and reading it.
	DescribeSource(ctx context.Context, name string, extended bool) (*SourceDescription, error)
	// Queries lists the persistent queries, then the running push queries,
	// by id, with their figures.
	Queries(ctx context.Context) []QueryInfo
	// DescribeQuery describes a persistent query or a running push query.
	DescribeQuery(ctx context.Context, id string) (QueryInfo, error)
	// Topics lists the Kafka topics by name; internal ones (names starting
	// with '_') only when all is set.
	Topics(ctx context.Context, all bool) ([]Topic, error)
	// Explain plans sql, a SELECT or CREATE ... AS SELECT statement, in
	// session s without running it.
	Explain(ctx context.Context, s *Session, sql string) (*QueryDescription, error)
	// ExplainQuery describes a persistent query with its plan.
	ExplainQuery(ctx context.Context, id string) (*QueryDescription, error)
	// PullQuery runs sql, one SELECT without EMIT CHANGES, in session s;
	// the stream it returns holds every row.
	PullQuery(ctx context.Context, s *Session, sql string) (*Stream, error)
	// Terminate ends the persistent query or push query id, or with all
	// every persistent query, and says so.
	Terminate(ctx context.Context, id string, all bool) (string, error)
	// Pause pauses (resume false) or resumes a persistent query, or with
	// all every one, and says so.
	Pause(ctx context.Context, id string, all, resume bool) (string, error)
	// Insert writes rows into the stream or table target, one record each,
	// as INSERT INTO target (names) VALUES (...) does; it stops at the
	// first row that cannot be written and returns how many were.
	Insert(ctx context.Context, target string, rows []InsertRow) (int, error)
	// CheckInsert says whether target exists and takes inserts.
	CheckInsert(target string) error
	// CommandStatus returns the status of the command id (ksqlDB's command
	// id, stream/`X`/create ...), matched without backquotes and case.
	CommandStatus(id string) (CommandStatus, bool)
	// CommandStatuses returns the statuses of the commands the catalog
	// holds, oldest first (at most the newest 10,000).
	CommandStatuses() []CommandStatus
}

// StatusSuccess is the status of a command that ran.
const StatusSuccess = "SUCCESS"

// CommandStatus is the outcome of a statement that changed the catalog or
// the running queries, as ksqlDB's /status gives it.
type CommandStatus struct {
	// ID is ksqlDB's command id: stream/`X`/create, terminate/ID/execute.
	ID string
	// Status is SUCCESS.
	Status  string
	Message string
	QueryID string
	// Seq is the command's offset in the command log.
	Seq int64
}

// InsertRow is one row to insert: column names and their values with the
// values' types (as wire.DecodeValue gives them). ROWTIME sets the record
// time. A value without a type (nil) is one decoded from JSON with
// encoding/json's UseNumber (bool, json.Number, string, []any,
// map[string]any): the engine converts it to its column's type as ksqlDB
// reads a row inserted as JSON (objects are structs or maps as the column
// says, strings are read as CAST reads them, BYTES are base64).
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

// ErrUnimplemented is the cause of every error of Unimplemented's calls.
var ErrUnimplemented = errors.New("not implemented by this engine")

// Unimplemented is an Engine whose every call but Execute fails. Embed it
// in an Engine of tests that implements some calls only.
type Unimplemented struct{}

func unimplemented(call string) *StatementError {
	return &StatementError{Msg: call + " is not implemented by this engine", Code: CodeServerError, Cause: ErrUnimplemented}
}

// Execute implements Engine.
func (Unimplemented) Execute(context.Context, *Session, string, ...Options) ([]Result, error) {
	return nil, unimplemented("Execute")
}

// Sources implements Engine.
func (Unimplemented) Sources(SourceKind) []SourceInfo { return nil }

// DescribeSource implements Engine.
func (Unimplemented) DescribeSource(context.Context, string, bool) (*SourceDescription, error) {
	return nil, unimplemented("DescribeSource")
}

// Queries implements Engine.
func (Unimplemented) Queries(context.Context) []QueryInfo { return nil }

// DescribeQuery implements Engine.
func (Unimplemented) DescribeQuery(context.Context, string) (QueryInfo, error) {
	return QueryInfo{}, unimplemented("DescribeQuery")
}

// Topics implements Engine.
func (Unimplemented) Topics(context.Context, bool) ([]Topic, error) {
	return nil, unimplemented("Topics")
}

// Explain implements Engine.
func (Unimplemented) Explain(context.Context, *Session, string) (*QueryDescription, error) {
	return nil, unimplemented("Explain")
}

// ExplainQuery implements Engine.
func (Unimplemented) ExplainQuery(context.Context, string) (*QueryDescription, error) {
	return nil, unimplemented("ExplainQuery")
}

// PullQuery implements Engine.
func (Unimplemented) PullQuery(context.Context, *Session, string) (*Stream, error) {
	return nil, unimplemented("PullQuery")
}

// Terminate implements Engine.
func (Unimplemented) Terminate(context.Context, string, bool) (string, error) {
	return "", unimplemented("Terminate")
}

// Pause implements Engine.
func (Unimplemented) Pause(context.Context, string, bool, bool) (string, error) {
	return "", unimplemented("Pause")
}

// Insert implements Engine.
func (Unimplemented) Insert(context.Context, string, []InsertRow) (int, error) {
	return 0, unimplemented("Insert")
}

// CheckInsert implements Engine.
func (Unimplemented) CheckInsert(string) error { return unimplemented("CheckInsert") }

// CommandStatus implements Engine.
func (Unimplemented) CommandStatus(string) (CommandStatus, bool) { return CommandStatus{}, false }

// CommandStatuses implements Engine.
func (Unimplemented) CommandStatuses() []CommandStatus { return nil }
