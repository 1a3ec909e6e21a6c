package eval

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// DefaultCollectLimit is the most values COLLECT_LIST and COLLECT_SET keep
// and the most distinct values HISTOGRAM counts, unless New is given
// another limit.
const DefaultCollectLimit = 1000

// errNumericOverflow is SUM's failure when a DECIMAL total no longer fits
// its type.
var errNumericOverflow = errors.New("Numeric field overflow")

func init() {
	for _, a := range []*Aggregate{
		countAgg(), countDistinctAgg(), sumAgg(), avgAgg(),
		minMaxAgg("MIN", "Returns the minimum non-null value of a column.", -1),
		minMaxAgg("MAX", "Returns the maximum non-null value of a column.", 1),
		byOffsetAgg("EARLIEST_BY_OFFSET", "Returns the earliest value (or earliest n values) of a column, by offset.", false),
		byOffsetAgg("LATEST_BY_OFFSET", "Returns the latest value (or latest n values) of a column, by offset.", true),
		collectListAgg(), collectSetAgg(),
		topkAgg("TOPK", "Returns the k highest non-null values of a column, highest first.", false),
		topkAgg("TOPKDISTINCT", "Returns the k highest distinct non-null values of a column, highest first.", true),
		histogramAgg(), sumListAgg(), attrAgg(), correlationAgg(),
		stddevAgg("STDDEV_SAMPLE", "Returns the sample standard deviation of a numeric column.", true),
		stddevAgg("STDDEV_SAMP", "Returns the sample variance of a numeric column, as ksqlDB's STDDEV_SAMP does.", false),
	} {
		RegisterAggregate(a)
	}
}

// oneArg checks a single, typed value argument whose kind is in kinds
// (any kind when kinds is empty).
func oneArg(name, want string, ts []*types.Type, kinds ...types.Kind) error {
	if len(ts) != 1 || ts[0] == nil {
		return badArgs(name, ts, want)
	}
	if len(kinds) == 0 {
		return nil
	}
	for _, k := range kinds {
		if ts[0].Kind == k {
			return nil
		}
	}
	return badArgs(name, ts, want)
}

func aggIntKind(t *types.Type) bool {
	return t != nil && (t.Kind == types.Int || t.Kind == types.Bigint)
}

func isBoolKind(t *types.Type) bool { return t != nil && t.Kind == types.Boolean }

// intParam reads a positive integer literal argument.
func intParam(name, what string, v any) (int, error) {
	var n int64
	switch x := v.(type) {
	case int32:
		n = int64(x)
	case int64:
		n = x
	default:
		return 0, fmt.Errorf("%s: %s must be an integer literal, got %v", name, what, v)
	}
	if n < 1 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s: %s must be between 1 and %d, got %d", name, what, math.MaxInt32, n)
	}
	return int(n), nil
}

// limitParam reads an optional configured limit from params[i].
func limitParam(name string, params []any, i int) (int, error) {
	if len(params) <= i || params[i] == nil {
		return DefaultCollectLimit, nil
	}
	return intParam(name, "limit", params[i])
}

var orderedKinds = []types.Kind{
	types.Int, types.Bigint, types.Double, types.Decimal, types.String,
	types.Bytes, types.Date, types.Time, types.Timestamp,
}

const orderedWant = "(INTEGER), (BIGINT), (DOUBLE), (DECIMAL), (STRING), (BYTES), (DATE), (TIME) or (TIMESTAMP)"

// compareValues orders two non-null values of one orderable type.
func compareValues(a, b any) int {
	c, _ := types.Compare(a, b)
	return c
}

// ---- COUNT

func countAgg() *Aggregate {
	return &Aggregate{
		Name:        "COUNT",
		Description: "Counts the rows (COUNT(*)) or the non-null values of a column.",
		Retractable: true,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) > 1 {
				return nil, badArgs("COUNT", ts, "(), (*) or (ANY)")
			}
			return types.BigintType, nil
		},
		New: func(ts []*types.Type, _ *types.Type, _ []any) (Accumulator, error) {
			return &countAcc{rows: len(ts) == 0}, nil
		},
	}
}

type countAcc struct {
	rows bool
	n    int64
}

func (a *countAcc) Add(v any) {
	if a.rows || v != nil {
		a.n++
	}
}

func (a *countAcc) Retract(v any) bool {
	if a.rows || v != nil {
		a.n--
	}
	return true
}

func (a *countAcc) Merge(o Accumulator) { a.n += o.(*countAcc).n }
func (a *countAcc) Result() any         { return a.n }

func (a *countAcc) NumberResult() (int64, float64, bool, bool) { return a.n, 0, true, true }

func (a *countAcc) MarshalBinary() ([]byte, error) {
	e := newEncoder()
	e.int(a.n)
	return e.done()
}

func (a *countAcc) AppendBinary(b []byte) ([]byte, error) {
	return binary.AppendVarint(append(b, stateVersion), a.n), nil
}

func (*countAcc) ReusableState() {}

func (a *countAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := d.int()
	if err := d.finish(); err != nil {
		return err
	}
	a.n = n
	return nil
}

// ---- COUNT_DISTINCT

