//go:build !race

package parser

// raceEnabled is true under the race detector.
const raceEnabled = false
