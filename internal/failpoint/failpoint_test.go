package failpoint

import (
	"bytes"
	"context"
	"errors"
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
	for _, spec := range []string{"x", "x=0", "x=a", "=3", "x=-1", "=pause", "x=paused"} {
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

func TestParsedPause(t *testing.T) {
	var out bytes.Buffer
	p, err := Parse("plan=pause, restore=2", &out, func() { t.Fatal("killed") })
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(context.Background(), "other"); err != nil {
		t.Fatalf("an unarmed point: %v", err)
	}
	cause := errors.New("gone")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error)
	go func() { done <- p.Wait(ctx, "plan") }()
	cancel(cause)
	if err := <-done; !errors.Is(err, cause) {
		t.Fatalf("Wait returned %v, want the context's cause", err)
	}
	if out.String() != "failpoint plan: pausing until the caller gives up\n" {
		t.Fatalf("stderr %q", out.String())
	}
	p.Hit("restore") // the kill point still counts
}

func TestPauseHold(t *testing.T) {
	if err := Wait(context.Background(), "held"); err != nil {
		t.Fatalf("unarmed: %v", err)
	}
	h := Pause("held")
	defer h.Release()

	// A caller whose context ends leaves with its cause.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Wait(ctx, "held") }()
	<-h.Reached()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait returned %v", err)
	}
	if err := <-h.Left(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Left gave %v", err)
	}

	// Release lets the waiting callers go, and disarms the point.
	go func() { done <- Wait(context.Background(), "held") }()
	<-h.Reached()
	h.Release()
	if err := <-done; err != nil {
		t.Fatalf("released Wait returned %v", err)
	}
	if err := <-h.Left(); err != nil {
		t.Fatalf("Left gave %v", err)
	}
	if err := Wait(context.Background(), "held"); err != nil {
		t.Fatalf("after Release: %v", err)
	}
	h.Release()

	// A second Pause of a name replaces and releases the first.
	a := Pause("held")
	go func() { done <- Wait(context.Background(), "held") }()
	<-a.Reached()
	b := Pause("held")
	defer b.Release()
	if err := <-done; err != nil {
		t.Fatalf("replaced hold: %v", err)
	}
	if holds.n.Load() != 1 {
		t.Fatalf("%d holds armed, want 1", holds.n.Load())
	}
}
