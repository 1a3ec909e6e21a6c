package eval

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// rejectArgs is ksqlDB's message for a call that matches no signature of
// the function name; alts lists the accepted signatures.
func rejectArgs(name string, ts []*types.Type, alts ...string) error {
	msg := fmt.Sprintf("Function '%s' does not accept parameters %s.", strings.ToLower(name), typeList(ts))
	if len(alts) > 0 {
		msg += "\nValid alternatives are:\n" + strings.Join(alts, "\n")
	}
	return errors.New(msg)
}

func isNumericKind(t *types.Type) bool { return t == nil || t.IsNumeric() }

func isIntKind(t *types.Type) bool {
	return t == nil || t.Kind == types.Int || t.Kind == types.Bigint
}

// doubleFunc registers a function of numeric arguments, each converted to
// DOUBLE as ksqlDB's implicit casts do, returning DOUBLE.
func doubleFunc(name, desc string, arity int, fn func(a []float64) float64) *Func {
	alt := strings.ToLower(name) + "(" + strings.TrimSuffix(strings.Repeat("DOUBLE, ", arity), ", ") + ")"
	return &Func{
		Name: name, Description: desc,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != arity {
				return nil, rejectArgs(name, ts, alt)
			}
			for _, t := range ts {
				if !isNumericKind(t) {
					return nil, rejectArgs(name, ts, alt)
				}
			}
			return types.DoubleType, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			switch arity {
			case 0:
				return func([]any, []ArgFunc) (any, error) { return fn(nil), nil }, nil
			case 1:
				return Strict1(func(a any) (any, error) {
					x := [1]float64{toFloat(a)}
					return fn(x[:]), nil
				}), nil
			}
			return Strict(func(a []any) (any, error) {
				var buf [4]float64
				xs := buf[:0]
				for _, v := range a {
					xs = append(xs, toFloat(v))
				}
				return fn(xs), nil
			}), nil
		},
	}
}

func double1(name, desc string, fn func(float64) float64) *Func {
	return doubleFunc(name, desc, 1, func(a []float64) float64 { return fn(a[0]) })
}

// roundMode is a java.math.RoundingMode used by decRound.
type roundMode int

const (
	roundHalfUp   roundMode = iota // ties away from zero
	roundHalfDown                  // ties toward zero
	roundDown                      // toward zero
	roundFloor                     // toward negative infinity
	roundCeiling                   // toward positive infinity
)

// ksqlRoundMode is the rounding ROUND uses: ties go toward positive
// infinity, so 1.5 rounds to 2 and -1.5 to -1.
func ksqlRoundMode(sign int) roundMode {
	if sign > 0 {
		return roundHalfUp
	}
	return roundHalfDown
}

var bigOne = big.NewInt(1)

func bigPow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// decRound rounds d to places digits after the point (a negative places
// rounds to a multiple of 10^-places) as BigDecimal.setScale does; the
// result has scale max(places, 0), or d's scale when nothing is dropped.
func decRound(d types.Dec, places int, mode roundMode) types.Dec {
	if places >= d.Scale {
		return d
	}
	u := d.BigInt()
	k := d.Scale - places
	if k > len(u.String())+1 && mode != roundFloor && mode != roundCeiling {
		// Every digit is dropped and the value is below half a unit.
		return types.NewDec(0, max(places, 0))
	}
	div := bigPow10(k)
	q, r := new(big.Int).QuoRem(u, div, new(big.Int))
	if r.Sign() != 0 {
		neg := u.Sign() < 0
		away := false
		switch mode {
		case roundHalfUp, roundHalfDown:
			h := new(big.Int).Abs(r)
			c := h.Lsh(h, 1).Cmp(div)
			away = c > 0 || (c == 0 && mode == roundHalfUp)
		case roundFloor:
			away = neg
		case roundCeiling:
			away = !neg
		}
		if away {
			if neg {
				q.Sub(q, bigOne)
			} else {
				q.Add(q, bigOne)
			}
		}
	}
	if places < 0 {
		return types.DecFromBig(q.Mul(q, bigPow10(-places)), 0)
	}
	return types.DecFromBig(q, places)
}

