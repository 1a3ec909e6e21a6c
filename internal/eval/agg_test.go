package eval

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

func strMap(kv ...any) *types.MapValue {
	m := &types.MapValue{}
	for i := 0; i < len(kv); i += 2 {
		m.Keys = append(m.Keys, kv[i])
		m.Values = append(m.Values, kv[i+1])
	}
	return m
}

// newAgg builds an accumulator of the named aggregate, failing the test on
// any error.
func newAgg(t *testing.T, name string, args []*types.Type, params []any) (*Aggregate, Accumulator, *types.Type) {
	t.Helper()
	a, ok := LookupAggregate(name)
	if !ok {
		t.Fatalf("aggregate %s not registered", name)
	}
	ret, err := a.Check(args)
	if err != nil {
		t.Fatalf("%s Check: %v", name, err)
	}
	acc, err := a.New(args, ret, params)
	if err != nil {
		t.Fatalf("%s New: %v", name, err)
	}
	return a, acc, ret
}

// sameValue compares two values of type t by Go type and encoding.
func sameValue(t *types.Type, a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	if f, ok := a.(float64); ok {
		g := b.(float64)
		return f == g || (math.IsNaN(f) && math.IsNaN(g))
	}
	x, err1 := expr.MarshalValue(a, t)
	y, err2 := expr.MarshalValue(b, t)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// roundTrip checks that acc's state decodes into a fresh accumulator with
// the same result and the same encoding.
func roundTrip(t *testing.T, a *Aggregate, acc Accumulator, args []*types.Type, ret *types.Type, params []any) {
	t.Helper()
	b, err := acc.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary: %v", err)
	}
	fresh, err := a.New(args, ret, params)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	if got, want := fresh.Result(), acc.Result(); !sameValue(ret, got, want) {
		t.Fatalf("round trip result = %#v, want %#v", got, want)
	}
	b2, err := fresh.MarshalBinary()
	if err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("re-encoding differs: %x vs %x (%v)", b, b2, err)
	}
	if err := fresh.UnmarshalBinary(b[:len(b)-1]); err == nil && len(b) > 1 {
		t.Fatalf("truncated state %x accepted", b[:len(b)-1])
	}
	if err := fresh.UnmarshalBinary(append(append([]byte{}, b...), 0)); err == nil {
		t.Fatalf("state with trailing byte accepted")
	}
}

// step is one row event: an Add, or a Retract when retract is set.
type step struct {
	v       any
	retract bool
	want    any
}

func add(v, want any) step     { return step{v: v, want: want} }
func retract(v, want any) step { return step{v: v, retract: true, want: want} }

type aggCase struct {
	name   string
	fn     string
	args   []*types.Type
	params []any
	ret    *types.Type
	steps  []step
}

func runAggCases(t *testing.T, cases []aggCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, acc, ret := newAgg(t, c.fn, c.args, c.params)
			if c.ret != nil && !ret.Equal(c.ret) {
				t.Fatalf("result type %s, want %s", ret, c.ret)
			}
			roundTrip(t, a, acc, c.args, ret, c.params)
			for i, s := range c.steps {
				if s.retract {
					if !acc.Retract(s.v) {
						t.Fatalf("step %d: Retract(%v) refused", i, s.v)
					}
				} else {
					acc.Add(s.v)
				}
				got, err := AccumulatorResult(acc)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if !sameValue(ret, got, s.want) {
					t.Fatalf("step %d (%v): result %#v, want %#v", i, s.v, got, s.want)
				}
				roundTrip(t, a, acc, c.args, ret, c.params)
			}
		})
	}
}

var (
	tInt    = types.IntType
	tBig    = types.BigintType
	tDouble = types.DoubleType
	tStr    = types.StringType
)

func ts(t ...*types.Type) []*types.Type { return t }

func TestAggCount(t *testing.T) {
	runAggCases(t, []aggCase{
		{name: "star", fn: "count", args: ts(), ret: tBig, steps: []step{
			add(nil, int64(1)), add(nil, int64(2)), retract(nil, int64(1)), retract(nil, int64(0)),
		}},
		{name: "column skips nulls", fn: "COUNT", args: ts(tStr), steps: []step{
			add("a", int64(1)), add(nil, int64(1)), add("b", int64(2)),
			retract("a", int64(1)), retract(nil, int64(1)), retract("b", int64(0)),
		}},
	})
}

func TestAggSum(t *testing.T) {
	dt := types.DecimalOf(6, 2)
	runAggCases(t, []aggCase{
		{name: "int", fn: "SUM", args: ts(tInt), ret: tInt, steps: []step{
			add(int32(0), int32(0)), add(int32(100), int32(100)), add(nil, int32(100)),
			retract(int32(100), int32(0)),
		}},
		{name: "int wraps", fn: "SUM", args: ts(tInt), steps: []step{
			add(int32(math.MaxInt32), int32(math.MaxInt32)), add(int32(1), int32(math.MinInt32)),
		}},
		{name: "bigint", fn: "SUM", args: ts(tBig), ret: tBig, steps: []step{
			add(int64(2147483648), int64(2147483648)), add(int64(100), int64(2147483748)),
		}},
		{name: "double", fn: "SUM", args: ts(tDouble), ret: tDouble, steps: []step{
			add(5.4, 5.4), add(100.1, 105.5),
		}},
		{name: "decimal keeps type", fn: "SUM", args: ts(dt), ret: dt, steps: []step{
			add(dec("5.40"), dec("5.40")), add(dec("100.10"), dec("105.50")),
			add(dec("500.90"), dec("606.40")), retract(dec("5.40"), dec("601.00")),
		}},
	})

	// A LEFT JOIN with no match sums nothing: 0, not null.
	_, acc, _ := newAgg(t, "SUM", ts(tInt), nil)
	acc.Add(nil)
	if got := acc.Result(); got != int32(0) {
		t.Fatalf("SUM of nulls = %#v, want 0", got)
	}
}

