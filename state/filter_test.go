package state

import (
	"errors"
	"fmt"
	"testing"
)

// TestKeyFilter adds keys across several parts: every key added is maybe
// held, and of keys never added about 1 % per part are.
func TestKeyFilter(t *testing.T) {
	f := newKeyFilter()
	const n = 200_000
	for i := range n {
		if _, ok := f.add([]byte(fmt.Sprintf("key-%d", i))); !ok {
			t.Fatalf("filter full at %d keys (%d bytes)", i, f.bytes)
		}
	}
	for i := range n {
		if !f.mayHold([]byte(fmt.Sprintf("key-%d", i))) {
			t.Fatalf("key-%d added but not held", i)
		}
	}
	wrong := 0
	for i := range n {
		if f.mayHold([]byte(fmt.Sprintf("other-%d", i))) {
			wrong++
		}
	}
	if rate := float64(wrong) / n; rate > 0.01*float64(len(f.parts)) {
		t.Errorf("%.2f %% false positives over %d parts", 100*rate, len(f.parts))
	}
	if want := n * filterBitsPerKey / 8; f.bytes > 3*want {
		t.Errorf("%d bytes for %d keys, want about %d", f.bytes, n, want)
	}
}

// TestKeyFilterFull grows a filter to its max: it then refuses keys.
func TestKeyFilterFull(t *testing.T) {
	f := newKeyFilter()
	f.max = 256 << 10
	added := 0
	for {
		if _, ok := f.add([]byte(fmt.Sprintf("k%d", added))); !ok {
			break
		}
		added++
	}
	if f.bytes > f.max || added < f.max/2*8/filterBitsPerKey {
		t.Errorf("full at %d keys and %d bytes (max %d)", added, f.bytes, f.max)
	}
}

// TestFilterAnswersAbsentKeys has a task cache read keys Pebble holds
// from an earlier run (the filter is built from them), keys it wrote,
// restored keys and keys no one wrote. Once the store is closed the
// absent keys are still answered, without Pebble, and the others are not.
func TestFilterAnswersAbsentKeys(t *testing.T) {
	s := openT(t, t.TempDir())
	c := s.NewTaskCache("q", 0, 0)
	for i := range 100 {
		if err := c.Put("t", []byte(fmt.Sprintf("old%d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, c, "q", 0, map[string]int64{"t": 1})
	if err := c.Persist(); err != nil {
		t.Fatal(err)
	}
	c.Release()

	c = s.NewTaskCache("q", 0, 0)
	tb := c.Table("t")
	for i := range 100 {
		if _, ok := mustGet(t, tb, fmt.Sprintf("old%d", i)); !ok {
			t.Fatalf("old%d written by the earlier cache not found", i)
		}
	}
	if tb.cache.filtering != filterReady {
		t.Fatalf("filtering %d after reads, want ready", tb.cache.filtering)
	}
	if err := c.Put("t", []byte("new"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	commit(t, s, c, "q", 0, map[string]int64{"t": 2})
	if err := c.Persist(); err != nil {
		t.Fatal(err)
	}
	// A restore writes Pebble beside the cache; the reset after it
	// rebuilds the filter.
	if err := s.Restore("q", 0, "t", []Entry{{Key: []byte("restored"), Value: []byte("r")}}, 3); err != nil {
		t.Fatal(err)
	}
	c.Reset()
	if v, ok := mustGet(t, tb, "restored"); !ok || v != "r" {
		t.Fatalf("restored key: %q %v", v, ok)
	}
	c.Reset() // drop the clean entries: reads go past the cache again
	if _, ok := mustGet(t, tb, "never"); ok {
		t.Fatal("a key never written found")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"absent1", "absent2", "absent3"} {
		if _, ok, err := tb.Get([]byte(k)); err != nil || ok {
			t.Errorf("%s after close: found %v, %v; want absent without reading Pebble", k, ok, err)
		}
	}
	for _, k := range []string{"old7", "new", "restored"} {
		if _, _, err := tb.Get([]byte(k)); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after close: %v, want ErrClosed (Pebble read)", k, err)
		}
	}
}
