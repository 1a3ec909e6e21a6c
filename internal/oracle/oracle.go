package oracle

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// Config shapes the input a Driver produces and the queries the oracle
// models.
type Config struct {
	// Orders and Customers are the input topics; Partitions is the
	// partition count of both.
	Orders, Customers string
	Partitions        int32
	// Keys is how many customer keys orders use; the customers table has
	// a row for three keys in four.
	Keys int
	// WindowMs is the tumbling window's size and GraceMs its grace
	// period, as the count query declares them.
	WindowMs, GraceMs int64
	// StepMs is the event time between two orders; JitterMs how far
	// before its place an order's time may be.
	StepMs, JitterMs int64
	// LatePct is the percentage of orders whose time is LateMs or more
	// before their place (and up to twice that): beyond the grace period
	// when LateMs exceeds WindowMs+GraceMs.
	LatePct int
	LateMs  int64
	// Base is the event time (ms) of the first order, a multiple of
	// WindowMs.
	Base int64
	// MinAmount is the filter query's bound: it keeps orders with
	// AMOUNT >= MinAmount.
	MinAmount int
}

// Driver is a seeded source of orders and the oracle of what the three
// queries must output for them:
//
//	filter  SELECT cust, seq, amount FROM orders WHERE amount >= MinAmount
//	count   SELECT cust, COUNT(*) AS n FROM orders
//	        WINDOW TUMBLING (SIZE WindowMs, GRACE PERIOD GraceMs) GROUP BY cust
//	join    SELECT o.cust, seq, amount, name FROM orders o JOIN customers c ON o.cust = c.id
//
// It models ksqlDB's semantics: an order goes to partition
// kafka.KeyPartition of its key, the count's stream time is per
// partition (the largest order time seen there, in offset order), and a
// window takes no record once stream time reaches its end plus the grace
// period. Orders of one partition must be written in the order Next
// returns them. A Driver is not safe for concurrent use.
type Driver struct {
	cfg   Config
	seed  uint64
	rng   *rand.Rand
	names map[string]string
	seq   map[string]int64
	n     int
	// streamTime is the count's stream time per partition.
	streamTime []int64
	late       int // orders the count drops

	filter, join map[string]int // rows, as RowKey
	counts       map[string]int // final count per WindowKey
}

// New returns a driver for cfg seeded with seed.
func New(cfg Config, seed uint64) *Driver {
	d := &Driver{
		cfg: cfg, seed: seed,
		rng:        rand.New(rand.NewPCG(seed, seed^0x5eed)),
		names:      map[string]string{},
		seq:        map[string]int64{},
		streamTime: make([]int64, cfg.Partitions),
		filter:     map[string]int{},
		join:       map[string]int{},
		counts:     map[string]int{},
	}
	for i := range d.streamTime {
		d.streamTime[i] = -1 << 63
	}
	for i := range cfg.Keys {
		if i%4 != 3 {
			key := d.key(i)
			d.names[key] = "name-" + key
		}
	}
	return d
}

// Seed is the driver's seed.
func (d *Driver) Seed() uint64 { return d.seed }

// Orders is how many orders Next has returned.
func (d *Driver) Orders() int { return d.n }

// Late is how many of them the count query drops as late.
func (d *Driver) Late() int { return d.late }

func (d *Driver) key(i int) string { return fmt.Sprintf("c%02d", i) }

func (d *Driver) partition(key string) int32 {
	return kafka.KeyPartition([]byte(key), d.cfg.Partitions)
}

// Customers returns the rows of the customers table, timed a minute
// before the first order; produce them before the queries start.
func (d *Driver) Customers() []*kafka.Record {
	var recs []*kafka.Record
	for i := range d.cfg.Keys {
		key := d.key(i)
		name, ok := d.names[key]
		if !ok {
			continue
		}
		recs = append(recs, &kafka.Record{
			Topic: d.cfg.Customers, Partition: d.partition(key), Key: []byte(key),
			Value:     fmt.Appendf(nil, `{"NAME":%q}`, name),
			Timestamp: time.UnixMilli(d.cfg.Base - 60_000),
		})
	}
	return recs
}

