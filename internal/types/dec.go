package types

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// Dec is a DECIMAL value: unscaled × 10^-Scale. The zero Dec is 0 with scale
// 0. Arithmetic returns new values and never modifies its operands, so a Dec
// may be shared freely.
//
// An unscaled value that fits in an int64 is held as one (big is nil), and
// arithmetic on such values allocates nothing unless it overflows; only
// larger values are big.Ints. Every constructor keeps that form, so equal
// values have equal representations.
type Dec struct {
	small int64
	big   *big.Int
	// Scale is the number of digits after the decimal point (never negative).
	Scale int
}

var bigTen = big.NewInt(10)

var pow10Cache [40]*big.Int

// pow10Small are the powers of ten an int64 holds.
var pow10Small [19]int64

func init() {
	p := big.NewInt(1)
	for i := range pow10Cache {
		pow10Cache[i] = new(big.Int).Set(p)
		p.Mul(p, bigTen)
	}
	n := int64(1)
	for i := range pow10Small {
		pow10Small[i] = n
		n *= 10
	}
}

// pow10 returns 10^n; the result must not be modified.
func pow10(n int) *big.Int {
	if n < len(pow10Cache) {
		return pow10Cache[n]
	}
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// NewDec returns unscaled × 10^-scale.
func NewDec(unscaled int64, scale int) Dec {
	return Dec{small: unscaled, Scale: scale}
}

// DecFromBig returns u × 10^-scale; u is not modified afterwards and
// must not be by the caller either.
func DecFromBig(u *big.Int, scale int) Dec {
	if u == nil {
		return Dec{Scale: scale}
	}
	if u.IsInt64() {
		return Dec{small: u.Int64(), Scale: scale}
	}
	return Dec{big: u, Scale: scale}
}

// BigInt returns d's unscaled value; the result must not be modified.
func (d Dec) BigInt() *big.Int { return d.unscaled() }

func (d Dec) unscaled() *big.Int {
	if d.big != nil {
		return d.big
	}
	return big.NewInt(d.small)
}

// scaleSmall returns n × 10^k when it fits in an int64.
func scaleSmall(n int64, k int) (int64, bool) {
	if k == 0 {
		return n, true
	}
	if k >= len(pow10Small) {
		return 0, n == 0
	}
	return mul64(n, pow10Small[k])
}

// mul64 returns a × b when it fits in an int64.
func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
		return 0, false
	}
	if (a < 0) != (b < 0) {
		return -int64(lo), true
	}
	return int64(lo), true
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// alignSmall returns both unscaled values at the larger scale when both
// are small and fit there.
func alignSmall(a, b Dec) (int64, int64, int, bool) {
	if a.big != nil || b.big != nil {
		return 0, 0, 0, false
	}
	switch {
	case a.Scale > b.Scale:
		bs, ok := scaleSmall(b.small, a.Scale-b.Scale)
		return a.small, bs, a.Scale, ok
	case b.Scale > a.Scale:
		as, ok := scaleSmall(a.small, b.Scale-a.Scale)
		return as, b.small, b.Scale, ok
	}
	return a.small, b.small, a.Scale, true
}

// ParseDec parses a decimal number in plain or scientific notation ("1.50",
// "-3", "1e3", ".5"). The scale is the number of digits after the point,
// adjusted by the exponent, and never negative.
func ParseDec(s string) (Dec, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Dec{}, fmt.Errorf("invalid decimal %q", s)
	}
	exp := 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		e, err := strconv.Atoi(t[i+1:])
		if err != nil {
			return Dec{}, fmt.Errorf("invalid decimal %q", s)
		}
		exp = e
		t = t[:i]
	}
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	intPart, frac := t, ""
	if i := strings.IndexByte(t, '.'); i >= 0 {
		intPart, frac = t[:i], t[i+1:]
	}
	if intPart == "" && frac == "" {
		return Dec{}, fmt.Errorf("invalid decimal %q", s)
	}
	digits := intPart + frac
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return Dec{}, fmt.Errorf("invalid decimal %q", s)
		}
	}
	u, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return Dec{}, fmt.Errorf("invalid decimal %q", s)
	}
	if neg {
		u.Neg(u)
	}
	scale := len(frac) - exp
	if scale < 0 {
		u.Mul(u, pow10(-scale))
		scale = 0
	}
	return DecFromBig(u, scale), nil
}

