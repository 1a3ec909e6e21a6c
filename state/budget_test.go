package state

import (
	"fmt"
	"testing"
)

// heldBytes recomputes what the entries and key filters of c hold, as
// account counts it.
func heldBytes(c *TaskCache) int64 {
	var n int64
	for _, t := range c.tables {
		var entries int64
		for _, e := range t.cache.m {
			entries += int64(entryBytes(e))
		}
		if entries != t.cache.entryBytes {
			// Reported through the total: the caller's check fails.
			return -1
		}
		n += entries
		if f := t.cache.filter; f != nil {
			n += int64(f.bytes)
		}
	}
	return n
}

func TestBudgetAccounting(t *testing.T) {
	s, err := Open(t.TempDir(), Options{CacheSize: 8 << 20, MemoryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c1, c2 := s.NewTaskCache("q", 0, 0), s.NewTaskCache("q", 1, 0)
	check := func(step string) {
		t.Helper()
		for _, c := range []*TaskCache{c1, c2} {
			if got, want := c.Bytes(), heldBytes(c); got != want {
				t.Fatalf("%s: partition %d counts %d bytes, its entries hold %d", step, c.partition, got, want)
			}
		}
		if got, want := s.Budget().Used(), c1.Bytes()+c2.Bytes(); got != want {
			t.Fatalf("%s: budget used %d, caches hold %d", step, got, want)
		}
	}
	for i := range 50 {
		k := []byte(fmt.Sprintf("k%02d", i))
		if err := c1.Put("t", k, []byte("value")); err != nil {
			t.Fatal(err)
		}
		if err := c2.Put("t", k, []byte(fmt.Sprintf("longer value %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	check("puts")
	commit(t, s, c1, "q", 0, nil)
	commit(t, s, c2, "q", 1, nil)
	check("commits")
	if err := c1.Put("t", []byte("k01"), []byte("a much longer value than before")); err != nil {
		t.Fatal(err)
	}
	if err := c1.Delete("t", []byte("k02")); err != nil {
		t.Fatal(err)
	}
	check("overwrite and delete")
	c1.Reset() // the failed commit: back to the committed values, clean entries dropped
	check("reset")
	if _, _, err := c1.Get("t", []byte("k03")); err != nil { // read back from Pebble
		t.Fatal(err)
	}
	if _, _, err := c1.Get("t", []byte("absent")); err != nil {
		t.Fatal(err)
	}
	check("reads")
	c1.Release()
	check("release")
	c1.Release()
	c2.Release()
	if u := s.Budget().Used(); u != 0 {
		t.Fatalf("released caches leave %d bytes in the budget", u)
	}
}

// TestEvictMixedTables evicts from a cache whose one table Pebble holds
// whole (emptied at once) while the other has entries written since the
// commit (kept, the clean ones beside them dropped).
func TestEvictMixedTables(t *testing.T) {
	s, err := Open(t.TempDir(), Options{CacheSize: 8 << 20, MemoryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.NewTaskCache("q", 0, 10)
	for i := range 8 {
		for _, tab := range []string{"a", "b"} {
			if err := c.Put(tab, []byte(fmt.Sprintf("k%d", i)), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit(t, s, c, "q", 0, nil) // 16 entries over a bound of 10: Persist evicts them all
	if c.size != 0 || c.Bytes() != 0 {
		t.Fatalf("after Persist the cache keeps %d entries, %d bytes", c.size, c.Bytes())
	}
	for i := range 12 { // reads keep clean entries, up to the bound
		for _, tab := range []string{"a", "b"} {
			if _, _, err := c.Get(tab, []byte(fmt.Sprintf("k%d", i%8))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.Put("b", []byte("new"), []byte("w")); err != nil {
		t.Fatal(err)
	}
	if got, want := c.Bytes(), heldBytes(c); got != want {
		t.Fatalf("before the commit: counts %d bytes, its entries hold %d", got, want)
	}
	c.Flush(nil)
	c.Commit(nil) // over the bound with clean entries: evicts
	if n := len(c.Table("a").cache.m); n != 0 {
		t.Fatalf("table a keeps %d clean entries", n)
	}
	if m := c.Table("b").cache.m; len(m) != 1 || m["new"] == nil {
		t.Fatalf("table b keeps %d entries, want the unpersisted one", len(m))
	}
	if got, want := c.Bytes(), heldBytes(c); got != want {
		t.Fatalf("after the eviction: counts %d bytes, its entries hold %d", got, want)
	}
	if c.size != 1 {
		t.Fatalf("size %d after the eviction, want 1", c.size)
	}
	for i, tab := range []string{"a", "b"} {
		v, ok, err := c.Get(tab, []byte("k3"))
		if err != nil || !ok || string(v) != "v" {
			t.Fatalf("%d: Get = %q %v %v", i, v, ok, err)
		}
	}
	if v, ok, err := c.Get("b", []byte("new")); err != nil || !ok || string(v) != "w" {
		t.Fatalf("Get new = %q %v %v", v, ok, err)
	}
}

func TestBudgetOverEvicts(t *testing.T) {
	s, err := Open(t.TempDir(), Options{CacheSize: 8 << 20, MemoryBudget: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.NewTaskCache("q", 0, 0)
	for i := range 100 {
		if err := c.Put("t", []byte(fmt.Sprintf("k%03d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Budget().Over() {
		t.Fatalf("100 entries (%d bytes) are not over a budget of %d", s.Budget().Used(), s.Budget().Limit())
	}
	c.Flush(nil)
	c.Commit(nil)
	if !c.PersistDue() {
		t.Fatal("over the budget with committed entries Pebble lacks, PersistDue is false")
	}
	if err := c.Persist(); err != nil {
		t.Fatal(err)
	}
	if c.size != 0 || c.Bytes() != 0 || s.Budget().Over() {
		t.Fatalf("after Persist over the budget the cache keeps %d entries, %d bytes", c.size, c.Bytes())
	}
	// Over the budget, reads are answered by Pebble and not kept.
	if err := c.Put("t", []byte("big"), make([]byte, 8<<10)); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := c.Get("t", []byte("k050")); err != nil || !ok || string(v) != "v" {
		t.Fatalf("Get = %q %v %v", v, ok, err)
	}
	if c.size != 1 {
		t.Fatalf("over the budget, a read was kept: %d entries", c.size)
	}
}

// TestPersistInChunks: a Persist of many times persistChunk bytes writes
// every entry and the changelog offsets, which a reopened store reads.
func TestPersistInChunks(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	c := s.NewTaskCache("q", 0, 1_000_000)
	value := make([]byte, 100)
	n := 8 * persistChunk / len(value)
	for i := range n {
		if err := c.Put("t", fmt.Appendf(nil, "k%06d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Delete("t", []byte("k000007")); err != nil {
		t.Fatal(err)
	}
	commit(t, s, c, "q", 0, map[string]int64{"t": 42})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{CacheSize: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	off, err := s.Offsets("q", 0)
	if err != nil || off["t"] != 42 {
		t.Fatalf("offsets %v, %v; want t at 42", off, err)
	}
	got := 0
	if err := s.Table("q", 0, "t").Scan(nil, nil, func(k, v []byte) bool {
		got++
		return len(v) == len(value)
	}); err != nil {
		t.Fatal(err)
	}
	if got != n-1 {
		t.Fatalf("%d entries read back, want %d", got, n-1)
	}
}