func countDistinctAgg() *Aggregate {
	return &Aggregate{
		Name:        "COUNT_DISTINCT",
		Description: "Counts the distinct non-null values of a column.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := oneArg("COUNT_DISTINCT", "(ANY)", ts); err != nil {
				return nil, err
			}
			return types.BigintType, nil
		},
		New: func(ts []*types.Type, _ *types.Type, _ []any) (Accumulator, error) {
			return &countDistinctAcc{t: ts[0], seen: map[string]struct{}{}}, nil
		},
	}
}

// countDistinctAcc counts exactly, keyed by each value's encoding.
type countDistinctAcc struct {
	t    *types.Type
	seen map[string]struct{}
}

func (a *countDistinctAcc) Add(v any) {
	if v == nil {
		return
	}
	k, err := expr.MarshalValue(v, a.t)
	if err != nil {
		return
	}
	a.seen[string(k)] = struct{}{}
}

func (a *countDistinctAcc) Retract(any) bool { return false }

func (a *countDistinctAcc) Merge(o Accumulator) {
	for k := range o.(*countDistinctAcc).seen {
		a.seen[k] = struct{}{}
	}
}

func (a *countDistinctAcc) Result() any { return int64(len(a.seen)) }

func (a *countDistinctAcc) MarshalBinary() ([]byte, error) {
	keys := make([]string, 0, len(a.seen))
	for k := range a.seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e := newEncoder()
	e.uint(uint64(len(keys)))
	for _, k := range keys {
		e.bytes([]byte(k))
	}
	return e.done()
}

func (a *countDistinctAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := d.count()
	seen := make(map[string]struct{}, n)
	for i := 0; i < n && d.err == nil; i++ {
		seen[string(d.bytes())] = struct{}{}
	}
	if err := d.finish(); err != nil {
		return err
	}
	a.seen = seen
	return nil
}

// ---- SUM

func sumAgg() *Aggregate {
	return &Aggregate{
		Name:        "SUM",
		Description: "Returns the sum of the non-null values of a numeric column, 0 when there are none.",
		Retractable: true,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := oneArg("SUM", "(INTEGER), (BIGINT), (DOUBLE) or (DECIMAL)", ts,
				types.Int, types.Bigint, types.Double, types.Decimal); err != nil {
				return nil, err
			}
			return ts[0], nil
		},
		New: func(ts []*types.Type, ret *types.Type, _ []any) (Accumulator, error) {
			return newSumAcc(ret), nil
		},
	}
}

// newSumAcc returns an empty sum of type t; only a DECIMAL sum carries a
// (big) decimal total.
func newSumAcc(t *types.Type) *sumAcc {
	a := &sumAcc{t: t}
	if t.Kind == types.Decimal {
		a.d = types.NewDec(0, t.Scale)
	}
	return a
}

// sumAcc sums INTEGER and BIGINT values with two's complement wrap-around
// as Java does, DOUBLE values as float64, and DECIMAL values exactly,
// failing when the total does not fit the column's type.
type sumAcc struct {
	t *types.Type
	i int64
	f float64
	d types.Dec
}

func (a *sumAcc) add(v any, sign int64) {
	switch x := v.(type) {
	case int32:
		a.i += sign * int64(x)
	case int64:
		a.i += sign * x
	case float64:
		a.f += float64(sign) * x
	case types.Dec:
		if sign < 0 {
			x = x.Neg()
		}
		a.d = a.d.Add(x)
	}
}

func (a *sumAcc) Add(v any)          { a.add(v, 1) }
func (a *sumAcc) Retract(v any) bool { a.add(v, -1); return true }

func (a *sumAcc) Merge(o Accumulator) {
	s := o.(*sumAcc)
	a.i += s.i
	a.f += s.f
	if a.t.Kind == types.Decimal {
		a.d = a.d.Add(s.d)
	}
}

func (a *sumAcc) Err() error {
	if a.t.Kind == types.Decimal && !a.d.Fits(a.t.Precision, a.t.Scale) {
		return errNumericOverflow
	}
	return nil
}

func (a *sumAcc) Result() any {
	switch a.t.Kind {
	case types.Int:
		return int32(a.i)
	case types.Bigint:
		return a.i
	case types.Double:
		return a.f
	}
	if a.Err() != nil {
		return nil
	}
	return a.d.Rescale(a.t.Scale)
}

func (a *sumAcc) NumberResult() (int64, float64, bool, bool) {
	switch a.t.Kind {
	case types.Bigint:
		return a.i, 0, true, true
	case types.Double:
		return 0, a.f, false, true
	}
	return 0, 0, false, false
}

func (a *sumAcc) MarshalBinary() ([]byte, error) {
	e := newEncoder()
	switch a.t.Kind {
	case types.Int, types.Bigint:
		e.int(a.i)
	case types.Double:
		e.float(a.f)
	default:
		if err := e.value(a.d, a.t); err != nil {
			return nil, err
		}
	}
	return e.done()
}

func (a *sumAcc) AppendBinary(b []byte) ([]byte, error) {
	switch a.t.Kind {
	case types.Int, types.Bigint:
		return binary.AppendVarint(append(b, stateVersion), a.i), nil
	case types.Double:
		return binary.BigEndian.AppendUint64(append(b, stateVersion), math.Float64bits(a.f)), nil
	}
	return appendValueState(append(b, stateVersion), a.d, a.t)
}