// roundDouble rounds x as ksqlDB does through BigDecimal.valueOf(x).
func roundDouble(x float64, places int64, mode func(sign int) roundMode) (float64, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("cannot round %s", types.FormatDouble(x))
	}
	d, err := types.DecFromFloat64(x)
	if err != nil {
		return 0, err
	}
	p := clampPlaces(places)
	if p >= d.Scale {
		return x, nil
	}
	return decRound(d, p, mode(d.Sign())).Float64(), nil
}

func clampPlaces(p int64) int {
	return int(max(min(p, 1000), -1000))
}

// intRound rounds an integer to a multiple of 10^-places when places is
// negative.
func intRound(v int64, places int64, mode roundMode) int64 {
	if places >= 0 {
		return v
	}
	d := decRound(types.DecFromInt64(v), clampPlaces(places), mode)
	return d.Int64()
}

func decimalFloorType(t *types.Type) *types.Type {
	return types.DecimalOf(max(t.Precision-t.Scale, 1), 0)
}

// javaRound is Java's Math.round(double).
func javaRound(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return int64(f)
}

// javaLong is Java's (long) cast of a double.
func javaLong(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}

// javaPow is Java's Math.pow, which differs from math.Pow for a NaN
// exponent and for ±1 raised to an infinity.
func javaPow(x, y float64) float64 {
	if math.IsNaN(y) || (math.IsInf(y, 0) && math.Abs(x) == 1) {
		if y == 0 {
			return 1
		}
		return math.NaN()
	}
	return math.Pow(x, y)
}

// roundingFunc builds ROUND and TRUNC: the one-argument form rounds to a
// whole number (BIGINT for a DOUBLE, DECIMAL(p-s, 0) for a DECIMAL), the
// two-argument form keeps the argument's type.
func roundingFunc(name, desc string, mode func(sign int) roundMode, whole func(float64) int64) *Func {
	alts := []string{
		strings.ToLower(name) + "(INTEGER|BIGINT|DOUBLE|DECIMAL)",
		strings.ToLower(name) + "(INTEGER|BIGINT|DOUBLE|DECIMAL, INTEGER)",
	}
	return &Func{
		Name: name, Description: desc,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) < 1 || len(ts) > 2 || !isNumericKind(ts[0]) || (len(ts) == 2 && !isIntKind(ts[1])) {
				return nil, rejectArgs(name, ts, alts...)
			}
			t := ts[0]
			if t == nil {
				t = types.DoubleType
			}
			switch t.Kind {
			case types.Double:
				if len(ts) == 1 {
					return types.BigintType, nil
				}
			case types.Decimal:
				if len(ts) == 1 {
					return decimalFloorType(t), nil
				}
			}
			return t, nil
		},
		Build: func(ts []*types.Type, ret *types.Type) (Impl, error) {
			if len(ts) == 1 {
				return Strict1(func(a any) (any, error) {
					switch x := a.(type) {
					case int32, int64:
						return x, nil
					case float64:
						return whole(x), nil
					case types.Dec:
						return decRound(x, 0, mode(x.Sign())).Rescale(ret.Scale), nil
					}
					return nil, fmt.Errorf("%s of %T", name, a)
				}), nil
			}
			return Strict(func(a []any) (any, error) {
				places := toInt64(a[1])
				switch x := a[0].(type) {
				case int32:
					return int32(intRound(int64(x), places, mode(int(x)))), nil
				case int64:
					return intRound(x, places, mode(int(x))), nil
				case float64:
					return roundDouble(x, places, mode)
				case types.Dec:
					return decRound(x, clampPlaces(places), mode(x.Sign())).Rescale(ret.Scale), nil
				}
				return nil, fmt.Errorf("%s of %T", name, a[0])
			}), nil
		},
	}
}

