package oracle

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/sluice-sql/sluice/kafka"
)

func testDriver() *Driver {
	return New(Config{
		Orders: "orders", Customers: "customers", Partitions: 4, Keys: 64,
		WindowMs: 10_000, GraceMs: 5_000, MinAmount: 50,
	}, 1)
}

// keysByPartition returns two keys of one partition and a key of another.
func keysByPartition(t *testing.T, d *Driver) (a, b, other string) {
	t.Helper()
	byPart := map[int32][]string{}
	for i := range 64 {
		k := d.key(i)
		byPart[d.partition(k)] = append(byPart[d.partition(k)], k)
	}
	for p, ks := range byPart {
		if len(ks) < 2 {
			continue
		}
		for q, os := range byPart {
			if q != p {
				return ks[0], ks[1], os[0]
			}
		}
	}
	t.Fatal("the keys do not spread over two partitions")
	return
}

// TestGrace checks the count's model: stream time per partition, a
// window closed once stream time reaches its end plus the grace period.
func TestGrace(t *testing.T) {
	d := testDriver()
	a, b, other := keysByPartition(t, d)
	d.add(a, 0, 1, 25_000)     // window 20s; stream time 25s
	d.add(a, 1, 1, 40_000)     // window 40s; stream time 40s
	d.add(a, 2, 1, 24_000)     // window 20s closed at 35s: late
	d.add(b, 0, 1, 36_000)     // window 30s open until 45s
	d.add(other, 0, 1, 21_000) // its own partition's stream time is 21s
	d.add(b, 1, 1, 45_000)     // stream time 45s
	d.add(b, 2, 1, 39_999)     // window 30s closed at 45s: late
	_, _, counts := d.Want()
	want := map[string]int{
		WindowKey(a, 20_000): 1, WindowKey(a, 40_000): 1,
		WindowKey(b, 30_000): 1, WindowKey(b, 40_000): 1,
		WindowKey(other, 20_000): 1,
	}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
	if d.Late() != 2 || d.Orders() != 7 {
		t.Errorf("%d late of %d orders, want 2 of 7", d.Late(), d.Orders())
	}
}

func countRec(p int32, off int64, key string, start int64, n int) *kafka.Record {
	k := binary.BigEndian.AppendUint64([]byte(key), uint64(start))
	return &kafka.Record{Partition: p, Offset: off, Key: k, Value: fmt.Appendf(nil, `{"N":%d}`, n)}
}

func rowRec(key string, seq, amount int, name string) *kafka.Record {
	v := fmt.Appendf(nil, `{"SEQ":%d,"AMOUNT":%d}`, seq, amount)
	if name != "" {
		v = fmt.Appendf(nil, `{"SEQ":%d,"AMOUNT":%d,"NAME":%q}`, seq, amount, name)
	}
	return &kafka.Record{Key: []byte(key), Value: v}
}

// TestCheck classifies differences: rows missing, seen twice or unknown;
// count updates repeated; final counts above or below the oracle's.
func TestCheck(t *testing.T) {
	d := testDriver()
	// c00, c01 have customers; amounts 60 and 70 pass the filter.
	d.add("c00", 0, 60, 1_000)
	d.add("c00", 1, 70, 2_000)
	d.add("c01", 0, 10, 3_000)
	exact := Outputs{
		Filter: []*kafka.Record{rowRec("c00", 0, 60, ""), rowRec("c00", 1, 70, "")},
		Join:   []*kafka.Record{rowRec("c00", 0, 60, "name-c00"), rowRec("c00", 1, 70, "name-c00"), rowRec("c01", 0, 10, "name-c01")},
		Count:  []*kafka.Record{countRec(0, 0, "c00", 0, 1), countRec(0, 1, "c00", 0, 2), countRec(1, 0, "c01", 0, 1)},
	}
	for _, eos := range []bool{false, true} {
		if got := d.Check(exact, eos); got.String() != "0 missing, 0 duplicated, 0 wrong" {
			t.Errorf("exact outputs, exactly-once %v: %s %v", eos, got, got.Notes)
		}
	}
	again := Outputs{
		Filter: []*kafka.Record{rowRec("c00", 0, 60, ""), rowRec("c00", 0, 60, "")}, // one missing, one twice
		Join:   append(exact.Join, rowRec("c09", 0, 1, "x")),                        // one unknown
		// c00's window repeats an update and ends one over; c01's is
		// processed again from its start.
		Count: []*kafka.Record{countRec(0, 0, "c00", 0, 1), countRec(0, 1, "c00", 0, 2), countRec(0, 2, "c00", 0, 2),
			countRec(0, 3, "c00", 0, 3), countRec(1, 0, "c01", 0, 1), countRec(1, 1, "c01", 0, 1)},
	}
	// At least once: the over-count is a duplicate; exactly once: the
	// repeated updates are duplicates and the over-count is wrong.
	if got := d.Check(again, false); got.String() != "1 missing, 2 duplicated, 1 wrong" {
		t.Errorf("at least once: %s %v", got, got.Notes)
	}
	if got := d.Check(again, true); got.String() != "1 missing, 3 duplicated, 2 wrong" {
		t.Errorf("exactly once: %s %v", got, got.Notes)
	}
}
