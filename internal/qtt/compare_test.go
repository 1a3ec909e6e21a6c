package qtt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

func ts(ms int64) *int64 { return &ms }

func rec(key, value string, t *int64) Record {
	r := Record{Topic: "OUT", Value: json.RawMessage(value), Timestamp: t}
	if key != "" {
		r.Key = json.RawMessage(key)
	}
	return r
}

func act(t *testing.T, key, value string, ms int64) Actual {
	t.Helper()
	a := Actual{Timestamp: ms}
	var err error
	if a.Key, err = decodeJSON(json.RawMessage(key)); err != nil {
		t.Fatal(err)
	}
	if a.Value, err = decodeJSON(json.RawMessage(value)); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCompareRecords: an exact match passes; a wrong order, key, value or
// timestamp, one extra record and one missing record each fail, naming
// what differs.
func TestCompareRecords(t *testing.T) {
	shape := Shape{Key: types.IntType, Value: types.StructOf(types.Field{Name: "NAME", Type: types.StringType}, types.Field{Name: "V", Type: types.DoubleType})}
	expected := []Record{
		rec(`1`, `{"NAME":"a","V":1.5}`, ts(10)),
		rec(`2`, `{"NAME":"b","V":2.5}`, ts(20)),
		rec(``, `{"NAME":"c","V":null}`, nil),
	}
	good := func() []Actual {
		return []Actual{
			act(t, `1`, `{"NAME":"a","V":1.5}`, 10),
			act(t, `2`, `{"NAME":"b","V":2.5}`, 20),
			act(t, `null`, `{"NAME":"c","V":null}`, 99),
		}
	}
	if m := CompareRecords("OUT", expected, good(), shape, Expectation{}); m != nil {
		t.Fatalf("exact match failed: %v\n%s", m, m.Diff)
	}
	for _, tc := range []struct {
		name   string
		change func([]Actual) []Actual
		what   string
		index  int
	}{
		{"order", func(a []Actual) []Actual { a[0], a[1] = a[1], a[0]; return a }, "key", 0},
		{"key", func(a []Actual) []Actual { a[1] = act(t, `3`, `{"NAME":"b","V":2.5}`, 20); return a }, "key", 1},
		{"null key", func(a []Actual) []Actual { a[2] = act(t, `0`, `{"NAME":"c","V":null}`, 0); return a }, "key", 2},
		{"value", func(a []Actual) []Actual { a[1] = act(t, `2`, `{"NAME":"B","V":2.5}`, 20); return a }, "value", 1},
		{"value field missing", func(a []Actual) []Actual { a[1] = act(t, `2`, `{"NAME":"b"}`, 20); return a }, "value", 1},
		{"value field extra", func(a []Actual) []Actual { a[1] = act(t, `2`, `{"NAME":"b","V":2.5,"X":1}`, 20); return a }, "value", 1},
		{"tombstone", func(a []Actual) []Actual { a[1] = act(t, `2`, `null`, 20); return a }, "value", 1},
		{"timestamp", func(a []Actual) []Actual { a[0].Timestamp = 11; return a }, "timestamp", 0},
		{"extra record", func(a []Actual) []Actual { return append(a, act(t, `4`, `{"NAME":"d","V":1}`, 0)) }, "extra record", 3},
		{"missing record", func(a []Actual) []Actual { return a[:2] }, "missing record", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := CompareRecords("OUT", expected, tc.change(good()), shape, Expectation{})
			if m == nil {
				t.Fatal("a wrong output passed")
			}
			if m.What != tc.what || m.Index != tc.index {
				t.Errorf("got %s at record %d, want %s at %d", m.What, m.Index, tc.what, tc.index)
			}
			if !strings.Contains(m.Diff, "!") {
				t.Errorf("the diff marks no record:\n%s", m.Diff)
			}
		})
	}
}

func TestCompareWindowIsAMismatch(t *testing.T) {
	e := rec(`1`, `{"C":1}`, nil)
	e.Window = &Window{Start: 0, End: 1000, Type: "time"}
	if m := CompareRecords("OUT", []Record{e}, []Actual{act(t, `1`, `{"C":1}`, 0)}, Shape{}, Expectation{}); m == nil || m.What != "window" {
		t.Fatalf("windowed expectation: got %v", m)
	}
}

func TestIgnoreZeroTimestamp(t *testing.T) {
	e := []Record{rec(`1`, `{"C":1}`, ts(0))}
	a := []Actual{act(t, `1`, `{"C":1}`, 1234)}
	if m := CompareRecords("OUT", e, a, Shape{}, Expectation{IgnoreZeroTimestamp: true}); m != nil {
		t.Errorf("timestamp 0 checked in an INSERT VALUES case: %v", m)
	}
	if m := CompareRecords("OUT", e, a, Shape{}, Expectation{}); m == nil {
		t.Error("timestamp 0 not checked in a case with inputs")
	}
}