// extremum builds GREATEST and LEAST.
func extremum(name, desc string, want int) *Func {
	return &Func{
		Name: name, Description: desc,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) == 0 {
				return nil, rejectArgs(name, ts)
			}
			return extremumType(name, ts)
		},
		// DECIMAL arguments keep their own scale, as ksqlDB returns the
		// winning BigDecimal unchanged.
		Coerce: func(ts []*types.Type, i int, ret *types.Type) *types.Type {
			if ret.Kind == types.Decimal && ts[i] != nil {
				return nil
			}
			return ret
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return func(row []any, args []ArgFunc) (any, error) {
				var best any
				var err error
				for _, a := range args {
					v, e := a(row)
					keep(&err, e)
					if v == nil {
						continue
					}
					if best == nil {
						best = v
						continue
					}
					c, e := types.Compare(v, best)
					if e != nil {
						keep(&err, e)
						return nil, err
					}
					if c == want {
						best = v
					}
				}
				return best, err
			}, nil
		},
	}
}

func ambiguous(name string, ts []*types.Type) error {
	name = strings.ToLower(name)
	s := make([]string, len(ts))
	for i, t := range ts {
		if t == nil {
			s[i] = "null"
		} else {
			s[i] = t.String()
		}
	}
	return fmt.Errorf("Function '%s' cannot be resolved due to ambiguous method parameters (%s).", name, strings.Join(s, ", "))
}

// extremumType resolves GREATEST and LEAST as ksqlDB's overloads do: one
// per comparable type, with implicit casts that make mixed INTEGER, BIGINT
// and DECIMAL arguments ambiguous unless a DOUBLE is among them, and STRING
// arguments convertible to a DATE, TIME or TIMESTAMP. Only untyped NULLs
// are ambiguous too.
func extremumType(name string, ts []*types.Type) (*types.Type, error) {
	var out *types.Type
	numeric, double, mixed, str := true, false, false, false
	var temporal *types.Type
	for _, t := range ts {
		if t == nil {
			continue
		}
		switch t.Kind {
		case types.Double:
			double = true
		case types.Int, types.Bigint, types.Decimal:
		case types.String:
			numeric, str = false, true
		case types.Date, types.Time, types.Timestamp:
			numeric = false
			if temporal != nil && temporal.Kind != t.Kind {
				return nil, rejectArgs(name, ts)
			}
			temporal = t
		case types.Bytes:
			numeric = false
		default:
			return nil, rejectArgs(name, ts)
		}
		if out == nil {
			out = t
			continue
		}
		if out.Kind != t.Kind {
			mixed = true
		}
		if w, ok := expr.Widen(out, t); ok {
			out = w
		}
	}
	switch {
	case out == nil:
		return nil, ambiguous(name, ts)
	case temporal != nil && str:
		for _, t := range ts {
			if t != nil && t.Kind != types.String && t.Kind != temporal.Kind {
				return nil, rejectArgs(name, ts)
			}
		}
		return temporal, nil
	case !mixed:
		return out, nil
	case numeric && double:
		return types.DoubleType, nil
	case numeric:
		return nil, ambiguous(name, ts)
	}
	return nil, rejectArgs(name, ts)
}

