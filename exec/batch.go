package exec

import "github.com/sluice-sql/sluice/kafka"

// ChangeKind says what a row means in a changelog.
type ChangeKind uint8

// The change kinds. Streams carry Insert and NullValue rows; tables carry
// the first four.
const (
	Insert ChangeKind = iota
	Delete
	UpdateBefore
	UpdateAfter
	// NullValue is a record whose value is null: only its key columns are
	// known, every other column is null. On a table it is a delete, which
	// filters pass on. On a stream, as in ksqlDB, a projection (and a
	// PARTITION BY) computes only what depends on the key alone and the
	// sink writes it with a null value; a filter, an aggregate, a join, a
	// table function and a push query's output drop it, and count it in
	// Stats.NullsDropped.
	NullValue
)

// KeyAbsent marks, on top of a kind, a row whose record had no key at all,
// which a key of several columns cannot show by its values: the sink writes
// such a row without a key, unless a PARTITION BY computed a new one.
const KeyAbsent ChangeKind = 0x80

// OldKnown marks, on top of a kind, a row whose previous row under the
// same key is known: Batch.Old returns it, nil when the key had none. A
// materialized table emits such changes; Append clears the mark, so an
// operator that passes kinds on without old rows never claims to know one.
const OldKnown ChangeKind = 0x40

// Filtered marks, on top of NullValue, the delete a filter sends on a
// table for a row its WHERE dropped: the sink writes the tombstone, and the
// query's counters count the record as filtered, not as output, so that
// records in = out + filtered + errored + null values dropped.
const Filtered ChangeKind = 0x20

// Base is the kind without the KeyAbsent, OldKnown and Filtered marks.
func (k ChangeKind) Base() ChangeKind { return k &^ (KeyAbsent | OldKnown | Filtered) }

// Batch is a run of rows moving between operators, each with its record
// time and change kind. A batch and its rows are valid only during the call
// that received them; an operator copies what it keeps.
type Batch struct {
	rows  [][]any
	times []int64
	kinds []ChangeKind
	// olds holds the old rows of changes; it is shorter than rows when the
	// last rows carry none.
	olds [][]any
	// hdrs holds the headers of the records the rows came from, which a
	// sink writes on as Kafka Streams carries a record's headers through
	// its processors; it is shorter than rows when the last rows carry
	// none.
	hdrs [][]kafka.Header
}

// Len returns the number of rows.
func (b *Batch) Len() int { return len(b.rows) }

// Row returns row i, laid out as the producing step's schema.
func (b *Batch) Row(i int) []any { return b.rows[i] }

// Time returns row i's record time in milliseconds.
func (b *Batch) Time(i int) int64 { return b.times[i] }

// Kind returns row i's change kind.
func (b *Batch) Kind(i int) ChangeKind { return b.kinds[i] }

// Old returns the row that row i replaces under its key, nil when the key
// had none; known is false when the producer does not know it (a table
// read without materializing it), and then old is nil.
func (b *Batch) Old(i int) (old []any, known bool) {
	if b.kinds[i]&OldKnown == 0 {
		return nil, false
	}
	if i < len(b.olds) {
		return b.olds[i], true
	}
	return nil, true
}

// Headers returns the headers row i carries from its record, nil when it
// carries none.
func (b *Batch) Headers(i int) []kafka.Header {
	if i < len(b.hdrs) {
		return b.hdrs[i]
	}
	return nil
}

// SetHeaders gives the rows from row from on the headers h: those of the
// record they came from, or of the record whose arrival made them. The
// slice is shared, not copied: record headers are never written after
// they are read.
func (b *Batch) SetHeaders(from int, h []kafka.Header) {
	if len(h) == 0 || from >= len(b.rows) {
		return
	}
	for len(b.hdrs) < from {
		b.hdrs = append(b.hdrs, nil)
	}
	b.hdrs = b.hdrs[:from]
	for len(b.hdrs) < len(b.rows) {
		b.hdrs = append(b.hdrs, h)
	}
}

// Append adds a row whose old row is not known.
func (b *Batch) Append(row []any, time int64, kind ChangeKind) {
	b.rows = append(b.rows, row)
	b.times = append(b.times, time)
	b.kinds = append(b.kinds, kind&^OldKnown)
}

// AppendChange adds a row that replaces old under its key; old is nil when
// the key had no row. kind is Insert for an upsert, NullValue for a
// delete.
func (b *Batch) AppendChange(row, old []any, time int64, kind ChangeKind) {
	if old != nil {
		for len(b.olds) < len(b.rows) {
			b.olds = append(b.olds, nil)
		}
		b.olds = append(b.olds, old)
	}
	b.rows = append(b.rows, row)
	b.times = append(b.times, time)
	b.kinds = append(b.kinds, kind|OldKnown)
}

// Reset empties the batch, keeping its capacity.
func (b *Batch) Reset() {
	clear(b.rows)
	b.rows = b.rows[:0]
	b.times = b.times[:0]
	b.kinds = b.kinds[:0]
	clear(b.olds)
	b.olds = b.olds[:0]
	clear(b.hdrs)
	b.hdrs = b.hdrs[:0]
}

// headerCarry gives the rows an operator adds for each input row the
// headers of that row, however the row's processing ends: next starts
// row i of in, done ends the last.
type headerCarry struct {
	from int
	h    []kafka.Header
}

func (c *headerCarry) next(out, in *Batch, i int) {
	out.SetHeaders(c.from, c.h)
	c.from, c.h = out.Len(), in.Headers(i)
}

func (c *headerCarry) done(out *Batch) {
	out.SetHeaders(c.from, c.h)
	*c = headerCarry{}
}