func (*sumAcc) ReusableState() {}

func (a *sumAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := *newSumAcc(a.t)
	switch a.t.Kind {
	case types.Int, types.Bigint:
		n.i = d.int()
	case types.Double:
		n.f = d.float()
	default:
		if v, ok := d.value(a.t).(types.Dec); ok {
			n.d = v
		} else if d.err == nil {
			d.err = errBadState
		}
	}
	if err := d.finish(); err != nil {
		return err
	}
	*a = n
	return nil
}

// ---- AVG

func avgAgg() *Aggregate {
	return &Aggregate{
		Name:        "AVG",
		Description: "Returns the average of the non-null values of a numeric column, 0.0 when there are none.",
		Retractable: true,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := oneArg("AVG", "(INTEGER), (BIGINT) or (DOUBLE)", ts,
				types.Int, types.Bigint, types.Double); err != nil {
				return nil, err
			}
			return types.DoubleType, nil
		},
		New: func(ts []*types.Type, _ *types.Type, _ []any) (Accumulator, error) {
			return &avgAcc{double: ts[0].Kind == types.Double}, nil
		},
	}
}

// avgAcc keeps a count and a sum, a wrapping int64 for integer columns as
// ksqlDB does.
type avgAcc struct {
	double bool
	n      int64
	i      int64
	f      float64
}

func (a *avgAcc) add(v any, sign int64) {
	switch x := v.(type) {
	case int32:
		a.i += sign * int64(x)
	case int64:
		a.i += sign * x
	case float64:
		a.f += float64(sign) * x
	default:
		return
	}
	a.n += sign
}

func (a *avgAcc) Add(v any)          { a.add(v, 1) }
func (a *avgAcc) Retract(v any) bool { a.add(v, -1); return true }

func (a *avgAcc) Merge(o Accumulator) {
	s := o.(*avgAcc)
	a.n += s.n
	a.i += s.i
	a.f += s.f
}

func (a *avgAcc) Result() any {
	if a.n == 0 {
		return 0.0
	}
	if a.double {
		return a.f / float64(a.n)
	}
	return float64(a.i) / float64(a.n)
}

func (a *avgAcc) NumberResult() (int64, float64, bool, bool) {
	switch {
	case a.n == 0:
		return 0, 0, false, true
	case a.double:
		return 0, a.f / float64(a.n), false, true
	}
	return 0, float64(a.i) / float64(a.n), false, true
}

func (a *avgAcc) MarshalBinary() ([]byte, error) {
	e := newEncoder()
	e.int(a.n)
	if a.double {
		e.float(a.f)
	} else {
		e.int(a.i)
	}
	return e.done()
}

func (a *avgAcc) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendVarint(append(b, stateVersion), a.n)
	if a.double {
		return binary.BigEndian.AppendUint64(b, math.Float64bits(a.f)), nil
	}
	return binary.AppendVarint(b, a.i), nil
}

func (*avgAcc) ReusableState() {}

func (a *avgAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := avgAcc{double: a.double, n: d.int()}
	if a.double {
		n.f = d.float()
	} else {
		n.i = d.int()
	}
	if err := d.finish(); err != nil {
		return err
	}
	*a = n
	return nil
}

// ---- MIN, MAX

func minMaxAgg(name, desc string, dir int) *Aggregate {
	return &Aggregate{
		Name:        name,
		Description: desc,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := oneArg(name, orderedWant, ts, orderedKinds...); err != nil {
				return nil, err
			}
			return ts[0], nil
		},
		New: func(ts []*types.Type, _ *types.Type, _ []any) (Accumulator, error) {
			return &minMaxAcc{t: ts[0], dir: dir}, nil
		},
	}
}

type minMaxAcc struct {
	t    *types.Type
	dir  int
	best any
}

func (a *minMaxAcc) Add(v any) {
	if v == nil {
		return
	}
	if a.best == nil || compareValues(v, a.best)*a.dir > 0 {
		a.best = types.Own(v)
	}
}

func (a *minMaxAcc) Retract(any) bool { return false }
func (a *minMaxAcc) Merge(o Accumulator) {
	if b := o.(*minMaxAcc).best; b != nil && (a.best == nil || compareValues(b, a.best)*a.dir > 0) {
		a.best = b
	}
}
func (a *minMaxAcc) Result() any { return a.best }

func (a *minMaxAcc) MarshalBinary() ([]byte, error) {
	e := newEncoder()
	if err := e.value(a.best, a.t); err != nil {
		return nil, err
	}
	return e.done()
}

func (a *minMaxAcc) AppendBinary(b []byte) ([]byte, error) {
	return appendValueState(append(b, stateVersion), a.best, a.t)
}

func (*minMaxAcc) ReusableState() {}

func (a *minMaxAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	v := d.value(a.t)
	if err := d.finish(); err != nil {
		return err
	}
	a.best = v
	return nil
}

// ---- EARLIEST_BY_OFFSET, LATEST_BY_OFFSET

