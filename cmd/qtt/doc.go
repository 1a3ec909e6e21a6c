// Command qtt runs ksqlDB query-validation test files through Sluice's
// engine over an embedded broker and reports what passes:
//
//	qtt [flags] DIR|FILE...
//	qtt --family stateless ../shared/qtt
//
// It prints a line per file, the skips counted by reason, and ends with
// exactly one line "qtt: N passed, M failed, K skipped". Flags:
//
//	--run REGEXP      only runs whose ID ("<file> - <name>[ - <FORMAT>]") matches
//	-v                print each failure: its ID and the first differing record
//	                  with expected and actual records, or the error
//	--family NAME     only the files listed in DIR/families/NAME.txt
//	                  (stateless, stateful or joins)
//	--json FILE       write every run's result to FILE
//	--workers N       runs at once (default: twice the CPUs)
//
// The exit status is 0 when no run failed, 1 when some failed, 2 on a usage
// error.
package main