// DecFromFloat64 converts f using its shortest decimal representation, as
// Java's BigDecimal.valueOf does (0.1 becomes 0.1, not
// 0.1000000000000000055...).
func DecFromFloat64(f float64) (Dec, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Dec{}, fmt.Errorf("cannot convert %v to DECIMAL", f)
	}
	return ParseDec(strconv.FormatFloat(f, 'g', -1, 64))
}

// DecFromInt64 returns v with scale 0.
func DecFromInt64(v int64) Dec { return Dec{small: v} }

// String writes d in plain notation keeping its scale: 1.50, -0.05, 12.
func (d Dec) String() string {
	var s string
	neg := false
	if d.big == nil {
		neg = d.small < 0
		s = strconv.FormatUint(uint64(abs64(d.small)), 10)
		if d.small == math.MinInt64 {
			s = "9223372036854775808"
		}
	} else {
		neg = d.big.Sign() < 0
		s = new(big.Int).Abs(d.big).String()
	}
	if d.Scale > 0 {
		if len(s) <= d.Scale {
			s = strings.Repeat("0", d.Scale-len(s)+1) + s
		}
		s = s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Sign returns -1, 0 or +1.
func (d Dec) Sign() int {
	if d.big == nil {
		switch {
		case d.small < 0:
			return -1
		case d.small > 0:
			return 1
		}
		return 0
	}
	return d.big.Sign()
}

// Precision returns the number of digits of the unscaled value (at least 1).
func (d Dec) Precision() int {
	if d.big == nil {
		n := uint64(abs64(d.small))
		if d.small == math.MinInt64 {
			return 19
		}
		p := 1
		for n >= 10 {
			n /= 10
			p++
		}
		return p
	}
	u := d.big
	if u.Sign() == 0 {
		return 1
	}
	return len(new(big.Int).Abs(u).String())
}

// Fits reports whether d, once rescaled to scale, has at most precision
// digits, i.e. whether it is a valid DECIMAL(precision, scale) value.
func (d Dec) Fits(precision, scale int) bool {
	r := d.Rescale(scale)
	return r.Precision() <= precision || r.Sign() == 0
}

// Rescale returns d with the given scale, rounding half away from zero
// (Java's HALF_UP) when digits are dropped.
func (d Dec) Rescale(scale int) Dec {
	if scale < 0 {
		scale = 0
	}
	if d.big == nil {
		switch {
		case scale == d.Scale:
			return d
		case scale > d.Scale:
			if n, ok := scaleSmall(d.small, scale-d.Scale); ok {
				return Dec{small: n, Scale: scale}
			}
		case d.Scale-scale < len(pow10Small):
			div := pow10Small[d.Scale-scale]
			q, r := d.small/div, d.small%div
			if abs64(r) >= div-abs64(r) {
				if d.small < 0 {
					q--
				} else {
					q++
				}
			}
			return Dec{small: q, Scale: scale}
		}
	}
	u := d.unscaled()
	switch {
	case scale == d.Scale:
		return d
	case scale > d.Scale:
		return DecFromBig(new(big.Int).Mul(u, pow10(scale-d.Scale)), scale)
	}
	return DecFromBig(divRoundHalfUp(u, pow10(d.Scale-scale)), scale)
}

// divRoundHalfUp returns a/b rounded half away from zero; b must be positive.
func divRoundHalfUp(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.CmpAbs(b) >= 0 {
		if a.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

func align(a, b Dec) (*big.Int, *big.Int, int) {
	au, bu := a.unscaled(), b.unscaled()
	switch {
	case a.Scale > b.Scale:
		return au, new(big.Int).Mul(bu, pow10(a.Scale-b.Scale)), a.Scale
	case b.Scale > a.Scale:
		return new(big.Int).Mul(au, pow10(b.Scale-a.Scale)), bu, b.Scale
	}
	return au, bu, a.Scale
}

// Cmp compares the numeric values of d and o (scale is ignored: 1.0 = 1.00).
func (d Dec) Cmp(o Dec) int {
	if a, b, _, ok := alignSmall(d, o); ok {
		return cmpInt(a, b)
	}
	if d.Scale == o.Scale {
		return d.unscaled().Cmp(o.unscaled())
	}
	a, b, _ := align(d, o)
	return a.Cmp(b)
}

// Add returns d + o with scale max(d.Scale, o.Scale).
func (d Dec) Add(o Dec) Dec {
	if a, b, s, ok := alignSmall(d, o); ok {
		if r := a + b; (a >= 0) != (b >= 0) || (r >= 0) == (a >= 0) {
			return Dec{small: r, Scale: s}
		}
	}
	a, b, s := align(d, o)
	return DecFromBig(new(big.Int).Add(a, b), s)
}

// Sub returns d - o with scale max(d.Scale, o.Scale).
func (d Dec) Sub(o Dec) Dec {
	if a, b, s, ok := alignSmall(d, o); ok {
		if r := a - b; (a >= 0) == (b >= 0) || (r >= 0) == (a >= 0) {
			return Dec{small: r, Scale: s}
		}
	}
	a, b, s := align(d, o)
	return DecFromBig(new(big.Int).Sub(a, b), s)
}

// Mul returns d × o with scale d.Scale + o.Scale.
func (d Dec) Mul(o Dec) Dec {
	if d.big == nil && o.big == nil {
		if n, ok := mul64(d.small, o.small); ok {
			return Dec{small: n, Scale: d.Scale + o.Scale}
		}
	}
	return DecFromBig(new(big.Int).Mul(d.unscaled(), o.unscaled()), d.Scale+o.Scale)
}

// Neg returns -d.
func (d Dec) Neg() Dec {
	if d.big == nil && d.small != math.MinInt64 {
		return Dec{small: -d.small, Scale: d.Scale}
	}
	return DecFromBig(new(big.Int).Neg(d.unscaled()), d.Scale)
}

// Quo returns d / o rounded half up to scale digits after the point. It
// fails when o is zero.
func (d Dec) Quo(o Dec, scale int) (Dec, error) {
	if o.Sign() == 0 {
		return Dec{}, fmt.Errorf("division by zero")
	}
	// d/o = (du/10^ds) / (ou/10^os); scaled by 10^scale:
	// du * 10^(scale + os - ds) / ou.
	num := new(big.Int).Set(d.unscaled())
	den := new(big.Int).Set(o.unscaled())
	shift := scale + o.Scale - d.Scale
	if shift >= 0 {
		num.Mul(num, pow10(shift))
	} else {
		den.Mul(den, pow10(-shift))
	}
	if den.Sign() < 0 {
		den.Neg(den)
		num.Neg(num)
	}
	return DecFromBig(divRoundHalfUp(num, den), scale), nil
}

// Rem returns the remainder of d / o truncated toward zero (Java's
// BigDecimal.remainder), with scale max(d.Scale, o.Scale). It fails when o
// is zero.
func (d Dec) Rem(o Dec) (Dec, error) {
	if o.Sign() == 0 {
		return Dec{}, fmt.Errorf("division by zero")
	}
	if a, b, s, ok := alignSmall(d, o); ok && !(a == math.MinInt64 && b == -1) {
		return Dec{small: a % b, Scale: s}, nil
	}
	a, b, s := align(d, o)
	return DecFromBig(new(big.Int).Rem(a, b), s), nil
}

// Float64 returns the nearest float64.
func (d Dec) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// Int64 returns d truncated toward zero; values outside int64 wrap as Java's
// longValue does.
func (d Dec) Int64() int64 {
	if d.big == nil {
		if d.Scale >= len(pow10Small) {
			return 0
		}
		return d.small / pow10Small[d.Scale]
	}
	u := d.unscaled()
	if d.Scale > 0 {
		u = new(big.Int).Quo(u, pow10(d.Scale))
	}
	if u.IsInt64() {
		return u.Int64()
	}
	// Two's complement truncation to 64 bits.
	m := new(big.Int).And(u, new(big.Int).SetUint64(math.MaxUint64))
	return int64(m.Uint64())
}