func TestAggSumDecimalOverflow(t *testing.T) {
	a, acc, ret := newAgg(t, "SUM", ts(types.DecimalOf(4, 1)), nil)
	for _, s := range []string{"500.9", "300.8"} {
		acc.Add(dec(s))
	}
	if got, err := AccumulatorResult(acc); err != nil || !sameValue(ret, got, dec("801.7")) {
		t.Fatalf("got %v, %v", got, err)
	}
	acc.Add(dec("400.8"))
	got, err := AccumulatorResult(acc)
	if err == nil || err.Error() != "Numeric field overflow" || got != nil {
		t.Fatalf("got %v, %v; want Numeric field overflow", got, err)
	}
	roundTrip(t, a, acc, ts(types.DecimalOf(4, 1)), ret, nil)
	if !acc.Retract(dec("400.8")) {
		t.Fatal("retract refused")
	}
	if _, err := AccumulatorResult(acc); err != nil {
		t.Fatalf("after retract: %v", err)
	}
}

func TestAggAvg(t *testing.T) {
	runAggCases(t, []aggCase{
		{name: "bigint sums wrap", fn: "AVG", args: ts(tBig), ret: tDouble, steps: []step{
			add(int64(-1), -1.0), add(int64(math.MaxInt64), 4.611686018427388e+18),
			add(int64(1), 3.0744573456182584e+18), add(nil, 3.0744573456182584e+18),
		}},
		{name: "int table", fn: "AVG", args: ts(tInt), steps: []step{
			add(int32(1), 1.0), add(int32(2), 1.5),
			retract(int32(1), 2.0), add(nil, 2.0),
			retract(nil, 2.0), add(int32(4), 3.0),
			retract(int32(4), 2.0), retract(int32(2), 0.0),
		}},
		{name: "double", fn: "AVG", args: ts(tDouble), steps: []step{
			add(-1.8, -1.8), add(9223372036854.775, 4611686018426.487),
		}},
	})
}

func TestAggMinMax(t *testing.T) {
	runAggCases(t, []aggCase{
		{name: "max int", fn: "MAX", args: ts(tInt), ret: tInt, steps: []step{
			add(nil, nil), add(int32(-2147483647), int32(-2147483647)), add(int32(5), int32(5)),
			add(nil, int32(5)), add(int32(2000), int32(2000)), add(int32(100), int32(2000)),
		}},
		{name: "max decimal", fn: "MAX", args: ts(types.DecimalOf(4, 2)), steps: []step{
			add(dec("-10.12"), dec("-10.12")), add(dec("0.00"), dec("0.00")),
			add(dec("5.10"), dec("5.10")), add(dec("1.10"), dec("5.10")),
		}},
		{name: "max string", fn: "MAX", args: ts(tStr), steps: []step{
			add("B", "B"), add("A", "B"), add("F", "F"),
		}},
		{name: "max bytes", fn: "MAX", args: ts(types.BytesType), steps: []step{
			add([]byte("B"), []byte("B")), add([]byte("A"), []byte("B")),
		}},
		{name: "min timestamp", fn: "MIN", args: ts(types.TimestampType), steps: []step{
			add(types.TimestampValue(50), types.TimestampValue(50)), add(nil, types.TimestampValue(50)),
			add(types.TimestampValue(-1), types.TimestampValue(-1)),
		}},
		{name: "min date", fn: "MIN", args: ts(types.DateType), steps: []step{
			add(types.DateValue(5), types.DateValue(5)), add(types.DateValue(100), types.DateValue(5)),
		}},
		{name: "min double", fn: "MIN", args: ts(tDouble), steps: []step{
			add(5.1, 5.1), add(-1000000.123, -1000000.123), add(0.0, -1000000.123),
		}},
	})
	_, acc, _ := newAgg(t, "MAX", ts(tInt), nil)
	if acc.Retract(int32(1)) {
		t.Fatal("MAX retracted")
	}
	_, other, _ := newAgg(t, "MAX", ts(tInt), nil)
	acc.Add(int32(3))
	other.Add(int32(7))
	acc.Merge(other)
	if acc.Result() != int32(7) {
		t.Fatalf("merged MAX = %v", acc.Result())
	}
}

