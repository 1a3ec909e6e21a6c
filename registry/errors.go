package registry

import (
	"errors"
	"fmt"
	"net/http"
)

// Confluent Schema Registry's error codes. The HTTP status of a code is its
// first three digits (40401 is a 404).
const (
	CodeSubjectNotFound        = 40401
	CodeVersionNotFound        = 40402
	CodeSchemaNotFound         = 40403
	CodeSubjectSoftDeleted     = 40404
	CodeSubjectNotSoftDeleted  = 40405
	CodeVersionSoftDeleted     = 40406
	CodeVersionNotSoftDeleted  = 40407
	CodeSubjectLevelNotSet     = 40408
	CodeIncompatible           = 409
	CodeInvalidSchema          = 42201
	CodeInvalidVersion         = 42202
	CodeInvalidCompatibility   = 42203
	CodeStore                  = 50001
	CodeUnsupportedMediaType   = 415
	CodeUnprocessableRequest   = 422
	CodeMethodOrPathNotAllowed = 404
)

// Error is an error of Confluent's REST API: an error code and a message.
// It wraps ErrNotFound, ErrIncompatible or ErrInvalid where one applies, so
// that errors.Is works on errors from Memory and from HTTPClient alike.
type Error struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("schema registry: %s (error code %d)", e.Message, e.Code)
}

// Unwrap maps the code to the package's sentinel errors.
func (e *Error) Unwrap() error {
	switch {
	case e.Code == CodeIncompatible:
		return ErrIncompatible
	case e.Code/100 == 404:
		return ErrNotFound
	case e.Code/100 == 422:
		return ErrInvalid
	}
	return nil
}

// Status is the HTTP status the REST API answers the error with.
func (e *Error) Status() int {
	switch {
	case e.Code >= 10000:
		return e.Code / 100
	case e.Code >= 100 && e.Code < 600:
		return e.Code
	}
	return http.StatusInternalServerError
}

func apiErr(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func subjectNotFound(subject string) *Error {
	return apiErr(CodeSubjectNotFound, "Subject '%s' not found.", subject)
}

func versionNotFound(v int) *Error {
	return apiErr(CodeVersionNotFound, "Version %d not found.", v)
}

// asAPIError returns err as an *Error, a store error (50001) when it is
// not one.
func asAPIError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeStore, Message: "Error in the backend data store: " + err.Error()}
}
