// Package qtt runs ksqlDB query-validation tests (the QTT corpus, see
// ../shared/qtt/README.md) through Sluice's engine and checks the results.
//
//	corpus file ──LoadFile──▶ cases ──Expand──▶ runs ({FORMAT}, {CONFIG})
//	                                               │
//	             SkipReason (only the families README's reasons) ◀┤
//	                                               ▼
//	  fresh in-memory broker + engine (fixed clock) per run:
//	  create topics ─▶ SET properties ─▶ statements (expected error?)
//	     ─▶ inputs one at a time, Flush after each ─▶ read sink topics
//	     ─▶ CompareRecords (key, value, timestamp, window) ─▶ post checks
//	                                               │
//	                                   Result ─▶ Report (per file, totals)
//
// Runs are independent, so RunFiles runs several at once and prints a line
// per file in file order, then the skips by reason and one final line
// "qtt: N passed, M failed, K skipped". The corpus is third-party data and
// is read where it lies; it is never copied into this repository.
package qtt