func byOffsetAgg(name, desc string, latest bool) *Aggregate {
	nName := "earliestN"
	if latest {
		nName = "latestN"
	}
	const want = "(ANY), (ANY, BOOLEAN), (ANY, INTEGER) or (ANY, INTEGER, BOOLEAN)"
	multi := func(ts []*types.Type) (bool, error) {
		if len(ts) == 0 || len(ts) > 3 || ts[0] == nil {
			return false, badArgs(name, ts, want)
		}
		switch {
		case len(ts) == 1:
			return false, nil
		case len(ts) == 2 && isBoolKind(ts[1]):
			return false, nil
		case len(ts) == 2 && aggIntKind(ts[1]):
			return true, nil
		case len(ts) == 3 && aggIntKind(ts[1]) && isBoolKind(ts[2]):
			return true, nil
		}
		return false, badArgs(name, ts, want)
	}
	return &Aggregate{
		Name:        name,
		Description: desc,
		Literals:    func(n int) int { return max(n-1, 0) },
		Check: func(ts []*types.Type) (*types.Type, error) {
			m, err := multi(ts)
			if err != nil {
				return nil, err
			}
			if m {
				return types.ArrayOf(ts[0]), nil
			}
			return ts[0], nil
		},
		New: func(ts []*types.Type, _ *types.Type, params []any) (Accumulator, error) {
			m, err := multi(ts)
			if err != nil {
				return nil, err
			}
			a := &byOffsetAcc{t: ts[0], n: 1, multi: m, latest: latest, ignoreNulls: true}
			if len(params) != len(ts)-1 {
				return nil, fmt.Errorf("%s: expected %d literal arguments, got %d", name, len(ts)-1, len(params))
			}
			for i, p := range params {
				if aggIntKind(ts[i+1]) {
					if a.n, err = intParam(name, "the number of values", p); err != nil {
						return nil, fmt.Errorf("%s must be 1 or greater", nName)
					}
					continue
				}
				b, ok := p.(bool)
				if !ok {
					return nil, fmt.Errorf("%s: ignoreNulls must be a BOOLEAN literal, got %v", name, p)
				}
				a.ignoreNulls = b
			}
			return a, nil
		},
	}
}

type seqValue struct {
	seq int64
	v   any
}

// byOffsetAcc keeps the first (or last) n values seen, each with the
// sequence number of its arrival.
type byOffsetAcc struct {
	t           *types.Type
	n           int
	multi       bool
	latest      bool
	ignoreNulls bool
	vals        []seqValue
}

func (a *byOffsetAcc) Add(v any) {
	if v == nil && a.ignoreNulls {
		return
	}
	if !a.latest && len(a.vals) >= a.n {
		return
	}
	sv := seqValue{nextSeq(), types.Own(v)}
	if len(a.vals) == a.n {
		// The latest n: the oldest makes room, in place.
		copy(a.vals, a.vals[1:])
		a.vals[a.n-1] = sv
		return
	}
	a.vals = append(a.vals, sv)
	a.trim()
}

func (a *byOffsetAcc) trim() {
	if len(a.vals) <= a.n {
		return
	}
	if a.latest {
		a.vals = append(a.vals[:0:0], a.vals[len(a.vals)-a.n:]...)
	} else {
		a.vals = a.vals[:a.n:a.n]
	}
}

func (a *byOffsetAcc) Retract(any) bool { return false }

func (a *byOffsetAcc) Merge(o Accumulator) {
	a.vals = append(a.vals, o.(*byOffsetAcc).vals...)
	sort.SliceStable(a.vals, func(i, j int) bool { return a.vals[i].seq < a.vals[j].seq })
	a.trim()
}

func (a *byOffsetAcc) Result() any {
	if !a.multi {
		if len(a.vals) == 0 {
			return nil
		}
		return a.vals[0].v
	}
	out := make([]any, len(a.vals))
	for i, sv := range a.vals {
		out[i] = sv.v
	}
	return out
}

func (a *byOffsetAcc) MarshalBinary() ([]byte, error) {
	return marshalNumbered(len(a.vals), func(i int) (int64, any) { return a.vals[i].seq, a.vals[i].v }, a.t)
}

func (a *byOffsetAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := d.count()
	vals := make([]seqValue, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		s := d.int()
		vals = append(vals, seqValue{s, d.value(a.t)})
	}
	if err := d.finish(); err != nil {
		return err
	}
	for _, sv := range vals {
		observeSeq(sv.seq)
	}
	a.vals = vals
	return nil
}

// ---- COLLECT_LIST, COLLECT_SET

func collectCheck(name string) func([]*types.Type) (*types.Type, error) {
	return func(ts []*types.Type) (*types.Type, error) {
		if err := oneArg(name, "(ANY)", ts); err != nil {
			return nil, err
		}
		return types.ArrayOf(ts[0]), nil
	}
}

