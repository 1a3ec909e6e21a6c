// Package connect is a client of a Kafka Connect worker's REST API: what
// CREATE, DROP, DESCRIBE and SHOW CONNECTOR(S) ask of it. Sluice keeps no
// copy of a connector's state; every statement asks the worker.
//
// Each call runs under Options.Timeout (its name in errors is
// TimeoutSetting), is cancelled with its context, and is tried again with
// a doubling backoff when the worker answers 5xx or 409 (a rebalance in
// progress) or cannot be reached, up to Options.Attempts times.
package connect
