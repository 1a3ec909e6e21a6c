package nexmark

// Sources declares the three event topics as streams, and the people and
// auctions also as tables, for the stream-table joins.
const Sources = `
CREATE STREAM person (id BIGINT KEY, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR,
    city VARCHAR, state VARCHAR, dateTime BIGINT, extra VARCHAR)
  WITH (KAFKA_TOPIC='nexmark-person', KEY_FORMAT='KAFKA', VALUE_FORMAT='JSON', TIMESTAMP='dateTime');
CREATE STREAM auction (id BIGINT KEY, itemName VARCHAR, description VARCHAR, initialBid BIGINT,
    reserve BIGINT, dateTime BIGINT, expires BIGINT, seller BIGINT, category BIGINT, extra VARCHAR)
  WITH (KAFKA_TOPIC='nexmark-auction', KEY_FORMAT='KAFKA', VALUE_FORMAT='JSON', TIMESTAMP='dateTime');
CREATE STREAM bid (auction BIGINT KEY, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
    dateTime BIGINT, extra VARCHAR)
  WITH (KAFKA_TOPIC='nexmark-bid', KEY_FORMAT='KAFKA', VALUE_FORMAT='JSON', TIMESTAMP='dateTime');
CREATE TABLE person_t (id BIGINT PRIMARY KEY, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR,
    city VARCHAR, state VARCHAR, dateTime BIGINT, extra VARCHAR)
  WITH (KAFKA_TOPIC='nexmark-person', KEY_FORMAT='KAFKA', VALUE_FORMAT='JSON', TIMESTAMP='dateTime');
CREATE TABLE auction_t (id BIGINT PRIMARY KEY, itemName VARCHAR, description VARCHAR, initialBid BIGINT,
    reserve BIGINT, dateTime BIGINT, expires BIGINT, seller BIGINT, category BIGINT, extra VARCHAR)
  WITH (KAFKA_TOPIC='nexmark-auction', KEY_FORMAT='KAFKA', VALUE_FORMAT='JSON', TIMESTAMP='dateTime');
`

// Query is one Nexmark query in Sluice's SQL.
type Query struct {
	// Name is q0, q1, ...; the query writes the topic of the same name in
	// upper case.
	Name string
	// Updating says the output is a table's changelog: it is compared by
	// the last value of each key (and window), not as a multiset of rows.
	Updating bool
	// Windowed says how the output keys carry windows: TimeWindows,
	// SessionWindows or "" for none.
	Windowed string
	// Inputs are the topics it reads.
	Inputs []string
	// What says what it computes, and where it departs from Nexmark's.
	What string
	SQL  string
}

// The kinds of windowed output keys.
const (
	TimeWindows    = "time"
	SessionWindows = "session"
)

