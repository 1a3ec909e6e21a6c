package types

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// asBig is d held as a big.Int, the form every operation had before small
// values were kept as int64s: the reference the small paths must agree
// with.
func asBig(d Dec) Dec { return Dec{big: new(big.Int).Set(d.unscaled()), Scale: d.Scale} }

func canonical(d Dec) bool { return d.big == nil || !d.big.IsInt64() }

// TestDecSmallAgreesWithBig runs every operation on int64-held values
// and on the same values as big.Ints, near the int64 bounds too, and
// checks the results are the same and in canonical form.
func TestDecSmallAgreesWithBig(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	edge := []int64{0, 1, -1, 5, -5, 15, -15, 99, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 3037000499, -3037000500, 922337203685477580, -922337203685477580}
	pick := func() Dec {
		var n int64
		switch r.IntN(3) {
		case 0:
			n = edge[r.IntN(len(edge))]
		case 1:
			n = r.Int64N(2001) - 1000
		default:
			n = int64(r.Uint64())
		}
		return Dec{small: n, Scale: r.IntN(22)}
	}
	same := func(what string, a, b Dec, got, want Dec) {
		t.Helper()
		if got.String() != want.String() || got.Scale != want.Scale || !canonical(got) {
			t.Fatalf("%s(%s, %s) = %s (scale %d, big %v), want %s (scale %d)", what, a, b, got, got.Scale, got.big, want, want.Scale)
		}
	}
	for range 200000 {
		a, b := pick(), pick()
		ab, bb := asBig(a), asBig(b)
		same("Add", a, b, a.Add(b), ab.Add(bb))
		same("Sub", a, b, a.Sub(b), ab.Sub(bb))
		same("Mul", a, b, a.Mul(b), ab.Mul(bb))
		same("Neg", a, b, a.Neg(), ab.Neg())
		s := r.IntN(25)
		same("Rescale", a, NewDec(int64(s), 0), a.Rescale(s), ab.Rescale(s))
		if got, want := a.Cmp(b), ab.Cmp(bb); got != want {
			t.Fatalf("Cmp(%s, %s) = %d, want %d", a, b, got, want)
		}
		if b.Sign() != 0 {
			got, _ := a.Rem(b)
			want, _ := ab.Rem(bb)
			same("Rem", a, b, got, want)
		}
		if a.Sign() != ab.Sign() || a.Precision() != ab.Precision() || a.Int64() != ab.Int64() || a.String() != ab.String() {
			t.Fatalf("%s: Sign %d/%d Precision %d/%d Int64 %d/%d String %s/%s", a, a.Sign(), ab.Sign(), a.Precision(), ab.Precision(), a.Int64(), ab.Int64(), a.String(), ab.String())
		}
	}
}

func TestDecCanonical(t *testing.T) {
	if d := DecFromBig(big.NewInt(42), 1); d.big != nil || d.small != 42 {
		t.Errorf("DecFromBig(42) = %+v, want the int64 form", d)
	}
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	if d := DecFromBig(huge, 0); d.big == nil {
		t.Errorf("DecFromBig(%s) lost its big form", huge)
	}
	if d, _ := ParseDec("1.50"); d.big != nil || d.small != 150 || d.Scale != 2 {
		t.Errorf("ParseDec(1.50) = %+v", d)
	}
	// Overflowing the int64 form moves to the big one, and back.
	m := NewDec(math.MaxInt64, 0)
	sum := m.Add(NewDec(1, 0))
	if sum.big == nil || sum.String() != "9223372036854775808" {
		t.Errorf("MaxInt64 + 1 = %s (%+v)", sum, sum)
	}
	if back := sum.Sub(NewDec(1, 0)); back.big != nil || back.small != math.MaxInt64 {
		t.Errorf("MaxInt64 + 1 - 1 = %+v, want the int64 form", back)
	}
}

func BenchmarkDecMulCmp(b *testing.B) {
	f := NewDec(908, 3)
	lo := NewDec(1000000, 0)
	b.ReportAllocs()
	for i := range b.N {
		p := f.Mul(DecFromInt64(int64(i)))
		_ = p.Cmp(lo)
	}
}
