package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// DefaultCacheSize is the Pebble block cache size used when
// Options.CacheSize is zero.
const DefaultCacheSize = 64 << 20

// DefaultBloomBitsPerKey is the bloom filter size used when
// Options.BloomBitsPerKey is zero (about 1% false positives).
const DefaultBloomBitsPerKey = 10

// memTableSize is Pebble's largest memtable. Memtables live outside the
// Go heap, two at a time while one flushes, and grow to this size as a
// task's state does: 16 MiB instead of 32 keeps a state of millions of
// keys about 30 MiB smaller in memory (Nexmark q18 at 5,000,000 events),
// for about 2 % more CPU on an update-heavy window (the hopping count
// benchmark), now that L0 gathers sixteen flushes per compaction.
const memTableSize = 16 << 20

// l0Compaction is how many overlapping sublevels of flushed tables L0
// gathers before Pebble compacts them into the level below, and
// l0StopWrites how many stall writes. A task's state is written in
// batches spread over its whole key range (every group of a window), so
// each L0 compaction rewrites most of the level below: gathering four
// times Pebble's default of four flushes before one compaction rewrites
// that level a quarter as often, while a read still finds a key with at
// most one bloom filter probe per sublevel.
const (
	l0Compaction = 16
	l0StopWrites = 64
)

// ErrClosed is returned by every Store, Table and Batch operation that
// needs Pebble after Store.Close.
var ErrClosed = errors.New("state: store is closed")

// Options configures Open. The zero value is usable.
type Options struct {
	// CacheSize is the Pebble block cache size in bytes; 0 means
	// DefaultCacheSize.
	CacheSize int64
	// BloomBitsPerKey sizes the bloom filters written on every level;
	// 0 means DefaultBloomBitsPerKey, a negative value disables them.
	BloomBitsPerKey int
	// Logger receives Pebble's messages (informational ones at Debug).
	// Nil discards them.
	Logger *slog.Logger
	// MemoryBudget bounds, in bytes, the state the task caches and the
	// operators keep in memory beside Pebble (see Budget); 0 means
	// DefaultMemoryBudget, a negative value no bound.
	MemoryBudget int64
}

// Store is the state of every query a server runs: one Pebble database in
// the server's data directory. The engine opens it once at start and closes
// it at shutdown. Its methods are safe for concurrent use; after Close they
// return ErrClosed.
type Store struct {
	db     *pebble.DB
	budget *Budget

	mu     sync.Mutex
	idle   sync.Cond // signalled when active drops to zero after Close
	active int       // operations using db
	closed bool
}

// Open opens (creating if needed) the Pebble database in dir with an
// explicit block cache, bloom filters on all levels and a logger that
// writes to opts.Logger only.
func Open(dir string, opts Options) (*Store, error) {
	size := opts.CacheSize
	if size <= 0 {
		size = DefaultCacheSize
	}
	bits := opts.BloomBitsPerKey
	if bits == 0 {
		bits = DefaultBloomBitsPerKey
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cache := pebble.NewCache(size)
	defer cache.Unref() // the DB holds its own reference
	po := &pebble.Options{
		Cache:  cache,
		Logger: pebbleLogger{l: logger},
		// The memtable starts small and doubles as it fills, up to
		// memTableSize (see there for the trade of memory and flushes).
		MemTableSize:          memTableSize,
		L0CompactionThreshold: l0Compaction,
		L0StopWritesThreshold: l0StopWrites,
	}
	if bits > 0 {
		for i := range po.Levels {
			po.Levels[i].FilterPolicy = bloom.FilterPolicy(bits)
		}
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", dir, err)
	}
	budget := opts.MemoryBudget
	if budget == 0 {
		budget = DefaultMemoryBudget
	}
	s := &Store{db: db, budget: NewBudget(budget)}
	s.idle.L = &s.mu
	return s, nil
}

// Budget returns the memory budget the store's task caches and the
// state operators share.
func (s *Store) Budget() *Budget { return s.budget }

// Close closes the database; state not yet written with TaskCache.Persist is
// lost. Operations started later return ErrClosed; Close waits for those in
// flight (a Scan callback may call other methods: they return ErrClosed).
// Calling it again returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for s.active > 0 {
		s.idle.Wait()
	}
	s.mu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("state: close: %w", err)
	}
	return nil
}