func TestAggByOffset(t *testing.T) {
	arr := types.ArrayOf(tInt)
	runAggCases(t, []aggCase{
		{name: "earliest", fn: "EARLIEST_BY_OFFSET", args: ts(tInt), ret: tInt, steps: []step{
			add(int32(12), int32(12)), add(nil, int32(12)), add(int32(13), int32(12)),
		}},
		{name: "earliest null first ignoring nulls", fn: "EARLIEST_BY_OFFSET", args: ts(tInt, types.BooleanType),
			params: []any{true}, steps: []step{add(nil, nil), add(int32(13), int32(13))}},
		{name: "earliest null first not ignoring nulls", fn: "EARLIEST_BY_OFFSET", args: ts(tInt, types.BooleanType),
			params: []any{false}, steps: []step{add(nil, nil), add(int32(13), nil)}},
		{name: "earliest n", fn: "EARLIEST_BY_OFFSET", args: ts(tInt, tInt), params: []any{int32(2)}, ret: arr,
			steps: []step{add(nil, []any{}), add(int32(12), []any{int32(12)}), add(nil, []any{int32(12)}),
				add(int32(13), []any{int32(12), int32(13)}), add(int32(14), []any{int32(12), int32(13)})}},
		{name: "earliest n not ignoring nulls", fn: "EARLIEST_BY_OFFSET", args: ts(tInt, tInt, types.BooleanType),
			params: []any{int32(2), false}, ret: arr,
			steps: []step{add(int32(12), []any{int32(12)}), add(nil, []any{int32(12), nil}), add(int32(13), []any{int32(12), nil})}},
		{name: "latest", fn: "LATEST_BY_OFFSET", args: ts(tStr), steps: []step{
			add("a", "a"), add(nil, "a"), add("b", "b"),
		}},
		{name: "latest not ignoring nulls", fn: "LATEST_BY_OFFSET", args: ts(tStr, types.BooleanType), params: []any{false},
			steps: []step{add("a", "a"), add(nil, nil)}},
		{name: "latest n", fn: "LATEST_BY_OFFSET", args: ts(tInt, types.BigintType), params: []any{int64(2)}, ret: arr,
			steps: []step{add(int32(1), []any{int32(1)}), add(nil, []any{int32(1)}), add(int32(2), []any{int32(1), int32(2)}),
				add(int32(3), []any{int32(2), int32(3)})}},
		{name: "latest struct", fn: "LATEST_BY_OFFSET",
			args:  ts(types.StructOf(types.Field{Name: "A", Type: tStr}, types.Field{Name: "M", Type: types.MapOf(tStr, tDouble)})),
			steps: []step{add(types.StructValue{"x", strMap("k", 1.5)}, types.StructValue{"x", strMap("k", 1.5)})}},
	})
}

func TestAggByOffsetBadN(t *testing.T) {
	for _, n := range []string{"EARLIEST_BY_OFFSET", "LATEST_BY_OFFSET"} {
		a, _ := LookupAggregate(n)
		args := ts(tInt, tInt)
		if got := a.LiteralCount(2); got != 1 {
			t.Fatalf("%s literals = %d", n, got)
		}
		ret, err := a.Check(args)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.New(args, ret, []any{int32(0)})
		want := "earliestN must be 1 or greater"
		if n == "LATEST_BY_OFFSET" {
			want = "latestN must be 1 or greater"
		}
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", n, err, want)
		}
		if _, err := a.New(ts(tInt, types.BooleanType), tInt, []any{"yes"}); err == nil {
			t.Errorf("%s: non-boolean ignoreNulls accepted", n)
		}
	}
}

func TestAggByOffsetMergeSessions(t *testing.T) {
	args := ts(tInt, tInt, types.BooleanType)
	params := []any{int32(2), false}
	a, first, ret := newAgg(t, "EARLIEST_BY_OFFSET", args, params)
	_, second, _ := newAgg(t, "EARLIEST_BY_OFFSET", args, params)
	_, third, _ := newAgg(t, "EARLIEST_BY_OFFSET", args, params)
	first.Add(nil)
	second.Add(int32(1))
	third.Add(nil)
	third.Merge(second)
	third.Merge(first)
	if got := third.Result(); !sameValue(ret, got, []any{nil, int32(1)}) {
		t.Fatalf("merged = %#v", got)
	}
	roundTrip(t, a, third, args, ret, params)

	_, l1, _ := newAgg(t, "LATEST_BY_OFFSET", ts(tInt), nil)
	_, l2, _ := newAgg(t, "LATEST_BY_OFFSET", ts(tInt), nil)
	l1.Add(int32(1))
	l2.Add(int32(3))
	l1.Add(int32(2))
	l2.Merge(l1)
	if got := l2.Result(); got != int32(2) {
		t.Fatalf("merged latest = %#v", got)
	}
	if l2.Retract(int32(2)) {
		t.Fatal("LATEST_BY_OFFSET retracted")
	}
}

func TestAggByOffsetOrderSurvivesRestore(t *testing.T) {
	a, acc, ret := newAgg(t, "LATEST_BY_OFFSET", ts(tInt), nil)
	acc.Add(int32(1))
	b, err := acc.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// A state holding a sequence number far ahead of the counter, as after
	// a restart, must still order before later values.
	d := newDecoder(b)
	n := d.count()
	_ = d.int()
	v := d.value(tInt)
	if n != 1 || d.finish() != nil || v != int32(1) {
		t.Fatalf("unexpected state %x", b)
	}
	e := newEncoder()
	e.uint(1)
	e.int(offsetSeq.Load() + 1000)
	if err := e.value(int32(1), tInt); err != nil {
		t.Fatal(err)
	}
	restored, _ := a.New(ts(tInt), ret, nil)
	if err := restored.UnmarshalBinary(e.b); err != nil {
		t.Fatal(err)
	}
	_, later, _ := newAgg(t, "LATEST_BY_OFFSET", ts(tInt), nil)
	later.Add(int32(2))
	restored.Merge(later)
	if got := restored.Result(); got != int32(2) {
		t.Fatalf("latest after restore = %#v, want 2", got)
	}
}

