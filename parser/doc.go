// Package parser turns ksqlDB-dialect SQL text into Sluice's AST
// (package parser/ast). It owns the TiDB parser: no TiDB type leaves this
// package.
//
//	text ──lex──▶ tokens ──split on ';'──▶ one statement's tokens
//	                                          │
//	        ┌─────────────── front (cursor) ──┴──────────────────────┐
//	        │ statement kind; DDL columns, types and WITH (...);       │
//	        │ SHOW, DESCRIBE, DROP, SET, PRINT, ... parsed here whole  │
//	        │ queries: take out WINDOW, WITHIN, EMIT, LIMIT; PARTITION  │
//	        │ BY becomes ORDER BY; rewrite ->, [i], ARRAY[..], MAP(:=), │
//	        │ STRUCT(:=), lambdas, CAST, IS DISTINCT FROM into         │
//	        │ placeholder calls; back-quote every identifier           │
//	        └───────────────┬──────────────────────────────────────────┘
//	                        │ rewritten text + position map
//	                        ▼
//	                 TiDB parser (ANSI_QUOTES, NO_BACKSLASH_ESCAPES)
//	                        │ TiDB AST (errors mapped back to the user's text)
//	                        ▼
//	                 convert: placeholders back to ksqlDB nodes,
//	                 literals rebuilt from the user's tokens
//	                        │
//	                        ▼
//	                 ast.Statement (positions in the user's text)
//
// The front also rejects what ksqlDB's grammar rejects although TiDB would
// take it: type parameters other than numbers or STRING, NULL as a type, a
// condition as a GROUP BY or PARTITION BY item outside parentheses, numeric
// literals out of BIGINT or DOUBLE range, and an invalid WINDOW_SIZE.
//
// Unquoted identifiers are upper-cased; back-quoted and double-quoted ones
// keep their case. Function names are upper-cased. The one list of words
// handed to TiDB as keywords lives in keywords.go.
package parser