func init() {
	Register(&Func{
		Name: "ABS", Description: "Returns the absolute value of a number.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 || !isNumericKind(ts[0]) {
				return nil, rejectArgs("ABS", ts, "abs(INTEGER|BIGINT|DOUBLE|DECIMAL)")
			}
			if ts[0] == nil {
				return types.DoubleType, nil
			}
			return ts[0], nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) {
				switch x := a.(type) {
				case int32:
					if x < 0 {
						return -x, nil
					}
					return x, nil
				case int64:
					if x < 0 {
						return -x, nil
					}
					return x, nil
				case float64:
					return math.Abs(x), nil
				case types.Dec:
					if x.Sign() < 0 {
						return x.Neg(), nil
					}
					return x, nil
				}
				return nil, fmt.Errorf("ABS of %T", a)
			}), nil
		},
	})
	for _, name := range []string{"FLOOR", "CEIL"} {
		mode, desc := roundFloor, "Rounds a number down to a whole number, keeping its type."
		if name == "CEIL" {
			mode, desc = roundCeiling, "Rounds a number up to a whole number, keeping its type."
		}
		Register(&Func{
			Name: name, Description: desc,
			Check: func(ts []*types.Type) (*types.Type, error) {
				if len(ts) != 1 || !isNumericKind(ts[0]) {
					return nil, rejectArgs(name, ts, strings.ToLower(name)+"(INTEGER|BIGINT|DOUBLE|DECIMAL)")
				}
				if ts[0] == nil {
					return types.DoubleType, nil
				}
				return ts[0], nil
			},
			Build: func([]*types.Type, *types.Type) (Impl, error) {
				return Strict1(func(a any) (any, error) {
					switch x := a.(type) {
					case int32, int64:
						return x, nil
					case float64:
						if mode == roundFloor {
							return math.Floor(x), nil
						}
						return math.Ceil(x), nil
					case types.Dec:
						return decRound(x, 0, mode).Rescale(x.Scale), nil
					}
					return nil, fmt.Errorf("%s of %T", name, a)
				}), nil
			},
		})
	}
	Register(roundingFunc("ROUND",
		"ROUND(x[, places]): rounds to places decimal places (default 0), ties toward positive infinity.",
		ksqlRoundMode, javaRound))
	Register(roundingFunc("TRUNC",
		"TRUNC(x[, places]): truncates toward zero to places decimal places (default 0).",
		func(int) roundMode { return roundDown }, javaLong))
	Register(&Func{
		Name: "SIGN", Description: "Returns -1, 0 or 1 as the number is negative, zero or positive.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 1 || !isNumericKind(ts[0]) {
				return nil, rejectArgs("SIGN", ts, "sign(INTEGER|BIGINT|DOUBLE|DECIMAL)")
			}
			return types.IntType, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) {
				switch x := a.(type) {
				case int32:
					return int32(cmpInt64(int64(x), 0)), nil
				case int64:
					return int32(cmpInt64(x, 0)), nil
				case float64:
					switch {
					case x > 0:
						return int32(1), nil
					case x < 0:
						return int32(-1), nil
					}
					return int32(0), nil
				case types.Dec:
					return int32(x.Sign()), nil
				}
				return nil, fmt.Errorf("SIGN of %T", a)
			}), nil
		},
	})
	Register(double1("EXP", "Returns e raised to the power of x.", math.Exp))
	Register(double1("LN", "Returns the natural logarithm of x.", math.Log))
	Register(double1("SQRT", "Returns the square root of x.", math.Sqrt))
	Register(double1("CBRT", "Returns the cube root of x.", math.Cbrt))
	Register(double1("ACOS", "Returns the arc cosine of x, in radians (NaN outside [-1, 1]).", math.Acos))
	Register(double1("ASIN", "Returns the arc sine of x, in radians (NaN outside [-1, 1]).", math.Asin))
	Register(double1("ATAN", "Returns the arc tangent of x, in radians.", math.Atan))
	Register(double1("COS", "Returns the cosine of x, an angle in radians.", math.Cos))
	Register(double1("COSH", "Returns the hyperbolic cosine of x.", math.Cosh))
	Register(double1("COT", "Returns the cotangent of x, an angle in radians.", func(x float64) float64 { return 1 / math.Tan(x) }))
	Register(double1("SIN", "Returns the sine of x, an angle in radians.", math.Sin))
	Register(double1("SINH", "Returns the hyperbolic sine of x.", math.Sinh))
	Register(double1("TAN", "Returns the tangent of x, an angle in radians.", math.Tan))
	Register(double1("TANH", "Returns the hyperbolic tangent of x.", math.Tanh))
	Register(double1("DEGREES", "Converts an angle in radians to degrees.", func(x float64) float64 { return x * 57.29577951308232 }))
	Register(double1("RADIANS", "Converts an angle in degrees to radians.", func(x float64) float64 { return x * 0.017453292519943295 }))
	Register(doubleFunc("ATAN2", "ATAN2(y, x): the angle in radians of the point (x, y) from the positive x axis.", 2,
		func(a []float64) float64 { return math.Atan2(a[0], a[1]) }))
	Register(doubleFunc("POWER", "POWER(base, exponent): base raised to the power of exponent.", 2,
		func(a []float64) float64 { return javaPow(a[0], a[1]) }))
	Register(doubleFunc("PI", "Returns the value of pi.", 0, func([]float64) float64 { return math.Pi }))
	Register(doubleFunc("RANDOM", "Returns a random DOUBLE in [0.0, 1.0).", 0, func([]float64) float64 { return rand.Float64() }))
	logAlts := []string{"log(DOUBLE value)", "log(DOUBLE base, DOUBLE value)"}
	Register(&Func{
		Name: "LOG", Description: "LOG(x) is the natural logarithm of x; LOG(base, x) the logarithm of x in base.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) < 1 || len(ts) > 2 || !isNumericKind(ts[0]) || (len(ts) == 2 && !isNumericKind(ts[1])) {
				return nil, rejectArgs("LOG", ts, logAlts...)
			}
			return types.DoubleType, nil
		},
		Build: func(ts []*types.Type, _ *types.Type) (Impl, error) {
			if len(ts) == 1 {
				return Strict1(func(a any) (any, error) { return math.Log(toFloat(a)), nil }), nil
			}
			return Strict(func(a []any) (any, error) {
				base, x := toFloat(a[0]), toFloat(a[1])
				if base <= 0 || base == 1 {
					return math.NaN(), nil
				}
				return math.Log(x) / math.Log(base), nil
			}), nil
		},
	})
	geoAlts := []string{
		"geo_distance(DOUBLE lat1, DOUBLE lon1, DOUBLE lat2, DOUBLE lon2)",
		"geo_distance(DOUBLE lat1, DOUBLE lon1, DOUBLE lat2, DOUBLE lon2, STRING units)",
	}
	Register(&Func{
		Name:        "GEO_DISTANCE",
		Description: "GEO_DISTANCE(lat1, lon1, lat2, lon2[, units]): great-circle distance between two points in decimal degrees, in KM (default) or MILES.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 4 && len(ts) != 5 {
				return nil, rejectArgs("GEO_DISTANCE", ts, geoAlts...)
			}
			for i, t := range ts {
				if (i < 4 && !isNumericKind(t)) || (i == 4 && t != nil && t.Kind != types.String) {
					return nil, rejectArgs("GEO_DISTANCE", ts, geoAlts...)
				}
			}
			return types.DoubleType, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict(func(a []any) (any, error) {
				radius := 6371.0
				if len(a) == 5 {
					switch strings.ToUpper(a[4].(string)) {
					case "KM", "KILOMETER", "KILOMETERS", "KILOMETRE", "KILOMETRES":
					case "MI", "MILE", "MILES":
						radius = 3959
					default:
						return nil, fmt.Errorf("GEO_DISTANCE units must be KM or MILES, not %q", a[4])
					}
				}
				return geoDistance(toFloat(a[0]), toFloat(a[1]), toFloat(a[2]), toFloat(a[3]), radius)
			}), nil
		},
	})
	Register(extremum("GREATEST", "Returns the largest non-null argument (arguments of one comparable type).", 1))
	Register(extremum("LEAST", "Returns the smallest non-null argument (arguments of one comparable type).", -1))
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func geoDistance(lat1, lon1, lat2, lon2, radius float64) (any, error) {
	if lat1 < -90 || lat1 > 90 || lat2 < -90 || lat2 > 90 {
		return nil, errors.New("GEO_DISTANCE: valid latitude values are in the range of -90 to 90 decimal degrees")
	}
	if lon1 < -180 || lon1 > 180 || lon2 < -180 || lon2 > 180 {
		return nil, errors.New("GEO_DISTANCE: valid longitude values are in the range of -180 to 180 decimal degrees")
	}
	const toRad = 0.017453292519943295
	dLat, dLon := (lat2-lat1)*toRad, (lon2-lon1)*toRad
	hav := func(x float64) float64 { s := math.Sin(x / 2); return s * s }
	h := hav(dLat) + hav(dLon)*math.Cos(lat1*toRad)*math.Cos(lat2*toRad)
	return 2 * math.Asin(math.Sqrt(h)) * radius, nil
}
