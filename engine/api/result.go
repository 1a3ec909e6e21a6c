package api

import (
	"context"
	"io"
	"time"

	"github.com/sluice-sql/sluice/internal/types"
)

// ResultKind says what a Result carries.
type ResultKind uint8

// The result kinds.
const (
	// ResultStatus is a statement that did something and says so
	// (CREATE, DROP, TERMINATE, SET, INSERT ...): Message may be set,
	// Command names a command (see Result.Command).
	ResultStatus ResultKind = iota
	// ResultEntity is a listing or a description (SHOW, LIST, DESCRIBE,
	// EXPLAIN): Entity is set.
	ResultEntity
	// ResultRows is a row stream: a pull query's rows, a push query or a
	// PRINT. Stream is set; the caller reads it until it ends and must
	// Close it.
	ResultRows
)

// Result is the outcome of one statement.
type Result struct {
	// Statement is the statement's text as given (after variable
	// substitution); Start and End are its byte offsets in the text given
	// to Execute.
	Statement  string
	Start, End int
	Kind       ResultKind
	// Message is a status's text: "Stream created", "Created query with ID
	// CSAS_X_1", a warning of a statement that did nothing.
	Message string
	// Command is ksqlDB's command id of a statement that changed the
	// catalog or the running queries (stream/`X`/create,
	// terminate/ID/execute); empty for the others.
	Command string
	// QueryID is set when the statement started or ended a persistent
	// query, and for a push query.
	QueryID string
	// CommandSeq is the command-log offset of the statement's last command
	// (ksqlDB's commandSequenceNumber); -1 for a statement that wrote none.
	CommandSeq int64
	Entity     Entity
	Stream     *Stream
}

// StatementKind says what a statement is before it runs: what an
// endpoint that runs some kinds only needs to know (see Options.Admit).
type StatementKind uint8

// The statement kinds.
const (
	// StatementOther is every statement but a query or PRINT.
	StatementOther StatementKind = iota
	// StatementPull is a SELECT without EMIT CHANGES.
	StatementPull
	// StatementPush is a SELECT ... EMIT CHANGES.
	StatementPush
	// StatementPrint is PRINT.
	StatementPrint
)

// IsQuery reports whether k is a statement that answers with rows.
func (k StatementKind) IsQuery() bool { return k != StatementOther }

// StatementInfo is a statement about to run.
type StatementInfo struct {
	Kind StatementKind
	// Index counts the statements of the script from 0.
	Index      int
	Text       string
	Start, End int
	Line, Col  int
}

// Options change how Execute runs a script.
type Options struct {
	// Admit, when set, is asked before each statement runs: an error
	// refuses the statement, and Execute stops there and returns it (a
	// *StatementError is returned as it is, other errors become one at the
	// statement's position).
	Admit func(StatementInfo) error
	// Single requires the script to hold exactly one statement; checked
	// before it runs.
	Single bool
}

// ColumnRole says where a column is read from or what it holds.
type ColumnRole uint8

// The column roles.
const (
	RoleValue ColumnRole = iota
	RoleKey
	RoleHeader
	// RoleWindowStart and RoleWindowEnd are a windowed key's bounds
	// (WINDOWSTART, WINDOWEND).
	RoleWindowStart
	RoleWindowEnd
)

// String names the role as ksqlDB's schemas do: KEY, HEADERS; empty for
// a value column.
func (r ColumnRole) String() string {
	switch r {
	case RoleKey, RoleWindowStart, RoleWindowEnd:
		return "KEY"
	case RoleHeader:
		return "HEADERS"
	}
	return ""
}

// Column is a column of a row stream's schema.
type Column struct {
	types.Column
	Role ColumnRole
}

// Columns returns cols as value columns, the first keys of them key
// columns.
func Columns(cols []types.Column, keys int) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i].Column = c
		if i < keys {
			out[i].Role = RoleKey
			switch c.Name {
			case "WINDOWSTART":
				out[i].Role = RoleWindowStart
			case "WINDOWEND":
				out[i].Role = RoleWindowEnd
			}
		}
	}
	return out
}

// EndReason says why a row stream ended.
type EndReason uint8

// The end reasons.
const (
	// EndRunning: the stream has not ended.
	EndRunning EndReason = iota
	// EndCompleted: a pull query or a stream read to its end.
	EndCompleted
	// EndLimit: the query's LIMIT was reached.
	EndLimit
	// EndClosed: the stream was closed (by its reader, or the server
	// shutting down).
	EndClosed
	// EndError: the query failed; Stream.Err says why.
	EndError
)

