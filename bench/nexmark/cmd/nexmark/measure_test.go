package main

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

func TestPercentile(t *testing.T) {
	tens := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for _, c := range []struct {
		p    float64
		want int64
	}{
		// Nearest rank: the value at rank ceil(p/100 n), no interpolation.
		{50, 50}, {90, 90}, {91, 100}, {99, 100}, {100, 100}, {1, 10}, {10, 10}, {11, 20},
	} {
		if got := percentile(tens, c.p); got != c.want {
			t.Errorf("percentile(tens, %v) = %d, want %d", c.p, got, c.want)
		}
	}
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(i + 1)
	}
	if got := percentile(hundred, 99); got != 99 {
		t.Errorf("p99 of 1..100 = %d, want 99", got)
	}
	if got := percentile([]int64{7}, 99); got != 7 {
		t.Errorf("p99 of one value = %d, want 7", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %d, want 0", got)
	}
}

func TestSummarize(t *testing.T) {
	// Twenty rows whose latency grows with their cause, given out of
	// order: the tenths are taken in the order of the causes.
	var ms []measured
	for i := 19; i >= 0; i-- {
		ms = append(ms, measured{auction: 1000, cause: int64(1000 + i), latency: int64(10 * (i + 1))})
	}
	s := summarize(ms)
	if s.rows != 20 || s.p50 != 100 || s.p99 != 200 || s.max != 200 {
		t.Fatalf("summarize = %+v, want 20 rows, p50 100, p99 200, max 200", s)
	}
	// The first tenth is causes 1000 and 1001 (latencies 10, 20), the last
	// 1018 and 1019 (190, 200).
	if s.firstTenth != 10 || s.lastTenth != 190 {
		t.Fatalf("tenths = %d, %d, want 10, 190", s.firstTenth, s.lastTenth)
	}
}

