package state

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
)

// DefaultMaxDirty is the bound of a TaskCache made with maxDirty 0: on the
// entries written since the last commit (Full), on the committed entries
// not yet written to Pebble (PersistDue) and on the entries read from
// Pebble it keeps.
const DefaultMaxDirty = 100_000

// persistChunk is the size past which Persist commits a Pebble batch and
// starts the next one: Pebble keeps the buffers of batches of up to 1 MiB
// for reuse, and the buffer doubles as it grows.
const persistChunk = 256 << 10

// DefaultMaxUnpersistedBytes bounds the key and value bytes of the
// committed entries a TaskCache holds that Pebble does not have yet: past
// it PersistDue reports true.
const DefaultMaxUnpersistedBytes = 32 << 20

// TaskCache is the write-back cache of one task (one partition of one
// query): writes stay in Go maps, reads hit the maps before Pebble. It is
// used from the task's goroutine only and takes no locks.
//
// It keeps two generations. The entries written since the last commit
// are changed: Flush returns them as changelog records, and then either
// Commit (the Kafka commit succeeded) makes them committed, or Reset
// takes them back to their committed values. Committed entries stay in
// memory, unpersisted, across several commits, until Persist writes them
// to Pebble with the changelog offsets they reflect: the
// task persists when PersistDue, after its persist interval, when idle
// and when it stops. Until then Pebble holds the state of an earlier
// commit with that commit's changelog offsets, and the changelog the
// rest, so that restore after a crash replays a longer tail. Unpersisted
// entries are never evicted: every read of the task sees them.
type TaskCache struct {
	store     *Store
	query     string
	partition int32
	maxDirty  int
	maxBytes  int
	tables    map[string]*Table
	names     []string // of tables, sorted
	changed   int      // entries written since the last commit
	size      int      // entries over all tables
	// unpersisted counts the committed entries Pebble does not hold, and
	// unpersistedBytes their key and value bytes; offsets are the
	// changelog offsets of the commits since the last Persist.
	unpersisted      int
	unpersistedBytes int
	offsets          map[string]int64
	// bytes estimates the memory of every entry the cache holds (see
	// entryOverhead), all of it counted in budget.
	bytes  int64
	budget *Budget
	// clean says the cache may hold entries Pebble holds too: set when a
	// read keeps one or a Persist makes the committed entries so, cleared
	// when evictClean or Reset drops them all. Past its bounds the cache
	// evicts at each commit, and without it would scan every entry each
	// time to find none.
	clean  bool
	kbuf   []byte
	sorted []sortedEntry // Persist's, kept for the next one
}

// sortedEntry is an entry with the first 16 bytes of its key, big-endian
// and zero-padded, which order most pairs without reading their keys.
type sortedEntry struct {
	head, next uint64
	e          *entry
}

// sortEntries appends entries to buf ordered by key and returns it.
func sortEntries(buf []sortedEntry, entries []*entry) []sortedEntry {
	for _, e := range entries {
		var b [16]byte
		copy(b[:], e.key)
		buf = append(buf, sortedEntry{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), e})
	}
	slices.SortFunc(buf, func(a, b sortedEntry) int {
		if a.head != b.head {
			return cmp.Compare(a.head, b.head)
		}
		if a.next != b.next {
			return cmp.Compare(a.next, b.next)
		}
		return bytes.Compare(a.e.key, b.e.key)
	})
	return buf
}

type tableCache struct {
	owner *TaskCache
	t     *Table
	m     map[string]*entry
	// changed are the entries written since the last commit, unpersisted
	// the committed entries Pebble does not hold yet.
	changed     []*entry
	unpersisted []*entry
	// slab holds the entries newEntry hands out next and keys the arena
	// block it copies keys into, so that a new key costs no allocation of
	// its own but one per entryChunk entries and per keyBlock key bytes.
	slab []entry
	keys []byte
	// filter holds every key the table may hold (see keyFilter) while
	// filtering is filterReady; filterUnknown until Get first needs it
	// (and again after Reset, when a restore may have written Pebble
	// directly), filterOff once it outgrew maxFilterBytes.
	filter    *keyFilter
	filtering uint8
	// entryBytes is the part of the owner's bytes that m's entries hold
	// (see entryBytes).
	entryBytes int64
}

