// Package health serves a server's probes: /livez answers as long as the
// process serves HTTP, /readyz once the server is ready (the engine open,
// its catalog replayed and its queries started, Kafka reachable) and until
// it begins to shut down.
package health
