package exec

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
	// known, every other column is null. On a stream a filter drops it; on
	// a table it is a delete, which filters pass on. A projection computes
	// only what depends on the key alone and the sink writes it with a
	// null value (a tombstone), as ksqlDB does.
	NullValue
)

// KeyAbsent marks, on top of a kind, a row whose record had no key at all,
// which a key of several columns cannot show by its values: the sink writes
// such a row without a key, unless a PARTITION BY computed a new one.
const KeyAbsent ChangeKind = 0x80

// Base is the kind without the KeyAbsent mark.
func (k ChangeKind) Base() ChangeKind { return k &^ KeyAbsent }

// Batch is a run of rows moving between operators, each with its record
// time and change kind. A batch and its rows are valid only during the call
// that received them; an operator copies what it keeps.
type Batch struct {
	rows  [][]any
	times []int64
	kinds []ChangeKind
}

// Len returns the number of rows.
func (b *Batch) Len() int { return len(b.rows) }

// Row returns row i, laid out as the producing step's schema.
func (b *Batch) Row(i int) []any { return b.rows[i] }

// Time returns row i's record time in milliseconds.
func (b *Batch) Time(i int) int64 { return b.times[i] }

// Kind returns row i's change kind.
func (b *Batch) Kind(i int) ChangeKind { return b.kinds[i] }

// Append adds a row.
func (b *Batch) Append(row []any, time int64, kind ChangeKind) {
	b.rows = append(b.rows, row)
	b.times = append(b.times, time)
	b.kinds = append(b.kinds, kind)
}

// Reset empties the batch, keeping its capacity.
func (b *Batch) Reset() {
	clear(b.rows)
	b.rows = b.rows[:0]
	b.times = b.times[:0]
	b.kinds = b.kinds[:0]
}
