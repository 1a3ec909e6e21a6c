// Command nexmark runs the Nexmark queries on Sluice, and beside it on
// Kafka Streams and Flink (bench/peers), against a Kafka broker and
// reports, per query and system, events per second of wall time and per
// CPU-second of the engine, the engine's peak RSS and a checksum of the
// result, marking where a peer's checksum differs from Sluice's; or, with
// --latency, the latency of q0, q7 and q20 at a fixed rate (see Latency
// below).
//
//	nexmark --bootstrap 127.0.0.1:19092 [--events 1000000] [--queries q0,q2]
//	        [--systems sluice,kstreams,flink] [--peers-dir bench/peers] [--xmx 1g]
//	        [--partitions 4] [--rate 100000] [--seed 1] [--out bench/out/latest.json]
//	        [--cpuprofile DIR] [--memprofile DIR] [--memory-limit SIZE] [--gc-percent N] [--state-memory SIZE]
//	        [--servers N]
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
// With --servers N (N > 1), Sluice runs as N engine processes of one
// cluster instead (the row's system is "sluice×N"): the same service id,
// each one server of the cluster, the first running the statement and the
// others taking it from the command log, the cluster's group splitting
// every input's partitions among them. The driver closes their standard
// input once the query's consumer groups have committed the end of its
// inputs and then of its repartition topics; the row sums the servers'
// CPU time, keeps the largest peak RSS and has no steady figures.
//
// For Sluice the driver also prints, and keeps in the JSON row
// (task_time_s), where the query's task goroutines spent their wall time,
// summed over the tasks: polling for records, working on them, waiting for
// their outputs' acknowledgement, for commits, and writing state (the
// engine's sluice_query_task_*_seconds_total).
//
// Sluice's engine runs with the memory settings sluice-server would have
// with the same --memory-limit, --gc-percent and --state-memory (its
// defaults when they are not given, GOGC's when that is set). --cpuprofile writes a CPU
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
//
// # Latency
//
//	nexmark --bootstrap 127.0.0.1:19092 --latency [--latency-rate 10000]
//	        [--latency-seconds 60] [--latency-warmup 10] [--latency-grace 0]
//	        [--queries q0,q7,q20] [--systems sluice,kstreams,flink]
//	        [--out bench/out/latency.json]
//
// measures, instead of throughput, how long after an event's append its
// result is appended, at a fixed rate of events per wall-second, for q0,
// q7 and q20 (the queries it knows how to pair with their inputs). For
// each query and system it:
//
//   - recreates the three event topics (the same names and --partitions,
//     so the queries and peers run unchanged) and the system's output
//     topic with message.timestamp.type=LogAppendTime, so that the broker
//     stamps every record with the time it appended it; it deletes the
//     throughput mode's marker topic too, so that a later throughput run
//     loads its events again;
//   - starts the system reading the topics from their start and running
//     until its standard input is closed: this command as "nexmark engine
//     --until-eof", the Kafka Streams application as in the throughput
//     mode, the Flink job with unbounded sources, cancelled when its
//     standard input closes; the peers with the settings of the
//     throughput mode (-Xmx, one stream thread, caching off, parallelism
//     1, ...);
//   - waits until it is ready: it sends probes, per input partition an
//     auction of category 10 and a bid on it (and for q7 a second bid that
//     closes the first one's window) under an auction id below the
//     generator's first (1000) that Kafka's partitioner puts in that
//     partition, at an event time a minute before the load's; the system
//     is ready once the output holds every partition's probe row, that is
//     once each partition is read, processed and written through. Probes
//     missing after 10 s are sent again (a stream-table join may read a
//     bid before its auction);
//   - produces --latency-seconds of events of the generator at
//     --latency-rate, with EventsPerSecond the same rate and BaseTime the
//     load's start, so that event time follows the wall clock and windows
//     close in real time: event n goes out at start + n/rate, in batches
//     of the events due, each acknowledged before the next; the load
//     starts halfway through one of q7's 10-second windows, so that every
//     run's windows close at the same points of its load;
//   - sends probes at an event time two windows past the load's last
//     event, waits until their rows are out (the system has caught up;
//     at most twice the load's length, a minute at least: a system still
//     behind then fell behind, and its figures are those of the rows out
//     by then), stops the system and reads the output and the inputs
//     back.
//
// A row's latency is its append time less that of the input that caused
// it, both the broker's, in milliseconds:
//
//   - q0: the bid with the row's auction, bidder, price and dateTime (each
//     bid pairs with one row, the earliest first);
//   - q20: the later of that bid's append and its auction's: the row needs
//     both, and Flink's regular join also emits when the auction comes
//     after the bid (Sluice's and Kafka Streams' stream-table joins do
//     not, so a bid that comes before its auction has no row there);
//   - q7: the event that closed the window. Every system runs q7's final
//     form, one row per window when it closes, with the same grace
//     (--latency-grace, 0 by default): Sluice with EMIT FINAL and GRACE
//     PERIOD, Kafka Streams with the grace in its TimeWindows and
//     suppress(untilWindowCloses), Flink with a watermark the grace plus
//     1 ms behind the largest dateTime read (a window fires when the
//     watermark reaches its end - 1 ms). A window [start, end) closes at
//     the first event that takes event time to end + grace: for Sluice
//     and Kafka Streams the stream time of the window's task, the largest
//     dateTime read so far on the window's bid partition (q7 reads the
//     bids keyed by auction, one task per partition, and the grace is
//     applied by each task); for Flink, whose one source reader's
//     watermark is the least of its partitions', the last partition to
//     reach end + grace. The closing event is the first bid appended on
//     that partition (for Flink, on each, the latest of them) whose
//     dateTime, or a larger one before it, is at least end + grace.
//     Sluice's q7 also says RETENTION 1 MINUTE: with the default
//     retention (size plus grace) EMIT FINAL emits a window only when
//     stream time lands exactly on its end plus grace and drops it when
//     the closing event's time is past that (a third of the windows at
//     10,000 events/s); the retention changes nothing else, a final
//     window leaving the state once emitted.
//
// Only rows caused by inputs appended after the first --latency-warmup
// seconds of the load and before its end are measured (the start is the
// JVMs' JIT warm-up); the probes' rows are not. The table gives per query
// and system the rows measured, the nearest-rank p50 and p99 and the
// largest latency, the end lag (the latency of the probes sent after the
// load: the backlog the system had when the load ended), the system's
// CPU-seconds per second during the load (from /proc; the JSON rows have
// this driver's too, and the share of the machine's CPU time busy with
// anything), and whether it
// kept up: it fell behind when the larger of the end lag and the median
// latency of the last tenth of the measured rows (in the order of their
// causes) is over a second and over twice the median of the first tenth
// (a system short of capacity builds a backlog that grows as long as the
// load lasts, and its latencies with it). A load that could not be
// produced at the rate says so, and so does a machine whose CPUs were
// busy 90 % of the load's time or more (with anything: the system, the
// broker, this driver, other work), where latencies include waiting for
// a CPU. Beside the figures it checks the rows:
// rows no input explains, windows emitted that no event closed or with a
// maximum their bids do not have (not final), windows emitted twice,
// q0's bids and q7's closed windows without a row, rows appended before
// their cause (a closing rule wrong for the system); the table's notes
// list what it found. The latencies include what the systems do by
// default: Kafka Streams' producer lingers up to 100 ms (its default
// linger.ms), Flink emits watermarks every 200 ms and flushes network
// buffers between its operators every 100 ms. The table goes to standard
// output and, as Markdown, to --out with the extension .md (default
// bench/out/latency.md); the rows to --out as JSON.
package main