func TestKeptUp(t *testing.T) {
	for _, c := range []struct {
		name   string
		s      latencyStats
		endLag int64
		want   bool
	}{
		{"steady and low", latencyStats{firstTenth: 20, lastTenth: 25}, 30, true},
		// Noise that doubles a small latency is not falling behind.
		{"noisy but under the floor", latencyStats{firstTenth: 20, lastTenth: 400}, 900, true},
		// Steady but high (a watermark, a linger) is keeping up.
		{"steady and high", latencyStats{firstTenth: 1500, lastTenth: 1600}, 1700, true},
		{"growing", latencyStats{firstTenth: 300, lastTenth: 5000}, 6000, false},
		// The end lag alone tells a backlog built at the very end.
		{"backlog at the end", latencyStats{firstTenth: 30, lastTenth: 40}, 2500, false},
	} {
		if got := keptUp(c.s, c.endLag); got != c.want {
			t.Errorf("%s: keptUp = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMeasureBids(t *testing.T) {
	in := newInputs(1)
	a := bidKey{auction: 1001, bidder: 7, price: 500, dateTime: 1_000}
	b := bidKey{auction: 1002, bidder: 8, price: 600, dateTime: 1_001}
	// The same bid twice: its rows are paired earliest first.
	in.addBid(0, a, 100)
	in.addBid(0, a, 200)
	in.addBid(0, b, 110)
	in.addAuction(1001, 50)
	// b's auction is appended after b: a join's row needs both.
	in.addAuction(1002, 300)
	row := func(k bidKey, appended int64) outRow {
		return outRow{appended: appended, auction: k.auction, bidder: k.bidder, price: k.price, dateTime: k.dateTime}
	}
	rows := []outRow{row(a, 150), row(a, 260), row(a, 270), row(b, 320),
		// A row of no bid, and a probe's second row (not counted).
		row(bidKey{1001, 7, 501, 1_000}, 300), row(bidKey{3, 0, 0, 5}, 300)}

	got, tl := measure("q0", perPartition, 0, in, rows)
	want := []int64{50, 60, 210}
	if len(got) != len(want) {
		t.Fatalf("q0: %d rows measured, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].latency != w {
			t.Errorf("q0: row %d latency %d, want %d", i, got[i].latency, w)
		}
	}
	if tl.unmatched != 2 {
		t.Errorf("q0: %d unmatched, want 2 (a's third row, the row of no bid)", tl.unmatched)
	}

	got, _ = measure("q20", perPartition, 0, in, rows)
	// q20: a's rows from their bids (the auction came first), b's from its
	// auction, appended last.
	want = []int64{50, 60, 20}
	if len(got) != len(want) {
		t.Fatalf("q20: %d rows measured, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].latency != w {
			t.Errorf("q20: row %d latency %d, want %d", i, got[i].latency, w)
		}
	}

	// q0's missing bids: a bid c without a row, appended at 400, and a
	// probe's bid without one (not counted).
	in.addBid(0, bidKey{auction: 1003, bidder: 9, price: 700, dateTime: 1_002}, 400)
	in.addBid(0, bidKey{auction: 3, dateTime: 1_003}, 410)
	if n := missing("q0", perPartition, 0, in, rows, firstAuctionID, 0, 1000); n != 1 {
		t.Errorf("q0 missing = %d, want 1", n)
	}
	if n := missing("q0", perPartition, 0, in, rows, firstAuctionID, 0, 300); n != 0 {
		t.Errorf("q0 missing before 300 = %d, want 0 (c came later)", n)
	}
}

// auctionIn returns an auction id from 1000 whose key is in partition p
// of n.
func auctionIn(t *testing.T, p, n int32) int64 {
	for id := int64(1000); id < 100_000; id++ {
		if kafka.KeyPartition(binary.BigEndian.AppendUint64(nil, uint64(id)), n) == p {
			return id
		}
	}
	t.Fatalf("no auction in partition %d", p)
	return 0
}

func TestClosing(t *testing.T) {
	in := newInputs(2)
	a0, a1 := auctionIn(t, 0, 2), auctionIn(t, 1, 2)
	// Partition 0: a late record (9_999 after 10_005) does not move stream
	// time back.
	in.addBid(0, bidKey{a0, 1, 10, 9_990}, 1000)
	in.addBid(0, bidKey{a0, 1, 30, 10_005}, 1010)
	in.addBid(0, bidKey{a0, 1, 20, 9_999}, 1020)
	in.addBid(0, bidKey{a0, 1, 40, 20_000}, 1100)
	// Partition 1 reaches 10_000 after partition 0, 20_000 before it.
	in.addBid(1, bidKey{a1, 1, 50, 9_000}, 1005)
	in.addBid(1, bidKey{a1, 1, 60, 10_000}, 1050)
	in.addBid(1, bidKey{a1, 1, 70, 20_000}, 1060)

	for _, c := range []struct {
		rule  closeRule
		part  int32
		at    int64
		want  int64
		close bool
	}{
		{perPartition, 0, 10_000, 1010, true},
		{perPartition, 0, 10_005, 1010, true},
		{perPartition, 0, 10_006, 1100, true},
		{perPartition, 1, 10_000, 1050, true},
		{perPartition, 1, 10_001, 1060, true},
		{perPartition, 1, 20_001, 0, false},
		// The watermark reaches a time once the last partition does.
		{watermark, 0, 10_000, 1050, true},
		{watermark, 1, 10_000, 1050, true},
		{watermark, 1, 20_000, 1100, true},
		{watermark, 0, 20_001, 0, false},
	} {
		got, ok := in.closing(c.rule, c.part, c.at)
		if got != c.want || ok != c.close {
			t.Errorf("closing(%v, %d, %d) = %d, %v, want %d, %v", c.rule, c.part, c.at, got, ok, c.want, c.close)
		}
	}

	rows := []outRow{
		// [0, 10_000) of a0: the highest price is the late 20, not 30,
		// which went to [10_000, 20_000).
		{appended: 1030, auction: a0, start: 0, maxPrice: 20},
		{appended: 1040, auction: a0, start: 0, maxPrice: 20},
		{appended: 1070, auction: a1, start: 0, maxPrice: 50},
		// [20_000, 30_000) of a1 never closed on partition 1.
		{appended: 1200, auction: a1, start: 20_000, maxPrice: 70},
		// [10_000, 20_000) of a0 with a wrong maximum (its bids say 30).
		{appended: 1150, auction: a0, start: 10_000, maxPrice: 31},
	}
	got, tl := measure("q7", perPartition, 0, in, rows)
	if len(got) != 3 || got[0].latency != 20 || got[1].latency != 20 || got[2].latency != 50 {
		t.Fatalf("q7 per partition: %+v, want latencies 20 (1030-1010), 20 (1070-1050), 50 (1150-1100)", got)
	}
	if tl.duplicates != 1 || tl.unclosed != 1 || tl.notFinal != 1 {
		t.Fatalf("q7 tally %+v, want a duplicate, an unclosed window and one not final", tl)
	}
	got, _ = measure("q7", watermark, 0, in, rows[:3])
	if len(got) != 2 || got[0].latency != -20 || got[1].latency != 20 {
		t.Fatalf("q7 watermark: %+v, want latencies -20 (1030-1050) and 20", got)
	}
	// With a grace of 6 ms a0's first window closes at 20_000 only.
	got, _ = measure("q7", perPartition, 6, in, rows[:1])
	if len(got) != 1 || got[0].latency != 1030-1100 {
		t.Fatalf("q7 with grace: %+v, want latency -70", got)
	}
	// Without the first two rows, a0's [0, 10_000), closed at 1010, is
	// missing, and so is a1's [10_000, 20_000), closed at 1060; a0's
	// [20_000, 30_000) is not, no event having closed it.
	if n := missing("q7", perPartition, 0, in, rows[2:], firstAuctionID, 0, 2000); n != 2 {
		t.Errorf("q7 missing = %d, want 2", n)
	}
	if n := missing("q7", perPartition, 0, in, rows[2:], firstAuctionID, 0, 1050); n != 1 {
		t.Errorf("q7 missing of the windows closed by 1050 = %d, want 1", n)
	}
}

func TestParseOutput(t *testing.T) {
	key := binary.BigEndian.AppendUint64(nil, 1234)
	windowed := binary.BigEndian.AppendUint64(append([]byte(nil), key...), 1_700_000_010_000)
	ts := time.UnixMilli(1_700_000_020_123)
	for _, c := range []struct {
		query    string
		jsonKeys bool
		key      []byte
		value    string
		want     outRow
	}{
		{"q0", false, key, `{"BIDDER":5,"PRICE":6,"DATETIME":7,"EXTRA":"x"}`, outRow{auction: 1234, bidder: 5, price: 6, dateTime: 7}},
		{"q20", false, key, `{"BIDDER":5,"PRICE":6,"B_DATETIME":8,"CATEGORY":10}`, outRow{auction: 1234, bidder: 5, price: 6, dateTime: 8}},
		{"q7", false, windowed, `{"MAXPRICE":9}`, outRow{auction: 1234, start: 1_700_000_010_000, maxPrice: 9}},
		{"q7", true, []byte(`{"key":1234,"window_start":1700000010000}`), `{"MAXPRICE":9}`, outRow{auction: 1234, start: 1_700_000_010_000, maxPrice: 9}},
	} {
		got, err := parseOutput(c.query, c.jsonKeys, &kafka.Record{Key: c.key, Value: []byte(c.value), Timestamp: ts})
		c.want.appended = ts.UnixMilli()
		if err != nil || got != c.want {
			t.Errorf("%s %s: %+v, %v, want %+v", c.query, c.value, got, err, c.want)
		}
	}
	if _, err := parseOutput("q0", false, &kafka.Record{Key: key, Value: []byte(`{"PRICE":6}`)}); err == nil {
		t.Error("q0 without BIDDER: no error")
	}
	if _, err := parseOutput("q7", false, &kafka.Record{Key: key, Value: []byte(`{"MAXPRICE":1}`)}); err == nil {
		t.Error("q7 with an unwindowed key: no error")
	}
}

func TestProbes(t *testing.T) {
	ids, err := probeAuctions(4)
	if err != nil {
		t.Fatal(err)
	}
	for p, id := range ids {
		if id <= 0 || id >= firstAuctionID || kafka.KeyPartition(binary.BigEndian.AppendUint64(nil, uint64(id)), 4) != int32(p) {
			t.Errorf("probe auction %d for partition %d", id, p)
		}
	}
	// q7's probe: its closing bid takes stream time to the end of the
	// first bid's window plus the grace, exactly.
	const at = 1_700_000_000_000
	batches := probeEvents("q7", ids, at, 250)
	if len(batches) != 3 {
		t.Fatalf("%d batches", len(batches))
	}
	first, closer := batches[1][0].Bid.DateTime, batches[2][0].Bid.DateTime
	if windowStart(first) != probeRow("q7", at) || closer != probeRow("q7", at)+windowMillis+250 {
		t.Errorf("q7 probe bids at %d and %d", first, closer)
	}
	if b := probeEvents("q0", ids, at, 250); len(b) != 2 || b[1][0].Bid.DateTime != probeRow("q0", at) {
		t.Errorf("q0 probe: %+v", b)
	}
}
