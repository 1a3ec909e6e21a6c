// Package engine is Sluice's one API: Execute runs statements, push queries
// come back as Streams, Flush is the barrier tests wait on, Close stops
// everything. The server, the shell and scripts are thin adapters over it.
//
//	text ─▶ parser.Parse ─▶ ast.Statement ─┬─ DDL ──▶ planner ─▶ catalog.Command ─▶ command log ─▶ Catalog
//	                                       ├─ CREATE … AS SELECT ─▶ planner.PlanSelect ─▶ command log ─▶ exec.Start
//	                                       ├─ SELECT … EMIT CHANGES ─▶ planner.PlanSelect ─▶ exec.Start ─▶ Stream
//	                                       └─ INSERT VALUES ─▶ encode ─▶ produce
//
// At Open the command log is replayed from its start to rebuild the catalog,
// and every persistent query restarts from its committed offsets.
//
// Live-tail push queries (auto.offset.reset=latest, no join nor
// repartition) on one source share one read of its topic: see
// shared_read.go. Push queries from the earliest offset read on their own.
//
// With Config.Cluster, the engine is one server of a cluster (cluster.go):
// it joins the cluster's consumer group, runs only the partitions the
// group's plan gives it, follows the command log so that statements run
// on the other servers take effect here, and gathers pull queries from the
// owners of the other partitions.
//
// A statement's work is bounded (statement.go): it runs under the
// server's statement timeout (Config.StatementTimeout) and stops, with
// nothing applied, when its caller's context ends, until it commits just
// before its command-log write; from there it runs to its end. At most
// Config.MaxPushQueries push queries and PRINTs run at once (ksqlDB's
// ksql.max.push.queries); each holds its place until its Stream is
// closed.
//
// Besides Execute, api.go offers typed results for API servers: sources,
// queries and topics as values, pull query rows, plans, TERMINATE, PAUSE,
// RESUME and inserts of typed rows.
package engine