func TestAggCollect(t *testing.T) {
	st := types.StructOf(types.Field{Name: "A", Type: tStr}, types.Field{Name: "B", Type: tInt})
	runAggCases(t, []aggCase{
		{name: "list keeps nulls", fn: "COLLECT_LIST", args: ts(tStr), ret: types.ArrayOf(tStr), steps: []step{
			add("baz", []any{"baz"}), add("baz", []any{"baz", "baz"}), add("foo", []any{"baz", "baz", "foo"}),
			add(nil, []any{"baz", "baz", "foo", nil}),
		}},
		{name: "list table", fn: "COLLECT_LIST", args: ts(tInt), steps: []step{
			add(int32(0), []any{int32(0)}), retract(int32(0), []any{}), add(int32(100), []any{int32(100)}),
		}},
		{name: "list retracts last equal", fn: "COLLECT_LIST", args: ts(tInt), steps: []step{
			add(int32(1), []any{int32(1)}), add(int32(2), []any{int32(1), int32(2)}),
			add(int32(1), []any{int32(1), int32(2), int32(1)}), retract(int32(1), []any{int32(1), int32(2)}),
		}},
		{name: "list limit", fn: "COLLECT_LIST", args: ts(tInt), params: []any{int32(1)}, steps: []step{
			add(int32(0), []any{int32(0)}), add(int32(100), []any{int32(0)}),
		}},
		{name: "list structs", fn: "COLLECT_LIST", args: ts(st), steps: []step{
			add(types.StructValue{"Record0", int32(1)}, []any{types.StructValue{"Record0", int32(1)}}),
		}},
		{name: "set", fn: "COLLECT_SET", args: ts(tStr), ret: types.ArrayOf(tStr), steps: []step{
			add("baz", []any{"baz"}), add("baz", []any{"baz"}), add("foo", []any{"baz", "foo"}),
			add(nil, []any{"baz", "foo", nil}), add(nil, []any{"baz", "foo", nil}),
		}},
		{name: "set maps equal in any order", fn: "COLLECT_SET", args: ts(types.MapOf(tStr, tInt)), steps: []step{
			add(strMap("R0", int32(100), "R2", int32(2)), []any{strMap("R0", int32(100), "R2", int32(2))}),
			add(strMap("R2", int32(2), "R0", int32(100)), []any{strMap("R0", int32(100), "R2", int32(2))}),
		}},
		{name: "set limit", fn: "COLLECT_SET", args: ts(tInt), params: []any{int64(1)}, steps: []step{
			add(int32(0), []any{int32(0)}), add(int32(100), []any{int32(0)}),
		}},
	})

	_, l1, _ := newAgg(t, "COLLECT_LIST", ts(tInt), nil)
	_, l2, _ := newAgg(t, "COLLECT_LIST", ts(tInt), nil)
	l1.Add(int32(1))
	l2.Add(int32(2))
	l1.Merge(l2)
	if got := l1.Result(); !reflect.DeepEqual(got, []any{int32(1), int32(2)}) {
		t.Fatalf("merged list = %#v", got)
	}
	_, s1, _ := newAgg(t, "COLLECT_SET", ts(tInt), nil)
	_, s2, _ := newAgg(t, "COLLECT_SET", ts(tInt), nil)
	s1.Add(int32(1))
	s2.Add(int32(1))
	s2.Add(int32(2))
	s1.Merge(s2)
	if got := s1.Result(); !reflect.DeepEqual(got, []any{int32(1), int32(2)}) || s1.Retract(int32(1)) {
		t.Fatalf("merged set = %#v", got)
	}
	// The result is a copy: changing it leaves the state alone.
	got := s1.Result().([]any)
	got[0] = int32(9)
	if s1.Result().([]any)[0] != int32(1) {
		t.Fatal("result aliases state")
	}
}

func TestAggCountDistinct(t *testing.T) {
	runAggCases(t, []aggCase{
		{name: "strings", fn: "COUNT_DISTINCT", args: ts(tStr), ret: tBig, steps: []step{
			add("one", int64(1)), add("two", int64(2)), add("one", int64(2)), add(nil, int64(2)),
		}},
		{name: "decimals", fn: "COUNT_DISTINCT", args: ts(types.DecimalOf(3, 1)), steps: []step{
			add(dec("1.0"), int64(1)), add(dec("1.0"), int64(1)), add(dec("2.5"), int64(2)),
		}},
	})
	_, a, _ := newAgg(t, "COUNT_DISTINCT", ts(tInt), nil)
	_, b, _ := newAgg(t, "COUNT_DISTINCT", ts(tInt), nil)
	a.Add(int32(1))
	b.Add(int32(1))
	b.Add(int32(2))
	a.Merge(b)
	if a.Result() != int64(2) || a.Retract(int32(1)) {
		t.Fatalf("merged = %v", a.Result())
	}
}

func TestAggTopK(t *testing.T) {
	k3 := []any{int32(3)}
	runAggCases(t, []aggCase{
		{name: "int", fn: "TOPK", args: ts(tInt, tInt), params: k3, ret: types.ArrayOf(tInt), steps: []step{
			add(int32(0), []any{int32(0)}), add(int32(100), []any{int32(100), int32(0)}),
			add(int32(99), []any{int32(100), int32(99), int32(0)}), add(int32(7), []any{int32(100), int32(99), int32(7)}),
			add(nil, []any{int32(100), int32(99), int32(7)}),
			add(int32(100), []any{int32(100), int32(100), int32(99)}),
		}},
		{name: "string", fn: "TOPK", args: ts(tStr, tInt), params: k3, steps: []step{
			add("a", []any{"a"}), add("b", []any{"b", "a"}), add("c", []any{"c", "b", "a"}),
			add("b", []any{"c", "b", "b"}), add("d", []any{"d", "c", "b"}),
		}},
		{name: "distinct", fn: "TOPKDISTINCT", args: ts(tInt, tInt), params: k3, steps: []step{
			add(int32(0), []any{int32(0)}), add(int32(100), []any{int32(100), int32(0)}),
			add(int32(100), []any{int32(100), int32(0)}), add(int32(99), []any{int32(100), int32(99), int32(0)}),
			add(int32(7), []any{int32(100), int32(99), int32(7)}), add(int32(99), []any{int32(100), int32(99), int32(7)}),
		}},
		{name: "double", fn: "TOPK", args: ts(tDouble, tInt), params: []any{int32(2)}, steps: []step{
			add(2147483648.9, []any{2147483648.9}), add(100.5, []any{2147483648.9, 100.5}),
			add(99.9, []any{2147483648.9, 100.5}), add(100.5, []any{2147483648.9, 100.5}),
		}},
	})
	a, _ := LookupAggregate("TOPK")
	if n := a.LiteralCount(3); n != 1 {
		t.Fatalf("TOPK literals = %d", n)
	}
	if n := a.LiteralCount(2); n != 1 {
		t.Fatalf("TOPK literals = %d", n)
	}
	if _, err := a.New(ts(tInt, tInt), types.ArrayOf(tInt), []any{int32(0)}); err == nil {
		t.Fatal("TOPK k=0 accepted")
	}
	_, x, _ := newAgg(t, "TOPK", ts(tInt, tInt), []any{int32(2)})
	_, y, _ := newAgg(t, "TOPK", ts(tInt, tInt), []any{int32(2)})
	x.Add(int32(5))
	x.Add(int32(1))
	y.Add(int32(3))
	x.Merge(y)
	if got := x.Result(); !reflect.DeepEqual(got, []any{int32(5), int32(3)}) || x.Retract(int32(5)) {
		t.Fatalf("merged topk = %#v", got)
	}
}

