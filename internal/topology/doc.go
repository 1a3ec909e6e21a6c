// Package topology is the data-only plan of a query: what the planner emits,
// what EXPLAIN prints, what the command log stores, and what exec builds
// running tasks from. A Graph never holds behaviour: only names, schemas,
// formats and bound expressions, all serializable to JSON so a plan written
// today is read back unchanged by a later server.
//
//	Source ──▶ Step ──▶ Step ──▶ … ──▶ Sink (a topic) | Output (a push query)
//
// EXPLAIN draws a Graph twice: Plan is the execution plan (the logical
// operators, output first), Describe the processing topology (explain.go:
// the Physical plan's stages in the manner of Kafka Streams'
// sub-topologies, their operators and state stores, the topics the query
// owns).
package topology
