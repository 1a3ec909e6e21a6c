// Package catalog holds what Sluice knows about: streams, tables, and
// persistent queries with their plans.
//
// The catalog is the fold of a command log, an internal Kafka topic with one
// partition. Every change is first written there as a Command, then applied;
// at start the log is read from its beginning and applied again, so every
// server sharing a cluster converges on the same catalog, and a query's plan
// (with its topic and state names) is read back exactly as it was first
// planned.
//
//	statement ──▶ engine ──▶ Command ──produce──▶ command topic
//	                                                 │ (replay at start)
//	                        Catalog.Apply ◀──────────┘
package catalog
