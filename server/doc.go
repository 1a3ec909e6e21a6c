// Package server serves Sluice's gRPC API (proto/sluice/v1) over an engine.
//
// It is a thin adapter: each Execute call builds an engine.Session from the
// request, runs the statements, and streams their results back.
//
//	ExecuteRequest ──▶ engine.Execute ──▶ []engine.Result
//	                                          │
//	   Session ◀── session after the statements
//	   MessageResult / TableResult ◀── messages and listings
//	   StreamHeader, Row..., StreamEnd ◀── push queries, forwarded until
//	                                       they end or the client cancels
//
// The server holds no state between calls: the client keeps its session
// properties and variables and sends them with every request. A failing
// statement ends the call with a gRPC status carrying a
// sluicev1.StatementError detail. Push query rows are encoded by package
// internal/wire. The server also registers the standard
// gRPC health service and server reflection.
package server
