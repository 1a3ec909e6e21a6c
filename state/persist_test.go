package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestResetAcrossCommits: entries committed but not persisted serve every
// read, and a Reset after later writes (a failed commit) takes them back
// to those committed values, not to what Pebble holds.
func TestResetAcrossCommits(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	if err := s.Restore("q", 0, "t", []Entry{{Key: []byte("a"), Value: []byte("a0")}, {Key: []byte("c"), Value: []byte("c0")}}, 2); err != nil {
		t.Fatal(err)
	}
	c := s.NewTaskCache("q", 0, 0)
	tb := c.Table("t")
	put := func(k, v string) {
		t.Helper()
		if err := tb.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "a1")
	if err := tb.Delete([]byte("c")); err != nil {
		t.Fatal(err)
	}
	c.Flush(nil)
	c.Commit(map[string]int64{"t": 5})
	if c.Unpersisted() != 2 || c.Dirty() != 0 {
		t.Fatalf("after Commit: Unpersisted = %d, Dirty = %d", c.Unpersisted(), c.Dirty())
	}
	stored := s.Table("q", 0, "t")
	if got := fmt.Sprint(scanAll(t, stored, nil, nil)); got != "[a=a0 c=c0]" {
		t.Fatalf("Pebble before Persist = %s", got)
	}
	if got := fmt.Sprint(scanAll(t, tb, nil, nil)); got != "[a=a1]" {
		t.Fatalf("cache scan after Commit = %s", got)
	}
	// Writes after the commit, flushed for a commit that fails.
	put("a", "a2")
	put("b", "b2")
	put("c", "c2")
	if ch := c.Flush(nil); len(ch) != 3 {
		t.Fatalf("Flush = %v", ch)
	}
	if got := fmt.Sprint(scanAll(t, tb, nil, nil)); got != "[a=a2 b=b2 c=c2]" {
		t.Fatalf("cache scan before Reset = %s", got)
	}
	c.Reset()
	if v, ok := mustGet(t, tb, "a"); !ok || v != "a1" {
		t.Fatalf("a after Reset = %q %v, want the committed a1", v, ok)
	}
	if _, ok := mustGet(t, tb, "b"); ok {
		t.Fatal("b, never committed, found after Reset")
	}
	if v, found, known := tb.Cached([]byte("c")); !known || found {
		t.Fatalf("c after Reset: %q found %v known %v, want its committed delete", v, found, known)
	}
	if got := fmt.Sprint(scanAll(t, tb, nil, nil)); got != "[a=a1]" {
		t.Fatalf("cache scan after Reset = %s", got)
	}
	// A Persist while entries are written since the last commit stores
	// their committed values.
	put("a", "a3")
	if err := c.Persist(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(scanAll(t, stored, nil, nil)); got != "[a=a1]" {
		t.Fatalf("Pebble after Persist = %s", got)
	}
	if off, err := s.Offsets("q", 0); err != nil || off["t"] != 5 {
		t.Fatalf("offsets after Persist = %v %v", off, err)
	}
	if v, _ := mustGet(t, tb, "a"); v != "a3" {
		t.Fatalf("a after Persist = %q, want the written a3", v)
	}
	c.Reset()
	if v, _ := mustGet(t, tb, "a"); v != "a1" {
		t.Fatalf("a after Persist and Reset = %q, want a1", v)
	}
}

// TestUnpersistedNotEvicted: past its bound the cache drops entries read
// from Pebble, never committed ones Pebble does not hold.
func TestUnpersistedNotEvicted(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	c := s.NewTaskCache("q", 0, 4)
	tb := c.Table("t")
	for i := range 3 {
		if err := tb.Put(fmt.Appendf(nil, "k%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	c.Flush(nil)
	c.Commit(nil)
	for i := range 10 {
		mustGet(t, tb, fmt.Sprintf("r%d", i))
	}
	c.Reset()
	for i := range 3 {
		if v, found, known := tb.Cached(fmt.Appendf(nil, "k%d", i)); !known || !found || string(v) != "v" {
			t.Fatalf("k%d after Reset: %q %v %v", i, v, found, known)
		}
	}
	if len(tb.cache.m) != 3 {
		t.Fatalf("cache holds %d entries after Reset, want the 3 unpersisted", len(tb.cache.m))
	}
}

// TestPersistCrashRestore runs random writes through commits that persist
// now and then, "crashes" (drops the cache, keeps Pebble) and restores the
// changelog tail past the persisted offsets: the store then holds exactly
// what a run persisting every commit holds.
func TestPersistCrashRestore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		s := openT(t, t.TempDir())
		c := s.NewTaskCache("q", 0, 0)
		model := map[string]map[string]string{"t1": {}, "t2": {}}
		logs := map[string][]Entry{"t1": nil, "t2": nil}
		commits := 5 + rng.IntN(20)
		for range commits {
			for range 1 + rng.IntN(8) {
				table := []string{"t1", "t2"}[rng.IntN(2)]
				k := fmt.Sprintf("k%d", rng.IntN(10))
				if rng.IntN(4) == 0 {
					if err := c.Delete(table, []byte(k)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				v := fmt.Sprintf("v%d", rng.IntN(1000))
				if err := c.Put(table, []byte(k), []byte(v)); err != nil {
					t.Fatal(err)
				}
			}
			changes := c.Flush(nil)
			if rng.IntN(5) == 0 {
				// The commit fails after its changelog records were
				// written (at-least-once): the cache goes back, and the
				// task processes the same records again.
				for _, ch := range changes {
					logs[ch.Table] = append(logs[ch.Table], Entry{Key: ch.Key, Value: ch.Value})
				}
				redo := slices.Clone(changes)
				c.Reset()
				for _, ch := range redo {
					var err error
					if ch.Value == nil {
						err = c.Delete(ch.Table, ch.Key)
					} else {
						err = c.Put(ch.Table, ch.Key, ch.Value)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				changes = c.Flush(nil)
			}
			offsets := map[string]int64{}
			for _, ch := range changes {
				logs[ch.Table] = append(logs[ch.Table], Entry{Key: ch.Key, Value: ch.Value})
				offsets[ch.Table] = int64(len(logs[ch.Table]))
				if ch.Value == nil {
					delete(model[ch.Table], string(ch.Key))
				} else {
					model[ch.Table][string(ch.Key)] = string(ch.Value)
				}
			}
			c.Commit(offsets)
			if rng.IntN(4) == 0 {
				if err := c.Persist(); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The crash: the cache is lost, Pebble keeps what was persisted.
		stored, err := s.Offsets("q", 0)
		if err != nil {
			t.Fatal(err)
		}
		full := openT(t, t.TempDir())
		for _, table := range []string{"t1", "t2"} {
			tail := logs[table][stored[table]:]
			if err := s.Restore("q", 0, table, tail, int64(len(logs[table]))); err != nil {
				t.Fatal(err)
			}
			if err := full.Restore("q", 0, table, logs[table], int64(len(logs[table]))); err != nil {
				t.Fatal(err)
			}
			got, fromScratch := tableMap(t, s, table), tableMap(t, full, table)
			if !maps.Equal(got, model[table]) || !maps.Equal(fromScratch, model[table]) {
				t.Fatalf("round %d %s: restored %v, from scratch %v, want %v", round, table, got, fromScratch, model[table])
			}
		}
		_ = full.Close()
		_ = s.Close()
	}
}

func tableMap(t *testing.T, s *Store, table string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := s.Table("q", 0, table).Scan(nil, nil, func(k, v []byte) bool {
		out[string(k)] = string(v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKeyArena: keys of every size, the empty one, ones filling several
// arena blocks and ones too long for the arena, keep their bytes across
// later writes, eviction and Reset: in the Changes Flush returned, in
// reads and in scans.
func TestKeyArena(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	c := s.NewTaskCache("q", 0, 3*entryChunk)
	tb := c.Table("t")
	key := func(i int) []byte {
		n := i % (maxArenaKey + 40)
		if i%97 == 0 {
			n = 0
		}
		return fmt.Appendf(nil, "%0*d", n, i)[:n]
	}
	want := map[string]string{}
	var changes []Change
	var changed []string
	for i := range 2 * entryChunk {
		k := key(i)
		v := fmt.Sprint(i)
		if err := tb.Put(k, []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[string(k)] = v
	}
	changes = c.Flush(nil)
	for _, ch := range changes {
		changed = append(changed, string(ch.Key)+"="+string(ch.Value))
	}
	c.Commit(map[string]int64{"t": 1})
	if err := c.Persist(); err != nil {
		t.Fatal(err)
	}
	// New keys past the bound evict the persisted ones; a failed commit
	// drops the new ones again.
	for i := 2 * entryChunk; i < 4*entryChunk; i++ {
		if err := tb.Put(key(i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	c.Flush(nil)
	c.Commit(nil)
	for i := 4 * entryChunk; i < 5*entryChunk; i++ {
		if err := tb.Put(key(i), []byte("y")); err != nil {
			t.Fatal(err)
		}
	}
	c.Reset()
	for i := 2 * entryChunk; i < 4*entryChunk; i++ {
		want[string(key(i))] = "x"
	}
	for i, ch := range changes {
		if got := string(ch.Key) + "=" + string(ch.Value); got != changed[i] {
			t.Fatalf("change %d = %q, was %q", i, got, changed[i])
		}
	}
	for k, v := range want {
		if got, ok := mustGet(t, tb, k); !ok || got != v {
			t.Fatalf("Get(%q) = %q %v, want %q", k, got, ok, v)
		}
	}
	var wantScan []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		wantScan = append(wantScan, k+"="+want[k])
	}
	if got := scanAll(t, tb, nil, nil); !slices.Equal(got, wantScan) {
		t.Fatalf("scan has %d entries, want %d", len(got), len(wantScan))
	}
}

// TestSortEntries: Persist's order is the keys' byte order, for keys
// shorter and longer than the 16 bytes it compares as numbers, with
// zero bytes where padding would be.
func TestSortEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var es []*entry
	for range 5_000 {
		k := make([]byte, r.IntN(20))
		for i := range k {
			k[i] = byte(r.IntN(3)) // zeros and ties everywhere
		}
		es = append(es, &entry{key: k})
	}
	var got [][]byte
	for _, s := range sortEntries(nil, es) {
		got = append(got, s.e.key)
	}
	if !slices.IsSortedFunc(got, bytes.Compare) || len(got) != len(es) {
		t.Fatal("sortEntries is not in key order")
	}
}

// BenchmarkSortEntries sorts what one Persist of the sparse windowed
// count writes: 100,000 keys of a group key and a window start.
func BenchmarkSortEntries(b *testing.B) {
	var es []*entry
	for w := range 10 {
		for g := range 10_000 {
			k := binary.BigEndian.AppendUint64(nil, uint64(1000+g))
			es = append(es, &entry{key: binary.BigEndian.AppendUint64(k, uint64(w*10_000))})
		}
	}
	rand.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	var buf []sortedEntry
	for b.Loop() {
		buf = sortEntries(buf[:0], es)
	}
}
