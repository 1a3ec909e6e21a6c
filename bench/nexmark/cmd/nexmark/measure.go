package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/sluice-sql/sluice/bench/nexmark"
	"github.com/sluice-sql/sluice/kafka"
)

// The latency mode's measurement: every output row paired with the input
// append that caused it, both times the broker's (LogAppendTime). The
// functions here read no clock and no broker.

// windowMillis is the size of q7's tumbling windows.
const windowMillis = 10_000

// bidKey is what an output row of q0 or q20 carries of its bid, and
// identifies it among the run's bids.
type bidKey struct{ auction, bidder, price, dateTime int64 }

// winKey is a window of q7: its auction and its start.
type winKey struct{ auction, start int64 }

// partLog is one input partition's records in offset order: the stream
// time after each (the largest event time read so far) and the time the
// broker appended it.
type partLog struct{ stream, appended []int64 }

func (l *partLog) add(eventTime, appended int64) {
	if n := len(l.stream); n > 0 && l.stream[n-1] > eventTime {
		eventTime = l.stream[n-1]
	}
	l.stream = append(l.stream, eventTime)
	l.appended = append(l.appended, appended)
}

// reach returns the append time of the first record that took the
// partition's stream time to t or past it; false if none did.
func (l *partLog) reach(t int64) (int64, bool) {
	i := sort.Search(len(l.stream), func(i int) bool { return l.stream[i] >= t })
	if i == len(l.stream) {
		return 0, false
	}
	return l.appended[i], true
}

// closeRule is how a system decides that event time has passed a point.
type closeRule int

const (
	// perPartition: each task keeps a stream time, the largest event
	// time of its input partition (Sluice, Kafka Streams; q7 reads one
	// topic keyed by auction, so a task is one bid partition).
	perPartition closeRule = iota
	// watermark: one source reader reads every partition and its
	// watermark is the least of theirs (Flink at parallelism 1).
	watermark
)

// inputs are the run's input records as the broker appended them.
type inputs struct {
	// bids holds the append times of the bids with given fields, in
	// offset order; auctions the append time of each auction id (the
	// first, should one come twice).
	bids     map[bidKey][]int64
	auctions map[int64]int64
	// parts are the bid partitions, for the windows' closing; maxPrice
	// is the highest price bid in each window, what its final row must
	// say.
	parts    []partLog
	maxPrice map[winKey]int64
}

func newInputs(partitions int32) *inputs {
	return &inputs{
		bids:     map[bidKey][]int64{},
		auctions: map[int64]int64{},
		parts:    make([]partLog, partitions),
		maxPrice: map[winKey]int64{},
	}
}

// addBid adds a bid read from partition part, appended at appended.
func (in *inputs) addBid(part int32, k bidKey, appended int64) {
	in.bids[k] = append(in.bids[k], appended)
	if int(part) < len(in.parts) {
		in.parts[part].add(k.dateTime, appended)
	}
	w := winKey{k.auction, windowStart(k.dateTime)}
	if m, ok := in.maxPrice[w]; !ok || k.price > m {
		in.maxPrice[w] = k.price
	}
}

// addAuction adds an auction appended at appended.
func (in *inputs) addAuction(id, appended int64) {
	if _, ok := in.auctions[id]; !ok {
		in.auctions[id] = appended
	}
}

func windowStart(t int64) int64 {
	return t - ((t%windowMillis)+windowMillis)%windowMillis
}

// closing returns the append time of the event that closes, under rule,
// a window of the auction in bid partition part whose end plus grace is
// t: the first record of that partition to take its stream time to t,
// or, for a watermark, the last of every partition's first such record
// (the watermark, the least of the partitions' stream times, reaches t
// when the last of them does). False when no record closes it.
func (in *inputs) closing(rule closeRule, part int32, t int64) (int64, bool) {
	if rule == perPartition {
		if int(part) >= len(in.parts) {
			return 0, false
		}
		return in.parts[part].reach(t)
	}
	var last int64
	for i := range in.parts {
		at, ok := in.parts[i].reach(t)
		if !ok {
			return 0, false
		}
		last = max(last, at)
	}
	return last, len(in.parts) > 0
}

