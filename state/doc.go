// Package state holds the state of stateful queries (aggregations, windows,
// joins) in one Pebble database per server, behind Table (Get, Put, Delete,
// Scan) and a per-task write-back TaskCache.
//
// Keys are grouped so that a query, a partition of it and a table of that
// partition are each one contiguous range; names are length-prefixed
// (uvarint), so '/' or any other byte in them is harmless:
//
//	's' len query | partition (uint32 BE) | 't' len table | table key  -> value
//	's' len query | partition (uint32 BE) | 'o' len table              -> changelog offset
//	\____ DropQuery ____/
//	\__________ one partition: moves as a unit ________/
//
// Commit protocol, per task and commit:
//
//	records ─► Table.Put/Delete ─► TaskCache (Go maps): changed entries
//	                                  │ Flush
//	                                  ▼
//	             []Change ─► produce to changelog topics, outputs,
//	                         commit input offsets (Kafka)
//	                                  │ Commit (or Reset on failure:
//	                                  ▼  back to the committed values)
//	                        committed entries, kept in memory
//	                                  │ Persist: bound, interval, idle, stop
//	                                  ▼
//	     Pebble batches of persistChunk bytes, the last with the
//	     changelog offsets they reflect (unsynced)
//
// On start the engine reads Store.Offsets, compares them with the changelog
// end offsets and replays the difference with Store.Restore.
package state