func TestAggTopKStruct(t *testing.T) {
	st := types.StructOf(types.Field{Name: "sort_col", Type: tInt}, types.Field{Name: "col0", Type: tStr})
	row := func(v, name any) types.StructValue { return types.StructValue{v, name} }
	runAggCases(t, []aggCase{
		{name: "int", fn: "TOPK", args: ts(tInt, tStr, tInt), params: []any{int32(3)}, ret: types.ArrayOf(st), steps: []step{
			add([]any{int32(0), "zero"}, []any{row(int32(0), "zero")}),
			add([]any{int32(100), "one"}, []any{row(int32(100), "one"), row(int32(0), "zero")}),
			add([]any{int32(99), "two"}, []any{row(int32(100), "one"), row(int32(99), "two"), row(int32(0), "zero")}),
			add([]any{nil, "three"}, []any{row(int32(100), "one"), row(int32(99), "two"), row(int32(0), "zero")}),
			add([]any{int32(100), nil}, []any{row(int32(100), "one"), row(int32(100), nil), row(int32(99), "two")}),
		}},
	})
	a, _ := LookupAggregate("TOPK")
	ret, err := a.Check(ts(tStr, tDouble, types.BooleanType, tInt))
	if err != nil {
		t.Fatal(err)
	}
	if got := ret.String(); got != "ARRAY<STRUCT<`sort_col` STRING, `col0` DOUBLE, `col1` BOOLEAN>>" {
		t.Fatalf("TOPK struct type = %s", got)
	}
	d, _ := LookupAggregate("TOPKDISTINCT")
	if _, err := d.Check(ts(tInt, tStr, tInt)); err == nil {
		t.Fatal("TOPKDISTINCT accepted extra columns")
	}
}

func TestAggHistogram(t *testing.T) {
	mt := types.MapOf(tStr, tBig)
	runAggCases(t, []aggCase{
		{name: "stream", fn: "HISTOGRAM", args: ts(tStr), ret: mt, steps: []step{
			add("foo", strMap("foo", int64(1))), add("bar", strMap("foo", int64(1), "bar", int64(1))),
			add("foo", strMap("foo", int64(2), "bar", int64(1))), add(nil, strMap("foo", int64(2), "bar", int64(1), nil, int64(1))),
			retract(nil, strMap("foo", int64(2), "bar", int64(1))),
		}},
		{name: "table", fn: "HISTOGRAM", args: ts(tStr), steps: []step{
			add("alice", strMap("alice", int64(1))), add("bob", strMap("alice", int64(1), "bob", int64(1))),
			retract("bob", strMap("alice", int64(1))), retract("alice", strMap()),
			add("carol", strMap("carol", int64(1))),
		}},
		{name: "limit", fn: "HISTOGRAM", args: ts(tStr), params: []any{int32(1)}, steps: []step{
			add("a", strMap("a", int64(1))), add("b", strMap("a", int64(1))), add("a", strMap("a", int64(2))),
		}},
	})
	_, a, _ := newAgg(t, "HISTOGRAM", ts(tStr), nil)
	_, b, _ := newAgg(t, "HISTOGRAM", ts(tStr), nil)
	a.Add("x")
	b.Add("y")
	b.Add("x")
	a.Merge(b)
	if got := a.Result(); !types.Equal(got, strMap("x", int64(2), "y", int64(1))) {
		t.Fatalf("merged histogram = %v", types.FormatValue(got, mt))
	}
}

