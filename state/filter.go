package state

import "hash/maphash"

// keyFilter is a bloom filter of the keys a task's state table may hold,
// in Pebble or in its cache: a key it has not seen is not in the table,
// and Get answers so without reading Pebble. Most reads of new keys (a
// new group, a new window) then cost a hash instead of Pebble's search of
// every level, whose index and filter blocks a large state evicts from
// the block cache (Pebble cannot pin them). A key deleted stays in it:
// the filter can only answer "maybe" wrongly, never "no".
//
// It grows as a scalable bloom filter: parts of doubling capacity, each
// with its own bits, the newest taking the keys added; a key is maybe held
// when any part has all its bits. Each part is blocked (all of a key's
// probes in one 512-bit block, one cache line) at filterBitsPerKey, about
// 1 % false positives per part.
type keyFilter struct {
	seed  maphash.Seed
	parts []filterPart
	// bytes is the memory of the parts' bits, max what they may grow to.
	bytes, max int
}

type filterPart struct {
	blocks   [][8]uint64
	n, limit int
}

const (
	filterBitsPerKey = 10
	filterProbes     = 6
	// firstFilterKeys is the capacity of a filter's first part, and
	// maxFilterBytes what a filter may grow to: past it the table reads
	// Pebble for every key it does not cache (Pebble's own bloom
	// filters still answer), and the filter's memory goes back to the
	// budget.
	firstFilterKeys = 1 << 14
	maxFilterBytes  = 8 << 20
)

func newKeyFilter() *keyFilter { return &keyFilter{seed: maphash.MakeSeed(), max: maxFilterBytes} }

// newPart adds a part for limit keys and returns the bytes it took.
func (f *keyFilter) newPart(limit int) int {
	n := (limit*filterBitsPerKey + 511) / 512
	f.parts = append(f.parts, filterPart{blocks: make([][8]uint64, n), limit: limit})
	f.bytes += n * 64
	return n * 64
}

// add notes key and returns the bytes the filter grew by; ok is false
// when it would grow past its max (then it did not take the key).
func (f *keyFilter) add(key []byte) (grew int, ok bool) {
	if len(f.parts) == 0 || f.parts[len(f.parts)-1].n >= f.parts[len(f.parts)-1].limit {
		limit := firstFilterKeys
		if len(f.parts) > 0 {
			limit = 2 * f.parts[len(f.parts)-1].limit
		}
		if f.bytes+(limit*filterBitsPerKey+511)/512*64 > f.max {
			return 0, false
		}
		grew = f.newPart(limit)
	}
	p := &f.parts[len(f.parts)-1]
	h := maphash.Bytes(f.seed, key)
	blk := &p.blocks[blockOf(h, len(p.blocks))]
	b, delta := probes(h)
	for range filterProbes {
		blk[(b>>6)&7] |= 1 << (b & 63)
		b += delta
	}
	p.n++
	return grew, true
}

// mayHold reports whether key may have been added.
func (f *keyFilter) mayHold(key []byte) bool {
	h := maphash.Bytes(f.seed, key)
	for i := range f.parts {
		p := &f.parts[i]
		blk := &p.blocks[blockOf(h, len(p.blocks))]
		b, delta := probes(h)
		all := true
		for range filterProbes {
			if blk[(b>>6)&7]&(1<<(b&63)) == 0 {
				all = false
				break
			}
			b += delta
		}
		if all {
			return true
		}
	}
	return false
}

// blockOf maps h's low half onto n blocks.
func blockOf(h uint64, n int) int { return int(uint64(uint32(h)) * uint64(n) >> 32) }

// probes returns the first bit and the stride of h's probes within a
// block, from its high half.
func probes(h uint64) (b, delta uint32) {
	b = uint32(h >> 32)
	return b, b>>17 | b<<15
}