func collectListAgg() *Aggregate {
	return &Aggregate{
		Name:        "COLLECT_LIST",
		Description: "Returns an array of the values of a column, nulls included, in arrival order.",
		Retractable: true,
		Check:       collectCheck("COLLECT_LIST"),
		// params may hold one value, the configured limit
		// (ksql.functions.collect_list.limit).
		New: func(ts []*types.Type, _ *types.Type, params []any) (Accumulator, error) {
			limit, err := limitParam("COLLECT_LIST", params, 0)
			if err != nil {
				return nil, err
			}
			return &collectListAcc{t: ts[0], limit: limit}, nil
		},
	}
}

type collectListAcc struct {
	t     *types.Type
	limit int
	vals  []any
}

func (a *collectListAcc) Add(v any) {
	if len(a.vals) < a.limit {
		a.vals = append(a.vals, types.Own(v))
	}
}

// Retract removes the last value equal to v.
func (a *collectListAcc) Retract(v any) bool {
	for i := len(a.vals) - 1; i >= 0; i-- {
		if types.Equal(a.vals[i], v) {
			a.vals = append(a.vals[:i], a.vals[i+1:]...)
			break
		}
	}
	return true
}

func (a *collectListAcc) Merge(o Accumulator) {
	for _, v := range o.(*collectListAcc).vals {
		if len(a.vals) < a.limit {
			a.vals = append(a.vals, v)
		}
	}
}

func (a *collectListAcc) Result() any { return append([]any{}, a.vals...) }

func (a *collectListAcc) MarshalBinary() ([]byte, error) { return marshalValues(a.vals, a.t) }

func (a *collectListAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := d.count()
	vals := make([]any, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		vals = append(vals, d.value(a.t))
	}
	if err := d.finish(); err != nil {
		return err
	}
	a.vals = vals
	return nil
}

func collectSetAgg() *Aggregate {
	return &Aggregate{
		Name:        "COLLECT_SET",
		Description: "Returns an array of the distinct values of a column, null included, in order of first arrival.",
		Check:       collectCheck("COLLECT_SET"),
		// params may hold one value, the configured limit
		// (ksql.functions.collect_set.limit).
		New: func(ts []*types.Type, _ *types.Type, params []any) (Accumulator, error) {
			limit, err := limitParam("COLLECT_SET", params, 0)
			if err != nil {
				return nil, err
			}
			return &collectSetAcc{collectListAcc{t: ts[0], limit: limit}}, nil
		},
	}
}

// collectSetAcc is a collectListAcc that skips values it holds already.
// Like ksqlDB's, it applies to streams only and does not retract.
type collectSetAcc struct{ collectListAcc }

func (a *collectSetAcc) Add(v any) {
	for _, w := range a.vals {
		if types.Equal(w, v) {
			return
		}
	}
	a.collectListAcc.Add(v)
}

func (a *collectSetAcc) Retract(any) bool { return false }

func (a *collectSetAcc) Merge(o Accumulator) {
	for _, v := range o.(*collectSetAcc).vals {
		a.Add(v)
	}
}

// ---- TOPK, TOPKDISTINCT

func topkAgg(name, desc string, distinct bool) *Aggregate {
	want := "(T, INTEGER) where T is one of " + orderedWant
	if !distinct {
		want += ", or (T, ANY, ..., INTEGER)"
	}
	check := func(ts []*types.Type) error {
		if len(ts) < 2 || !aggIntKind(ts[len(ts)-1]) || (distinct && len(ts) != 2) {
			return badArgs(name, ts, want)
		}
		for _, t := range ts[1 : len(ts)-1] {
			if t == nil {
				return badArgs(name, ts, want)
			}
		}
		return oneArg(name, want, ts[:1], orderedKinds...)
	}
	return &Aggregate{
		Name:        name,
		Description: desc,
		Literals:    func(n int) int { return min(n, 1) },
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := check(ts); err != nil {
				return nil, err
			}
			if len(ts) == 2 {
				return types.ArrayOf(ts[0]), nil
			}
			fields := []types.Field{{Name: "sort_col", Type: ts[0]}}
			for i, t := range ts[1 : len(ts)-1] {
				fields = append(fields, types.Field{Name: fmt.Sprintf("col%d", i), Type: t})
			}
			return types.ArrayOf(types.StructOf(fields...)), nil
		},
		New: func(ts []*types.Type, ret *types.Type, params []any) (Accumulator, error) {
			if err := check(ts); err != nil {
				return nil, err
			}
			if len(params) != 1 {
				return nil, fmt.Errorf("%s: expected 1 literal argument, got %d", name, len(params))
			}
			k, err := intParam(name, "k", params[0])
			if err != nil {
				return nil, err
			}
			return &topkAcc{t: ret.Elem, k: k, distinct: distinct, rows: len(ts) > 2}, nil
		},
	}
}

// topkAcc keeps the k highest values, highest first; values equal to one
// kept go after it. With rows set, each value is a STRUCT of the sort
// value and the other value arguments, ordered by the sort value.
type topkAcc struct {
	t        *types.Type
	k        int
	distinct bool
	rows     bool
	vals     []any
}

func (a *topkAcc) key(v any) any {
	if a.rows {
		return v.(types.StructValue)[0]
	}
	return v
}

func (a *topkAcc) Add(v any) {
	if a.rows {
		row, ok := v.([]any)
		if !ok || len(row) == 0 {
			return
		}
		a.insert(types.StructValue(row)) // insert owns what it keeps
		return
	}
	a.insert(v)
}

