// Command rqtt runs ksqlDB REST query-validation test files through
// Sluice's REST API (an engine and the REST handler over an embedded
// broker, one per run) and reports what passes:
//
//	rqtt [flags] DIR|FILE...
//	rqtt -v ../shared/rqtt
//
// It prints a line per file, every skipped run with its reason, the skips
// counted by reason, and ends with exactly one line "rqtt: N passed, M
// failed, K skipped". Flags:
//
//	--run REGEXP      only runs whose ID ("<file> - <name>[ - <FORMAT>]") matches
//	-v                print each failure: its ID and the first difference, with
//	                  the expected and actual entries of the differing response
//	--json FILE       write every run's result to FILE
//	--workers N       runs at once (default: the CPUs)
//
// The exit status is 0 when no run failed, 1 when some failed, 2 on a usage
// error.
package main
