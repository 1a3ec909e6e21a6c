package engine

import (
	"github.com/sluice-sql/sluice/engine/api"
)

// The typed result model is package api's; these names keep the engine's
// code and its callers short.
type (
	Result         = api.Result
	ResultKind     = api.ResultKind
	Stream         = api.Stream
	Session        = api.Session
	StatementError = api.StatementError
	Options        = api.Options
)

// The result kinds.
const (
	ResultStatus = api.ResultStatus
	ResultEntity = api.ResultEntity
	ResultRows   = api.ResultRows
)

// The error codes (see api.StatementError).
const (
	CodeBadStatement     = api.CodeBadStatement
	CodeStatementTimeout = api.CodeStatementTimeout
	CodeServerError      = api.CodeServerError
)

// The causes beneath a StatementError (see api).
var (
	ErrStatementTimeout = api.ErrStatementTimeout
	ErrPushQueryLimit   = api.ErrPushQueryLimit
)

// NewSession returns an empty session.
func NewSession() *Session { return api.NewSession() }

var _ api.Engine = (*Engine)(nil)