// outRow is an output record as the latency mode reads it.
type outRow struct {
	appended int64
	auction  int64
	// q0 and q20: the bid's fields.
	bidder, price, dateTime int64
	// q7: the window's start and its highest price.
	start, maxPrice int64
	tombstone       bool
}

// eventTime is the row's event time: its bid's, or its window's start.
func (o outRow) eventTime(query string) int64 {
	if query == "q7" {
		return o.start
	}
	return o.dateTime
}

// parseOutput reads an output record of query (q0, q7 or q20) as the
// systems write it: a BIGINT key (8 bytes), for q7 followed by the
// window's 8-byte start or, with jsonKeys, a JSON key {key,
// window_start}; a JSON value.
func parseOutput(query string, jsonKeys bool, r *kafka.Record) (outRow, error) {
	o := outRow{appended: r.Timestamp.UnixMilli()}
	k := r.Key
	switch {
	case query == "q7" && jsonKeys:
		var key struct {
			Key         *int64 `json:"key"`
			WindowStart *int64 `json:"window_start"`
		}
		if err := json.Unmarshal(k, &key); err != nil || key.Key == nil || key.WindowStart == nil {
			return o, fmt.Errorf("%s: key %q is not a JSON window key", query, k)
		}
		o.auction, o.start = *key.Key, *key.WindowStart
	case query == "q7":
		if len(k) != 16 {
			return o, fmt.Errorf("%s: windowed key of %d bytes", query, len(k))
		}
		o.auction = int64(binary.BigEndian.Uint64(k))
		o.start = int64(binary.BigEndian.Uint64(k[8:]))
	default:
		if len(k) != 8 {
			return o, fmt.Errorf("%s: key of %d bytes", query, len(k))
		}
		o.auction = int64(binary.BigEndian.Uint64(k))
	}
	if r.Value == nil {
		o.tombstone = true
		return o, nil
	}
	var v struct {
		Bidder    *int64 `json:"BIDDER"`
		Price     *int64 `json:"PRICE"`
		DateTime  *int64 `json:"DATETIME"`
		BDateTime *int64 `json:"B_DATETIME"`
		MaxPrice  *int64 `json:"MAXPRICE"`
	}
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return o, fmt.Errorf("%s: value: %w", query, err)
	}
	if query == "q7" {
		if v.MaxPrice == nil {
			return o, fmt.Errorf("%s: value %s has no MAXPRICE", query, r.Value)
		}
		o.maxPrice = *v.MaxPrice
		return o, nil
	}
	if v.DateTime == nil {
		v.DateTime = v.BDateTime
	}
	if v.Bidder == nil || v.Price == nil || v.DateTime == nil {
		return o, fmt.Errorf("%s: value %s lacks BIDDER, PRICE or the bid's DATETIME", query, r.Value)
	}
	o.bidder, o.price, o.dateTime = *v.Bidder, *v.Price, *v.DateTime
	return o, nil
}

// measured is one output row paired with its cause.
type measured struct {
	auction   int64
	eventTime int64
	// cause is when the input that caused the row was appended; latency
	// how long after it the row was (both milliseconds).
	cause, latency int64
}

// tally counts the rows that could not be measured, and why.
type tally struct {
	// unmatched rows name a bid (q0, q20) or an auction (q20) that is not
	// in the input, or one more time than the input holds it (probes'
	// rows are not counted).
	unmatched int
	// unclosed rows (q7) are windows that no input event closed.
	unclosed int
	// notFinal rows (q7) hold another maximum than the window's bids
	// have; duplicates are a window's second and later rows.
	notFinal, duplicates int
	tombstones           int
}

