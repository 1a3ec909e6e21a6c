package engine

import (
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultGCPercent is the garbage collector's target (Go's GOGC) that a
// server runs with unless told otherwise: the heap may grow by this
// percentage of what was live after a collection before the next one.
const DefaultGCPercent = 100

// DefaultStateMemory is the state memory budget (Config.StateMemory) of a
// server without a memory limit. Past the budget the state is read back
// from the store's block cache, which costs little: the budget mostly
// bounds the Go heap, which the collector lets grow to twice what is
// live.
const DefaultStateMemory = 32 << 20

// MinStateMemory is the smallest state memory budget a server takes.
const MinStateMemory = 1 << 20

// ParseStateMemory reads a state memory budget (sluice-server's
// --state-memory) as ParseBytes does, refusing one below MinStateMemory.
func ParseStateMemory(s string) (int64, error) {
	n, err := ParseBytes(s)
	if err != nil {
		return 0, err
	}
	if n < MinStateMemory {
		return 0, fmt.Errorf("%s is less than the smallest budget: give 1MiB or more, such as 32MiB", s)
	}
	return n, nil
}

// StateMemoryFor returns the state memory budget of a server whose soft
// memory limit is limit bytes (0 for none): a quarter of the limit, as
// the Go collector lets the heap grow to about twice what is live and the
// rest of the process (fetch buffers, batches, Pebble's block cache and
// memtables) needs room too; DefaultStateMemory without a limit.
func StateMemoryFor(limit int64) int64 {
	if limit > 0 {
		return max(limit/4, MinStateMemory)
	}
	return DefaultStateMemory
}

// TuneMemory sets the Go runtime's garbage collection for a process that
// runs an engine: gcPercent as the collector's target (GOGC; negative
// leaves the runtime's, which the GOGC environment variable sets) and
// limit, in bytes, as a soft memory limit (GOMEMLIMIT; 0 leaves the
// runtime's). The runtime collects more often as the process's memory
// nears the limit, and the collector then takes at most half the CPU: the
// limit bounds memory that is garbage, not what the queries hold. These
// settings are the process's, not the engine's: a program embedding the
// engine calls this once, if at all.
func TuneMemory(limit int64, gcPercent int) {
	if gcPercent >= 0 {
		debug.SetGCPercent(gcPercent)
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}

// ParseBytes reads a byte size: a whole number of bytes, optionally with
// a unit B, KiB, MiB, GiB or TiB (powers of 1024, as Go's GOMEMLIMIT
// takes them), or KB, MB, GB, TB (powers of 1000).
func ParseBytes(s string) (int64, error) {
	v := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size in bytes: give a whole number, optionally with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), such as 512MiB", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}
