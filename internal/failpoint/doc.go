// Package failpoint kills the process at named points of its code, for
// crash tests, and holds callers at other points, for tests of
// cancellation and deadlines.
//
// Kill points: SLUICE_FAILPOINTS="name=N,other=M" makes the N-th call (from
// 1, counted over the whole process) of Hit(name) write
//
//	failpoint <name> hit <N>: killing
//
// to stderr and send the process SIGKILL, as a power cut would stop it.
// Without the variable, Hit costs one atomic load.
//
// Pause points: Wait(ctx, name) holds its caller while the point is armed,
// until the caller's context ends (it then returns the context's cause).
// SLUICE_FAILPOINTS="name=pause" arms it for the whole process; a test arms
// it with Pause, whose Hold says when callers reach the point and what
// their Wait returned, and releases them. Unarmed, Wait costs two atomic
// loads.
//
// The points Sluice has:
//
//	txn-committed  a task's transaction committed, its local state not yet written
//	cache-flush    half of a commit's changelog records produced in the open transaction
//	restore        a restore chunk written to the local store, the restore not finished
//
// The pause points:
//
//	statement-plan       a statement about to be planned (the engine's SELECT, CREATE ... AS
//	                     SELECT, INSERT INTO ... SELECT, CREATE STREAM/TABLE, EXPLAIN and pull
//	                     queries), before anything of it is written
//	statement-committed  a statement past the point from which it runs to its end (just
//	                     before its command-log write or its record); its context's end no
//	                     longer stops it
package failpoint
