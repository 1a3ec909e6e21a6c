// Package metrics serves a server's figures in the Prometheus text
// exposition format (version 0.0.4): one metric family per figure of the
// running queries, labelled by query, and the process and Go runtime
// basics.
package metrics
