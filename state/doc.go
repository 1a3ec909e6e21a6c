// Package state will hold query state in Pebble: tables keyed by
// <query>/<partition>/<state table>, a per-task cache flushed at commit,
// and a changelog topic per table from which state is restored.
//
// The queries Sluice runs today (filters and projections) are stateless;
// this package is where aggregations, windows and joins keep their state.
package state
