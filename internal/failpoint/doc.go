// Package failpoint kills the process at named points of its code, for
// crash tests: SLUICE_FAILPOINTS="name=N,other=M" makes the N-th call (from
// 1, counted over the whole process) of Hit(name) write
//
//	failpoint <name> hit <N>: killing
//
// to stderr and send the process SIGKILL, as a power cut would stop it.
// Without the variable, Hit costs one atomic load.
//
// The points Sluice has:
//
//	txn-committed  a task's transaction committed, its local state not yet written
//	cache-flush    half of a commit's changelog records produced in the open transaction
//	restore        a restore chunk written to the local store, the restore not finished
package failpoint
