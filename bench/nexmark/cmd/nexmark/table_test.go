package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/bench/nexmark"
)

func TestPickSystems(t *testing.T) {
	got, err := pickSystems(" Sluice,kstreams ")
	if err != nil || strings.Join(got, ",") != "sluice,kstreams" {
		t.Fatalf("pickSystems = %v, %v", got, err)
	}
	if _, err := pickSystems("sluice,spark"); err == nil || !strings.Contains(err.Error(), `"spark"`) {
		t.Fatalf("unknown system: %v", err)
	}
	if _, err := pickSystems(" , "); err == nil {
		t.Fatal("no system: no error")
	}
}

func TestTailCause(t *testing.T) {
	var tl tail
	_, _ = tl.Write([]byte("SLF4J: noise\nException in thread \"main\" org.apache.flink.table.api.ValidationException: SQL validation failed\n\tat x.y(Z.java:1)\n"))
	_, _ = tl.Write([]byte("Caused by: org.apache.calcite.runtime.CalciteContextException: No match found for function signature FOO\n\tat a.b(C.java:2)\n"))
	if got := tl.cause(); got != "org.apache.calcite.runtime.CalciteContextException: No match found for function signature FOO" {
		t.Fatalf("cause = %q", got)
	}
	var plain tail
	_, _ = plain.Write([]byte("first\nlast line\n"))
	if got := plain.cause(); got != "last line" {
		t.Fatalf("cause = %q", got)
	}
	var big tail
	_, _ = big.Write([]byte(strings.Repeat("x", 100<<10)))
	if len(big.b) != 64<<10 {
		t.Fatalf("tail keeps %d bytes", len(big.b))
	}
}

func TestPrintTable(t *testing.T) {
	yes, no := true, false
	rows := []row{
		{Query: "q0", System: systemSluice, EventsPerCPU: 300, EventsPerWall: 100, SteadyEventsPerCPU: 400, SteadyEventsPerWall: 380, PeakRSSBytes: 100 << 20, Checksum: "a"},
		{Query: "q0", System: systemKStreams, EventsPerCPU: 100, EventsPerWall: 50, SteadyEventsPerCPU: 160, SteadyEventsPerWall: 150, PeakRSSBytes: 400 << 20, Checksum: "a", ChecksumsMatch: &yes},
		{Query: "q0", System: systemFlink, EventsPerCPU: 60, EventsPerWall: 30, PeakRSSBytes: 500 << 20, Checksum: "b", ChecksumsMatch: &no},
		{Query: "q2", System: systemSluice, EventsPerCPU: 300, EventsPerWall: 100, PeakRSSBytes: 100 << 20, Checksum: "a"},
		{Query: "q2", System: systemKStreams, Error: "kstreams: exit status 1: boom | bang"},
		{Query: "q2", System: systemFlink, EventsPerCPU: 30, EventsPerWall: 30, PeakRSSBytes: 200 << 20, Checksum: "a", ChecksumsMatch: &yes},
	}
	var b strings.Builder
	printTable(&b, rows, []nexmark.Query{{Name: "q0"}, {Name: "q2"}}, allSystems, 1000, "1g")
	want := []string{
		"| query | sluice | kstreams | flink | cpu sluice/KS | steady cpu sluice/KS | RSS KS/sluice | cpu sluice/Flink | steady cpu sluice/Flink | RSS Flink/sluice |",
		"| q0 | 300 · 100 · 400 · 380 · 100 | 100 · 50 · 160 · 150 · 400 · ok | 60 · 30 · – · – · 500 · **differs** | 3.00x | 2.50x | 4.00x | 5.00x | – | 5.00x |",
		"| q2 | 300 · 100 · – · – · 100 | error: kstreams: exit status 1: boom / bang | 30 · 30 · – · – · 200 · ok | – | – | – | 10.00x | – | 2.00x |",
	}
	for _, w := range want {
		if !strings.Contains(b.String(), w+"\n") {
			t.Errorf("table lacks\n%s\nin\n%s", w, b.String())
		}
	}
}

// TestSteady: the steady state runs from the first sample at 20 % of the
// input to the first at 90 %; samples that do not reach both give none.
func TestSteady(t *testing.T) {
	s := []sample{
		{at: 500 * time.Millisecond, cpu: 2 * time.Second, pos: 0},
		{at: 1000 * time.Millisecond, cpu: 3 * time.Second, pos: 100},
		{at: 1500 * time.Millisecond, cpu: 3500 * time.Millisecond, pos: 250},
		{at: 2000 * time.Millisecond, cpu: 4 * time.Second, pos: 500},
		{at: 2500 * time.Millisecond, cpu: 4500 * time.Millisecond, pos: 950},
		{at: 3000 * time.Millisecond, cpu: 5 * time.Second, pos: 1000},
	}
	cpu, wall, ok := steady(s, 1000)
	// From pos 250 (1.5 s, 3.5 CPU-s) to pos 950 (2.5 s, 4.5 CPU-s).
	if !ok || cpu != 700 || wall != 700 {
		t.Errorf("steady = %v, %v, %v; want 700, 700, true", cpu, wall, ok)
	}
	if _, _, ok := steady(s[:4], 1000); ok {
		t.Error("samples short of 90 % gave a steady state")
	}
	if _, _, ok := steady([]sample{{pos: 0}, {at: time.Second, cpu: time.Second, pos: 1000}}, 1000); ok {
		t.Error("one step from 0 to the end gave a steady state")
	}
}

// TestProcessCPU reads this process's own CPU time.
func TestProcessCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	d, err := processCPU(os.Getpid())
	if err != nil || d < 0 {
		t.Fatalf("processCPU = %v, %v", d, err)
	}
}
