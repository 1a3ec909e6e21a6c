// Package shell is the sluice shell: it runs SQL statements against a
// Sluice server over gRPC and prints their results as ksqlDB's CLI does,
// in boxed tables, push query rows as they arrive.
//
//	script or typed lines ──splitStatements──▶ one statement at a time
//	      ──Execute(sql, session)──▶ server ──▶ session, messages, entities,
//	                                             row streams (header/rows/end)
//	      ──▶ internal/render (entities and pull rows as tables of typed
//	          cells), wire.DecodeValue + types.FormatValue (values)
//	      ──▶ table, pushTable, verticalSink, jsonSink, csvSink ──▶ stdout
//	      errors (position, statement, caret) ──▶ stderr
//
// The shell keeps the session (properties set with SET, variables set with
// DEFINE; the server substitutes ${name}) and sends it with every request,
// replacing it with the one each response carries. Statements run one
// request each, in order, and a script stops at the first failing one.
//
// The shell's own statements are RUN SCRIPT '<file>'; and OUTPUT
// [TABULAR|JSON|CSV];, the backslash commands \x (vertical output, see
// Vertical) and \o (output format, see Format), which take a line of their
// own and no ';', and at the terminal exit, quit, help and clear.
//
// Output: Format and Vertical say how rows print; pushTable documents how a
// push query's table grows as wider values arrive. JSON and CSV keep the
// types of every cell: a listing's rows and a query's rows are JSON objects
// with numbers, booleans and nulls as themselves (CSV leaves a null cell
// empty), and a description (DESCRIBE, EXPLAIN, DESCRIBE FUNCTION) is one
// JSON object of its typed fields.
//
// Completion (interactive): completer looks at the statement's words before
// the cursor (contextAt) and completes what may stand there: the words a
// statement starts with, the keywords that may follow SHOW, CREATE, DROP
// ...; query ids after TERMINATE, EXPLAIN, PAUSE, RESUME and REPLAY;
// streams and tables after FROM, JOIN, INTO, DESCRIBE and DROP; property
// names after SET and UNSET; functions after DESCRIBE FUNCTION; topics
// after PRINT; columns of the sources named in the statement in
// expressions. Names come from the live catalog over the same Execute
// call, cached by catalogNames and dropped after CREATE, DROP and ALTER
// (query ids are fetched each time). A string, quoted name or comment left
// open is reported where it opens, in a script and at Ctrl-D.
//
// cmd/cli wraps it into the sluice binary; tests drive a Shell directly,
// and cmd/cli's tests drive the binary through a pseudo-terminal.
package shell
