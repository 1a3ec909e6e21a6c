// Package sluicev1 is the generated Go code of Sluice's gRPC API, defined in
// proto/sluice/v1/sluice.proto. Regenerate it with scripts/protogen.sh.
//
// The Sluice service runs SQL statements; its Execute call streams, per
// statement, a message, a table, or a push query's header, rows and end.
package sluicev1
