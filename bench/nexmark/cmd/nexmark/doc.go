// Command nexmark runs the Nexmark queries on Sluice against a Kafka
// broker and reports, per query, events per second of wall time and per
// CPU-second of the engine, the engine's peak RSS and a checksum of the
// result.
//
//	nexmark --bootstrap 127.0.0.1:19092 [--events 1000000] [--queries q0,q2]
//	        [--partitions 4] [--rate 100000] [--seed 1] [--out bench/out/latest.json]
//
// It loads the events once (a marker topic remembers what was loaded, so a
// second run with the same --events, --rate and --seed reuses them), then
// runs one query at a time in a child process of its own, an engine that
// reads the events from the start, waits until the query has drained its
// inputs and exits; the child's CPU time and peak RSS come from the
// operating system. The table goes to standard output and the rows to
// --out as JSON.
package main