func TestAggStddev(t *testing.T) {
	runAggCases(t, []aggCase{
		{name: "sample double map", fn: "STDDEV_SAMPLE", args: ts(tDouble), ret: tDouble, steps: []step{
			add(10.0, 0.0), add(12.0, 1.4142135623730951), add(13.0, 1.5275252316519465),
			add(14.0, 1.707825127659933), add(16.0, 2.23606797749979),
		}},
		{name: "sample int", fn: "STDDEV_SAMPLE", args: ts(tInt), steps: []step{
			add(int32(0), 0.0), add(int32(10), 7.0710678118654755), add(int32(7), 5.131601439446884),
			add(int32(6), 4.193248541803041),
		}},
		{name: "sample int key 100", fn: "STDDEV_SAMPLE", args: ts(tInt), steps: []step{
			add(int32(50), 0.0), add(int32(10), 28.284271247461902), add(int32(3), 25.357444666211933),
			add(nil, 25.357444666211933),
		}},
		{name: "samp is variance", fn: "STDDEV_SAMP", args: ts(tDouble), steps: []step{
			add(10.0, 0.0), add(12.0, 2.0), add(13.0, 2.333333333333333),
			add(14.0, 2.9166666666666665), add(16.0, 5.0),
		}},
		{name: "samp bigint", fn: "STDDEV_SAMP", args: ts(tBig), steps: []step{
			add(int64(500), 0.0), add(int64(100), 80000.0), add(int64(0), 70000.0), add(int64(-6), 57275.666666666664),
		}},
		{name: "samp double", fn: "STDDEV_SAMP", args: ts(tDouble), steps: []step{
			add(-1.8, 0.0), add(2.3, 8.405), add(100.2, 3334.2033333333347), add(nil, 3334.2033333333347),
		}},
		{name: "table", fn: "STDDEV_SAMP", args: ts(tDouble), steps: []step{
			add(10.0, 0.0), add(12.0, 2.0), add(16.0, 9.333333333333334),
			retract(16.0, 2.0), retract(10.0, 0.0), retract(12.0, 0.0), add(4.0, 0.0),
		}},
	})
	_, a, _ := newAgg(t, "STDDEV_SAMP", ts(tDouble), nil)
	_, b, _ := newAgg(t, "STDDEV_SAMP", ts(tDouble), nil)
	for _, v := range []float64{10, 12} {
		a.Add(v)
	}
	for _, v := range []float64{13, 14, 16} {
		b.Add(v)
	}
	a.Merge(b)
	if got := a.Result().(float64); math.Abs(got-5.0) > 1e-12 {
		t.Fatalf("merged variance = %v", got)
	}
}

func TestAggSumList(t *testing.T) {
	runAggCases(t, []aggCase{
		{name: "double", fn: "SUM_LIST", args: ts(types.ArrayOf(tDouble)), ret: tDouble, steps: []step{
			add([]any{1.0, 1.0}, 2.0), add([]any{2.0, 2.0}, 6.0), add([]any{922337203685.0, 1.0}, 922337203692.0),
			add([]any{1.0, 1.0, nil}, 922337203694.0), add(nil, 922337203694.0),
		}},
		{name: "int table", fn: "SUM_LIST", args: ts(types.ArrayOf(tInt)), ret: tInt, steps: []step{
			add([]any{int32(1), int32(1)}, int32(2)), add([]any{int32(100), int32(100), nil}, int32(202)),
			retract([]any{int32(1), int32(1)}, int32(200)),
		}},
		{name: "bigint", fn: "SUM_LIST", args: ts(types.ArrayOf(tBig)), ret: tBig, steps: []step{
			add([]any{int64(1), int64(1)}, int64(2)), add([]any{}, int64(2)),
		}},
	})
	_, a, _ := newAgg(t, "SUM_LIST", ts(types.ArrayOf(tInt)), nil)
	_, b, _ := newAgg(t, "SUM_LIST", ts(types.ArrayOf(tInt)), nil)
	a.Add([]any{int32(1)})
	b.Add([]any{int32(2), int32(3)})
	a.Merge(b)
	if a.Result() != int32(6) {
		t.Fatalf("merged = %v", a.Result())
	}
}

func TestAggAttr(t *testing.T) {
	li := types.ArrayOf(tInt)
	runAggCases(t, []aggCase{
		{name: "valid", fn: "ATTR", args: ts(tStr), ret: tStr, steps: []step{
			add("s", "s"), add("s", "s"), add("s", "s"),
		}},
		{name: "valid array", fn: "ATTR", args: ts(li), ret: li, steps: []step{
			add([]any{int32(1), int32(2)}, []any{int32(1), int32(2)}), add([]any{int32(1), int32(2)}, []any{int32(1), int32(2)}),
		}},
		{name: "nulls", fn: "ATTR", args: ts(tStr), steps: []step{add(nil, nil), add(nil, nil)}},
		{name: "invalid", fn: "ATTR", args: ts(tStr), steps: []step{add("1", "1"), add("2", nil), add("3", nil)}},
		{name: "invalid with nulls", fn: "ATTR", args: ts(tStr), steps: []step{add("1", "1"), add(nil, nil), add("1", nil)}},
		{name: "null first", fn: "ATTR", args: ts(tStr), steps: []step{add(nil, nil), add("2", nil), add("2", nil)}},
		{name: "table", fn: "ATTR", args: ts(tStr), steps: []step{
			add("1", "1"), add("1", "1"), retract("1", "1"), retract("1", nil),
			add("2", "2"), add("3", nil), retract("3", "2"),
		}},
	})
	_, a, _ := newAgg(t, "ATTR", ts(tInt), nil)
	_, b, _ := newAgg(t, "ATTR", ts(tInt), nil)
	a.Add(int32(1))
	b.Add(int32(1))
	a.Merge(b)
	if a.Result() != int32(1) {
		t.Fatalf("merged = %v", a.Result())
	}
	a.Retract(int32(1))
	if a.Result() != int32(1) {
		t.Fatalf("after one retract = %v", a.Result())
	}
	b.Add(int32(2))
	a.Merge(b)
	if a.Result() != nil {
		t.Fatalf("merged differing = %v", a.Result())
	}
}

