// Package server serves Sluice's gRPC API (proto/sluice/v1) over an engine.
//
// It is a thin renderer over api.Engine (which *engine.Engine implements).
// Execute builds an api.Session from the request, runs the statements, and
// streams their typed results back, converted by internal/wire:
//
//	ExecuteRequest ──▶ api.Engine.Execute ──▶ []api.Result
//	                                          │
//	   Session ◀── session after the statements
//	   MessageResult ◀── statuses (a message, ksqlDB's command id)
//	   Entity ◀── listings and descriptions, as typed values
//	   StreamHeader, Row..., StreamEnd ◀── row streams: a pull query's rows
//	                                       (header.pull), push queries and
//	                                       PRINTs, forwarded until they end
//	                                       or the client cancels
//
// Each statement's first message carries its byte offsets in the request.
// The typed calls give the same values one by one (a call the engine does
// not implement answers UNIMPLEMENTED):
//
//	PushQuery   one SELECT ... EMIT CHANGES: header, rows, end; an optional
//	            row limit
//	PullQuery   one SELECT without EMIT CHANGES: columns and typed rows
//	Explain     the plan of a statement or of a persistent query
//	List        streams, tables, queries or topics (ListKind)
//	Describe    a source with its key, value and header columns, or a query
//	Terminate, Pause, Resume
//	            a query by id, or all of them
//	Insert      rows as typed values or JSON objects, one record each
//
// The server holds no state between calls: the client keeps its session
// properties and variables and sends them with every request. A failing
// statement ends the call with a gRPC status (INVALID_ARGUMENT for a
// user's mistake, INTERNAL for a server error, DEADLINE_EXCEEDED for a
// statement the engine's statement timeout stopped, RESOURCE_EXHAUSTED for
// a push query beyond ksql.max.push.queries) carrying a
// sluicev1.StatementError detail. A call's statement stops when its client
// cancels the call or goes away (the engine's statement context). Rows are encoded by package
// internal/wire.
//
// # Push query delivery
//
// Each push query, whether started by Execute or PushQuery, has a reader
// goroutine that takes rows from the engine into a per-client queue and a
// sender that writes them to the client. The queue holds at most
// Options.PushMaxRows rows and Options.PushMaxBytes encoded bytes (defaults
// 10,000 rows and 16 MiB). When it is full the query's delivery waits for
// the client to take a row, which holds back that query's own tasks only:
// live-tail push queries on the same source share one read of its topic in
// the engine, and that read goes on for the others. A client that takes no
// row for Options.PushStallTimeout (default 10 s) is dropped: its query
// stops at once, and after the rows already in flight the call ends with
// RESOURCE_EXHAUSTED and "push query <id> dropped: client did not keep up:
// N rows / M bytes buffered (limits ...)".
//
// The server also registers the standard gRPC health service and server
// reflection. Authentication and TLS are added by the caller through
// Options.GRPCOptions (interceptors and credentials).
package server
