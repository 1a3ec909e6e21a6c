package qtt

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
)

// Actual is an output record read back from a sink topic, with its key and
// value turned into generic JSON values (nil, bool, json.Number, string,
// []any, map[string]any) the way the expected side is written.
type Actual struct {
	Key   any
	Value any
	// Window is the window of a windowed key, nil for a plain key.
	Window    *Window
	Timestamp int64
	Headers   []ActualHeader
	// Partition and Offset locate the record, for messages.
	Partition int32
	Offset    int64
}

// ActualHeader is a header of an Actual record.
type ActualHeader struct {
	Key   string
	Value []byte
}

// Shape gives the SQL types the compared keys and values have, so that
// DOUBLE and DECIMAL numbers follow their rules. A nil type compares
// untyped: numbers match when their text is equal or, as floats, within
// the DOUBLE tolerance.
type Shape struct {
	Key, Value *types.Type
}

// DoubleTolerance is how far apart two DOUBLE values may be and still
// match.
const DoubleTolerance = 1e-6

// Expectation tunes a comparison of records.
type Expectation struct {
	// IgnoreZeroTimestamp makes an expected timestamp of 0 match any
	// timestamp (cases whose data comes only from INSERT VALUES).
	IgnoreZeroTimestamp bool
}

// Mismatch describes the first difference between expected and actual
// records of a topic.
type Mismatch struct {
	Topic string
	// Index is the position of the first differing record.
	Index int
	// What says what differs: "key", "value", "timestamp", "window",
	// "headers", "missing record" or "extra record".
	What     string
	Expected string
	Actual   string
	// Diff lists both sides record by record, marking differing lines.
	Diff string
}

// Error says which record of which topic differs, and how.
func (m *Mismatch) Error() string {
	return fmt.Sprintf("topic %s record %d: %s differs: expected %s, got %s", m.Topic, m.Index, m.What, m.Expected, m.Actual)
}

// CompareRecords checks actual against the expected records of topic: the
// same count, and each record equal in order. It returns nil when they
// match.
func CompareRecords(topic string, expected []Record, actual []Actual, shape Shape, ex Expectation) *Mismatch {
	var first *Mismatch
	marks := map[int]bool{}
	n := max(len(expected), len(actual))
	for i := 0; i < n; i++ {
		var m *Mismatch
		switch {
		case i >= len(actual):
			m = &Mismatch{What: "missing record", Expected: FormatRecord(expected[i]), Actual: "nothing"}
		case i >= len(expected):
			m = &Mismatch{What: "extra record", Expected: "nothing", Actual: FormatActual(actual[i])}
		default:
			m = compareOne(expected[i], actual[i], shape, ex)
		}
		if m == nil {
			continue
		}
		marks[i] = true
		if first == nil {
			m.Topic, m.Index = topic, i
			first = m
		}
	}
	if first == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "topic %s: expected %d records, got %d\n", topic, len(expected), len(actual))
	for i := 0; i < n; i++ {
		mark := " "
		if marks[i] {
			mark = "!"
		}
		e, a := "-", "-"
		if i < len(expected) {
			e = FormatRecord(expected[i])
		}
		if i < len(actual) {
			a = FormatActual(actual[i])
		}
		fmt.Fprintf(&b, "%s %3d expected %s\n      actual   %s\n", mark, i, e, a)
	}
	first.Diff = b.String()
	return first
}

func compareOne(e Record, a Actual, shape Shape, ex Expectation) *Mismatch {
	if m := compareWindow(e.Window, a.Window); m != nil {
		return m
	}
	ek, err := decodeJSON(e.Key)
	if err != nil {
		return &Mismatch{What: "key", Expected: "unreadable key " + string(e.Key), Actual: render(a.Key)}
	}
	if !Equal(ek, a.Key, shape.Key) {
		return &Mismatch{What: "key", Expected: render(ek), Actual: render(a.Key)}
	}
	ev, err := decodeJSON(e.Value)
	if err != nil {
		return &Mismatch{What: "value", Expected: "unreadable value " + string(e.Value), Actual: render(a.Value)}
	}
	ev = throughSchema(ev, shape.Value)
	if !Equal(ev, a.Value, shape.Value) {
		return &Mismatch{What: "value", Expected: render(ev), Actual: render(a.Value)}
	}
	if e.Timestamp != nil && !(ex.IgnoreZeroTimestamp && *e.Timestamp == 0) && *e.Timestamp != a.Timestamp {
		return &Mismatch{What: "timestamp", Expected: fmt.Sprint(*e.Timestamp), Actual: fmt.Sprint(a.Timestamp)}
	}
	if e.Headers != nil && !equalHeaders(e.Headers, a.Headers) {
		return &Mismatch{What: "headers", Expected: fmt.Sprint(e.Headers), Actual: fmt.Sprint(a.Headers)}
	}
	return nil
}

