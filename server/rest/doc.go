// Package rest serves ksqlDB's REST API over the engine, so that ksqlDB's
// clients (its CLI's HTTP calls, the npm ksqldb-client, the Python
// ksql-python-ng, curl scripts) work against Sluice.
//
// It renders the engine's typed results (package engine/api) as ksqlDB's
// JSON and parses no SQL: each request's text goes to api.Engine.Execute
// whole, which says what each statement is before it runs (so that /ksql
// refuses queries and /query anything else).
//
// The endpoints and their shapes follow ksqlDB's:
//
//   - POST /ksql runs statements in order in a session built from the
//     request's streamsProperties and sessionVariables, and answers with one
//     entity per statement: currentStatus (with a commandId such as
//     stream/`S`/create) for statements that change the catalog or the
//     queries; streams, tables, source_descriptions (SHOW ... EXTENDED),
//     queries, query_descriptions (SHOW QUERIES EXTENDED, with each query's
//     runtime figures), kafka_topics, properties, variables, type_list and
//     function_names for SHOW; sourceDescription for DESCRIBE (its
//     statistics the runtime figures of the queries writing and reading the
//     source, when EXTENDED); describe_function for DESCRIBE FUNCTION;
//     queryDescription for EXPLAIN (executionPlan the description and the
//     execution plan, topology the processing topology, as the shell
//     prints them). INSERT VALUES, SET, UNSET, DEFINE and
//     UNDEFINE answer no entity. Queries are refused with error 40002, as
//     in ksqlDB.
//   - POST /query-stream runs one pull or push query, answered in the
//     delimited form (a header object, then one JSON array a line) or, to a
//     client that accepts only application/json, as one JSON array. A push
//     query runs until its LIMIT, POST /close-query, the client going away
//     or Close. As in ksqlDB, its rows are values only: the deletes of a
//     push query over a table (tombstones) are left out.
//   - POST /query is the older, chunked form: a header with the schema,
//     {"row":{"columns":[...]}} per row and a finalMessage; a delete is
//     {"row":{"columns":[...],"tombstone":true}}, its key columns set and
//     the others null.
//   - POST /inserts-stream (HTTP/2 only) writes rows as they arrive, through
//     the same path as INSERT VALUES, and acknowledges each.
//   - GET /info, /healthcheck, /status[/{commandId}].
//
// A client that takes nothing written to it for Options.StallTimeout is
// dropped, and its push query stopped. Close ends the open query and insert
// streams, for a graceful shutdown.
//
// A request's body must arrive whole within Options.ReadTimeout, or the
// request is answered 408 (error code 40800) and its connection closed;
// /inserts-stream's first line too, and then each row within
// Options.InsertsIdleTimeout of the one before. The statements a request
// runs stop, with nothing applied, when its client goes away before they
// commit, or when the engine's statement timeout passes; a push query runs
// until its client goes.
//
// Errors are ksqlDB's bodies: {"@type":"statement_error" or
// "generic_error","error_code":N,"message":...}, where N is the HTTP status
// times 100 plus a detail (40001 a refused statement, 40002 a query sent to
// /ksql, 40004 HTTP/2 needed, 40400 not found, 50000 a server failure).
// Values travel as ksqlDB writes them: numbers (decimals too) as JSON
// numbers, structs and maps as objects, bytes in base64, TIMESTAMP, DATE and
// TIME as ISO-8601 strings.
package rest
