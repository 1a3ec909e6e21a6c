// Package planner turns statements into catalog entries and query plans.
//
// Each statement kind has one entry point, and each returns a value the
// engine writes to the command log or runs; none of them changes the
// catalog:
//
//	CREATE STREAM/TABLE        PlanCreateSource (create_source.go) ─▶ SourceSpec
//	CREATE … AS SELECT, INSERT PlanSelect (query.go)               ─▶ QueryPlan{Graph, sink}
//	SELECT … EMIT CHANGES      PlanSelect                           ─▶ QueryPlan{Graph, Output}
//	SELECT (pull)              PlanPull (pull.go)                   ─▶ PullPlan{Lookup, Graph}
//
// PlanSelect builds a topology.Graph in one pass over the query, in the
// order ksqlDB checks it, so that the first error is the one ksqlDB
// reports:
//
//	FROM ─▶ WHERE (Filter) ─▶ PARTITION BY (Rekey, Repartition: partition_by.go)
//	     ─▶ GROUP BY / aggregates / WINDOW (Rekey and Repartition when the
//	        groups are not the key, Aggregate; Materialize over a table:
//	        aggregate.go) or table functions (FlatMap: table_functions.go)
//	     ─▶ HAVING (retracting Filter) ─▶ SELECT list (projection)
//	     ─▶ finishSelect: key columns first, window bounds, LIMIT, the sink
//	        (topic, formats, partitions, TIMESTAMP: planSink, timestamp.go)
//
// A FROM with joins goes through planJoinSelect (join.go): planJoins binds
// each side, rekeys a side that is not keyed by its join expression
// (Repartition), checks co-partitioning and windows, and adds one Join
// step per JOIN; the GROUP BY, HAVING and SELECT that follow share
// finishSelect with PlanSelect.
//
// Expressions are bound by package planner/bind against a scope (the
// source's columns, a join's aliased sides, or the aggregate's groups and
// calls); GROUP BY items are matched to select items structurally
// (ast.Equal), never by printed text. A pull query's WHERE is analysed
// into key lookups or a key range (analyzeWhere) that exec's ScanTable
// reads from the table's state. Errors are *Error, positioned in the
// statement, with ksqlDB's message where ksqlDB has one.
package planner
