// Package oracle is the seeded record driver and the oracle of Sluice's
// real-broker checks (the crash harness in integration/crash): it makes
// keyed orders and the customers table they join, and computes from the
// same input what a filter, a tumbling count with a grace period and a
// stream-table join must output, then compares outputs read back from
// Kafka with it.
//
//	Driver.Customers ─▶ customers (table)
//	Driver.Next ──────▶ orders ──▶ queries ──▶ sink topics ──┐
//	      └──────────▶ oracle (rows, counts per window) ─────┴─▶ Driver.Check ─▶ Tally
package oracle
