// Package planner turns statements into catalog entries and query plans.
//
// It binds names and types against the catalog, checks what the user asked
// for, and emits a topology.Graph: data only, printed by EXPLAIN, stored in
// the command log, and built into running tasks by exec.
//
//	ast.Query ──bind (catalog, bind.Bind)──▶ steps ──rules──▶ topology.Graph
package planner