const (
	filterUnknown uint8 = iota
	filterReady
	filterOff
)

// entryChunk is the number of entries a tableCache allocates at once,
// keyBlock the size of its key arena blocks; a key over maxArenaKey bytes
// gets an allocation of its own. A block stays in memory while one of its
// entries or keys is cached: the small sizes bound what a few long-lived
// keys among evicted ones keep.
const (
	entryChunk  = 128
	keyBlock    = 8 << 10
	maxArenaKey = keyBlock / 16
)

// newEntry returns a new entry holding a copy of key, and that copy as a
// string for the map key: the arena bytes behind it are never written
// again, as the string needs.
func (tc *tableCache) newEntry(key []byte) (*entry, string) {
	if len(tc.slab) == 0 {
		tc.slab = make([]entry, entryChunk)
	}
	e := &tc.slab[0]
	tc.slab = tc.slab[1:]
	switch n := len(key); {
	case n == 0:
		e.key = []byte{}
	case n > maxArenaKey:
		e.key = bytes.Clone(key)
	default:
		if cap(tc.keys)-len(tc.keys) < n {
			tc.keys = make([]byte, 0, keyBlock)
		}
		i := len(tc.keys)
		tc.keys = append(tc.keys, key...)
		e.key = tc.keys[i:len(tc.keys):len(tc.keys)]
	}
	return e, unsafe.String(unsafe.SliceData(e.key), len(e.key))
}

// entry is one cached key. While changed, old and oldDeleted hold its
// committed value when the entry is unpersisted; otherwise Pebble holds
// that value.
type entry struct {
	key         []byte // the table key, shared with the Changes Flush returns
	value       []byte
	deleted     bool
	changed     bool
	unpersisted bool // the committed value is not in Pebble yet
	old         []byte
	oldDeleted  bool
}

// committed returns the value of e at the last commit.
func (e *entry) committed() ([]byte, bool) {
	if e.changed {
		return e.old, e.oldDeleted
	}
	return e.value, e.deleted
}

// Change is one changelog record returned by Flush: the state table, the
// key and the new value, nil for a delete.
type Change struct {
	Table string
	Key   []byte
	Value []byte
}

// NewTaskCache returns the cache of one partition of query. maxDirty
// bounds its entries (0 means DefaultMaxDirty, see there); the task
// creates it once restore is done.
func (s *Store) NewTaskCache(query string, partition int32, maxDirty int) *TaskCache {
	if maxDirty <= 0 {
		maxDirty = DefaultMaxDirty
	}
	return &TaskCache{store: s, query: query, partition: partition, maxDirty: maxDirty, maxBytes: DefaultMaxUnpersistedBytes,
		tables: map[string]*Table{}, offsets: map[string]int64{}, budget: s.budget}
}

// Table returns the state table name of the cache's partition, bound to the
// cache; repeated calls return the same Table.
func (c *TaskCache) Table(name string) *Table {
	if t, ok := c.tables[name]; ok {
		return t
	}
	t := &Table{
		store:  c.store,
		name:   name,
		prefix: tablePrefix(c.query, c.partition, name),
	}
	t.cache = &tableCache{owner: c, t: t, m: map[string]*entry{}}
	c.tables[name] = t
	i, _ := slices.BinarySearch(c.names, name)
	c.names = slices.Insert(c.names, i, name)
	return t
}

// Put sets key to value in table; see Table.Put.
func (c *TaskCache) Put(table string, key, value []byte) error {
	return c.Table(table).Put(key, value)
}

// Delete removes key from table; see Table.Delete.
func (c *TaskCache) Delete(table string, key []byte) error {
	return c.Table(table).Delete(key)
}

// Get returns the value of key in table; see Table.Get.
func (c *TaskCache) Get(table string, key []byte) ([]byte, bool, error) {
	return c.Table(table).Get(key)
}

func (tc *tableCache) set(key, value []byte, deleted bool) {
	e, ok := tc.m[string(key)]
	if !deleted && (!ok || e.deleted) {
		tc.note(key)
	}
	if !ok {
		var k string
		e, k = tc.newEntry(key)
		tc.m[k] = e
		tc.owner.size++
		tc.grow(len(key) + entryOverhead)
	}
	tc.grow(len(value) - len(e.value))
	if !e.changed {
		e.changed = true
		e.old, e.oldDeleted = e.value, e.deleted
		tc.changed = append(tc.changed, e)
		tc.owner.changed++
	}
	e.value = value
	e.deleted = deleted
}

