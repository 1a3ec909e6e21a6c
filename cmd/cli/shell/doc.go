// Package shell is the sluice shell: it runs SQL statements against a
// Sluice server over gRPC and prints their results as ksqlDB's CLI does,
// in boxed tables, push query rows as they arrive.
//
//	script or typed lines ──splitStatements──▶ one statement at a time
//	      ──Execute(sql, session)──▶ server ──▶ session, messages, tables,
//	                                             push query header/rows/end
//	      ──▶ wire.DecodeValue + types.FormatValue (values)
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
// push query's table grows as wider values arrive.
//
// Completion (interactive): completer completes keywords and the names of
// the live catalog, fetched with SHOW STREAMS, SHOW TABLES, SHOW FUNCTIONS
// and DESCRIBE over the same Execute call, cached by catalogNames and
// dropped after CREATE, DROP and ALTER.
//
// cmd/cli wraps it into the sluice binary; tests drive a Shell directly,
// and cmd/cli's tests drive the binary through a pseudo-terminal.
package shell
