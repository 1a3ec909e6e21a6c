package eval

import (
	"fmt"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

// TestReusableAccumulators checks that AppendBinary appends what
// MarshalBinary returns, and that UnmarshalBinary then restores it into a
// reused accumulator.
func TestReusableAccumulators(t *testing.T) {
	def := countAgg()
	a, err := def.New(nil, types.BigintType, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := a.(ReusableAccumulator)
	if !ok {
		t.Fatal("COUNT's accumulator is not reusable")
	}
	fresh, _ := r.AppendBinary(nil)
	for range 300 {
		r.Add(nil)
	}
	m, _ := r.MarshalBinary()
	p, _ := r.AppendBinary([]byte("x"))
	if string(p) != "x"+string(m) {
		t.Fatalf("AppendBinary %q, MarshalBinary %q", p, m)
	}
	if err := r.UnmarshalBinary(fresh); err != nil || r.Result() != int64(0) {
		t.Fatalf("fresh state: %v %v", r.Result(), err)
	}
	if err := r.UnmarshalBinary(m); err != nil || r.Result() != int64(300) {
		t.Fatalf("restored state: %v %v", r.Result(), err)
	}
}

// TestReusableValueAccumulators checks AppendBinary against
// MarshalBinary, and reloading in place, for the other reusable
// aggregates over each type they take.
func TestReusableValueAccumulators(t *testing.T) {
	dec := types.DecimalOf(10, 2)
	d, _ := types.ParseDec("12.34")
	for _, c := range []struct {
		name string
		def  *Aggregate
		t    *types.Type
		in   []any
	}{
		{"SUM INT", sumAgg(), types.IntType, []any{int32(3), nil, int32(-9)}},
		{"SUM BIGINT", sumAgg(), types.BigintType, []any{int64(1) << 40, int64(5)}},
		{"SUM DOUBLE", sumAgg(), types.DoubleType, []any{1.5, 2.25}},
		{"SUM DECIMAL", sumAgg(), dec, []any{d, d}},
		{"AVG INT", avgAgg(), types.IntType, []any{int32(3), int32(4)}},
		{"AVG DOUBLE", avgAgg(), types.DoubleType, []any{1.5, nil, 2.0}},
		{"MIN STRING", minMaxAgg("MIN", "", -1), types.StringType, []any{"pear", "apple"}},
		{"MAX BIGINT", minMaxAgg("MAX", "", 1), types.BigintType, []any{int64(7), int64(1_000_000)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ret, err := c.def.Check([]*types.Type{c.t})
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.def.New([]*types.Type{c.t}, ret, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := a.(ReusableAccumulator)
			if !ok {
				t.Fatalf("%s's accumulator is not reusable", c.name)
			}
			fresh, _ := r.AppendBinary(nil)
			if m, _ := r.MarshalBinary(); string(fresh) != string(m) {
				t.Fatalf("fresh AppendBinary %q, MarshalBinary %q", fresh, m)
			}
			empty := fmt.Sprint(r.Result())
			for _, v := range c.in {
				r.Add(v)
			}
			want := fmt.Sprint(r.Result())
			m, _ := r.MarshalBinary()
			p, err := r.AppendBinary([]byte("x"))
			if err != nil || string(p) != "x"+string(m) {
				t.Fatalf("AppendBinary %q %v, MarshalBinary %q", p, err, m)
			}
			if err := r.UnmarshalBinary(fresh); err != nil || fmt.Sprint(r.Result()) != empty {
				t.Fatalf("fresh state: %v %v", r.Result(), err)
			}
			if err := r.UnmarshalBinary(m); err != nil || fmt.Sprint(r.Result()) != want {
				t.Fatalf("restored state: %v %v, want %s", r.Result(), err, want)
			}
		})
	}
}

// TestNumberResult checks that NumberResult gives Result's value, for
// every type COUNT, SUM and AVG take, empty and after rows.
func TestNumberResult(t *testing.T) {
	for _, c := range []struct {
		name string
		arg  *types.Type
		rows []any
	}{
		{"COUNT", nil, []any{nil, nil, nil}},
		{"SUM", types.BigintType, []any{int64(5), int64(1 << 40)}},
		{"SUM", types.IntType, []any{int32(5), int32(7)}},
		{"SUM", types.DoubleType, []any{1.5, 2.25}},
		{"AVG", types.BigintType, []any{int64(5), int64(8)}},
		{"AVG", types.DoubleType, []any{1.5, 2.0}},
	} {
		def, ok := LookupAggregate(c.name)
		if !ok {
			t.Fatal(c.name)
		}
		var args []*types.Type
		if c.arg != nil {
			args = []*types.Type{c.arg}
		}
		ret, err := def.Check(args)
		if err != nil {
			t.Fatal(err)
		}
		a, err := def.New(args, ret, nil)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n <= len(c.rows); n++ {
			if n > 0 {
				a.Add(c.rows[n-1])
			}
			r, ok := a.(NumberResult)
			if !ok {
				t.Fatalf("%s(%v) has no NumberResult", c.name, c.arg)
			}
			i, f, isInt, ok := r.NumberResult()
			want := a.Result()
			var got any
			switch {
			case !ok:
				if _, bigOrDouble := want.(int64); bigOrDouble {
					t.Errorf("%s(%v): no number for %v", c.name, c.arg, want)
				}
				if _, bigOrDouble := want.(float64); bigOrDouble {
					t.Errorf("%s(%v): no number for %v", c.name, c.arg, want)
				}
				continue
			case isInt:
				got = i
			default:
				got = f
			}
			if got != want {
				t.Errorf("%s(%v) after %d rows: NumberResult %v (%T), Result %v (%T)", c.name, c.arg, n, got, got, want, want)
			}
		}
	}
}
