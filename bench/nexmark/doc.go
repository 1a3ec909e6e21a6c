// Package nexmark generates the events of the Nexmark benchmark (people,
// auctions and bids of an online auction site) deterministically from a
// seed, and holds the benchmark's queries in Sluice's SQL.
//
// Event n of a run is a Person when n mod 50 is 0, an Auction when it is 1
// to 3 and a Bid otherwise (proportions 1 : 3 : 46). Its event time is
// BaseTime + n × 1000 / EventsPerSecond milliseconds, so event time
// advances at a fixed rate however fast the events are written, and runs
// of any engine see the same windows. Every random choice of event n
// comes from a generator seeded by (Seed, n) alone: any range of events
// can be produced on its own, in any order, and gives the same bytes.
//
// The hot-key shapes are Nexmark's: half of the bids go to the first
// auction of the latest block of 100 auctions, three quarters come from
// the second person of the latest block of 100 people, three quarters of
// the auctions are sold by the first person of that block; other bids pick
// among the 100 most recent auctions and the 1,000 most recent people
// (plus 10 not created yet, as Nexmark does). Person and auction ids start
// at 1000. Bidder ids are person ids (the reference generator adds 1000 a
// second time to bidder ids; this one does not, so bids join people).
package nexmark