// measure pairs output rows of query with the inputs that caused them.
// q0 and q20: a row's cause is the append of its bid, matched on
// (auction, bidder, price, dateTime), each bid once, earliest first; for
// q20 the later of that and the append of its auction, the join's row
// needing both. q7: a window's final row is caused by the event that
// closed the window, by rule, at its end plus grace.
func measure(query string, rule closeRule, grace int64, in *inputs, rows []outRow) ([]measured, tally) {
	var out []measured
	var t tally
	used := map[bidKey]int{}
	seen := map[winKey]bool{}
	for _, o := range rows {
		if o.tombstone {
			t.tombstones++
			continue
		}
		var cause int64
		switch query {
		case "q7":
			w := winKey{o.auction, o.start}
			if seen[w] {
				t.duplicates++
				continue
			}
			seen[w] = true
			if m, ok := in.maxPrice[w]; !ok || m != o.maxPrice {
				t.notFinal++
			}
			part := kafka.KeyPartition(binary.BigEndian.AppendUint64(nil, uint64(o.auction)), int32(len(in.parts)))
			at, ok := in.closing(rule, part, o.start+windowMillis+grace)
			if !ok {
				t.unclosed++
				continue
			}
			cause = at
		default:
			k := bidKey{o.auction, o.bidder, o.price, o.dateTime}
			appends := in.bids[k]
			i := used[k]
			at, ok := in.auctions[o.auction]
			if i >= len(appends) || query == "q20" && !ok {
				// A probe's row may come twice: sent again, or, in a
				// join of two streams, joined again by the probe
				// auction of a later probe.
				if o.auction >= firstAuctionID {
					t.unmatched++
				}
				continue
			}
			used[k] = i + 1
			cause = appends[i]
			if query == "q20" {
				cause = max(cause, at)
			}
		}
		out = append(out, measured{auction: o.auction, eventTime: o.eventTime(query), cause: cause, latency: o.appended - cause})
	}
	return out, t
}

