// Package exec runs query plans.
//
// A plan (topology.Graph) becomes one Query. exec runs the plan's
// physical part as the planner completed it (topology.Complete): the
// stages of g.Physical.Stages (stage.go), each stage's tasks keeping the
// state stores g.Physical.Stores gives it, and each step's operator built
// with the settings the plan gives it (Step.WithOld, Step.PassAll,
// JoinSpec.LeftMaterialized ...). It derives none of them itself, and
// refuses a plan of an older version (topology.Upgrade completes it).
// The operators of the step kinds are built in one place (operators.go),
// for tasks and for Pipeline, which runs the stateless ones over a
// table's rows for pull queries.
//
// A stage runs one task per partition of the topic it reads. A task owns
// a consumer of its partition, its operators and its sink; only the
// task's goroutine calls them, so they need no locks.
//
//	Kafka partition ─poll─▶ decode ─▶ Batch ─▶ filter ─▶ project ─▶ sink ─▶ topic | push rows
//	       ▲                  │ undecodable                                 │ acks=all
//	       └──── commit offsets after the sink's produce is acknowledged ◀──┘
//	                          ▼
//	                  processing log topic
//
// An aggregation keeps its state in the task's cache: each commit writes
// the changes to a changelog topic, and the cache writes them to Pebble
// about once a second, when idle and when the task stops (state.go). A
// windowed one (window.go) keeps it per group and window and follows Kafka
// Streams' time: stream time is the largest record time seen, late records
// are dropped, session windows merge, EMIT FINAL emits a window once it
// closes, and windows leave state when their retention passes. There is no
// timer: windows close inside the window operator's OnBatch, where each
// row moves stream time and the windows it passed are handled before the
// next row (as a stream-stream join emits the unmatched rows whose window
// closed). Windowed keys on topics carry the window as Kafka Streams
// writes it (SplitWindowedKey, AppendWindow).
//
// Work moves in batches: one poll becomes one Batch, each operator handles a
// whole batch, and the sink produces a batch in one call. How a task
// commits a batch is its commit mode (commitMode, commit.go), chosen once
// when the task is built. An exactly-once task (exactlyOnce, eos.go)
// gathers the polls of its commit interval (Deps.CommitInterval) into one
// batch and one transaction. An at-least-once task (atLeastOnce,
// flight.go) commits each poll; one without state processes each poll at
// once and produces it while it processes the next, committing the
// offsets once the produce is acknowledged. A Replay (replayMode,
// replay.go) only produces.
//
// Tables are changelogs. A Materialize step keeps a table's rows per key in
// the task's state and turns each record into a change carrying the key's
// old row (Batch.Old); a retracting filter and the aggregate use it, with
// Kafka Streams' KTable semantics:
//
//	table topic ─▶ materialize ─▶ (old, new) ─▶ filter ─▶ aggregate: retract old, add new ─▶ HAVING ─▶ sink
//	                    │ state "source"                     │ state "aggregate"
//	                    ▼                                    ▼
//	              changelog topic                      changelog topic
//
// MaterializedTables and MaterializedTable.ScanRows/Lookup read the rows a
// Materialize step keeps (a CREATE SOURCE TABLE, a CREATE TABLE AS SELECT
// over a table), and AggregateTables with AggregateTable.ScanRows the groups
// an Aggregate step keeps. ScanTable (scan.go) is what pull queries call: it
// reads the last stateful step of a table's query by point lookups or a
// scan of its committed state, then runs the steps after it.
//
// A plan with a Repartition step is split there into stages (the plan's
// Stages), each with one task per partition of the topic it reads (see
// stage): the first writes the repartition topic as its sink, keyed by
// the new key; the next reads it and runs the rest. All commit under the
// query's consumer group. A repartition record that cannot be read fails
// the query: Sluice wrote it.
//
// A Join step (join*.go) gives its task a second input: the right input's
// last stage (one of the stage's Joins) runs as a side task of its own (decoding, its steps) whose
// rows enter the join operator's right port. The task reads partition p of
// both topics (the whole right table of a foreign-key join), runs the
// records fetched together in record time order, and first reads a table
// side up to where its topic ended at start:
//
//	left topic[p]  ─▶ decode ─▶ steps ─────────────┐ port 0
//	                                     merge by   ├─▶ join ─▶ steps ─▶ sink
//	right topic[p] ─▶ decode ─▶ right steps ───────┘ port 1   (record time)
//	                                                  │ state: each side's rows
//	                                                  ▼
//	                                            changelog topics
//
// The join follows Kafka Streams: stream-table joins look the stream row
// up in the table; table-table joins emit each side's change joined with
// the other side's row, or a delete, carrying the previous result as the
// old row; stream-stream joins keep each side's rows within the window per
// key, and hold a preserved side's unmatched rows until their window
// closes; foreign-key joins index left keys by foreign key so that a right
// change reaches every left row referencing it.
//
// Under exactly_once_v2 (Deps.ExactlyOnce, eos.go) a persistent query's
// task commits in Kafka transactions with a producer whose transactional
// id names the task, so that a newer instance fences an older one:
//
//	poll (read_committed, 100 ms) ─▶ operators ─▶ Begin ─▶ changelogs, outputs, positions record ─▶ Commit ─▶ Pebble
//
// It starts by registering its producer, then reads its positions from the
// query's positions topic and restores its state from the changelogs.
// Consumers return transaction markers (kafka.Record.Control) so that a
// task's positions move past them and reach the end offsets the engine's
// flush barrier compares them with. A commit returns before Kafka has
// written the transaction's own markers into the partitions it wrote, so a
// position may cover records read_committed readers cannot read yet: the
// barrier then waits for them with Query.WaitCommitted.
//
// legacy_plan.go keeps the helpers the engine read a query's topics and
// state from before the physical plan held them; exec does not use them.
package exec