func TestAggCorrelation(t *testing.T) {
	nan := math.NaN()
	runAggCases(t, []aggCase{
		{name: "perfect", fn: "CORRELATION", args: ts(tDouble, tDouble), ret: tDouble, steps: []step{
			add([]any{1.0, 2.0}, nan), add([]any{2.0, 4.0}, 1.0), add([]any{nil, 5.0}, 1.0),
			add([]any{3.0, 6.0}, 1.0), retract([]any{3.0, 6.0}, 1.0), retract([]any{2.0, 4.0}, nan),
		}},
		{name: "negative ints", fn: "CORRELATION", args: ts(tInt, tInt), steps: []step{
			add([]any{int32(1), int32(3)}, nan), add([]any{int32(2), int32(2)}, -1.0), add([]any{int32(3), int32(1)}, -1.0),
		}},
	})
	_, a, _ := newAgg(t, "CORRELATION", ts(tBig, tBig), nil)
	_, b, _ := newAgg(t, "CORRELATION", ts(tBig, tBig), nil)
	a.Add([]any{int64(1), int64(1)})
	b.Add([]any{int64(2), int64(3)})
	b.Add([]any{int64(3), int64(2)})
	a.Merge(b)
	if got := a.Result().(float64); math.Abs(got-0.5) > 1e-12 {
		t.Fatalf("merged = %v", got)
	}
}

func TestAggCheckErrors(t *testing.T) {
	dt := types.DecimalOf(4, 1)
	for _, c := range []struct {
		fn   string
		args []*types.Type
		want string
	}{
		{"SUM", ts(tStr), "Function 'SUM' does not accept parameters (STRING)"},
		{"SUM", ts(), "Function 'SUM' does not accept parameters ()"},
		{"SUM", ts(nil), "Function 'SUM' does not accept parameters (NULL)"},
		{"AVG", ts(dt), "Function 'AVG' does not accept parameters (DECIMAL(4, 1))"},
		{"COUNT", ts(tInt, tInt), "Function 'COUNT' does not accept parameters (INTEGER, INTEGER)"},
		{"MAX", ts(types.BooleanType), "Function 'MAX' does not accept parameters (BOOLEAN)"},
		{"MIN", ts(types.ArrayOf(tInt)), "Function 'MIN' does not accept parameters (ARRAY<INTEGER>)"},
		{"TOPK", ts(tInt), "Function 'TOPK' does not accept parameters (INTEGER)"},
		{"TOPK", ts(tInt, tStr), "Function 'TOPK' does not accept parameters (INTEGER, STRING)"},
		{"HISTOGRAM", ts(tInt), "Function 'HISTOGRAM' does not accept parameters (INTEGER)"},
		{"EARLIEST_BY_OFFSET", ts(tInt, tStr), "Function 'EARLIEST_BY_OFFSET' does not accept parameters (INTEGER, STRING)"},
		{"LATEST_BY_OFFSET", ts(tInt, types.BooleanType, tInt), "Function 'LATEST_BY_OFFSET' does not accept parameters (INTEGER, BOOLEAN, INTEGER)"},
		{"STDDEV_SAMP", ts(tStr), "Function 'STDDEV_SAMP' does not accept parameters (STRING)"},
		{"SUM_LIST", ts(tInt), "Function 'SUM_LIST' does not accept parameters (INTEGER)"},
		{"SUM_LIST", ts(types.ArrayOf(tStr)), "Function 'SUM_LIST' does not accept parameters (ARRAY<STRING>)"},
		{"CORRELATION", ts(tDouble), "Function 'CORRELATION' does not accept parameters (DOUBLE)"},
		{"CORRELATION", ts(tDouble, tStr), "Function 'CORRELATION' does not accept parameters (DOUBLE, STRING)"},
		{"ATTR", ts(), "Function 'ATTR' does not accept parameters ()"},
		{"COLLECT_LIST", ts(), "Function 'COLLECT_LIST' does not accept parameters ()"},
	} {
		a, ok := LookupAggregate(c.fn)
		if !ok {
			t.Fatalf("%s not registered", c.fn)
		}
		_, err := a.Check(c.args)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s%s: error %v, want prefix %q", c.fn, typeList(c.args), err, c.want)
		}
	}
}

func TestAggRegistry(t *testing.T) {
	names := AggregateNames()
	want := []string{"ATTR", "AVG", "COLLECT_LIST", "COLLECT_SET", "CORRELATION", "COUNT", "COUNT_DISTINCT",
		"EARLIEST_BY_OFFSET", "HISTOGRAM", "LATEST_BY_OFFSET", "MAX", "MIN", "STDDEV_SAMP",
		"STDDEV_SAMPLE", "SUM", "SUM_LIST", "TOPK", "TOPKDISTINCT"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("AggregateNames() = %v", names)
	}
	for _, n := range names {
		a, _ := LookupAggregate(strings.ToLower(n))
		if a == nil || a.Name != n || a.Description == "" {
			t.Fatalf("bad registration for %s", n)
		}
		if _, isScalar := LookupFunc(n); isScalar {
			t.Errorf("%s is also a scalar function", n)
		}
	}
	retractable := map[string]bool{}
	for _, n := range names {
		a, _ := LookupAggregate(n)
		retractable[n] = a.Retractable
	}
	for _, n := range []string{"COUNT", "SUM", "AVG", "COLLECT_LIST", "HISTOGRAM", "STDDEV_SAMP", "STDDEV_SAMPLE", "SUM_LIST", "ATTR", "CORRELATION"} {
		if !retractable[n] {
			t.Errorf("%s should be retractable", n)
		}
	}
	for _, n := range []string{"MIN", "MAX", "LATEST_BY_OFFSET", "EARLIEST_BY_OFFSET", "TOPK", "TOPKDISTINCT", "COUNT_DISTINCT", "COLLECT_SET"} {
		if retractable[n] {
			t.Errorf("%s should not be retractable", n)
		}
	}
	if _, ok := LookupAggregate("NO_SUCH"); ok {
		t.Fatal("unknown aggregate found")
	}
}

