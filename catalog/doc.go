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
// A plan stored by an older server has an older topology.Version: Apply
// upgrades every query's plan as it enters the catalog (topology.Upgrade),
// from a replayed record, another server's, or the statement just run, so
// that what reads the catalog finds each plan complete, with its physical
// part. A plan that cannot be upgraded is refused like any command that
// does not fit the catalog: the query and the sink it declares are not
// created, and the engine skips the record loudly.
//
//	statement ──▶ engine ──▶ Command ──produce──▶ command topic
//	                                                 │ (replay at start)
//	                        Catalog.Apply ◀──────────┘
package catalog