// note adds key to the table's filter, when it has one.
func (tc *tableCache) note(key []byte) {
	if tc.filtering != filterReady {
		return
	}
	grew, ok := tc.filter.add(key)
	if !ok {
		tc.dropFilter(filterOff)
		return
	}
	tc.owner.account(grew)
}

// dropFilter forgets the table's filter, giving its memory back, and
// leaves filtering in state.
func (tc *tableCache) dropFilter(state uint8) {
	if tc.filter != nil {
		tc.owner.account(-tc.filter.bytes)
		tc.filter = nil
	}
	tc.filtering = state
}

// absent reports whether the table surely holds no value under key, by
// its filter, which it first builds when it has none yet: from every key
// Pebble holds in the table and every key the cache holds.
func (tc *tableCache) absent(key []byte) (bool, error) {
	switch tc.filtering {
	case filterOff:
		return false, nil
	case filterUnknown:
		if err := tc.buildFilter(); err != nil {
			return false, err
		}
		if tc.filtering != filterReady {
			return false, nil
		}
	}
	return !tc.filter.mayHold(key), nil
}

// buildFilter makes the table's filter from the keys Pebble and the
// cache hold; one outgrowing maxFilterBytes turns filtering off.
func (tc *tableCache) buildFilter() error {
	t := tc.t
	if err := t.store.acquire(); err != nil {
		return err
	}
	defer t.store.release()
	it, err := t.store.db.NewIter(&pebble.IterOptions{LowerBound: t.prefix, UpperBound: prefixEnd(t.prefix)})
	if err != nil {
		return fmt.Errorf("state: scan %s: %w", t.name, err)
	}
	tc.filter, tc.filtering = newKeyFilter(), filterReady
	for ok := it.First(); ok && tc.filtering == filterReady; ok = it.Next() {
		tc.note(it.Key()[len(t.prefix):])
	}
	if err := it.Close(); err != nil {
		tc.dropFilter(filterUnknown)
		return fmt.Errorf("state: scan %s: %w", t.name, err)
	}
	for k, e := range tc.m {
		if tc.filtering != filterReady {
			break
		}
		if !e.deleted || e.changed || e.unpersisted {
			tc.note(unsafe.Slice(unsafe.StringData(k), len(k)))
		}
	}
	return nil
}

// keepClean caches what Pebble holds for key, read by Get, as a clean
// entry, unless the cache holds its bound of entries already or the
// memory budget is over.
func (tc *tableCache) keepClean(key, value []byte, deleted bool) {
	if tc.owner.size >= tc.owner.maxDirty || tc.owner.budget.Over() {
		return
	}
	e, k := tc.newEntry(key)
	e.value, e.deleted = value, deleted
	tc.m[k] = e
	tc.owner.size++
	tc.owner.clean = true
	tc.grow(entryBytes(e))
}

// grow adds n bytes to what the table's entries hold, and to its owner's.
func (tc *tableCache) grow(n int) {
	tc.entryBytes += int64(n)
	tc.owner.account(n)
}

// dropEntry removes e, cached under k, giving its memory back.
func (tc *tableCache) dropEntry(k string, e *entry) {
	tc.grow(-entryBytes(e))
	delete(tc.m, k)
}

// entryOverhead estimates what an entry costs beside its key and value:
// the entry itself, its map slot and its share of the slices naming it.
const entryOverhead = 128

// entryBytes estimates the memory of e.
func entryBytes(e *entry) int { return len(e.key) + len(e.value) + entryOverhead }

// account adds n bytes to what the cache holds, and to its budget.
func (c *TaskCache) account(n int) {
	c.bytes += int64(n)
	c.budget.Add(int64(n))
}

// Bytes estimates the memory of the entries the cache holds.
func (c *TaskCache) Bytes() int64 { return c.bytes }

// Budget returns the memory budget the cache shares with the other task
// caches of its store and with the operators' decoded state.
func (c *TaskCache) Budget() *Budget { return c.budget }