func TestTableSourceError(t *testing.T) {
	err := TableSourceError([]string{"LATEST_BY_OFFSET", "MIN", "MAX"})
	want := "The aggregation functions LATEST_BY_OFFSET, MIN and MAX cannot be applied to a table source, only to a stream source."
	if err == nil || err.Error() != want {
		t.Fatalf("got %v", err)
	}
	if err := TableSourceError([]string{"MIN"}); err.Error() != "The aggregation function MIN cannot be applied to a table source, only to a stream source." {
		t.Fatalf("got %v", err)
	}
	if TableSourceError(nil) != nil {
		t.Fatal("error for no names")
	}
}

func TestAggBadState(t *testing.T) {
	for _, n := range AggregateNames() {
		a, _ := LookupAggregate(n)
		var args []*types.Type
		var params []any
		switch n {
		case "COUNT":
		case "CORRELATION":
			args = ts(tDouble, tDouble)
		case "TOPK", "TOPKDISTINCT":
			args, params = ts(tStr, tInt), []any{int32(2)}
		default:
			args = ts(tStr)
		}
		if n == "SUM_LIST" {
			args = ts(types.ArrayOf(tDouble))
		}
		if n == "SUM" || n == "AVG" || strings.HasPrefix(n, "STDDEV") {
			args = ts(tInt)
		}
		ret, err := a.Check(args)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		acc, err := a.New(args, ret, params)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for _, b := range [][]byte{nil, {}, {99}, {stateVersion, 0xff, 0xff, 0xff}} {
			if err := acc.UnmarshalBinary(b); err == nil {
				t.Errorf("%s accepted state %x", n, b)
			} else if !errors.Is(err, errBadState) && !strings.Contains(err.Error(), "expr") {
				t.Errorf("%s: unexpected error %v", n, err)
			}
		}
	}
}

func ExampleLookupAggregate() {
	a, _ := LookupAggregate("sum")
	args := []*types.Type{types.IntType}
	ret, _ := a.Check(args)
	acc, _ := a.New(args, ret, nil)
	for _, v := range []any{int32(1), nil, int32(2)} {
		acc.Add(v)
	}
	acc.Retract(int32(1))
	fmt.Println(ret, acc.Result())
	// Output: INTEGER 2
}

// TestAggCorruptStateNoPanic decodes every truncation and single-byte
// corruption of real states: each must fail or succeed, never panic.
func TestAggCorruptStateNoPanic(t *testing.T) {
	type setup struct {
		fn     string
		args   []*types.Type
		params []any
		vals   []any
	}
	for _, s := range []setup{
		{"COUNT", ts(tStr), nil, []any{"a", "b"}},
		{"COUNT_DISTINCT", ts(tStr), nil, []any{"a", "b"}},
		{"SUM", ts(types.DecimalOf(5, 2)), nil, []any{dec("1.25")}},
		{"AVG", ts(tDouble), nil, []any{1.5, 2.5}},
		{"MAX", ts(tStr), nil, []any{"x"}},
		{"LATEST_BY_OFFSET", ts(tInt, tInt), []any{int32(2)}, []any{int32(1), int32(2)}},
		{"COLLECT_LIST", ts(types.ArrayOf(tStr)), nil, []any{[]any{"a", nil}}},
		{"COLLECT_SET", ts(tInt), nil, []any{int32(1), int32(2)}},
		{"TOPK", ts(tInt, tStr, tInt), []any{int32(2)}, []any{[]any{int32(1), "a"}}},
		{"HISTOGRAM", ts(tStr), nil, []any{"a", nil}},
		{"STDDEV_SAMP", ts(tInt), nil, []any{int32(1), int32(4)}},
		{"SUM_LIST", ts(types.ArrayOf(tInt)), nil, []any{[]any{int32(1)}}},
		{"ATTR", ts(tStr), nil, []any{"a"}},
		{"CORRELATION", ts(tDouble, tDouble), nil, []any{[]any{1.0, 2.0}}},
	} {
		a, acc, ret := newAgg(t, s.fn, s.args, s.params)
		for _, v := range s.vals {
			acc.Add(v)
		}
		b, err := acc.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i <= len(b); i++ {
			for _, c := range [][]byte{b[:i], corrupt(b, i)} {
				fresh, _ := a.New(s.args, ret, s.params)
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%s: state %x panicked: %v", s.fn, c, r)
						}
					}()
					if fresh.UnmarshalBinary(c) == nil {
						fresh.Result()
						fresh.Add(s.vals[0])
						_, _ = fresh.MarshalBinary()
					}
				}()
			}
		}
	}
}

func TestAggTopKRejectsBadState(t *testing.T) {
	args := ts(tInt, tStr, tInt)
	a, _, ret := newAgg(t, "TOPK", args, []any{int32(2)})
	for _, vals := range [][]any{
		{nil},
		{types.StructValue{nil, "a"}},
		{types.StructValue{int32(1), "a"}, types.StructValue{int32(2), "b"}},
		{types.StructValue{int32(3), "a"}, types.StructValue{int32(2), "b"}, types.StructValue{int32(1), "c"}},
	} {
		e := newEncoder()
		e.uint(uint64(len(vals)))
		for _, v := range vals {
			if err := e.value(v, ret.Elem); err != nil {
				t.Fatal(err)
			}
		}
		acc, _ := a.New(args, ret, []any{int32(2)})
		if err := acc.UnmarshalBinary(e.b); err == nil {
			t.Errorf("state %v accepted", vals)
		}
	}
}

func corrupt(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	if i < len(c) {
		c[i] ^= 0xff
	}
	return c
}
