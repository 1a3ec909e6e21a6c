// Package api is the engine's typed result model, and the one interface
// the servers (gRPC, REST) serve: Engine.
//
// Executing a script yields one Result per statement: a status (a
// statement that did something and says so: CREATE, DROP, TERMINATE,
// SET ...), an entity (a listing or a description: SourceList,
// SourceDescription, QueryList, TopicList, PropertyList, VariableList,
// TypeList, FunctionList, FunctionDescription, QueryDescription), or a row
// stream (a pull query's rows, a push query or a PRINT: a schema whose
// columns are marked key, header or window bound, typed rows, and an end
// with its reason). A failed statement is a *StatementError: ksqlDB's code
// and message, the position, a hint, the statement's text and offsets.
//
// Nothing here is rendered text: the servers and the shell render these
// values. The package depends on no part of the engine (no parser, no
// catalog), so that a renderer importing it stays a renderer.
package api
