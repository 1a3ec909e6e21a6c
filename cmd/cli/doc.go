// Command sluice is Sluice's interactive SQL shell. It connects to a
// sluice-server over gRPC:
//
//	sluice [--server 127.0.0.1:8089]          interactive shell
//	sluice -e "SHOW STREAMS;"                 run statements and exit
//	sluice -f setup.sql                       run a script file and exit
//	sluice < setup.sql                        the same, from standard input
//
// Non-interactive runs stop at the first failing statement, print it with
// its position on stderr, and exit with status 1. The shell itself lives in
// package shell.
package main
