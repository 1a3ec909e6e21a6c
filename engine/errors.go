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
	// its cluster.
	Code int
}

// The error codes, as ksqlDB's REST API numbers them.
const (
	CodeBadStatement = 40001
	CodeServerError  = 50000
)

func (e *StatementError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d:%d: %s\nStatement: %s", e.Line, e.Col, e.Msg, e.Statement)
	}
	if e.Statement == "" {
		return e.Msg
	}
	return fmt.Sprintf("%s\nStatement: %s", e.Msg, e.Statement)
}