func (a *topkAcc) insert(v any) {
	kv := a.key(v)
	if kv == nil {
		return
	}
	// first position whose value is lower than v
	i := sort.Search(len(a.vals), func(i int) bool { return compareValues(a.key(a.vals[i]), kv) < 0 })
	if i >= a.k {
		return
	}
	if a.distinct && i > 0 && compareValues(a.key(a.vals[i-1]), kv) == 0 {
		return
	}
	a.vals = append(a.vals, nil)
	copy(a.vals[i+1:], a.vals[i:])
	a.vals[i] = types.Own(v)
	if len(a.vals) > a.k {
		a.vals = a.vals[:a.k]
	}
}

func (a *topkAcc) Retract(any) bool { return false }

func (a *topkAcc) Merge(o Accumulator) {
	for _, v := range o.(*topkAcc).vals {
		a.insert(v)
	}
}

func (a *topkAcc) Result() any { return append([]any{}, a.vals...) }

func (a *topkAcc) MarshalBinary() ([]byte, error) { return marshalValues(a.vals, a.t) }

func (a *topkAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := d.count()
	vals := make([]any, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		v := d.value(a.t)
		if d.err != nil {
			break
		}
		if !a.valid(v) || n > a.k ||
			(i > 0 && compareValues(a.key(vals[i-1]), a.key(v)) < 0) {
			d.err = errBadState
			break
		}
		vals = append(vals, v)
	}
	if err := d.finish(); err != nil {
		return err
	}
	a.vals = vals
	return nil
}

// valid reports whether v can be an element of the state.
func (a *topkAcc) valid(v any) bool {
	if a.rows {
		r, ok := v.(types.StructValue)
		return ok && len(r) > 0 && r[0] != nil
	}
	return v != nil
}

// ---- HISTOGRAM

func histogramAgg() *Aggregate {
	return &Aggregate{
		Name:        "HISTOGRAM",
		Description: "Returns a map from each distinct value of a STRING column, null included, to the number of times it occurs.",
		Retractable: true,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := oneArg("HISTOGRAM", "(STRING)", ts, types.String); err != nil {
				return nil, err
			}
			return types.MapOf(types.StringType, types.BigintType), nil
		},
		// params may hold one value, the most distinct values counted.
		New: func(_ []*types.Type, _ *types.Type, params []any) (Accumulator, error) {
			limit, err := limitParam("HISTOGRAM", params, 0)
			if err != nil {
				return nil, err
			}
			return &histogramAcc{limit: limit, index: map[any]int{}}, nil
		},
	}
}

// histogramAcc counts values in order of first arrival; null is counted
// as a value of its own, as ksqlDB does.
type histogramAcc struct {
	limit  int
	keys   []any
	counts []int64
	index  map[any]int
}

func (a *histogramAcc) addN(k any, n int64) {
	if i, ok := a.index[k]; ok {
		a.counts[i] += n
		if a.counts[i] <= 0 {
			a.remove(i)
		}
		return
	}
	if n > 0 && len(a.keys) < a.limit {
		k = types.Own(k)
		a.index[k] = len(a.keys)
		a.keys = append(a.keys, k)
		a.counts = append(a.counts, n)
	}
}

func (a *histogramAcc) remove(i int) {
	delete(a.index, a.keys[i])
	a.keys = append(a.keys[:i], a.keys[i+1:]...)
	a.counts = append(a.counts[:i], a.counts[i+1:]...)
	for j := i; j < len(a.keys); j++ {
		a.index[a.keys[j]] = j
	}
}

// histogramKey keeps strings and null, the values a STRING column holds.
func histogramKey(v any) (any, bool) {
	switch v.(type) {
	case nil, string:
		return v, true
	}
	return nil, false
}

func (a *histogramAcc) Add(v any) {
	if k, ok := histogramKey(v); ok {
		a.addN(k, 1)
	}
}

func (a *histogramAcc) Retract(v any) bool {
	if k, ok := histogramKey(v); ok {
		a.addN(k, -1)
	}
	return true
}

func (a *histogramAcc) Merge(o Accumulator) {
	h := o.(*histogramAcc)
	for i, k := range h.keys {
		a.addN(k, h.counts[i])
	}
}

func (a *histogramAcc) Result() any {
	m := &types.MapValue{Keys: make([]any, len(a.keys)), Values: make([]any, len(a.keys))}
	for i, k := range a.keys {
		m.Keys[i] = k
		m.Values[i] = a.counts[i]
	}
	return m
}

func (a *histogramAcc) MarshalBinary() ([]byte, error) {
	e := newEncoder()
	e.uint(uint64(len(a.keys)))
	for i, k := range a.keys {
		if err := e.value(k, types.StringType); err != nil {
			return nil, err
		}
		e.int(a.counts[i])
	}
	return e.done()
}

func (a *histogramAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := d.count()
	h := histogramAcc{limit: a.limit, index: make(map[any]int, n)}
	for i := 0; i < n && d.err == nil; i++ {
		k := d.value(types.StringType)
		c := d.int()
		if _, dup := h.index[k]; dup || c <= 0 {
			d.err = errBadState
			break
		}
		h.index[k] = len(h.keys)
		h.keys = append(h.keys, k)
		h.counts = append(h.counts, c)
	}
	if err := d.finish(); err != nil {
		return err
	}
	*a = h
	return nil
}

