// Command sluice is Sluice's interactive SQL shell. It connects to a
// sluice-server over gRPC:
//
//	sluice [--server 127.0.0.1:8089]          interactive shell
//	sluice -e "SHOW STREAMS;"                 run statements and exit
//	sluice -f setup.sql                       run a script file and exit
//	sluice < setup.sql                        the same, from standard input
//	sluice --output csv -e "SELECT ..."       rows as CSV (or json)
//
// Non-interactive runs stop at the first failing statement, print it with
// its position and a caret on stderr, and exit with status 1; usage errors
// exit with 2 and Ctrl-C with 130 (see --help). The shell itself lives in
// package shell.
package main