// Release drops every entry and gives back to the budget what the cache
// held, when its task ends: what was not persisted is lost (the changelog
// has it). Calling it again does nothing.
func (c *TaskCache) Release() {
	c.budget.Add(-c.bytes)
	c.bytes = 0
	clear(c.tables)
	c.names = c.names[:0]
	c.size, c.changed, c.unpersisted, c.unpersistedBytes = 0, 0, 0, 0
}

// Full reports whether the cache holds at least its bound of entries
// written since the last commit: the task should commit before
// processing more records.
func (c *TaskCache) Full() bool { return c.changed >= c.maxDirty }

// Dirty returns the number of entries written since the last commit.
func (c *TaskCache) Dirty() int { return c.changed }

// Unpersisted returns the number of committed entries Pebble does not
// hold yet.
func (c *TaskCache) Unpersisted() int { return c.unpersisted }

// PersistDue reports whether the committed entries Pebble does not hold
// passed the cache's bound, in entries or bytes, or the memory budget is
// over with some of them held: the task should Persist now, after which
// the cache can let them go.
func (c *TaskCache) PersistDue() bool {
	return c.unpersisted >= c.maxDirty || c.unpersistedBytes >= c.maxBytes || (c.unpersisted > 0 && c.budget.Over())
}

// Flush returns the changelog records of the entries written since the
// last commit, ordered by table name, then by when each entry was first
// written since the commit, for the task to produce in its commit (a key
// appears once: only its order with itself matters to a changelog). The entries stay changed until Commit (the commit
// succeeded) or Reset (it failed); nothing may be written in between.
// Key and Value of the returned Changes are shared with the cache and
// must not be modified. The changes are appended to dst[:0], which may be
// nil or the slice an earlier Flush returned, for a task to reuse.
func (c *TaskCache) Flush(dst []Change) []Change {
	if c.changed == 0 {
		return dst[:0]
	}
	changes := slices.Grow(dst[:0], c.changed)
	for _, name := range c.names {
		tc := c.tables[name].cache
		if len(tc.changed) == 0 {
			continue
		}
		for _, e := range tc.changed {
			ch := Change{Table: name, Key: e.key}
			if !e.deleted {
				ch.Value = e.value
			}
			changes = append(changes, ch)
		}
	}
	return changes
}

// Commit makes the entries written since the last commit committed, once
// the task's Kafka commit of their changelog records succeeded, and drops
// the entries Pebble holds if the cache is over its bound. offsets
// are the changelog offsets (keyed by state table, the offset after the
// last record the commit produced) the next Persist records with them.
func (c *TaskCache) Commit(offsets map[string]int64) {
	for table, off := range offsets {
		if off > c.offsets[table] {
			c.offsets[table] = off
		}
	}
	if c.clean && (c.size > c.maxDirty || c.budget.Over()) {
		// Make room for the entries reads keep (keepClean), or give
		// memory back.
		c.evictClean()
	}
	if c.changed == 0 {
		return
	}
	for _, name := range c.names {
		tc := c.tables[name].cache
		for _, e := range tc.changed {
			if e.unpersisted {
				c.unpersistedBytes += len(e.value) - len(e.old)
			} else {
				e.unpersisted = true
				tc.unpersisted = append(tc.unpersisted, e)
				c.unpersisted++
				c.unpersistedBytes += len(e.key) + len(e.value)
			}
			e.changed, e.old, e.oldDeleted = false, nil, false
		}
		clear(tc.changed)
		tc.changed = tc.changed[:0]
	}
	c.changed = 0
}

// Reset takes the entries written since the last commit back to their
// committed values and drops every entry Pebble holds, so that reads go
// to Pebble again; the committed entries Pebble does not hold yet stay.
// The task calls it when a commit failed and it rewinds to the last
// committed state, and after restoring the store from the changelogs.
func (c *TaskCache) Reset() {
	for _, t := range c.tables {
		tc := t.cache
		for _, e := range tc.changed {
			tc.grow(len(e.old) - len(e.value))
			e.value, e.deleted = e.old, e.oldDeleted
			e.changed, e.old, e.oldDeleted = false, nil, false
		}
		clear(tc.changed)
		tc.changed = tc.changed[:0]
		if tc.filtering == filterReady {
			// A restore may have written Pebble beside the cache.
			tc.dropFilter(filterUnknown)
		}
		for k, e := range tc.m {
			if !e.unpersisted {
				tc.dropEntry(k, e)
				*e = entry{} // its slab chunk may outlive it
			}
		}
	}
	c.changed = 0
	c.size = c.unpersisted
	c.clean = false
}

