package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"testing"
)

func openT(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustGet(t *testing.T, tb *Table, key string) (string, bool) {
	t.Helper()
	v, ok, err := tb.Get([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(v), ok
}

func commit(t *testing.T, s *Store, c *TaskCache, query string, partition int32, offsets map[string]int64) []Change {
	t.Helper()
	if c.query != query || c.partition != partition {
		t.Fatalf("commit of %s/%d through the cache of %s/%d", query, partition, c.query, c.partition)
	}
	ch := c.Flush(nil)
	c.Commit(offsets)
	if err := c.Persist(); err != nil {
		t.Fatal(err)
	}
	return ch
}

func scanAll(t *testing.T, tb *Table, lo, hi []byte) []string {
	t.Helper()
	var out []string
	err := tb.Scan(lo, hi, func(k, v []byte) bool {
		out = append(out, string(k)+"="+string(v))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRoundTripAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	c := s.NewTaskCache("q1", 3, 0)
	tb := c.Table("agg")
	if err := tb.Put([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := tb.Put([]byte(""), []byte("empty-key")); err != nil {
		t.Fatal(err)
	}
	if err := tb.Put([]byte("z"), nil); err != nil {
		t.Fatal(err)
	}
	commit(t, s, c, "q1", 3, map[string]int64{"agg": 41})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s = openT(t, dir)
	defer s.Close()
	ro := s.Table("q1", 3, "agg")
	if v, ok := mustGet(t, ro, "a"); !ok || v != "1" {
		t.Fatalf("a = %q %v", v, ok)
	}
	if v, ok := mustGet(t, ro, ""); !ok || v != "empty-key" {
		t.Fatalf("empty key = %q %v", v, ok)
	}
	if v, ok := mustGet(t, ro, "z"); !ok || v != "" {
		t.Fatalf("z = %q %v, want present and empty", v, ok)
	}
	if _, ok := mustGet(t, ro, "missing"); ok {
		t.Fatal("missing key found")
	}
	off, err := s.Offsets("q1", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(off, map[string]int64{"agg": 41}) {
		t.Fatalf("offsets = %v", off)
	}
	if err := ro.Put([]byte("x"), []byte("y")); err == nil {
		t.Fatal("Put on read-only table succeeded")
	}
}

func TestPrefixIsolation(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	type loc struct {
		q    string
		p    int32
		name string
	}
	// Pairs that would collide with naive '/'-joined prefixes.
	locs := []loc{
		{"a", 0, "b/c"}, {"a/b", 0, "c"}, {"a", 0, "b"}, {"a", 1, "b"},
		{"a", 256, "b"}, {"", 0, ""}, {"a", 0, ""}, {"a/0/b", 0, ""},
	}
	for i, l := range locs {
		c := s.NewTaskCache(l.q, l.p, 0)
		tb := c.Table(l.name)
		for _, k := range []string{"", "k", "/k"} {
			if err := tb.Put([]byte(k), fmt.Appendf(nil, "%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		commit(t, s, c, l.q, l.p, map[string]int64{l.name: int64(i)})
	}
	for i, l := range locs {
		tb := s.Table(l.q, l.p, l.name)
		got := scanAll(t, tb, nil, nil)
		want := []string{fmt.Sprintf("=%d", i), fmt.Sprintf("/k=%d", i), fmt.Sprintf("k=%d", i)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%+v: scan = %q, want %q", l, got, want)
		}
		off, err := s.Offsets(l.q, l.p)
		if err != nil {
			t.Fatal(err)
		}
		if off[l.name] != int64(i) {
			t.Errorf("%+v: offsets = %v", l, off)
		}
	}
}

func TestCacheReadThroughAndShadowing(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	c := s.NewTaskCache("q", 0, 0)
	tb := c.Table("t")
	for _, k := range []string{"a", "b", "c"} {
		if err := tb.Put([]byte(k), []byte("stored-"+k)); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, c, "q", 0, nil)

	// A fresh cache reads through to Pebble.
	c = s.NewTaskCache("q", 0, 0)
	tb = c.Table("t")
	if v, ok := mustGet(t, tb, "a"); !ok || v != "stored-a" {
		t.Fatalf("read-through a = %q %v", v, ok)
	}
	if err := tb.Delete([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := c.Put("t", []byte("b"), []byte("cached-b")); err != nil {
		t.Fatal(err)
	}
	if err := tb.Put([]byte("d"), []byte("cached-d")); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustGet(t, tb, "a"); ok {
		t.Fatal("cached delete does not hide stored value")
	}
	if v, ok, _ := c.Get("t", []byte("b")); !ok || string(v) != "cached-b" {
		t.Fatalf("b = %q %v", v, ok)
	}
	if got, want := fmt.Sprint(scanAll(t, tb, nil, nil)), "[b=cached-b c=stored-c d=cached-d]"; got != want {
		t.Fatalf("merged scan = %s, want %s", got, want)
	}
	// Pebble is untouched until commit.
	if v, ok := mustGet(t, s.Table("q", 0, "t"), "a"); !ok || v != "stored-a" {
		t.Fatalf("pebble a before commit = %q %v", v, ok)
	}
	commit(t, s, c, "q", 0, nil)
	if got, want := fmt.Sprint(scanAll(t, s.Table("q", 0, "t"), nil, nil)), "[b=cached-b c=stored-c d=cached-d]"; got != want {
		t.Fatalf("stored scan = %s, want %s", got, want)
	}
	// Reset drops uncommitted writes.
	if err := tb.Put([]byte("c"), []byte("uncommitted")); err != nil {
		t.Fatal(err)
	}
	c.Reset()
	if v, _ := mustGet(t, tb, "c"); v != "stored-c" {
		t.Fatalf("after Reset c = %q", v)
	}
}

func TestFlushOrderAndFull(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	c := s.NewTaskCache("q", 0, 4)
	if err := c.Put("zeta", []byte("2"), []byte("z2")); err != nil {
		t.Fatal(err)
	}
	if err := c.Put("alpha", []byte("b"), []byte("ab")); err != nil {
		t.Fatal(err)
	}
	if c.Full() {
		t.Fatal("Full with 2 dirty entries")
	}
	if err := c.Delete("alpha", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := c.Put("zeta", []byte("1"), []byte("z1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Put("zeta", []byte("1"), []byte("z1b")); err != nil {
		t.Fatal(err)
	}
	if !c.Full() || c.Dirty() != 4 {
		t.Fatalf("Full = %v, Dirty = %d with 4 dirty entries", c.Full(), c.Dirty())
	}
	ch := c.Flush(nil)
	var got []string
	for _, x := range ch {
		v := "<nil>"
		if x.Value != nil {
			v = string(x.Value)
		}
		got = append(got, x.Table+":"+string(x.Key)+"="+v)
	}
	if want := "[alpha:b=ab alpha:a=<nil> zeta:2=z2 zeta:1=z1b]"; fmt.Sprint(got) != want {
		t.Fatalf("changes = %v, want %s", got, want)
	}
	c.Commit(nil)
	if c.Full() || c.Dirty() != 0 || c.Unpersisted() != 4 {
		t.Fatalf("after Commit: Full = %v, Dirty = %d, Unpersisted = %d", c.Full(), c.Dirty(), c.Unpersisted())
	}
	if !c.PersistDue() {
		t.Fatal("4 unpersisted entries with a bound of 4: Persist is not due")
	}
	if err := c.Persist(); err != nil {
		t.Fatal(err)
	}
	if c.PersistDue() || c.Unpersisted() != 0 {
		t.Fatal("Persist left entries unpersisted")
	}
	// A clean cache flushes nothing; clean entries still serve reads.
	if ch := c.Flush(nil); len(ch) != 0 {
		t.Fatalf("second Flush = %v", ch)
	}
	if v, ok, _ := c.Get("zeta", []byte("1")); !ok || string(v) != "z1b" {
		t.Fatalf("clean entry = %q %v", v, ok)
	}
}

func TestEviction(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	c := s.NewTaskCache("q", 0, 2)
	tb := c.Table("t")
	for i := range 3 {
		if err := tb.Put([]byte{byte(i)}, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, c, "q", 0, nil)
	if err := tb.Put([]byte{9}, []byte{9}); err != nil {
		t.Fatal(err)
	}
	commit(t, s, c, "q", 0, nil) // evicts the three clean entries
	if len(tb.cache.m) != 1 {
		t.Fatalf("cache holds %d entries after eviction, want 1", len(tb.cache.m))
	}
	if v, ok := mustGet(t, tb, "\x01"); !ok || v != "\x01" {
		t.Fatalf("evicted key read back = %q %v", v, ok)
	}
}

func TestRestoreAndOffsets(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	err := s.Restore("q", 2, "t", []Entry{
		{Key: []byte("a"), Value: []byte("1")},
		{Key: []byte("b"), Value: []byte("2")},
		{Key: []byte("a"), Value: nil},
		{Key: []byte("c"), Value: []byte{}},
	}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restore("q", 2, "u", nil, 7); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, dir)
	defer s.Close()
	if got, want := fmt.Sprint(scanAll(t, s.Table("q", 2, "t"), nil, nil)), "[b=2 c=]"; got != want {
		t.Fatalf("restored = %s, want %s", got, want)
	}
	off, err := s.Offsets("q", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(off, map[string]int64{"t": 100, "u": 7}) {
		t.Fatalf("offsets = %v", off)
	}
	if off, _ := s.Offsets("q", 3); len(off) != 0 {
		t.Fatalf("offsets of another partition = %v", off)
	}
}

func TestDropQuery(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	for _, q := range []string{"q", "q/x", "qq"} {
		for p := range int32(2) {
			if err := s.Restore(q, p, "t", []Entry{{Key: []byte("k"), Value: []byte(q)}}, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.DropQuery("q"); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if _, ok := mustGet(t, s.Table("q", p, "t"), "k"); ok {
			t.Fatal("dropped key still present")
		}
		if off, _ := s.Offsets("q", p); len(off) != 0 {
			t.Fatalf("dropped offsets still present: %v", off)
		}
		for _, q := range []string{"q/x", "qq"} {
			if v, ok := mustGet(t, s.Table(q, p, "t"), "k"); !ok || v != q {
				t.Fatalf("query %s lost its state: %q %v", q, v, ok)
			}
		}
	}
}

func TestScanBounds(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	c := s.NewTaskCache("q", 0, 0)
	tb := c.Table("t")
	for _, k := range []string{"a", "b", "c", "d"} {
		if err := tb.Put([]byte(k), []byte("s")); err != nil {
			t.Fatal(err)
		}
	}
	// A neighbouring table whose keys must never show up.
	if err := c.Put("t\xff", []byte("a"), []byte("other")); err != nil {
		t.Fatal(err)
	}
	commit(t, s, c, "q", 0, nil)
	if err := tb.Put([]byte("bb"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := tb.Delete([]byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := tb.Put([]byte("e"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		lo, hi []byte
		want   string
	}{
		{nil, nil, "[a=s b=s bb=c d=s e=c]"},
		{[]byte("b"), []byte("d"), "[b=s bb=c]"},
		{[]byte("bb"), nil, "[bb=c d=s e=c]"},
		{nil, []byte("b"), "[a=s]"},
		{[]byte("x"), nil, "[]"},
		{[]byte("c"), []byte("c"), "[]"},
	}
	for _, tc := range cases {
		if got := fmt.Sprint(scanAll(t, tb, tc.lo, tc.hi)); got != tc.want {
			t.Errorf("Scan(%q, %q) = %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
	var n int
	if err := tb.Scan(nil, nil, func(k, v []byte) bool { n++; return n < 2 }); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("early stop visited %d keys", n)
	}
	// Reads from inside the callback.
	err := tb.Scan([]byte("a"), []byte("b"), func(k, v []byte) bool {
		if got, ok := mustGet(t, tb, "d"); !ok || got != "s" {
			t.Errorf("Get inside Scan = %q %v", got, ok)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAfterClose(t *testing.T) {
	s := openT(t, t.TempDir())
	c := s.NewTaskCache("q", 0, 0)
	tb := c.Table("t")
	if err := tb.Put([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := tb.Get([]byte("a")); err != nil || !ok || string(v) != "1" {
		t.Fatalf("cached Get after Close = %q %v %v", v, ok, err)
	}
	if _, _, err := tb.Get([]byte("b")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	c.Flush(nil)
	c.Commit(nil)
	if err := c.Persist(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Persist after Close: %v", err)
	}
	for name, err := range map[string]error{
		"Scan":      tb.Scan(nil, nil, func(k, v []byte) bool { return true }),
		"Restore":   s.Restore("q", 0, "t", nil, 1),
		"DropQuery": s.DropQuery("q"),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if _, err := s.Offsets("q", 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Offsets after Close: %v", err)
	}
}

// BenchmarkTaskCacheCount counts 1,000,000 records over 100,000 keys
// through a TaskCache (Get, increment, Put), flushing and committing every
// 100,000 records. One op is the whole run.
func BenchmarkTaskCacheCount(b *testing.B) {
	const records, keys, every = 1_000_000, 100_000, 100_000
	s := openT(b, b.TempDir())
	defer s.Close()
	keyBufs := make([][]byte, keys)
	for i := range keyBufs {
		keyBufs[i] = binary.BigEndian.AppendUint64(nil, uint64(i)*2654435761)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		query := fmt.Sprintf("count-%d", i)
		c := s.NewTaskCache(query, 0, every)
		tb := c.Table("counts")
		for r := range records {
			k := keyBufs[r%keys]
			v, ok, err := tb.Get(k)
			if err != nil {
				b.Fatal(err)
			}
			var n uint64
			if ok {
				n = binary.BigEndian.Uint64(v)
			}
			if err := tb.Put(k, binary.BigEndian.AppendUint64(make([]byte, 0, 8), n+1)); err != nil {
				b.Fatal(err)
			}
			if (r+1)%every == 0 {
				c.Flush(nil)
				c.Commit(map[string]int64{"counts": int64(r)})
				if err := c.Persist(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if i == 0 {
			v, _, _ := s.Table(query, 0, "counts").Get(keyBufs[5])
			if !bytes.Equal(v, binary.BigEndian.AppendUint64(nil, records/keys)) {
				b.Fatalf("count = %x", v)
			}
		}
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// TestReadsCached: a key read from Pebble, present or absent, is answered
// by the cache afterwards, as a clean entry no Flush writes; writes
// replace it, and the cache keeps no more read entries than its bound.
func TestReadsCached(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	c := s.NewTaskCache("q", 0, 3)
	tb := c.Table("t")
	for _, k := range []string{"a", "b"} {
		if err := tb.Put([]byte(k), []byte(k+"1")); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, c, "q", 0, nil)
	c.Reset()
	if v, ok := mustGet(t, tb, "a"); !ok || v != "a1" {
		t.Fatalf("a = %q %v", v, ok)
	}
	if _, ok := mustGet(t, tb, "x"); ok {
		t.Fatal("x found")
	}
	if len(tb.cache.m) != 2 || c.Dirty() != 0 {
		t.Fatalf("cache holds %d entries, %d dirty; want the 2 read, clean", len(tb.cache.m), c.Dirty())
	}
	if ch := commit(t, s, c, "q", 0, nil); len(ch) != 0 {
		t.Fatalf("Flush wrote %v; read entries are clean", ch)
	}
	if err := tb.Put([]byte("x"), []byte("x1")); err != nil {
		t.Fatal(err)
	}
	if v, ok := mustGet(t, tb, "x"); !ok || v != "x1" {
		t.Fatalf("x after Put = %q %v", v, ok)
	}
	mustGet(t, tb, "b")
	mustGet(t, tb, "y")
	if len(tb.cache.m) != 3 {
		t.Fatalf("cache holds %d entries, want its bound of 3", len(tb.cache.m))
	}
}

// TestCached checks that Cached answers from the task cache alone.
func TestCached(t *testing.T) {
	s := openT(t, t.TempDir())
	tab := s.NewTaskCache("q", 0, 0).Table("t")
	if _, _, known := tab.Cached([]byte("k")); known {
		t.Fatal("an empty cache knows k")
	}
	if _, ok, err := tab.Get([]byte("k")); err != nil || ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	if _, found, known := tab.Cached([]byte("k")); !known || found {
		t.Fatalf("after a Get of nothing: found %v known %v", found, known)
	}
	if err := tab.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, found, known := tab.Cached([]byte("k")); !known || !found || string(v) != "v" {
		t.Fatalf("after Put: %q %v %v", v, found, known)
	}
	if err := tab.Delete([]byte("k")); err != nil {
		t.Fatal(err)
	}
	if _, found, known := tab.Cached([]byte("k")); !known || found {
		t.Fatalf("after Delete: found %v known %v", found, known)
	}
	if _, _, known := s.Table("q", 0, "t").Cached([]byte("k")); known {
		t.Fatal("a read-only table has a cache")
	}
}