// missing counts what the input says must be in the output but is not,
// among the auctions from firstAuction and the causes appended in [from,
// to]: q0, the bids without their row; q7, the windows closed (by rule)
// without their final row. q20's rows depend on what each system's join
// had seen, so it has no count (-1).
func missing(query string, rule closeRule, grace int64, in *inputs, rows []outRow, firstAuction, from, to int64) int {
	switch query {
	case "q0":
		have := map[bidKey]int{}
		for _, o := range rows {
			if !o.tombstone {
				have[bidKey{o.auction, o.bidder, o.price, o.dateTime}]++
			}
		}
		n := 0
		for k, appends := range in.bids {
			if k.auction < firstAuction {
				continue
			}
			for i, at := range appends {
				if at >= from && at <= to && i >= have[k] {
					n++
				}
			}
		}
		return n
	case "q7":
		have := map[winKey]bool{}
		for _, o := range rows {
			if !o.tombstone {
				have[winKey{o.auction, o.start}] = true
			}
		}
		n := 0
		for w := range in.maxPrice {
			if w.auction < firstAuction || have[w] {
				continue
			}
			part := kafka.KeyPartition(binary.BigEndian.AppendUint64(nil, uint64(w.auction)), int32(len(in.parts)))
			if at, ok := in.closing(rule, part, w.start+windowMillis+grace); ok && at >= from && at <= to {
				n++
			}
		}
		return n
	}
	return -1
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, an ascending slice: the smallest value at least p % of the
// values do not exceed. 0 for no values.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// latencyStats sums up measured rows: how many, the 50th and 99th
// percentile and the largest latency, and the median latency of the
// first and of the last tenth of the rows (in the order of their causes),
// which a system that falls behind sees grow.
type latencyStats struct {
	rows                  int
	p50, p99, max         int64
	firstTenth, lastTenth int64
}

func summarize(ms []measured) latencyStats {
	s := latencyStats{rows: len(ms)}
	if len(ms) == 0 {
		return s
	}
	byCause := slices.Clone(ms)
	sort.SliceStable(byCause, func(i, j int) bool { return byCause[i].cause < byCause[j].cause })
	lats := func(part []measured) []int64 {
		l := make([]int64, len(part))
		for i, m := range part {
			l[i] = m.latency
		}
		slices.Sort(l)
		return l
	}
	all := lats(byCause)
	s.p50, s.p99, s.max = percentile(all, 50), percentile(all, 99), all[len(all)-1]
	tenth := max(len(byCause)/10, 1)
	s.firstTenth = percentile(lats(byCause[:tenth]), 50)
	s.lastTenth = percentile(lats(byCause[len(byCause)-tenth:]), 50)
	return s
}

// behindFloor is the latency under which a system counts as keeping up
// whatever its trend: the machine's noise (a collection, a checkpoint)
// moves latencies by tens of milliseconds.
const behindFloor = 1000

// keptUp says whether a system kept up with the load: it fell behind when
// the larger of the median latency of the last tenth of the rows and its
// lag at the end (the latency of the probes sent right after the load) is
// over behindFloor milliseconds and over twice the median latency of the
// first tenth. A system short of capacity builds a backlog that grows
// for as long as the load lasts, and its latencies with it; one that
// keeps up has the same latencies at the end as at the start.
func keptUp(s latencyStats, endLag int64) bool {
	late := max(s.lastTenth, endLag)
	return late <= behindFloor || late <= 2*s.firstTenth
}

// errNoRows says a run had no row to measure.
var errNoRows = errors.New("no output row to measure")

// probeAuctions returns, for each partition of a topic of partitions
// partitions, the smallest auction id from 1 whose key Kafka's partitioner
// puts there: the probes' auctions, below the generator's first id, so
// that their rows are told apart from the load's.
func probeAuctions(partitions int32) ([]int64, error) {
	ids := make([]int64, partitions)
	found := int32(0)
	for id := int64(1); id < firstAuctionID && found < partitions; id++ {
		p := kafka.KeyPartition(binary.BigEndian.AppendUint64(nil, uint64(id)), partitions)
		if ids[p] == 0 {
			ids[p] = id
			found++
		}
	}
	if found < partitions {
		return nil, fmt.Errorf("no probe auction id below %d for each of %d partitions", firstAuctionID, partitions)
	}
	return ids, nil
}

// firstAuctionID is the generator's first auction id: the probes' are
// below it.
const firstAuctionID = 1000

// probeEvents are the events of a probe at event time t: per partition,
// an auction of category 10 (which q20 joins) and a bid on it a
// millisecond later; for q7 a second bid at the end of the first bid's
// window plus the grace, which closes that window. The rows
// they give show that every partition of the input was processed up to
// them.
func probeEvents(query string, auctions []int64, t, grace int64) [][]nexmark.Event {
	var first, second []nexmark.Event
	for _, id := range auctions {
		first = append(first, nexmark.Event{Kind: nexmark.AuctionEvent, Auction: &nexmark.Auction{
			ID: id, ItemName: "probe", Description: "probe", Category: 10, DateTime: t, Expires: t + windowMillis,
		}})
		second = append(second, nexmark.Event{Kind: nexmark.BidEvent, Bid: &nexmark.Bid{
			Auction: id, Channel: "probe", URL: "probe", DateTime: t + 1,
		}})
	}
	batches := [][]nexmark.Event{first, second}
	if query == "q7" {
		var third []nexmark.Event
		for _, id := range auctions {
			third = append(third, nexmark.Event{Kind: nexmark.BidEvent, Bid: &nexmark.Bid{
				Auction: id, Channel: "probe", URL: "probe", DateTime: windowStart(t+1) + windowMillis + grace,
			}})
		}
		batches = append(batches, third)
	}
	return batches
}

// probeRow says the event time of the output row a probe at t gives: its
// bid's dateTime, or for q7 its first bid's window's start.
func probeRow(query string, t int64) int64 {
	if query == "q7" {
		return windowStart(t + 1)
	}
	return t + 1
}
