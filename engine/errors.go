package engine

import "fmt"

// StatementError is a failed statement: which one, where, and why.
type StatementError struct {
	// Statement is the failing statement's text.
	Statement string
	// Line and Col locate the error in the text given to Execute (1-based);
	// zero when unknown.
	Line, Col int
	// Msg says what went wrong and what to do.
	Msg string
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
	CodeBadStatement     = 40001
	CodeStatementTimeout = 40800
	CodeServerError      = 50000
)

// Unwrap returns the error's Cause.
func (e *StatementError) Unwrap() error { return e.Cause }

func (e *StatementError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d:%d: %s\nStatement: %s", e.Line, e.Col, e.Msg, e.Statement)
	}
	if e.Statement == "" {
		return e.Msg
	}
	return fmt.Sprintf("%s\nStatement: %s", e.Msg, e.Statement)
}
