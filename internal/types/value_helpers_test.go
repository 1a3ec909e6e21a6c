package types

import (
	"math"
	"testing"
)

func mustDec(s string) Dec {
	d, err := ParseDec(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestDec(t *testing.T) {
	tests := []struct{ got, want string }{
		{mustDec("1.50").String(), "1.50"},
		{mustDec("-0.05").String(), "-0.05"},
		{mustDec("1e3").String(), "1000"},
		{mustDec("1.5E-2").String(), "0.015"},
		{mustDec("10.01").Add(mustDec("5.1")).String(), "15.11"},
		{mustDec("10.1").Sub(mustDec("-5.0")).String(), "15.1"},
		{mustDec("10.1").Mul(mustDec("2.0")).String(), "20.20"},
		{mustDec("0.99").Rescale(1).String(), "1.0"},
		{mustDec("-0.95").Rescale(1).String(), "-1.0"},
		{mustDec("10.12").Rescale(3).String(), "10.120"},
		{NewDec(5, 0).String(), "5"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
	q, err := mustDec("10.1").Quo(mustDec("2.0"), 6)
	if err != nil || q.String() != "5.050000" {
		t.Errorf("Quo = %s, %v", q, err)
	}
	if _, err := mustDec("1").Quo(mustDec("0.0"), 2); err == nil {
		t.Error("Quo by zero succeeded")
	}
	r, _ := mustDec("10.1").Rem(mustDec("-2.0"))
	if r.String() != "0.1" {
		t.Errorf("Rem = %s", r)
	}
	if mustDec("1.0").Cmp(mustDec("1.00")) != 0 || mustDec("10.01").Cmp(mustDec("10.012")) >= 0 {
		t.Error("Cmp")
	}
	if mustDec("12.5").Float64() != 12.5 || mustDec("-12.9").Int64() != -12 {
		t.Error("conversions")
	}
	if !mustDec("99.99").Fits(4, 2) || mustDec("100").Fits(4, 2) {
		t.Error("Fits")
	}
	for _, bad := range []string{"", "abc", "1.2.3", "-", "1e"} {
		if _, err := ParseDec(bad); err == nil {
			t.Errorf("ParseDec(%q) succeeded", bad)
		}
	}
}

func TestCompareEqual(t *testing.T) {
	if c, _ := Compare(int32(1), 1.5); c != -1 {
		t.Error("int < double")
	}
	if c, _ := Compare(mustDec("2.0"), int64(2)); c != 0 {
		t.Error("dec = bigint")
	}
	if c, _ := Compare("b", "a"); c != 1 {
		t.Error("strings")
	}
	if _, err := Compare("a", int32(1)); err == nil {
		t.Error("string vs int compared")
	}
	if !Equal([]any{int32(1), int64(2)}, []any{int64(1), 2.0}) {
		t.Error("array equality across numeric kinds")
	}
	m1 := &MapValue{Keys: []any{"a", "b"}, Values: []any{int32(1), nil}}
	m2 := &MapValue{Keys: []any{"b", "a"}, Values: []any{nil, 1.0}}
	if !Equal(m1, m2) || Equal(m1, &MapValue{}) {
		t.Error("map equality")
	}
}

func TestFormatValue(t *testing.T) {
	st := StructOf(Field{Name: "A", Type: IntType}, Field{Name: "B", Type: StringType})
	tests := []struct {
		v    any
		t    *Type
		want string
	}{
		{nil, IntType, "null"},
		{"x", StringType, "x"},
		{1.0, DoubleType, "1.0"},
		{1.5e10, DoubleType, "1.5E10"},
		{1e-5, DoubleType, "1.0E-5"},
		{0.001, DoubleType, "0.001"},
		{1234567.0, DoubleType, "1234567.0"},
		{1e7, DoubleType, "1.0E7"},
		{math.Inf(-1), DoubleType, "-Infinity"},
		{mustDec("1.50"), DecimalOf(3, 2), "1.50"},
		{[]any{int32(1), int32(2)}, ArrayOf(IntType), "[1, 2]"},
		{&MapValue{Keys: []any{"k"}, Values: []any{int32(1)}}, MapOf(StringType, IntType), "{k=1}"},
		{StructValue{int32(1), "x"}, st, "{A=1, B=x}"},
		{TimestampValue(1651182287943), TimestampType, "2022-04-28T21:44:47.943"},
		{DateValue(18263), DateType, "2020-01-02"},
		{TimeValue(45000000), TimeType, "12:30:00"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.v, tt.t); got != tt.want {
			t.Errorf("FormatValue(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	if got := CastToString(StructValue{int32(1), "x"}, st); got != "Struct{A=1,B=x}" {
		t.Errorf("CastToString = %q", got)
	}
	for _, s := range []string{"2022-04-28T21:44:47.943", "2022-04-28T21:44:47.943Z"} {
		if ts, err := ParseTimestamp(s); err != nil || ts != 1651182287943 {
			t.Errorf("ParseTimestamp(%q) = %d, %v", s, ts, err)
		}
	}
}
