package nexmark

import (
	"encoding/binary"
	"strconv"

	"github.com/sluice-sql/sluice/format"
)

// The topics events are written to, one per kind.
const (
	PersonTopic  = "nexmark-person"
	AuctionTopic = "nexmark-auction"
	BidTopic     = "nexmark-bid"
)

// Topic returns the topic of an event of kind k.
func Topic(k Kind) string {
	switch k {
	case PersonEvent:
		return PersonTopic
	case AuctionEvent:
		return AuctionTopic
	}
	return BidTopic
}

// AppendKey appends e's record key: a person's and an auction's id, a
// bid's auction, as a Kafka BIGINT (8 bytes, big-endian).
func AppendKey(dst []byte, e Event) []byte {
	var k int64
	switch e.Kind {
	case PersonEvent:
		k = e.Person.ID
	case AuctionEvent:
		k = e.Auction.ID
	default:
		k = e.Bid.Auction
	}
	return binary.BigEndian.AppendUint64(dst, uint64(k))
}

// AppendJSON appends e's record value as a JSON object with Nexmark's
// field names (id, name, emailAddress, ...; times in epoch milliseconds).
func AppendJSON(dst []byte, e Event) []byte {
	w := jsonWriter{b: dst}
	w.b = append(w.b, '{')
	switch e.Kind {
	case PersonEvent:
		p := e.Person
		w.int("id", p.ID)
		w.str("name", p.Name)
		w.str("emailAddress", p.EmailAddress)
		w.str("creditCard", p.CreditCard)
		w.str("city", p.City)
		w.str("state", p.State)
		w.int("dateTime", p.DateTime)
		w.str("extra", p.Extra)
	case AuctionEvent:
		a := e.Auction
		w.int("id", a.ID)
		w.str("itemName", a.ItemName)
		w.str("description", a.Description)
		w.int("initialBid", a.InitialBid)
		w.int("reserve", a.Reserve)
		w.int("dateTime", a.DateTime)
		w.int("expires", a.Expires)
		w.int("seller", a.Seller)
		w.int("category", a.Category)
		w.str("extra", a.Extra)
	default:
		b := e.Bid
		w.int("auction", b.Auction)
		w.int("bidder", b.Bidder)
		w.int("price", b.Price)
		w.str("channel", b.Channel)
		w.str("url", b.URL)
		w.int("dateTime", b.DateTime)
		w.str("extra", b.Extra)
	}
	return append(w.b, '}')
}

type jsonWriter struct {
	b     []byte
	comma bool
}

func (w *jsonWriter) name(n string) {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = true
	w.b = append(w.b, '"')
	w.b = append(w.b, n...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) int(n string, v int64) {
	w.name(n)
	w.b = strconv.AppendInt(w.b, v, 10)
}

// str writes a string.
func (w *jsonWriter) str(n, v string) {
	w.name(n)
	w.b = format.AppendJSONString(w.b, v)
}
