package eval

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// Aggregate is an aggregate function (COUNT, SUM, COLLECT_LIST, ...) known
// to the planner. Aggregates live in their own registry, apart from the
// scalar functions of Register.
//
// A call's arguments split in two: the leading value arguments, evaluated
// on every row, and the trailing literal arguments (TOPK's k,
// EARLIEST_BY_OFFSET's n and ignoreNulls), whose count Literals gives and
// whose values reach New as params.
type Aggregate struct {
	// Name is the upper-case SQL name.
	Name string
	// Description is one line for SHOW FUNCTIONS and DESCRIBE FUNCTION.
	Description string
	// Literals, when set, returns how many trailing arguments of a call
	// with n arguments must be literals; nil means none.
	Literals func(n int) int
	// Check validates the types of all arguments of a call, value and
	// literal ones (nil for an untyped NULL), and returns the result type,
	// or an error saying which arguments are accepted.
	Check func(args []*types.Type) (ret *types.Type, err error)
	// New returns an empty accumulator for a call with these argument
	// types (as given to Check) and result type. params holds the values
	// of the literal arguments, in order; some aggregates accept further
	// params documented with them (COLLECT_LIST's configured limit).
	New func(args []*types.Type, ret *types.Type, params []any) (Accumulator, error)
	// Retractable reports whether the accumulators support Retract, so
	// the function may aggregate a table source.
	Retractable bool
}

// Accumulator holds the running state of one aggregate over one group.
// It is not safe for concurrent use.
//
// Add and Retract receive the value of the call's single value argument,
// or, when the call has several value arguments, a []any holding their
// values in order; COUNT(*) receives nil.
type Accumulator interface {
	// Add folds one row's value into the state.
	Add(v any)
	// Retract undoes an earlier Add of v, for table sources. It returns
	// false, leaving the state unchanged, if the function cannot retract.
	Retract(v any) (ok bool)
	// Merge folds o, an accumulator of the same call, into this one, as
	// when session windows merge. o must not be used afterwards.
	Merge(o Accumulator)
	// Result returns the aggregate's current value, of the call's result
	// type.
	Result() any
	// MarshalBinary encodes the state deterministically.
	MarshalBinary() ([]byte, error)
	// UnmarshalBinary replaces the state with one written by
	// MarshalBinary of an accumulator of the same call.
	UnmarshalBinary([]byte) error
}

// ReusableAccumulator is implemented by accumulators that an operator
// may load with the state of one group after another instead of creating
// one per row: UnmarshalBinary replaces the whole state and shares
// nothing with values Result returned before, and AppendBinary appends
// what MarshalBinary returns, without allocating once b has room.
type ReusableAccumulator interface {
	Accumulator
	AppendBinary(b []byte) ([]byte, error)
	ReusableState()
}

// NumberResult is implemented by accumulators whose result may be a
// BIGINT or a DOUBLE that an operator can box itself (from an arena)
// rather than take boxed from Result: NumberResult returns Result's value
// with isInt for a BIGINT, or ok false when Result is neither (then
// Result applies). Whether ok is true depends only on the accumulator's
// types, not on its state.
type NumberResult interface {
	Accumulator
	NumberResult() (i int64, f float64, isInt, ok bool)
}

// FailingAccumulator is implemented by accumulators whose result can
// fail, as SUM of a DECIMAL overflowing its type: Err returns the failure
// for which Result returns null, or nil.
type FailingAccumulator interface {
	Accumulator
	Err() error
}

// AccumulatorResult returns a's result and, if a is a FailingAccumulator,
// its failure.
func AccumulatorResult(a Accumulator) (any, error) {
	if f, ok := a.(FailingAccumulator); ok {
		if err := f.Err(); err != nil {
			return nil, err
		}
	}
	return a.Result(), nil
}

var (
	aggsMu sync.RWMutex
	aggs   = map[string]*Aggregate{}
)

