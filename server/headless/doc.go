// Package headless runs a server in headless mode, as ksqlDB's
// --queries-file does: the server runs a fixed script of statements at
// start and refuses interactive statements over its APIs from then on,
// answering only health, metrics and server information.
package headless
