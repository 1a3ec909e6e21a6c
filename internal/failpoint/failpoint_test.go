package failpoint

import (
	"bytes"
	"testing"
)

func TestParseAndCount(t *testing.T) {
	var out bytes.Buffer
	kills := 0
	p, err := Parse("txn-committed=3, restore=1", &out, func() { kills++ })
	if err != nil {
		t.Fatal(err)
	}
	p.Hit("cache-flush")
	p.Hit("txn-committed")
	p.Hit("txn-committed")
	if kills != 0 {
		t.Fatalf("killed after 2 of 3 hits")
	}
	p.Hit("txn-committed")
	if kills != 1 || out.String() != "failpoint txn-committed hit 3: killing\n" {
		t.Fatalf("kills %d, stderr %q", kills, out.String())
	}
	p.Hit("txn-committed")
	p.Hit("restore")
	if kills != 2 || out.String() != "failpoint txn-committed hit 3: killing\nfailpoint restore hit 1: killing\n" {
		t.Fatalf("kills %d, stderr %q", kills, out.String())
	}
}

func TestParseErrors(t *testing.T) {
	for _, spec := range []string{"x", "x=0", "x=a", "=3", "x=-1"} {
		if _, err := Parse(spec, nil, nil); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
	p, err := Parse("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Hit("x") // unarmed: no writer, no kill needed
	var none *Points
	none.Hit("x")
}
