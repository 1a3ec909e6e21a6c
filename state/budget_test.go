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
		for _, e := range t.cache.m {
			n += int64(entryBytes(e))
		}
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
	c.Flush()
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