// String is ksqlDB's final message for the reason, where it has one.
func (r EndReason) String() string {
	switch r {
	case EndCompleted:
		return "Query Completed"
	case EndLimit:
		return "Limit Reached"
	case EndClosed:
		return "Query Closed"
	case EndError:
		return "Query Failed"
	}
	return "Running"
}

// Stream is a row stream: a pull query's rows (Pull set, all rows
// already read), a running push query, or a PRINT. Next, NextRow and Close
// may be called from different goroutines; Next and NextRow from one
// goroutine at a time.
type Stream struct {
	// ID names a push query (for logs and a later close-query call); empty
	// for a pull query.
	ID string
	// Pull is set for a pull query's rows; Table when it read a table's
	// state (ksqlDB ends such a query's rows with no final message).
	Pull, Table bool
	// Print is set for a PRINT: its rows are the records of a topic.
	Print   bool
	Columns []Column
	next    func(ctx context.Context) (Row, error)
	close   func()
	end     func() EndReason
}

// Row is a row of a Stream.
type Row struct {
	// Values are the row's columns, laid out as the stream's Columns.
	Values []any
	// Tombstone marks a delete in a push query whose rows are a table's
	// (a key deleted from its source, a group or a session window gone):
	// as in ksqlDB, the key columns the projection holds are set and every
	// other column is null. A tombstone counts toward the query's LIMIT.
	Tombstone bool
}

// NewStream returns a Stream whose rows come from next and which close
// stops. close must be safe to call twice. end, when not nil, tells why
// the stream ended once next returned io.EOF.
func NewStream(id string, cols []Column, next func(ctx context.Context) ([]any, error), close func(), end func() EndReason) *Stream {
	return NewRowStream(id, cols, func(ctx context.Context) (Row, error) {
		v, err := next(ctx)
		return Row{Values: v}, err
	}, close, end)
}

// NewRowStream is NewStream for a stream whose rows may be tombstones.
func NewRowStream(id string, cols []Column, next func(ctx context.Context) (Row, error), close func(), end func() EndReason) *Stream {
	return &Stream{ID: id, Columns: cols, next: next, close: close, end: end}
}

// NewRows returns the finished stream of a pull query's rows: they were
// all read and the query ended for reason.
func NewRows(cols []Column, rows [][]any, reason EndReason) *Stream {
	i := 0
	return &Stream{Pull: true, Columns: cols,
		next: func(ctx context.Context) (Row, error) {
			if err := ctx.Err(); err != nil {
				return Row{}, err
			}
			if i >= len(rows) {
				return Row{}, io.EOF
			}
			i++
			return Row{Values: rows[i-1]}, nil
		},
		close: func() {},
		end:   func() EndReason { return reason },
	}
}

// Next returns the next row, blocking until one arrives, and skips
// tombstones (see NextRow), as ksqlDB's /query-stream does. It returns
// io.EOF when the stream has ended (End says why), and ctx.Err() when ctx
// is done.
func (s *Stream) Next(ctx context.Context) ([]any, error) {
	for {
		r, err := s.next(ctx)
		if err != nil || !r.Tombstone {
			return r.Values, err
		}
	}
}

// NextRow is Next with the tombstones of a push query whose rows are a
// table's.
func (s *Stream) NextRow(ctx context.Context) (Row, error) { return s.next(ctx) }

// Close stops the query and releases its resources. Safe to call twice.
func (s *Stream) Close() { s.close() }

// End says why the stream ended, once Next returned io.EOF; EndRunning
// before.
func (s *Stream) End() EndReason {
	if s.end == nil {
		return EndCompleted
	}
	return s.end()
}

// Names returns the stream's column names.
func (s *Stream) Names() []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Name
	}
	return out
}

// TypedColumns returns the stream's columns without their roles.
func (s *Stream) TypedColumns() []types.Column {
	out := make([]types.Column, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Column
	}
	return out
}

// Stats are a running query's figures.
type Stats struct {
	RecordsIn, RecordsOut int64
	// Filtered counts the records a WHERE or HAVING dropped; Errors those
	// that failed (see the processing log); Late those that arrived after
	// their window closed; NullsDropped the records with a null value the
	// query skipped.
	Filtered, Errors, Late, NullsDropped int64
	// Restoring is set while the query rebuilds its state from its
	// changelogs; RestorePercent is how far it got.
	Restoring      bool
	RestorePercent int
	// LastRecord is when the query last read a record; zero if never.
	LastRecord time.Time
	// Lag is how far the query is behind its input topics, when
	// LagMeasured.
	LagMeasured bool
	LagRecords  int64
	LagSeconds  float64
}