// ---- STDDEV_SAMPLE, STDDEV_SAMP

func stddevAgg(name, desc string, sqrt bool) *Aggregate {
	return &Aggregate{
		Name:        name,
		Description: desc,
		Retractable: true,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := oneArg(name, "(INTEGER), (BIGINT) or (DOUBLE)", ts,
				types.Int, types.Bigint, types.Double); err != nil {
				return nil, err
			}
			return types.DoubleType, nil
		},
		New: func([]*types.Type, *types.Type, []any) (Accumulator, error) {
			return &stddevAcc{sqrt: sqrt}, nil
		},
	}
}

// stddevAcc keeps the count, sum and sum of squared deviations (m2) of the
// non-null values, updated one value at a time.
type stddevAcc struct {
	sqrt bool
	n    int64
	sum  float64
	m2   float64
}

func aggFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func (a *stddevAcc) Add(v any) {
	x, ok := aggFloat(v)
	if !ok {
		return
	}
	if a.n == 0 {
		a.n, a.sum, a.m2 = 1, x, 0
		return
	}
	n := float64(a.n + 1)
	sum := a.sum + x
	t := n*x - sum
	a.m2 += t * t / (n * float64(a.n))
	a.n++
	a.sum = sum
}

func (a *stddevAcc) Retract(v any) bool {
	x, ok := aggFloat(v)
	if !ok {
		return true
	}
	if a.n <= 1 {
		a.n, a.sum, a.m2 = 0, 0, 0
		return true
	}
	n := float64(a.n)
	t := n*x - a.sum
	a.m2 -= t * t / (n * (n - 1))
	if a.m2 < 0 {
		a.m2 = 0
	}
	a.n--
	a.sum -= x
	return true
}

func (a *stddevAcc) Merge(o Accumulator) {
	s := o.(*stddevAcc)
	switch {
	case s.n == 0:
		return
	case a.n == 0:
		a.n, a.sum, a.m2 = s.n, s.sum, s.m2
		return
	}
	n1, n2 := float64(a.n), float64(s.n)
	delta := s.sum/n2 - a.sum/n1
	a.m2 += s.m2 + delta*delta*n1*n2/(n1+n2)
	a.n += s.n
	a.sum += s.sum
}

func (a *stddevAcc) Result() any {
	if a.n < 2 {
		return 0.0
	}
	v := a.m2 / float64(a.n-1)
	if a.sqrt {
		return math.Sqrt(v)
	}
	return v
}

func (a *stddevAcc) MarshalBinary() ([]byte, error) {
	e := newEncoder()
	e.int(a.n)
	e.float(a.sum)
	e.float(a.m2)
	return e.done()
}

func (a *stddevAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := stddevAcc{sqrt: a.sqrt, n: d.int(), sum: d.float(), m2: d.float()}
	if err := d.finish(); err != nil {
		return err
	}
	*a = n
	return nil
}

// ---- SUM_LIST

func sumListAgg() *Aggregate {
	const want = "(ARRAY<INTEGER>), (ARRAY<BIGINT>) or (ARRAY<DOUBLE>)"
	return &Aggregate{
		Name:        "SUM_LIST",
		Description: "Returns the sum of the non-null elements of the arrays in a column, 0 when there are none.",
		Retractable: true,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := oneArg("SUM_LIST", want, ts, types.Array); err != nil {
				return nil, err
			}
			switch ts[0].Elem.Kind {
			case types.Int, types.Bigint, types.Double:
				return ts[0].Elem, nil
			}
			return nil, badArgs("SUM_LIST", ts, want)
		},
		New: func(_ []*types.Type, ret *types.Type, _ []any) (Accumulator, error) {
			return &sumListAcc{sumAcc{t: ret}}, nil
		},
	}
}

// sumListAcc is a sumAcc fed every element of each array.
type sumListAcc struct{ sumAcc }

func (a *sumListAcc) Add(v any) {
	xs, _ := v.([]any)
	for _, x := range xs {
		a.add(x, 1)
	}
}

func (a *sumListAcc) Retract(v any) bool {
	xs, _ := v.([]any)
	for _, x := range xs {
		a.add(x, -1)
	}
	return true
}

func (a *sumListAcc) Merge(o Accumulator) { a.sumAcc.Merge(&o.(*sumListAcc).sumAcc) }

// ---- ATTR

func attrAgg() *Aggregate {
	return &Aggregate{
		Name:        "ATTR",
		Description: "Returns the value of a column if every row of the group holds that same value, and null otherwise.",
		Retractable: true,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := oneArg("ATTR", "(ANY)", ts); err != nil {
				return nil, err
			}
			return ts[0], nil
		},
		New: func(ts []*types.Type, _ *types.Type, _ []any) (Accumulator, error) {
			return &attrAcc{t: ts[0]}, nil
		},
	}
}

type countedValue struct {
	v any
	n int64
}

