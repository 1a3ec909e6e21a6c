package nexmark

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDeterministic(t *testing.T) {
	c := Config{Seed: 42, Pad: true}
	for _, n := range []int64{0, 1, 2, 3, 4, 49, 50, 12345, 999_999} {
		a := AppendJSON(nil, c.Generate(n))
		b := AppendJSON(nil, c.Generate(n))
		if !bytes.Equal(a, b) {
			t.Fatalf("event %d differs between two generations", n)
		}
		var v map[string]any
		if err := json.Unmarshal(a, &v); err != nil {
			t.Fatalf("event %d is not JSON: %v\n%s", n, err, a)
		}
	}
	if bytes.Equal(AppendJSON(nil, Config{Seed: 1}.Generate(10)), AppendJSON(nil, Config{Seed: 2}.Generate(10))) {
		t.Error("two seeds give the same bid")
	}
}

// TestShapes checks the proportions, the hot keys, ids and times over a
// run of events.
func TestShapes(t *testing.T) {
	const events = 500_000
	c := Config{Seed: 7, EventsPerSecond: 1000}
	var kinds [3]int
	hotAuction, hotBidder, hotSeller, auctions := 0, 0, 0, 0
	var lastPersonID, lastAuctionID int64 = firstID - 1, firstID - 1
	hotChannel := 0
	for n := int64(0); n < events; n++ {
		e := c.Generate(n)
		kinds[e.Kind]++
		if got, want := eventTime(e), c.BaseTime+defaultBaseTime+n; got != want {
			t.Fatalf("event %d at %d, want %d", n, got, want)
		}
		switch e.Kind {
		case PersonEvent:
			if e.Person.ID != lastPersonID+1 {
				t.Fatalf("person ids not consecutive at event %d", n)
			}
			lastPersonID = e.Person.ID
		case AuctionEvent:
			if e.Auction.ID != lastAuctionID+1 {
				t.Fatalf("auction ids not consecutive at event %d", n)
			}
			lastAuctionID = e.Auction.ID
			auctions++
			if e.Auction.Seller == firstID+(lastPersonID-firstID)/peopleInBlock*peopleInBlock {
				hotSeller++
			}
			if e.Auction.Expires <= e.Auction.DateTime || e.Auction.Category < 10 || e.Auction.Category > 14 {
				t.Fatalf("auction %+v", e.Auction)
			}
		case BidEvent:
			b := e.Bid
			if b.Auction == firstID+(lastAuctionID-firstID)/auctionsInBlock*auctionsInBlock {
				hotAuction++
			}
			if b.Bidder == firstID+(lastPersonID-firstID)/peopleInBlock*peopleInBlock+1 {
				hotBidder++
			}
			if b.Auction > lastAuctionID+leadIDs || b.Bidder > lastPersonID+leadIDs {
				t.Fatalf("bid %+v refers too far ahead", b)
			}
			if b.Price < 100 || b.Price > 100_000_000 {
				t.Fatalf("price %d", b.Price)
			}
			if b.Channel == "Google" || b.Channel == "Facebook" || b.Channel == "Baidu" || b.Channel == "Apple" {
				hotChannel++
			}
		}
	}
	if kinds != [3]int{events / 50, events / 50 * 3, events / 50 * 46} {
		t.Errorf("kinds %v", kinds)
	}
	bids := float64(kinds[BidEvent])
	near := func(name string, got, want float64) {
		if got < want-0.02 || got > want+0.02 {
			t.Errorf("%s: %.3f, want about %.3f", name, got, want)
		}
	}
	near("hot auction share", float64(hotAuction)/bids, 0.5)
	near("hot bidder share", float64(hotBidder)/bids, 0.75)
	near("hot seller share", float64(hotSeller)/float64(auctions), 0.75)
	near("hot channel share", float64(hotChannel)/bids, 0.5)
}

func eventTime(e Event) int64 {
	switch e.Kind {
	case PersonEvent:
		return e.Person.DateTime
	case AuctionEvent:
		return e.Auction.DateTime
	}
	return e.Bid.DateTime
}

func TestPaddedSizes(t *testing.T) {
	c := Config{Seed: 3, Pad: true}
	var size [3]int
	var count [3]int
	for n := int64(0); n < 50_000; n++ {
		e := c.Generate(n)
		size[e.Kind] += len(AppendJSON(nil, e))
		count[e.Kind]++
	}
	for k, min := range []int{avgPersonBytes, avgAuctionBytes, avgBidBytes} {
		if avg := size[k] / count[k]; avg < min {
			t.Errorf("kind %d averages %d bytes of JSON, want at least %d", k, avg, min)
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	c := Config{Seed: 1, Pad: true}
	var buf []byte
	for i := range b.N {
		buf = AppendJSON(buf[:0], c.Generate(int64(i)))
	}
	b.SetBytes(int64(len(buf)))
}