// RegisterAggregate adds a to the aggregate registry, replacing any
// aggregate of the same name. It is meant for package initialization.
func RegisterAggregate(a *Aggregate) {
	aggsMu.Lock()
	defer aggsMu.Unlock()
	aggs[strings.ToUpper(a.Name)] = a
}

// LookupAggregate returns the aggregate named name (case-insensitive).
func LookupAggregate(name string) (*Aggregate, bool) {
	aggsMu.RLock()
	defer aggsMu.RUnlock()
	a, ok := aggs[strings.ToUpper(name)]
	return a, ok
}

// AggregateNames returns the names of all registered aggregates, sorted.
func AggregateNames() []string {
	aggsMu.RLock()
	defer aggsMu.RUnlock()
	out := make([]string, 0, len(aggs))
	for n := range aggs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LiteralCount returns how many trailing arguments of a call of a with n
// arguments must be literals.
func (a *Aggregate) LiteralCount(n int) int {
	if a.Literals == nil {
		return 0
	}
	return a.Literals(n)
}

// TableSourceError is the error for aggregating a table source with the
// named aggregates, which cannot retract, in ksqlDB's wording.
func TableSourceError(names []string) error {
	var list string
	switch len(names) {
	case 0:
		return nil
	case 1:
		list = names[0]
	default:
		list = strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	word := "function"
	if len(names) > 1 {
		word = "functions"
	}
	return fmt.Errorf("The aggregation %s %s cannot be applied to a table source, only to a stream source.", word, list)
}

// offsetSeq orders the values seen by EARLIEST_BY_OFFSET and
// LATEST_BY_OFFSET across accumulators, so that merged session windows
// keep arrival order. Decoding a state moves it past the numbers stored.
var offsetSeq atomic.Int64

func nextSeq() int64 { return offsetSeq.Add(1) }

func observeSeq(s int64) {
	for {
		cur := offsetSeq.Load()
		if cur >= s || offsetSeq.CompareAndSwap(cur, s) {
			return
		}
	}
}

// stateVersion is the first byte of every encoded accumulator state.
const stateVersion = 1

var errBadState = errors.New("expr: malformed aggregate state")

// encoder writes the binary state of an accumulator.
type encoder struct{ b []byte }

func newEncoder() *encoder { return &encoder{b: []byte{stateVersion}} }

func (e *encoder) int(v int64)     { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) uint(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) float(v float64) { e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(v)) }
func (e *encoder) bytes(p []byte) {
	e.uint(uint64(len(p)))
	e.b = append(e.b, p...)
}

func (e *encoder) value(v any, t *types.Type) error {
	p, err := expr.MarshalValue(v, t)
	if err != nil {
		return err
	}
	e.bytes(p)
	return nil
}

func (e *encoder) done() ([]byte, error) { return e.b, nil }

// appendValueState appends v as encoder.value writes it: its length, then
// its MarshalValue encoding, written in place and moved up behind the
// length so that nothing is allocated once b has room.
func appendValueState(b []byte, v any, t *types.Type) ([]byte, error) {
	at := len(b)
	b, err := expr.AppendValue(b, v, t)
	if err != nil {
		return nil, err
	}
	var n [binary.MaxVarintLen64]byte
	l := binary.PutUvarint(n[:], uint64(len(b)-at))
	return slices.Insert(b, at, n[:l]...), nil
}

// decoder reads what encoder wrote; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func newDecoder(b []byte) *decoder {
	if len(b) == 0 || b[0] != stateVersion {
		return &decoder{err: errBadState}
	}
	return &decoder{b: b[1:]}
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errBadState
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadState
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length and checks it is plausible for the bytes left.
func (d *decoder) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.err = errBadState
		return 0
	}
	return int(n)
}

func (d *decoder) float() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = errBadState
		return 0
	}
	v := math.Float64frombits(binary.BigEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) value(t *types.Type) any {
	p := d.bytes()
	if d.err != nil {
		return nil
	}
	v, err := expr.UnmarshalValue(p, t)
	if err != nil {
		d.err = err
		return nil
	}
	return v
}

// finish reports the first error, or trailing bytes.
func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errBadState
	}
	return d.err
}
