package state

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Table is one state table of one partition of a query: a sorted map from
// key bytes to value bytes. A Table from Store.Table reads Pebble only and
// cannot write; one from TaskCache.Table reads through and writes into the
// task's cache, and like the cache belongs to the task's goroutine. After
// Store.Close, reads that reach Pebble return ErrClosed.
type Table struct {
	store  *Store
	name   string
	prefix []byte      // tablePrefix(query, partition, name)
	cache  *tableCache // nil for a read-only table
	kbuf   []byte      // scratch for Pebble keys; used only with a cache
}

// Name returns the state table's name.
func (t *Table) Name() string { return t.name }

// Get returns the value of key. The task cache answers first (a cached
// delete hides a stored value), then its filter of the keys the table
// may hold (see keyFilter), then Pebble, whose answer (a value or its
// absence) the cache then keeps as a clean entry while it holds fewer than
// its bound of entries, so that reading a key again costs no Pebble call.
// The returned slice must not be modified; a value from the cache stays
// valid until the next write to the key, one from Pebble is a copy.
func (t *Table) Get(key []byte) ([]byte, bool, error) {
	if t.cache != nil {
		if e, ok := t.cache.m[string(key)]; ok {
			if e.deleted {
				return nil, false, nil
			}
			return e.value, true, nil
		}
		absent, err := t.cache.absent(key)
		if err != nil {
			return nil, false, err
		}
		if absent {
			t.cache.keepClean(key, nil, true)
			return nil, false, nil
		}
	}
	if err := t.store.acquire(); err != nil {
		return nil, false, err
	}
	defer t.store.release()
	var k []byte
	if t.cache != nil {
		t.kbuf = append(append(t.kbuf[:0], t.prefix...), key...)
		k = t.kbuf
	} else {
		k = append(slices.Clip(t.prefix), key...)
	}
	v, closer, err := t.store.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		if t.cache != nil {
			t.cache.keepClean(key, nil, true)
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("state: get %s: %w", t.name, err)
	}
	v = bytes.Clone(v)
	if v == nil {
		v = []byte{}
	}
	if t.cache != nil {
		t.cache.keepClean(key, v, false)
	}
	return v, true, closer.Close()
}

// Cached returns what the task cache holds for key, without reading
// Pebble: known is false when the cache holds nothing for it (Get would
// read Pebble); otherwise found and value are Get's.
func (t *Table) Cached(key []byte) (value []byte, found, known bool) {
	if t.cache == nil {
		return nil, false, false
	}
	e, ok := t.cache.m[string(key)]
	if !ok {
		return nil, false, false
	}
	if e.deleted {
		return nil, false, true
	}
	return e.value, true, true
}

// Put sets key to value in the task cache. The cache keeps value: the
// caller must not modify it afterwards. It fails on a read-only Table.
func (t *Table) Put(key, value []byte) error {
	if t.cache == nil {
		return fmt.Errorf("state: bug: Put on read-only table %s", t.name)
	}
	if value == nil {
		value = []byte{}
	}
	t.cache.set(key, value, false)
	return nil
}

// Delete removes key in the task cache; the delete hides any stored value
// and reaches Pebble at the next Flush. It fails on a read-only Table.
func (t *Table) Delete(key []byte) error {
	if t.cache == nil {
		return fmt.Errorf("state: bug: Delete on read-only table %s", t.name)
	}
	t.cache.set(key, nil, true)
	return nil
}

// Scan calls fn for every key k with lo <= k < hi in ascending order (nil
// lo or hi means unbounded), merging the task cache over Pebble, until fn
// returns false. k and v are valid only during the call and must not be
// modified. fn may read this and other tables but must not write to this
// one.
func (t *Table) Scan(lo, hi []byte, fn func(k, v []byte) bool) error {
	var cached []string
	if t.cache != nil {
		for k := range t.cache.m {
			if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
				cached = append(cached, k)
			}
		}
		slices.Sort(cached)
	}
	if err := t.store.acquire(); err != nil {
		return err
	}
	defer t.store.release()
	opts := &pebble.IterOptions{
		LowerBound: append(slices.Clip(t.prefix), lo...),
		UpperBound: prefixEnd(t.prefix),
	}
	if hi != nil {
		opts.UpperBound = append(slices.Clip(t.prefix), hi...)
	}
	it, err := t.store.db.NewIter(opts)
	if err != nil {
		return fmt.Errorf("state: scan %s: %w", t.name, err)
	}
	n := len(t.prefix)
	ok := it.First()
	for {
		var sk []byte
		if ok {
			sk = it.Key()[n:]
		}
		switch {
		case len(cached) > 0 && (!ok || cached[0] <= string(sk)):
			k := cached[0]
			cached = cached[1:]
			if ok && k == string(sk) {
				ok = it.Next()
			}
			if e := t.cache.m[k]; !e.deleted && !fn([]byte(k), e.value) {
				return it.Close()
			}
		case ok:
			if !fn(sk, it.Value()) {
				return it.Close()
			}
			ok = it.Next()
		default:
			if err := it.Close(); err != nil {
				return fmt.Errorf("state: scan %s: %w", t.name, err)
			}
			return nil
		}
	}
}
