package nexmark

import (
	"math"
	"strconv"
)

// Kind is an event's kind.
type Kind uint8

// The event kinds.
const (
	PersonEvent Kind = iota
	AuctionEvent
	BidEvent
)

// The benchmark's parameters, as Nexmark's defaults give them.
const (
	proportionTotal    = 50 // 1 person, 3 auctions, 46 bids
	firstID            = 1000
	activePeople       = 1000
	inFlightAuctions   = 100
	leadIDs            = 10
	hotAuctionRatio    = 2
	hotBidderRatio     = 4
	hotSellerRatio     = 4
	hotChannels        = 4
	channelNames       = 10_000
	firstCategory      = 10
	categories         = 5
	auctionsInBlock    = 100
	peopleInBlock      = 100
	defaultRate        = 10_000
	defaultBaseTime    = 1_700_000_000_000
	avgPersonBytes     = 200
	avgAuctionBytes    = 500
	avgBidBytes        = 100
	expiryAuctionCount = 100
)

// Config says which events to generate.
type Config struct {
	// Seed chooses the run: the same seed gives the same events.
	Seed uint64
	// EventsPerSecond is the event-time rate; 10,000 when zero.
	EventsPerSecond int64
	// BaseTime is the first event's time in epoch milliseconds;
	// 1,700,000,000,000 when zero.
	BaseTime int64
	// Pad fills each event's extra field so that events average
	// Nexmark's sizes before JSON encoding (person 200, auction 500, bid
	// 100 bytes); off, extra is empty.
	Pad bool
}

func (c Config) rate() int64 {
	if c.EventsPerSecond <= 0 {
		return defaultRate
	}
	return c.EventsPerSecond
}

func (c Config) base() int64 {
	if c.BaseTime == 0 {
		return defaultBaseTime
	}
	return c.BaseTime
}

// Person is a new user of the site.
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     int64
	Extra        string
}

// Auction is an item put on sale.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    int64
	Expires     int64
	Seller      int64
	Category    int64
	Extra       string
}

// Bid is a bid on an auction; Price is in cents.
type Bid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime int64
	Extra    string
}

// Event is one generated event: exactly one of its pointers is set, as
// Kind says.
type Event struct {
	Kind    Kind
	Person  *Person
	Auction *Auction
	Bid     *Bid
}

// KindOf returns the kind of event n.
func KindOf(n int64) Kind {
	switch m := n % proportionTotal; {
	case m == 0:
		return PersonEvent
	case m <= 3:
		return AuctionEvent
	}
	return BidEvent
}

// Time returns the event time of event n.
func (c Config) Time(n int64) int64 {
	return c.base() + n*1000/c.rate()
}

// lastPerson returns the index (from 0) of the latest person created at or
// before event n.
func lastPerson(n int64) int64 { return n / proportionTotal }

// lastAuction returns the index of the latest auction created at or
// before event n, -1 before the first.
func lastAuction(n int64) int64 {
	epoch, off := n/proportionTotal, n%proportionTotal
	return epoch*3 + min(off, 3) - 1
}

// rng is a SplitMix64 generator: small, fast and good enough to pick
// benchmark data.
type rng struct{ s uint64 }

func newRNG(seed uint64, n int64) *rng {
	r := &rng{s: seed ^ (uint64(n)+1)*0x9e3779b97f4a7c15}
	r.next()
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n).
func (r *rng) intn(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return int64(r.next() % uint64(n))
}

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// price returns a price in cents, log-uniform from $1 to $1,000,000.
func (r *rng) price() int64 { return int64(math.Round(math.Pow(10, r.float()*6) * 100)) }

// str returns a random lower-case string of n letters.
func (r *rng) str(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.intn(26))
	}
	return string(b)
}

// pad returns extra filling up to want bytes beside have, or "" when off.
func (r *rng) pad(on bool, have, want int) string {
	if !on || have >= want {
		return ""
	}
	return r.str(want - have)
}