// compareWindow checks the window of a windowed key: start, end and type.
func compareWindow(e, a *Window) *Mismatch {
	text := func(w *Window) string {
		if w == nil {
			return "an unwindowed key"
		}
		return fmt.Sprintf("window [%d, %d] %s", w.Start, w.End, w.Type)
	}
	switch {
	case e == nil && a == nil:
		return nil
	case e == nil || a == nil || e.Start != a.Start || e.End != a.End || !strings.EqualFold(e.Type, a.Type):
		return &Mismatch{What: "window", Expected: text(e), Actual: text(a)}
	}
	return nil
}

func equalHeaders(e []Header, a []ActualHeader) bool {
	if len(e) != len(a) {
		return false
	}
	for i := range e {
		if e[i].Key != a[i].Key {
			return false
		}
		if e[i].Value == nil {
			if a[i].Value != nil {
				return false
			}
			continue
		}
		v, err := base64.StdEncoding.DecodeString(*e[i].Value)
		if err != nil || !bytes.Equal(v, a[i].Value) {
			return false
		}
	}
	return true
}

// throughSchema reads an expected object value as ksqlDB's test harness
// does, through the sink's value schema: fields the schema lacks are
// dropped and schema fields the object lacks are null.
func throughSchema(v any, t *types.Type) any {
	obj, ok := v.(map[string]any)
	if !ok || t == nil || t.Kind != types.Struct {
		return v
	}
	out := make(map[string]any, len(t.Fields))
	for _, f := range t.Fields {
		var fv any
		if x, found := obj[f.Name]; found {
			fv = x
		} else {
			for k, x := range obj {
				if strings.EqualFold(k, f.Name) {
					fv = x
					break
				}
			}
		}
		out[f.Name] = fv
	}
	return out
}

// decodeJSON reads raw JSON into a generic value with json.Number numbers;
// nil or empty raw is null.
func decodeJSON(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

// Equal reports whether the expected generic JSON value exp matches the
// actual value act of SQL type t (nil: untyped), with the corpus rules:
// DOUBLE within DoubleTolerance; DECIMAL equal in value and scale (an
// integer literal matches scale 0 only); an expected object field name also
// matches the upper-cased actual name; objects have the same field count.
func Equal(exp, act any, t *types.Type) bool {
	if a, ok := act.(rawText); ok {
		return equalText(exp, string(a), t)
	}
	switch e := exp.(type) {
	case nil:
		return act == nil
	case bool:
		a, ok := act.(bool)
		return ok && a == e
	case string:
		if t != nil && t.Kind == types.Decimal {
			// ksqlDB's runner reads an expected DECIMAL through the
			// column's schema, so a string such as "005.4" stands for
			// the decimal it spells.
			if a, ok := act.(json.Number); ok {
				return equalDecimal(e, string(a))
			}
		}
		a, ok := act.(string)
		return ok && a == e
	case json.Number:
		a, ok := act.(json.Number)
		return ok && equalNumber(e, a, t)
	case []any:
		a, ok := act.([]any)
		if !ok || len(a) != len(e) {
			return false
		}
		var et *types.Type
		if t != nil && t.Kind == types.Array {
			et = t.Elem
		}
		for i := range e {
			if !Equal(e[i], a[i], et) {
				return false
			}
		}
		return true
	case map[string]any:
		a, ok := act.(map[string]any)
		if !ok || len(a) != len(e) {
			return false
		}
		for k, ev := range e {
			ak, av, found := lookupField(a, k, t == nil || t.Kind != types.Map)
			if !found {
				return false
			}
			if !Equal(ev, av, fieldType(t, ak)) {
				return false
			}
		}
		return true
	}
	return false
}

// equalText compares an expected value with an actual one that is only
// text: a string must be equal, anything else must be written the same.
func equalText(exp any, act string, t *types.Type) bool {
	switch e := exp.(type) {
	case nil:
		return false
	case string:
		return e == act
	case json.Number:
		a := json.Number(act)
		if _, err := a.Float64(); err != nil {
			return false
		}
		return equalNumber(e, a, t)
	}
	return render(exp) == act
}

// lookupField finds field k of an actual object: by exact name, then (when
// fold) its upper-cased name or any case-insensitive match.
func lookupField(a map[string]any, k string, fold bool) (string, any, bool) {
	if v, ok := a[k]; ok {
		return k, v, true
	}
	if !fold {
		return "", nil, false
	}
	if v, ok := a[strings.ToUpper(k)]; ok {
		return strings.ToUpper(k), v, true
	}
	for ak, v := range a {
		if strings.EqualFold(ak, k) {
			return ak, v, true
		}
	}
	return "", nil, false
}

// fieldType is the type of field name of an object of type t.
func fieldType(t *types.Type, name string) *types.Type {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case types.Map:
		return t.Elem
	case types.Struct:
		for _, f := range t.Fields {
			if f.Name == name {
				return f.Type
			}
		}
		for _, f := range t.Fields {
			if strings.EqualFold(f.Name, name) {
				return f.Type
			}
		}
	}
	return nil
}