// attrAcc counts the rows holding each distinct value, null included.
type attrAcc struct {
	t    *types.Type
	vals []countedValue
}

func (a *attrAcc) addN(v any, n int64) {
	for i := range a.vals {
		if types.Equal(a.vals[i].v, v) {
			if a.vals[i].n += n; a.vals[i].n <= 0 {
				a.vals = append(a.vals[:i], a.vals[i+1:]...)
			}
			return
		}
	}
	if n > 0 {
		a.vals = append(a.vals, countedValue{types.Own(v), n})
	}
}

func (a *attrAcc) Add(v any)          { a.addN(v, 1) }
func (a *attrAcc) Retract(v any) bool { a.addN(v, -1); return true }

func (a *attrAcc) Merge(o Accumulator) {
	for _, cv := range o.(*attrAcc).vals {
		a.addN(cv.v, cv.n)
	}
}

func (a *attrAcc) Result() any {
	if len(a.vals) != 1 {
		return nil
	}
	return a.vals[0].v
}

func (a *attrAcc) MarshalBinary() ([]byte, error) {
	return marshalNumbered(len(a.vals), func(i int) (int64, any) { return a.vals[i].n, a.vals[i].v }, a.t)
}

func (a *attrAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := d.count()
	vals := make([]countedValue, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		c := d.int()
		v := d.value(a.t)
		if c <= 0 {
			d.err = errBadState
		}
		vals = append(vals, countedValue{v, c})
	}
	if err := d.finish(); err != nil {
		return err
	}
	a.vals = vals
	return nil
}

// ---- CORRELATION

func correlationAgg() *Aggregate {
	const want = "(DOUBLE, DOUBLE), (BIGINT, BIGINT) or (INTEGER, INTEGER)"
	return &Aggregate{
		Name:        "CORRELATION",
		Description: "Returns the Pearson correlation coefficient of two numeric columns, over the rows where neither is null.",
		Retractable: true,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 2 {
				return nil, badArgs("CORRELATION", ts, want)
			}
			for _, t := range ts {
				if t == nil || (t.Kind != types.Int && t.Kind != types.Bigint && t.Kind != types.Double) {
					return nil, badArgs("CORRELATION", ts, want)
				}
			}
			return types.DoubleType, nil
		},
		New: func([]*types.Type, *types.Type, []any) (Accumulator, error) {
			return &corrAcc{}, nil
		},
	}
}

// corrAcc keeps the running sums of the single-pass Pearson formula;
// like ksqlDB's, its result is NaN while the coefficient is undefined.
type corrAcc struct {
	n                     int64
	sx, sy, sxx, syy, sxy float64
}

func (a *corrAcc) add(v any, sign float64) {
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return
	}
	x, okx := aggFloat(pair[0])
	y, oky := aggFloat(pair[1])
	if !okx || !oky {
		return
	}
	a.n += int64(sign)
	a.sx += sign * x
	a.sy += sign * y
	a.sxx += sign * x * x
	a.syy += sign * y * y
	a.sxy += sign * x * y
}

func (a *corrAcc) Add(v any)          { a.add(v, 1) }
func (a *corrAcc) Retract(v any) bool { a.add(v, -1); return true }

func (a *corrAcc) Merge(o Accumulator) {
	s := o.(*corrAcc)
	a.n += s.n
	a.sx += s.sx
	a.sy += s.sy
	a.sxx += s.sxx
	a.syy += s.syy
	a.sxy += s.sxy
}

func (a *corrAcc) Result() any {
	n := float64(a.n)
	num := n*a.sxy - a.sx*a.sy
	dx := n*a.sxx - a.sx*a.sx
	dy := n*a.syy - a.sy*a.sy
	return num / math.Sqrt(dx*dy)
}

func (a *corrAcc) MarshalBinary() ([]byte, error) {
	e := newEncoder()
	e.int(a.n)
	for _, f := range []float64{a.sx, a.sy, a.sxx, a.syy, a.sxy} {
		e.float(f)
	}
	return e.done()
}

func (a *corrAcc) UnmarshalBinary(b []byte) error {
	d := newDecoder(b)
	n := corrAcc{n: d.int()}
	for _, f := range []*float64{&n.sx, &n.sy, &n.sxx, &n.syy, &n.sxy} {
		*f = d.float()
	}
	if err := d.finish(); err != nil {
		return err
	}
	*a = n
	return nil
}

// marshalValues encodes a list of values of type t: the state of the
// accumulators that keep values.
func marshalValues(vals []any, t *types.Type) ([]byte, error) {
	e := newEncoder()
	e.uint(uint64(len(vals)))
	for _, v := range vals {
		if err := e.value(v, t); err != nil {
			return nil, err
		}
	}
	return e.done()
}

// marshalNumbered encodes n values of type t, each with a number (an
// arrival sequence, a count): the state of accumulators that keep both.
func marshalNumbered(n int, at func(i int) (int64, any), t *types.Type) ([]byte, error) {
	e := newEncoder()
	e.uint(uint64(n))
	for i := 0; i < n; i++ {
		num, v := at(i)
		e.int(num)
		if err := e.value(v, t); err != nil {
			return nil, err
		}
	}
	return e.done()
}