var (
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	states     = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	cities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	hotNames   = []string{"Google", "Facebook", "Baidu", "Apple"}
	hotURLs    = []string{
		"https://www.nexmark.com/google/item.htm?query=1",
		"https://www.nexmark.com/facebook/item.htm?query=1",
		"https://www.nexmark.com/baidu/item.htm?query=1",
		"https://www.nexmark.com/apple/item.htm?query=1",
	}
)

// Generate returns event n.
func (c Config) Generate(n int64) Event {
	r := newRNG(c.Seed, n)
	t := c.Time(n)
	switch KindOf(n) {
	case PersonEvent:
		p := &Person{
			ID:           firstID + lastPerson(n),
			Name:         firstNames[r.intn(int64(len(firstNames)))] + " " + lastNames[r.intn(int64(len(lastNames)))],
			EmailAddress: r.str(7) + "@" + r.str(5) + ".com",
			CreditCard:   cardNumber(r),
			City:         cities[r.intn(int64(len(cities)))],
			State:        states[r.intn(int64(len(states)))],
			DateTime:     t,
		}
		p.Extra = r.pad(c.Pad, len(p.Name)+len(p.EmailAddress)+len(p.CreditCard)+len(p.City)+len(p.State)+16, avgPersonBytes)
		return Event{Kind: PersonEvent, Person: p}
	case AuctionEvent:
		a := &Auction{
			ID:          firstID + lastAuction(n),
			ItemName:    r.str(int(20 + r.intn(5))),
			Description: r.str(int(100 + r.intn(25))),
			InitialBid:  r.price(),
			DateTime:    t,
			Category:    firstCategory + r.intn(categories),
		}
		a.Reserve = a.InitialBid + r.price()
		// About expiryAuctionCount auctions are open at once: one ends
		// within twice the time that many more take to be created.
		horizon := expiryAuctionCount * proportionTotal / 3 * 1000 / c.rate()
		a.Expires = t + 1 + r.intn(2*max(horizon, 1))
		if r.intn(hotSellerRatio) > 0 {
			a.Seller = firstID + lastPerson(n)/peopleInBlock*peopleInBlock
		} else {
			a.Seller = firstID + nextPerson(r, lastPerson(n))
		}
		a.Extra = r.pad(c.Pad, len(a.ItemName)+len(a.Description)+5*8, avgAuctionBytes)
		return Event{Kind: AuctionEvent, Auction: a}
	}
	b := &Bid{DateTime: t, Price: r.price()}
	last := lastAuction(n)
	if r.intn(hotAuctionRatio) > 0 {
		b.Auction = firstID + last/auctionsInBlock*auctionsInBlock
	} else {
		lo := max(0, last-inFlightAuctions)
		b.Auction = firstID + lo + r.intn(last-lo+1+leadIDs)
	}
	if r.intn(hotBidderRatio) > 0 {
		b.Bidder = firstID + lastPerson(n)/peopleInBlock*peopleInBlock + 1
	} else {
		b.Bidder = firstID + nextPerson(r, lastPerson(n))
	}
	if ch := r.intn(hotChannels * 2); ch < hotChannels {
		b.Channel, b.URL = hotNames[ch], hotURLs[ch]
	} else {
		id := r.intn(channelNames)
		b.Channel = "channel-" + strconv.FormatInt(id, 10)
		b.URL = "https://www.nexmark.com/" + r.str(5) + "/" + r.str(5) + "/" + r.str(5) + "/item.htm?query=1"
		if r.intn(10) > 0 {
			b.URL += "&channel_id=" + strconv.FormatInt(id, 10)
		}
	}
	b.Extra = r.pad(c.Pad, len(b.Channel)+len(b.URL)+4*8, avgBidBytes)
	return Event{Kind: BidEvent, Bid: b}
}

// nextPerson picks one of the activePeople most recent people, or one of
// the leadIDs about to be created.
func nextPerson(r *rng, last int64) int64 {
	lo := max(0, last-activePeople+1)
	return lo + r.intn(last-lo+1+leadIDs)
}

func cardNumber(r *rng) string {
	b := make([]byte, 0, 19)
	for i := 0; i < 4; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, 1000+r.intn(9000), 10)
	}
	return string(b)
}
