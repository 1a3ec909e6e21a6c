// Package exec runs query plans.
//
// A plan (topology.Graph) becomes one Query with one task per input
// partition. A task owns a consumer of its partition, its operators and its
// sink; only the task's goroutine calls them, so they need no locks.
//
//	Kafka partition ─poll─▶ decode ─▶ Batch ─▶ filter ─▶ project ─▶ sink ─▶ topic | push rows
//	       ▲                  │ undecodable                                 │ acks=all
//	       └──── commit offsets after the sink's produce is acknowledged ◀──┘
//	                          ▼
//	                  processing log topic
//
// Work moves in batches: one poll becomes one Batch, each operator handles a
// whole batch, and the sink produces a batch in one call.
package exec
