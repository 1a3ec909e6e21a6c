package engine_test

import (
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1024": 1024, "512MiB": 512 << 20, "2 GiB": 2 << 30, "64KiB": 64 << 10,
		"1TiB": 1 << 40, "3KB": 3000, "5MB": 5e6, "2GB": 2e9, "1TB": 1e12, "7B": 7,
	} {
		got, err := engine.ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1.5GiB", "12 parsecs", "9999999999TiB"} {
		if got, err := engine.ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		}
	}
}

func TestStateMemoryFor(t *testing.T) {
	for _, c := range []struct{ limit, want int64 }{
		{0, engine.DefaultStateMemory},
		{2 << 30, 512 << 20},
		{512 << 20, 128 << 20},
		{1 << 20, 1 << 20}, // a tiny limit still leaves the state a megabyte
	} {
		if got := engine.StateMemoryFor(c.limit); got != c.want {
			t.Errorf("StateMemoryFor(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}

func TestParseStateMemory(t *testing.T) {
	if n, err := engine.ParseStateMemory("48MiB"); err != nil || n != 48<<20 {
		t.Errorf("ParseStateMemory(48MiB) = %d, %v; want %d", n, err, 48<<20)
	}
	for _, s := range []string{"1KiB", "0", "lots", "-1MiB"} {
		if _, err := engine.ParseStateMemory(s); err == nil {
			t.Errorf("ParseStateMemory(%q) took it, want a refusal", s)
		}
	}
}