// Queries are the Nexmark queries Sluice's SQL expresses, in order.
var Queries = []Query{
	{Name: "q0", Inputs: []string{BidTopic}, What: "every bid, unchanged (pass-through)",
		SQL: `CREATE STREAM q0 AS SELECT auction, bidder, price, dateTime, extra FROM bid;`},
	{Name: "q1", Inputs: []string{BidTopic}, What: "every bid with its price in euros",
		SQL: `CREATE STREAM q1 AS SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM bid;`},
	{Name: "q2", Inputs: []string{BidTopic}, What: "the bids of every 123rd auction",
		SQL: `CREATE STREAM q2 AS SELECT auction, price FROM bid WHERE auction % 123 = 0;`},
	{Name: "q3", Inputs: []string{AuctionTopic, PersonTopic}, What: "auctions of category 10 by sellers in OR, ID or CA, with the seller (stream-table join)",
		SQL: `CREATE STREAM q3 AS SELECT a.seller, p.name, p.city, p.state, a.id AS auction_id
  FROM auction a JOIN person_t p ON a.seller = p.id
  WHERE a.category = 10 AND (p.state = 'OR' OR p.state = 'ID' OR p.state = 'CA');`},
	{Name: "q5", Updating: true, Windowed: TimeWindows, Inputs: []string{BidTopic}, What: "bids per auction in 10-second windows sliding by 2 seconds (the hopping counts of q5, without the top-1 per window)",
		SQL: `CREATE TABLE q5 AS SELECT auction, COUNT(*) AS num FROM bid
  WINDOW HOPPING (SIZE 10 SECONDS, ADVANCE BY 2 SECONDS) GROUP BY auction;`},
	{Name: "q7", Updating: true, Windowed: TimeWindows, Inputs: []string{BidTopic}, What: "the highest price per auction in 10-second tumbling windows",
		SQL: `CREATE TABLE q7 AS SELECT auction, MAX(price) AS maxprice FROM bid
  WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY auction;`},
	{Name: "q8", Inputs: []string{PersonTopic, AuctionTopic}, What: "people who created an auction within 10 seconds of registering (stream-stream join)",
		SQL: `CREATE STREAM q8 AS SELECT p.id, p.name, a.reserve
  FROM person p JOIN auction a WITHIN 10 SECONDS ON p.id = a.seller;`},
	{Name: "q11", Updating: true, Windowed: SessionWindows, Inputs: []string{BidTopic}, What: "bids per bidder in sessions closed by 10 seconds without a bid",
		SQL: `CREATE TABLE q11 AS SELECT bidder, COUNT(*) AS bid_count FROM bid
  WINDOW SESSION (10 SECONDS) GROUP BY bidder;`},
	{Name: "q12", Updating: true, Windowed: TimeWindows, Inputs: []string{BidTopic}, What: "bids per bidder in 10-second tumbling windows (of event time; Nexmark's uses processing time)",
		SQL: `CREATE TABLE q12 AS SELECT bidder, COUNT(*) AS bid_count FROM bid
  WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY bidder;`},
	{Name: "q14", Inputs: []string{BidTopic}, What: "bids in a price range, labelled by time of day, with the count of 'c' in extra",
		SQL: `CREATE STREAM q14 AS SELECT auction, bidder, 0.908 * price AS price,
  CASE
    WHEN CAST(TIMESTAMPTOSTRING(dateTime, 'HH', 'UTC') AS INT) >= 8 AND CAST(TIMESTAMPTOSTRING(dateTime, 'HH', 'UTC') AS INT) <= 18 THEN 'dayTime'
    WHEN CAST(TIMESTAMPTOSTRING(dateTime, 'HH', 'UTC') AS INT) <= 6 OR CAST(TIMESTAMPTOSTRING(dateTime, 'HH', 'UTC') AS INT) >= 20 THEN 'nightTime'
    ELSE 'otherTime'
  END AS bidTimeType,
  dateTime, extra, LEN(extra) - LEN(REPLACE(extra, 'c', '')) AS c_counts
  FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;`},
	{Name: "q17", Updating: true, Inputs: []string{BidTopic}, What: "per auction and day: bids by price tier, min, max, average and sum of prices",
		SQL: `CREATE TABLE q17 WITH (KEY_FORMAT='JSON') AS SELECT auction, TIMESTAMPTOSTRING(dateTime, 'yyyy-MM-dd', 'UTC') AS day,
  COUNT(*) AS total_bids,
  SUM(CASE WHEN price < 10000 THEN 1 ELSE 0 END) AS rank1_bids,
  SUM(CASE WHEN price >= 10000 AND price < 1000000 THEN 1 ELSE 0 END) AS rank2_bids,
  SUM(CASE WHEN price >= 1000000 THEN 1 ELSE 0 END) AS rank3_bids,
  MIN(price) AS min_price, MAX(price) AS max_price, AVG(price) AS avg_price, SUM(price) AS sum_price
  FROM bid GROUP BY auction, TIMESTAMPTOSTRING(dateTime, 'yyyy-MM-dd', 'UTC');`},
	{Name: "q18", Updating: true, Inputs: []string{BidTopic}, What: "the latest bid of every bidder on every auction",
		SQL: `CREATE TABLE q18 WITH (KEY_FORMAT='JSON') AS SELECT bidder, auction, LATEST_BY_OFFSET(price) AS price,
  LATEST_BY_OFFSET(channel) AS channel, LATEST_BY_OFFSET(url) AS url, LATEST_BY_OFFSET(dateTime) AS bid_time
  FROM bid GROUP BY bidder, auction;`},
	{Name: "q19", Updating: true, Inputs: []string{BidTopic}, What: "the 10 highest prices bid on every auction",
		SQL: `CREATE TABLE q19 AS SELECT auction, TOPK(price, 10) AS top_prices FROM bid GROUP BY auction;`},
	{Name: "q20", Inputs: []string{BidTopic, AuctionTopic}, What: "bids with their auction, for auctions of category 10 (stream-table join)",
		SQL: `CREATE STREAM q20 AS SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.dateTime,
  a.itemName, a.description, a.initialBid, a.reserve, a.expires, a.seller, a.category
  FROM bid b JOIN auction_t a ON b.auction = a.id WHERE a.category = 10;`},
	{Name: "q21", Inputs: []string{BidTopic}, What: "bids with a channel id: a fixed one for the four big channels, else taken from the URL",
		SQL: `CREATE STREAM q21 AS SELECT auction, bidder, price, channel,
  CASE
    WHEN LCASE(channel) = 'apple' THEN '0'
    WHEN LCASE(channel) = 'google' THEN '1'
    WHEN LCASE(channel) = 'facebook' THEN '2'
    WHEN LCASE(channel) = 'baidu' THEN '3'
    ELSE REGEXP_EXTRACT('(&|^)channel_id=([^&]*)', url, 2)
  END AS channel_id
  FROM bid WHERE REGEXP_EXTRACT('(&|^)channel_id=([^&]*)', url, 2) IS NOT NULL
    OR LCASE(channel) IN ('apple', 'google', 'facebook', 'baidu');`},
	{Name: "q22", Inputs: []string{BidTopic}, What: "bids with the 3rd to 5th parts of their URL",
		SQL: `CREATE STREAM q22 AS SELECT auction, bidder, price, channel,
  SPLIT(url, '/')[4] AS dir1, SPLIT(url, '/')[5] AS dir2, SPLIT(url, '/')[6] AS dir3
  FROM bid;`},
}
