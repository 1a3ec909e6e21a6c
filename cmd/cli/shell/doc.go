// Package shell is the sluice shell: it runs SQL statements against a
// Sluice server over gRPC and prints their results as ksqlDB's CLI does,
// in boxed tables, push query rows as they arrive.
//
//	script or typed lines ──splitStatements──▶ one statement at a time
//	      ──Execute(sql, session)──▶ server ──▶ session, messages, tables,
//	                                             push query header/rows/end
//	      ──▶ wire.DecodeValue + types.FormatValue (values), table (boxes)
//	      ──▶ stdout; errors ──▶ stderr
//
// The shell keeps the session (properties set with SET, variables set with
// DEFINE) and sends it with every request, replacing it with the one each
// response carries. Statements run one request each, in order, and a script
// stops at the first failing one. The shell's own commands are exit, quit,
// help and RUN SCRIPT '<file>';.
//
// cmd/cli wraps it into the sluice binary; tests drive a Shell directly.
package shell
