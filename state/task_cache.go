package state

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// DefaultMaxDirty is the number of dirty entries after which
// TaskCache.Full reports true when NewTaskCache is given 0.
const DefaultMaxDirty = 100_000

// TaskCache is the write-back cache of one task (one partition of one
// query): writes stay in Go maps until Flush moves them into a Batch, and
// reads hit the maps before Pebble. It is used from the task's goroutine
// only and takes no locks.
//
// Entries flushed by one Flush stay cached as clean entries; the next
// Flush may evict them, so each Flush's batch must be committed (or Reset
// called) before the next Flush.
type TaskCache struct {
	store     *Store
	query     string
	partition int32
	maxDirty  int
	tables    map[string]*Table
	dirty     int // dirty entries over all tables
	size      int // entries over all tables
}

type tableCache struct {
	owner *TaskCache
	m     map[string]*entry
	dirty []*entry // entries that became dirty since the last Flush
}

type entry struct {
	key     []byte // the table key, shared with the Changes Flush returns
	value   []byte
	deleted bool
	dirty   bool
}

// Change is one changelog record returned by Flush: the state table, the
// key and the new value, nil for a delete.
type Change struct {
	Table string
	Key   []byte
	Value []byte
}

// NewTaskCache returns the cache of one partition of query. maxDirty is
// the number of dirty entries after which Full reports true (0 means
// DefaultMaxDirty); the task creates it once restore is done.
func (s *Store) NewTaskCache(query string, partition int32, maxDirty int) *TaskCache {
	if maxDirty <= 0 {
		maxDirty = DefaultMaxDirty
	}
	return &TaskCache{store: s, query: query, partition: partition, maxDirty: maxDirty, tables: map[string]*Table{}}
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
		cache:  &tableCache{owner: c, m: map[string]*entry{}},
	}
	c.tables[name] = t
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
	if !ok {
		e = &entry{key: bytes.Clone(key)}
		if e.key == nil {
			e.key = []byte{}
		}
		tc.m[string(key)] = e
		tc.owner.size++
	}
	if !e.dirty {
		e.dirty = true
		tc.dirty = append(tc.dirty, e)
		tc.owner.dirty++
	}
	e.value = value
	e.deleted = deleted
}

// keepClean caches what Pebble holds for key, read by Get, as a clean
// entry, unless the cache holds its bound of entries already.
func (tc *tableCache) keepClean(key, value []byte, deleted bool) {
	if tc.owner.size >= tc.owner.maxDirty {
		return
	}
	k := bytes.Clone(key)
	if k == nil {
		k = []byte{}
	}
	tc.m[string(key)] = &entry{key: k, value: value, deleted: deleted}
	tc.owner.size++
}

// Full reports whether the cache holds at least maxDirty dirty entries:
// the task should commit before processing more records.
func (c *TaskCache) Full() bool { return c.dirty >= c.maxDirty }

// Dirty returns the number of entries written since the last Flush.
func (c *TaskCache) Dirty() int { return c.dirty }

// Flush moves every dirty entry into b and returns the matching changelog
// records ordered by table name, then key, for the task to produce before
// it calls Store.CommitBatch. Flushed entries stay cached as clean entries
// until a later Flush finds the cache over its bound. Key and Value of the
// returned Changes are shared with the cache and must not be modified. If
// Flush fails the task must call Reset and discard b.
func (c *TaskCache) Flush(b *Batch) ([]Change, error) {
	if b.store != c.store {
		return nil, errors.New("state: bug: Flush into a batch from another store")
	}
	if b.pb == nil {
		if err := c.store.acquire(); err != nil {
			return nil, err
		}
		c.store.release()
		return nil, errors.New("state: bug: Flush into a released batch")
	}
	if c.size > c.maxDirty {
		c.evictClean()
	}
	names := make([]string, 0, len(c.tables))
	for name, t := range c.tables {
		if len(t.cache.dirty) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	changes := make([]Change, 0, c.dirty)
	var key []byte
	for _, name := range names {
		t := c.tables[name]
		tc := t.cache
		slices.SortFunc(tc.dirty, func(a, b *entry) int { return bytes.Compare(a.key, b.key) })
		for _, e := range tc.dirty {
			key = append(append(key[:0], t.prefix...), e.key...)
			var err error
			ch := Change{Table: name, Key: e.key}
			if e.deleted {
				err = b.pb.Delete(key, nil)
			} else {
				err = b.pb.Set(key, e.value, nil)
				ch.Value = e.value
			}
			if err != nil {
				return nil, fmt.Errorf("state: flush %s: %w", name, err)
			}
			e.dirty = false
			changes = append(changes, ch)
		}
		clear(tc.dirty)
		tc.dirty = tc.dirty[:0]
	}
	c.dirty = 0
	return changes, nil
}

// evictClean drops every clean entry, keeping dirty ones.
func (c *TaskCache) evictClean() {
	for _, t := range c.tables {
		for k, e := range t.cache.m {
			if !e.dirty {
				delete(t.cache.m, k)
				c.size--
			}
		}
	}
}

// Reset drops every cached entry, dirty or not, so that reads go to
// Pebble: the task calls it when a commit failed and it rewinds to the
// last committed state.
func (c *TaskCache) Reset() {
	for _, t := range c.tables {
		clear(t.cache.m)
		t.cache.dirty = t.cache.dirty[:0]
	}
	c.dirty, c.size = 0, 0
}
