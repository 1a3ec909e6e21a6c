// Command nexmark runs the Nexmark queries on Sluice, and beside it on
// Kafka Streams and Flink (bench/peers), against a Kafka broker and
// reports, per query and system, events per second of wall time and per
// CPU-second of the engine, the engine's peak RSS and a checksum of the
// result, marking where a peer's checksum differs from Sluice's.
//
//	nexmark --bootstrap 127.0.0.1:19092 [--events 1000000] [--queries q0,q2]
//	        [--systems sluice,kstreams,flink] [--peers-dir bench/peers] [--xmx 1g]
//	        [--partitions 4] [--rate 100000] [--seed 1] [--out bench/out/latest.json]
//	        [--cpuprofile DIR] [--memprofile DIR] [--memory-limit SIZE] [--gc-percent N]
//
// It sets the cluster's default log.retention.ms to -1 (the events carry
// event times of the past, which time-based retention would delete
// mid-run), loads the events once (a marker topic remembers what was
// loaded, so a second run with the same --events, --rate and --seed reuses
// them), then runs one query on one system at a time, each in a child
// process of its own reading the events from the start:
//
//   - sluice: this command as "nexmark engine", which runs the query until
//     it has drained its inputs (the engine's flush barrier) and exits;
//   - kstreams: the Kafka Streams application of bench/peers/kstreams in a
//     JVM with a fixed heap (--xmx), statestore.cache.max.bytes=0,
//     at_least_once, one stream thread, commits every second; the driver
//     closes its standard input, and so stops it, once the application's
//     consumer group has committed the end offsets of its input topics and
//     then of its repartition topics;
//   - flink: the Flink SQL job of bench/peers/flink in a local mini-cluster
//     (parallelism 1, RocksDB state, checkpoints every 10 s), whose Kafka
//     sources are bounded at the end offsets they find at the start, so the
//     job ends by itself once it has drained them.
//
// For Sluice the driver also prints, and keeps in the JSON row
// (task_time_s), where the query's task goroutines spent their wall time,
// summed over the tasks: polling for records, working on them, waiting for
// their outputs' acknowledgement, for commits, and writing state (the
// engine's sluice_query_task_*_seconds_total).
//
// Sluice's engine runs with the Go runtime settings sluice-server would
// have with the same --memory-limit and --gc-percent (its defaults when
// they are not given, GOGC's when that is set). --cpuprofile writes a CPU
// profile of each query's engine to DIR/QUERY.prof; --memprofile a heap
// profile taken near the heap's peak to DIR/QUERY.heap.prof, and prints
// the split of the engine's peak RSS to standard error: the Go heap's
// objects (and what was live after the last collection), the rest the Go
// runtime holds (stacks, metadata, free spans), and what lies outside it
// (the binary's pages, the state store's block cache and memtables).
//
// The peers' Maven projects are built (mvn package) when their jar is
// missing or older than their sources. The child's CPU time comes from the
// operating system (rusage, the JVM's start included) and its peak RSS from
// its own VmHWM. Beside those whole-run figures, the driver samples every
// 500 ms the child's CPU time (utime and stime of /proc/PID/stat, every
// thread of it) and its input position (the sum of the offsets its
// consumer groups have committed on the query's input topics: Sluice's
// query group, which commits after each processed poll; Kafka Streams'
// application id, every second; Flink's, whose Kafka sources commit at
// each checkpoint only, so its position moves in steps of ten seconds and
// a short run has no steady figures), and reports the steady state: events
// per CPU-second and per wall-second from the first sample at 20 % of the
// input consumed to the first at 90 % (steady_events_per_cpu_s and
// steady_events_per_wall_s in the JSON rows, with the samples in trace),
// which leaves out the JVM's start, class loading and JIT warm-up, group
// joins and topic creation. A last sample is the child's exit, with all of
// its input consumed. Like the whole-run figures, the steady ones count
// generated events: a query reading only the auctions consumes a share of
// them, and half its input is half the events.
//
// Each system writes its own output topic (Q0, KSTREAMS-Q0, FLINK-Q0, ...),
// with the same columns and key encodings, and the checksum covers the
// rows of an append-only query as a multiset and the final value per key
// (and window) of an updating one, so that different update streams
// compare. The table goes to standard output and, as Markdown, to --out
// with the extension .md; the rows to --out as JSON.
package main
