package engine

import (
	"context"

	"github.com/sluice-sql/sluice/internal/types"
)

// ResultKind says what a Result carries.
type ResultKind uint8

// The result kinds.
const (
	// ResultMessage is a statement that did something and says so
	// (CREATE, DROP, TERMINATE, SET, INSERT ...): Message is set.
	ResultMessage ResultKind = iota
	// ResultTable is a listing (SHOW, DESCRIBE, EXPLAIN, pull query): Table
	// is set, and Message may add a note.
	ResultTable
	// ResultStream is a push query: Stream is set; the caller reads it until
	// it ends and must Close it.
	ResultStream
)

// Result is the outcome of one statement.
type Result struct {
	// Statement is the statement's text as given.
	Statement string
	Kind      ResultKind
	Message   string
	Table     *Table
	Stream    *Stream
	// QueryID is set when the statement started or ended a persistent query.
	QueryID string
}

// Table is a small tabular result, already rendered to strings for display
// (SHOW, DESCRIBE, EXPLAIN), with an optional title.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	// Footer is printed after the rows (hints, plans).
	Footer string
}

// Stream is a running push query. Next and Close may be called from
// different goroutines; Next from one goroutine at a time.
type Stream struct {
	// ID names the transient query (for logs and a later close-query call).
	ID string
	// Columns are the output columns.
	Columns []types.Column
	next    func(ctx context.Context) ([]any, error)
	close   func()
}

// Next returns the next row, blocking until one arrives. It returns io.EOF
// when the query has ended (its LIMIT reached or the stream closed), and
// ctx.Err() when ctx is done.
func (s *Stream) Next(ctx context.Context) ([]any, error) { return s.next(ctx) }

// Close stops the query and releases its resources. Safe to call twice.
func (s *Stream) Close() { s.close() }

// Session holds a client's session-local state: properties set with SET and
// variables set with DEFINE. The engine reads and changes it as statements
// run. A Session is used by one caller at a time.
type Session struct {
	Properties map[string]string
	Variables  map[string]string
}

// NewSession returns an empty session.
func NewSession() *Session {
	return &Session{Properties: map[string]string{}, Variables: map[string]string{}}
}

// NewStream returns a Stream whose rows come from next and which close
// stops. close must be safe to call twice. Adapters' tests use it to build
// streams of their own.
func NewStream(id string, cols []types.Column, next func(ctx context.Context) ([]any, error), close func()) *Stream {
	return &Stream{ID: id, Columns: cols, next: next, close: close}
}