// Next returns the next n orders of the seeded sequence, each with its
// partition set, and adds them to the oracle.
func (d *Driver) Next(n int) []*kafka.Record {
	c := d.cfg
	recs := make([]*kafka.Record, n)
	for i := range recs {
		key := d.key(d.rng.IntN(c.Keys))
		seq := d.seq[key]
		d.seq[key]++
		amount := d.rng.IntN(100)
		ts := c.Base + int64(d.n)*c.StepMs
		if c.LatePct > 0 && d.rng.IntN(100) < c.LatePct {
			ts -= c.LateMs + d.rng.Int64N(c.LateMs)
		} else if c.JitterMs > 0 {
			ts -= d.rng.Int64N(c.JitterMs)
		}
		ts = max(ts, 0)
		recs[i] = d.add(key, seq, amount, ts)
	}
	return recs
}

// add makes the record of one order and adds it to the oracle.
func (d *Driver) add(key string, seq int64, amount int, ts int64) *kafka.Record {
	c := d.cfg
	d.n++
	p := d.partition(key)
	r := &kafka.Record{
		Topic: c.Orders, Partition: p, Key: []byte(key),
		Value:     fmt.Appendf(nil, `{"SEQ":%d,"AMOUNT":%d}`, seq, amount),
		Timestamp: time.UnixMilli(ts),
	}
	if amount >= c.MinAmount {
		d.filter[RowKey(key, seq, amount, "")]++
	}
	if name, ok := d.names[key]; ok {
		d.join[RowKey(key, seq, amount, name)]++
	}
	d.streamTime[p] = max(d.streamTime[p], ts)
	start := ts - ts%c.WindowMs
	if start+c.WindowMs+c.GraceMs <= d.streamTime[p] {
		d.late++
		return r
	}
	d.counts[WindowKey(key, start)]++
	return r
}

// RowKey identifies a row of the filter (name "") or join output.
func RowKey(key string, seq int64, amount int, name string) string {
	return fmt.Sprintf("%s/%d/%d/%s", key, seq, amount, name)
}

// WindowKey identifies a window of the count output.
func WindowKey(key string, start int64) string { return fmt.Sprintf("%s@%d", key, start) }

// Want returns the oracle's filter rows, join rows (multisets of RowKey)
// and final count per WindowKey. The maps are the driver's: do not
// modify them.
func (d *Driver) Want() (filter, join, counts map[string]int) {
	return d.filter, d.join, d.counts
}

// Tally is what a comparison found. Missing and Duplicated count rows of
// the filter and join outputs the oracle wants and that are absent or
// seen too often; Wrong counts output rows the oracle does not know and
// windows whose final count differs from the oracle's (or that are
// absent, or not in the input); see Driver.Check for how at-least-once
// over-counts are told apart.
type Tally struct {
	Missing, Duplicated, Wrong int
	// Notes describe the first differences found, at most a few per
	// output.
	Notes []string
}

func (t *Tally) add(o Tally) {
	t.Missing += o.Missing
	t.Duplicated += o.Duplicated
	t.Wrong += o.Wrong
	t.Notes = append(t.Notes, o.Notes...)
}

const maxNotes = 5

// CompareRows compares the multiset got of output rows with want; what
// names the output in notes.
func CompareRows(what string, want, got map[string]int) Tally {
	var t Tally
	for _, k := range sortedKeys(want) {
		w, g := want[k], got[k]
		switch {
		case g < w:
			t.Missing += w - g
			if t.Missing <= maxNotes {
				t.Notes = append(t.Notes, fmt.Sprintf("%s: row %s seen %d times, want %d", what, k, g, w))
			}
		case g > w:
			t.Duplicated += g - w
		}
	}
	for _, k := range sortedKeys(got) {
		if _, ok := want[k]; !ok {
			t.Wrong += got[k]
			if t.Wrong <= maxNotes {
				t.Notes = append(t.Notes, fmt.Sprintf("%s: row %s is not in the oracle", what, k))
			}
		}
	}
	return t
}

