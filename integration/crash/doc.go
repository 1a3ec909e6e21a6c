// Command crash is Sluice's kill -9 harness (`make crash CYCLES=N`): it
// runs bin/sluice-server as a child process against a real Kafka broker,
// creates three persistent queries through the REST API (a filter, a
// tumbling count with a grace period, a stream-table join), feeds them
// with a seeded driver and, cycle after cycle, kills the server with
// SIGKILL (at a seeded record count, or by a seeded failpoint inside the
// commit protocol or the restore) and starts it again on the same data
// directory. At the end it lets the last server drain, reads the outputs
// with read_committed and compares them with the oracle of
// internal/oracle. Its last line is
//
//	crash: N cycles, R records, X missing, Y duplicated, Z wrong
//
// and it exits non-zero when anything is missing or wrong, or, under
// exactly_once_v2, duplicated.
//
//	go run ./integration/crash --bootstrap 127.0.0.1:19392 --server bin/sluice-server \
//	    [--cycles 10] [--guarantee exactly_once_v2] [--seed N]
//
// Flow of one run:
//
//	driver (internal/oracle) ──orders──▶ Kafka ◀──▶ sluice-server (child; SIGKILL, restart) ×N
//	      │                                  │
//	      └──▶ oracle ──────────▶ compare ◀──┴── sink topics, read with read_committed
package main