// Persist writes the committed entries Pebble does not hold yet, with the
// changelog offsets of the commits they come from, in Pebble batches of
// about persistChunk bytes, the offsets in the last one, and then drops
// entries Pebble holds if the cache is over its bound. Entries written
// since the last commit keep their new values in the cache; Pebble gets
// their committed ones. It does nothing when no commit happened since the
// last Persist.
func (c *TaskCache) Persist() error {
	if c.unpersisted == 0 && len(c.offsets) == 0 {
		return nil
	}
	if err := c.store.acquire(); err != nil {
		return err
	}
	defer c.store.release()
	pb := c.store.db.NewBatch()
	defer func() { pb.Close() }()
	for _, name := range c.names {
		t := c.tables[name]
		tc := t.cache
		if len(tc.unpersisted) == 0 {
			continue
		}
		// Pebble takes a batch in key order faster into its memtable.
		c.sorted = sortEntries(c.sorted[:0], tc.unpersisted)
		for _, s := range c.sorted {
			e := s.e
			c.kbuf = append(append(c.kbuf[:0], t.prefix...), e.key...)
			var err error
			if v, deleted := e.committed(); deleted {
				err = pb.Delete(c.kbuf, nil)
			} else {
				err = pb.Set(c.kbuf, v, nil)
			}
			if err == nil && pb.Len() >= persistChunk {
				// Not the last batch: see below.
				if err = pb.Commit(pebble.NoSync); err == nil {
					pb.Close()
					pb = c.store.db.NewBatch()
				}
			}
			if err != nil {
				return fmt.Errorf("state: persist %s: %w", name, err)
			}
		}
	}
	var v [8]byte
	for table, off := range c.offsets {
		binary.BigEndian.PutUint64(v[:], uint64(off))
		if err := pb.Set(offsetKey(c.query, c.partition, table), v[:], nil); err != nil {
			return fmt.Errorf("state: persist %s/%d: %w", c.query, c.partition, err)
		}
	}
	// The writes go to Pebble's log without waiting for it to reach the
	// disk: the changelog holds every change the batches have, so a crash
	// that loses the log's tail leaves the store with the changelog
	// offsets of an earlier Persist (they are in the last batch), some of
	// this one's entries perhaps written already, and the task's restore
	// replays the changelog from those offsets: as each changelog record
	// holds a key's whole value, every key ends at its latest value.
	// Batches of persistChunk bytes keep their buffers small enough for
	// Pebble to reuse, and below its large batch threshold.
	if err := pb.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("state: persist %s/%d: %w", c.query, c.partition, err)
	}
	for _, t := range c.tables {
		tc := t.cache
		for _, e := range tc.unpersisted {
			e.unpersisted = false
		}
		clear(tc.unpersisted)
		tc.unpersisted = tc.unpersisted[:0]
	}
	clear(c.sorted)
	c.sorted = c.sorted[:0]
	c.unpersisted, c.unpersistedBytes = 0, 0
	clear(c.offsets)
	c.clean = true
	if c.size > c.maxDirty || c.budget.Over() {
		c.evictClean()
	}
	return nil
}

// evictClean drops every entry Pebble holds, keeping those written since
// the last commit and the committed ones not persisted yet. A table all
// of whose entries Pebble holds, as after a Persist between commits, is
// emptied at once, its entry chunks and key blocks let go.
func (c *TaskCache) evictClean() {
	for _, t := range c.tables {
		if tc := t.cache; len(tc.changed) == 0 && len(tc.unpersisted) == 0 {
			tc.grow(-int(tc.entryBytes))
			c.size -= len(tc.m)
			clear(tc.m)
			tc.slab, tc.keys = nil, nil
			continue
		}
		for k, e := range t.cache.m {
			if !e.changed && !e.unpersisted {
				t.cache.dropEntry(k, e)
				*e = entry{} // its slab chunk may outlive it
				c.size--
			}
		}
	}
	c.clean = false
}