func TestEqualNumbers(t *testing.T) {
	dbl, dec := types.DoubleType, types.DecimalOf(4, 2)
	for _, tc := range []struct {
		exp, act string
		t        *types.Type
		want     bool
	}{
		{`1.0`, `1.0000001`, dbl, true},
		{`1.0`, `1.00001`, dbl, false},
		{`0`, `0.0`, dbl, true},
		{`-3.5`, `-3.4999995`, dbl, true},
		{`1.10`, `1.10`, dec, true},
		{`1.10`, `1.1`, dec, false},
		{`1`, `1.00`, dec, false},
		{`1`, `1`, types.DecimalOf(2, 0), true},
		{`12.30`, `1230E-2`, dec, true},
		{`1.0`, `1.0000001`, dec, false},
		{`5`, `5`, types.BigintType, true},
		{`5`, `5.0`, types.BigintType, false},
		{`9223372036854775807`, `9223372036854775807`, types.BigintType, true},
		{`2.5`, `2.5000001`, nil, true},
		// An expected DECIMAL written as a string is the decimal it
		// spells, scale included; a string is no number elsewhere.
		{`"005.4"`, `5.4`, types.DecimalOf(4, 1), true},
		{`"1.0"`, `1.0`, types.DecimalOf(2, 1), true},
		{`"1.0"`, `1.00`, types.DecimalOf(3, 2), false},
		{`"1.0"`, `1.0`, dbl, false},
		{`"1.0"`, `1.0`, nil, false},
	} {
		e, _ := decodeJSON(json.RawMessage(tc.exp))
		a, _ := decodeJSON(json.RawMessage(tc.act))
		if got := Equal(e, a, tc.t); got != tc.want {
			t.Errorf("Equal(%s, %s, %v) = %v, want %v", tc.exp, tc.act, tc.t, got, tc.want)
		}
	}
}

func TestEqualFieldNames(t *testing.T) {
	st := types.StructOf(types.Field{Name: "ID", Type: types.IntType}, types.Field{Name: "S", Type: types.StructOf(types.Field{Name: "F1", Type: types.DoubleType})})
	for _, tc := range []struct {
		exp, act string
		t        *types.Type
		want     bool
	}{
		{`{"id":1,"s":{"f1":2.0}}`, `{"ID":1,"S":{"F1":2.0000001}}`, st, true},
		{`{"Id":1,"S":{"F1":2}}`, `{"ID":1,"S":{"F1":2}}`, nil, true},
		{`{"ID":1}`, `{"id":1}`, nil, true},
		{`{"ID":1,"X":null}`, `{"ID":1}`, nil, false},
		{`{"a":1}`, `{"A":1}`, types.MapOf(types.StringType, types.IntType), false},
		{`[1,2]`, `[1,2]`, types.ArrayOf(types.IntType), true},
		{`[1,2]`, `[2,1]`, types.ArrayOf(types.IntType), false},
		{`"a"`, `"a"`, types.StringType, true},
		{`"1"`, `1`, types.StringType, false},
		{`true`, `true`, types.BooleanType, true},
		{`null`, `false`, types.BooleanType, false},
	} {
		e, _ := decodeJSON(json.RawMessage(tc.exp))
		a, _ := decodeJSON(json.RawMessage(tc.act))
		if got := Equal(e, a, tc.t); got != tc.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tc.exp, tc.act, got, tc.want)
		}
	}
}

func TestEqualRawText(t *testing.T) {
	for _, tc := range []struct {
		exp, act string
		want     bool
	}{
		{`"1,one,100"`, `1,one,100`, true},
		{`"1,one,100"`, `1,one,101`, false},
		{`7`, `7`, true},
		{`7`, `8`, false},
		{`null`, `null`, false},
	} {
		e, _ := decodeJSON(json.RawMessage(tc.exp))
		if got := Equal(e, rawText(tc.act), nil); got != tc.want {
			t.Errorf("Equal(%s, text %q) = %v, want %v", tc.exp, tc.act, got, tc.want)
		}
	}
}

// TestInterleave: the records one input caused in two partitions follow
// the expected order where an interleaving allows it, and each partition
// keeps its own order even where the expected order differs.
func TestInterleave(t *testing.T) {
	at := func(key string, p int32, off int64) Actual {
		a := act(t, key, `{"V":1}`, 5)
		a.Partition, a.Offset = p, off
		return a
	}
	// After the statements: nothing; after input 0: partition 0 holds
	// offsets 0-1, partition 1 offset 0.
	h := &harness{bounds: map[string][][]int64{"OUT": {{0, 0}, {2, 1}}}}
	keys := func(got []Actual) string {
		var out []string
		for _, a := range got {
			out = append(out, render(a.Key))
		}
		return strings.Join(out, ",")
	}
	want := []Record{rec("3", `{"V":1}`, ts(5)), rec("1", `{"V":1}`, ts(5)), rec("2", `{"V":1}`, ts(5))}
	got := []Actual{at("1", 0, 0), at("2", 0, 1), at("3", 1, 0)}
	h.interleave("OUT", want, got, Shape{}, Expectation{})
	if k := keys(got); k != "3,1,2" {
		t.Errorf("interleaved to %s, want 3,1,2", k)
	}
	// Partition 0's records stay in their order: 2 cannot pass 1.
	want = []Record{rec("2", `{"V":1}`, ts(5)), rec("1", `{"V":1}`, ts(5)), rec("3", `{"V":1}`, ts(5))}
	got = []Actual{at("1", 0, 0), at("2", 0, 1), at("3", 1, 0)}
	h.interleave("OUT", want, got, Shape{}, Expectation{})
	if k := keys(got); k != "1,2,3" {
		t.Errorf("interleaved to %s, want 1,2,3", k)
	}
	if m := CompareRecords("OUT", want, got, Shape{}, Expectation{}); m == nil {
		t.Error("an order no interleaving gives matched")
	}
}
