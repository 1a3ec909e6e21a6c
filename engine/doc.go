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
// and every persistent query restarts from its committed offsets. The
// catalog upgrades each plan it takes to the current plan version
// (catalog.Apply, topology.Upgrade); a stored plan that cannot be upgraded
// is skipped like any bad record of the log.
//
// What a query owns outside its tasks the engine reads from its plan's
// physical part (topology.Physical), never derives itself: before a
// persistent query starts, its changelog and repartition topics are
// created from Physical.Topics, with the partitions and configuration
// given there, once the source topic is checked to still have the
// partitions the plan was made for (a query whose source gained
// partitions does not start, and the log says what to do); TERMINATE
// deletes them and, when Physical.Stores lists any, its local state. Flush
// waits on the topics the stages read (Physical.Stages). A push query's
// repartition topics are named for its run after planning, its plan
// completed again (topology.Complete) so that Physical lists them, and
// live as long as its Stream.
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
// Results are typed values of package engine/api, and the engine renders
// no text: each statement gives a status (a message, ksqlDB's command id),
// an entity (show.go: SourceList, SourceDescription with its queries'
// figures, QueryList, TopicList, PropertyList, VariableList, TypeList,
// FunctionList, FunctionDescription, QueryDescription with the plan as
// lines of operators and the processing topology as stages) or a row stream (a pull query's rows, a push query,
// a PRINT: a schema with key, header and window-bound columns marked, an
// end with its reason). Errors are *api.StatementError. The engine
// implements api.Engine, the one interface the gRPC and REST servers
// serve; api.go holds its typed calls besides Execute (sources, queries,
// topics, plans, pull rows, TERMINATE, PAUSE, RESUME, inserts of typed
// rows). Execute's api.Options let a caller refuse statements by kind
// before they run (Admit) or require exactly one (Single).
package engine