// Outputs are the records read from the three queries' sink topics.
type Outputs struct {
	Filter, Join, Count []*kafka.Record
}

// Check compares out with the oracle. exactlyOnce counts repeated count
// updates as duplicated and any window whose final count differs as
// wrong; without it, a final count above the oracle's adds its excess to
// Duplicated (records processed again after a crash count again), and
// only one below it, or an absent or unknown window, is wrong.
func (d *Driver) Check(out Outputs, exactlyOnce bool) Tally {
	var t Tally
	got, err := decodeRows(out.Filter, false)
	if err != nil {
		t.Wrong++
		t.Notes = append(t.Notes, "filter: "+err.Error())
	}
	t.add(CompareRows("filter", d.filter, got))
	got, err = decodeRows(out.Join, true)
	if err != nil {
		t.Wrong++
		t.Notes = append(t.Notes, "join: "+err.Error())
	}
	t.add(CompareRows("join", d.join, got))
	t.add(d.checkCounts(out.Count, exactlyOnce))
	return t
}

func decodeRows(recs []*kafka.Record, named bool) (map[string]int, error) {
	got := map[string]int{}
	var bad error
	for _, r := range recs {
		var v struct {
			SEQ, AMOUNT int64
			NAME        string
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			if bad == nil {
				bad = fmt.Errorf("%s[%d]@%d: value %q: %v", r.Topic, r.Partition, r.Offset, r.Value, err)
			}
			continue
		}
		if !named {
			v.NAME = ""
		}
		got[RowKey(string(r.Key), v.SEQ, int(v.AMOUNT), v.NAME)]++
	}
	return got, bad
}

// checkCounts compares the count output's final value per window (the
// last update of its key, in offset order within its partition) with
// the oracle's.
func (d *Driver) checkCounts(recs []*kafka.Record, exactlyOnce bool) Tally {
	var t Tally
	recs = append([]*kafka.Record(nil), recs...)
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	final := map[string]int{}
	seen := map[string]int{}
	for _, r := range recs {
		var v struct{ N int }
		err := json.Unmarshal(r.Value, &v)
		if len(r.Key) < 8 || err != nil {
			t.Wrong++
			if t.Wrong <= maxNotes {
				t.Notes = append(t.Notes, fmt.Sprintf("count: %s[%d]@%d: key %q value %q is not a windowed count", r.Topic, r.Partition, r.Offset, r.Key, r.Value))
			}
			continue
		}
		k := WindowKey(string(r.Key[:len(r.Key)-8]), int64(binary.BigEndian.Uint64(r.Key[len(r.Key)-8:])))
		final[k] = v.N
		seen[fmt.Sprintf("%s=%d", k, v.N)]++
	}
	if exactlyOnce {
		for _, k := range sortedKeys(seen) {
			if n := seen[k]; n > 1 {
				t.Duplicated += n - 1
				if t.Duplicated <= maxNotes {
					t.Notes = append(t.Notes, fmt.Sprintf("count: update %s seen %d times", k, n))
				}
			}
		}
	}
	for _, k := range sortedKeys(d.counts) {
		w := d.counts[k]
		g, ok := final[k]
		if ok && g > w && !exactlyOnce {
			// At least once, records processed again after a crash
			// count again: an over-count is their duplicates.
			t.Duplicated += g - w
			continue
		}
		if !ok || g != w {
			t.Wrong++
			if t.Wrong <= maxNotes {
				t.Notes = append(t.Notes, fmt.Sprintf("count: window %s final count %d (present %v), want %d", k, g, ok, w))
			}
		}
	}
	for _, k := range sortedKeys(final) {
		if _, ok := d.counts[k]; !ok {
			t.Wrong++
			if t.Wrong <= maxNotes {
				t.Notes = append(t.Notes, fmt.Sprintf("count: window %s (count %d) is not in the oracle", k, final[k]))
			}
		}
	}
	return t
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// String formats the tally's counts.
func (t Tally) String() string {
	return fmt.Sprintf("%d missing, %d duplicated, %d wrong", t.Missing, t.Duplicated, t.Wrong)
}