func equalNumber(e, a json.Number, t *types.Type) bool {
	if e == a {
		return true
	}
	kind := types.Unknown
	if t != nil {
		kind = t.Kind
	}
	switch kind {
	case types.Decimal:
		return equalDecimal(string(e), string(a))
	case types.Int, types.Bigint, types.Timestamp, types.Date, types.Time:
		x, okx := new(big.Int).SetString(string(e), 10)
		y, oky := new(big.Int).SetString(string(a), 10)
		return okx && oky && x.Cmp(y) == 0
	}
	x, errx := e.Float64()
	y, erry := a.Float64()
	if errx != nil || erry != nil {
		return false
	}
	return x == y || math.Abs(x-y) <= DoubleTolerance
}

// equalDecimal compares two decimal literals as Java's BigDecimal.equals
// does: the same value and the same scale.
func equalDecimal(e, a string) bool {
	ue, se, ok1 := unscaled(e)
	ua, sa, ok2 := unscaled(a)
	return ok1 && ok2 && se == sa && ue.Cmp(ua) == 0
}

// unscaled splits a decimal literal (with an optional exponent) into its
// unscaled value and scale, as BigDecimal(String) does.
func unscaled(s string) (*big.Int, int, bool) {
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		var err error
		if _, err = fmt.Sscan(s[i+1:], &exp); err != nil {
			return nil, 0, false
		}
		s = s[:i]
	}
	scale := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		scale = len(s) - i - 1
		s = s[:i] + s[i+1:]
	}
	u, ok := new(big.Int).SetString(s, 10)
	return u, scale - exp, ok
}

// FormatRecord renders an expected record on one line.
func FormatRecord(r Record) string {
	var b strings.Builder
	k, _ := decodeJSON(r.Key)
	v, _ := decodeJSON(r.Value)
	fmt.Fprintf(&b, "key=%s value=%s", render(k), render(v))
	if r.Timestamp != nil {
		fmt.Fprintf(&b, " ts=%d", *r.Timestamp)
	}
	if r.Window != nil {
		fmt.Fprintf(&b, " window=[%d,%d]", r.Window.Start, r.Window.End)
	}
	return b.String()
}

// FormatActual renders an actual record on one line.
func FormatActual(a Actual) string {
	s := fmt.Sprintf("key=%s value=%s ts=%d", render(a.Key), render(a.Value), a.Timestamp)
	if a.Window != nil {
		s += fmt.Sprintf(" window=[%d,%d]", a.Window.Start, a.Window.End)
	}
	return s
}

// render prints a generic JSON value compactly, object fields sorted.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