// acquire registers an operation using db, or returns ErrClosed; the
// caller must call s.release when it returns nil.
func (s *Store) acquire() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.active++
	return nil
}

// release ends an operation started by acquire.
func (s *Store) release() {
	s.mu.Lock()
	s.active--
	if s.active == 0 && s.closed {
		s.idle.Broadcast()
	}
	s.mu.Unlock()
}

// Table returns the state table name of one partition of query, reading
// Pebble directly (no task cache): pull queries and tests use it. A task
// that writes state uses TaskCache.Table instead. The Table is safe for
// concurrent reads.
func (s *Store) Table(query string, partition int32, name string) *Table {
	return &Table{store: s, name: name, prefix: tablePrefix(query, partition, name)}
}

// Offsets returns the changelog offsets last committed with the state of
// one partition of query, keyed by state table name (empty when none). The
// engine compares them with the changelog end offsets on start and
// restores the difference.
func (s *Store) Offsets(query string, partition int32) (map[string]int64, error) {
	if err := s.acquire(); err != nil {
		return nil, err
	}
	defer s.release()
	prefix := offsetsPrefix(query, partition)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("state: offsets %s/%d: %w", query, partition, err)
	}
	out := map[string]int64{}
	for ok := it.First(); ok; ok = it.Next() {
		name, rest, err := decodeSegment(it.Key()[len(prefix):])
		if err != nil || len(rest) != 0 || len(it.Value()) != 8 {
			_ = it.Close()
			return nil, fmt.Errorf("state: bug: corrupt offset record %q for %s/%d", it.Key(), query, partition)
		}
		out[name] = int64(binary.BigEndian.Uint64(it.Value()))
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("state: offsets %s/%d: %w", query, partition, err)
	}
	return out, nil
}

// Entry is one changelog record: a table key and its value, nil for a
// delete (tombstone).
type Entry struct {
	Key   []byte
	Value []byte
}

// Restore applies changelog records to one state table of a partition of
// query in one synced batch, and records offset as the table's changelog
// offset. The engine calls it on start, before the partition's TaskCache
// exists, for records past the offset Offsets returned.
func (s *Store) Restore(query string, partition int32, table string, entries []Entry, offset int64) error {
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.release()
	pb := s.db.NewBatch()
	defer pb.Close()
	prefix := tablePrefix(query, partition, table)
	key := make([]byte, 0, len(prefix)+32)
	for _, e := range entries {
		key = append(append(key[:0], prefix...), e.Key...)
		var err error
		if e.Value == nil {
			err = pb.Delete(key, nil)
		} else {
			err = pb.Set(key, e.Value, nil)
		}
		if err != nil {
			return fmt.Errorf("state: restore %s/%d/%s: %w", query, partition, table, err)
		}
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(offset))
	if err := pb.Set(offsetKey(query, partition, table), v[:], nil); err != nil {
		return fmt.Errorf("state: restore %s/%d/%s: %w", query, partition, table, err)
	}
	if err := pb.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("state: restore %s/%d/%s: %w", query, partition, table, err)
	}
	return nil
}

// DropQuery deletes every key of query (all partitions, tables and
// offsets) with one range deletion, synced. TERMINATE and DROP call it
// once the query's tasks have stopped.
func (s *Store) DropQuery(query string) error {
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.release()
	p := queryPrefix(query)
	if err := s.db.DeleteRange(p, prefixEnd(p), pebble.Sync); err != nil {
		return fmt.Errorf("state: drop %s: %w", query, err)
	}
	return nil
}
