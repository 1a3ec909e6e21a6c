package api

import (
	"errors"
	"fmt"
)

// StatementError is a failed statement: which one, where, and why.
type StatementError struct {
	// Statement is the failing statement's text.
	Statement string
	// Start and End are the statement's byte offsets in the text given to
	// Execute; both zero when the error belongs to no statement of it.
	Start, End int
	// Line and Col locate the error in the text given to Execute (1-based);
	// zero when unknown.
	Line, Col int
	// Msg says what went wrong: ksqlDB's message where ksqlDB has one,
	// then what to do.
	Msg string
	// Hint, when set, says more of what to do than Msg does.
	Hint string
	// Syntax marks the error ksqlDB's grammar gives as just "Syntax Error"
	// (Msg), for a token it cannot place: ksqlDB's message follows it with
	// an empty line of detail and a line "Statement: " with the
	// statement's text.
	Syntax bool
	// Code is ksqlDB's error code for the failure: CodeBadStatement for a
	// statement Sluice refuses, CodeServerError for a failure of Sluice or
	// its cluster, CodeStatementTimeout for a statement the server's
	// statement timeout stopped.
	Code int
	// Cause, when set, is what errors.Is and errors.As find beneath the
	// error: ErrStatementTimeout, ErrPushQueryLimit, or the context error
	// of a statement whose client went away.
	Cause error
}

// The error codes, as ksqlDB's REST API numbers them (the HTTP status times
// 100, plus a detail). CodeStatementTimeout is Sluice's: ksqlDB has no
// statement timeout.
const (
	CodeBadStatement = 40001
	// CodeQueryEndpoint refuses a statement sent to an endpoint that does
	// not run its kind (ksqlDB's 40002).
	CodeQueryEndpoint    = 40002
	CodeStatementTimeout = 40800
	// CodeAssertionFailed answers an ASSERT TOPIC or ASSERT SCHEMA whose
	// condition does not hold within its timeout (HTTP 417).
	CodeAssertionFailed = 41700
	CodeServerError     = 50000
)

// ErrStatementTimeout is beneath the error of a statement that the
// server's statement timeout stopped.
var ErrStatementTimeout = errors.New("statement timeout")

// ErrNoStatement is beneath the error of a script that holds no
// statement (nothing, or comments only).
var ErrNoStatement = errors.New("no statement")

// ErrNotSingle is beneath the error of a script that holds more than one
// statement where Options.Single asked for one.
var ErrNotSingle = errors.New("more than one statement")

// ErrPushQueryLimit is beneath the error of a push query or PRINT refused
// because the server runs as many as ksql.max.push.queries allows.
var ErrPushQueryLimit = errors.New("push query limit reached")

// Unwrap returns the error's Cause.
func (e *StatementError) Unwrap() error { return e.Cause }

// Message is Msg with the Hint after it, on a line of its own: what a
// client shows that has no place for a hint.
func (e *StatementError) Message() string {
	if e.Hint == "" {
		return e.Msg
	}
	return e.Msg + "\n" + e.Hint
}

func (e *StatementError) Error() string {
	msg := e.Message()
	if e.Line > 0 {
		return fmt.Sprintf("line %d:%d: %s\nStatement: %s", e.Line, e.Col, msg, e.Statement)
	}
	if e.Statement == "" {
		return msg
	}
	return fmt.Sprintf("%s\nStatement: %s", msg, e.Statement)
}
