package state

import "sync/atomic"

// DefaultMemoryBudget is the memory budget of a Store opened with
// Options.MemoryBudget 0.
const DefaultMemoryBudget = 256 << 20

// Budget is the memory the state in a Store's task caches and the state
// operators keep decoded beside them share: every holder adds what it
// keeps (and subtracts what it lets go) as it goes, and once the total
// is Over the limit each lets go of what it can at its next commit. The
// task caches drop the entries Pebble holds, which later reads fetch
// from Pebble (its block cache) again, and write their committed entries
// to Pebble early; the operators forget the groups and windows they keep
// decoded, which are read back from the cache. What a batch has changed
// and not committed yet stays whatever the budget: the limit is a target
// the holders shrink towards, not an allocation that can fail.
//
// The figures are estimates of the bytes kept, counting keys and values
// and a fixed overhead per entry. A nil Budget has no limit. A Budget is
// safe for concurrent use.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes; 0 or less is no limit.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Add records that a holder keeps n more bytes (fewer for n < 0).
func (b *Budget) Add(n int64) {
	if b != nil && n != 0 {
		b.used.Add(n)
	}
}

// Over reports whether the holders keep more than the limit.
func (b *Budget) Over() bool {
	return b != nil && b.limit > 0 && b.used.Load() > b.limit
}

// Used returns the bytes the holders keep.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Limit returns the budget's limit in bytes, 0 for none.
func (b *Budget) Limit() int64 {
	if b == nil || b.limit < 0 {
		return 0
	}
	return b.limit
}
