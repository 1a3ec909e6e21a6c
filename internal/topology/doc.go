// Package topology is the data-only plan of a query: what the planner emits,
// what EXPLAIN prints, what the command log stores, and what exec builds
// running tasks from. A Graph never holds behaviour: only names, schemas,
// formats and bound expressions, all serializable to JSON so a plan written
// today is read back unchanged by a later server.
//
//	Source ──▶ Step ──▶ Step ──▶ … ──▶ Sink (a topic) | Output (a push query)
package topology
