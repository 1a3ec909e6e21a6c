package types

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"time"
)

// FormatValue renders v, a value of type t, as ksqlDB's CLI shows it:
// strings plain, null as null, doubles as Java's Double.toString (1.0,
// 1.5E10), decimals with their scale, arrays as [1, 2], maps as {k=v},
// structs as {A=1, B=x}, timestamps as 2020-01-01T00:00:00.000, dates as
// 2020-01-01, times as 12:30:00, bytes in base64. t may be nil, in which case
// the Go representation decides.
func FormatValue(v any, t *Type) string {
	var b strings.Builder
	writeValue(&b, v, t, false)
	return b.String()
}

// CastToString renders v as ksqlDB's CAST(v AS STRING) does. It differs from
// FormatValue only for structs, written Struct{A=1,B=x} as Kafka Connect
// prints them.
func CastToString(v any, t *Type) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b strings.Builder
	writeValue(&b, v, t, true)
	return b.String()
}

func elemType(t *Type) *Type {
	if t == nil {
		return nil
	}
	return t.Elem
}

func writeValue(b *strings.Builder, v any, t *Type, cast bool) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(FormatDouble(x))
	case Dec:
		b.WriteString(x.String())
	case string:
		b.WriteString(x)
	case []byte:
		b.WriteString(base64.StdEncoding.EncodeToString(x))
	case TimestampValue:
		b.WriteString(FormatTimestamp(x))
	case DateValue:
		b.WriteString(FormatDate(x))
	case TimeValue:
		b.WriteString(FormatTime(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, e, elemType(t), cast)
		}
		b.WriteByte(']')
	case *MapValue:
		b.WriteByte('{')
		if x != nil {
			var kt *Type
			if t != nil {
				kt = t.Key
			}
			for i := range x.Keys {
				if i > 0 {
					b.WriteString(", ")
				}
				writeValue(b, x.Keys[i], kt, cast)
				b.WriteByte('=')
				writeValue(b, x.Values[i], elemType(t), cast)
			}
		}
		b.WriteByte('}')
	case StructValue:
		sep := ", "
		if cast {
			b.WriteString("Struct{")
			sep = ","
		} else {
			b.WriteByte('{')
		}
		first := true
		for i, e := range x {
			var name string
			var ft *Type
			if t != nil && i < len(t.Fields) {
				name, ft = t.Fields[i].Name, t.Fields[i].Type
			} else {
				name = "F" + strconv.Itoa(i)
			}
			if cast && e == nil {
				// Kafka Connect omits null fields.
				continue
			}
			if !first {
				b.WriteString(sep)
			}
			first = false
			b.WriteString(name)
			b.WriteByte('=')
			writeValue(b, e, ft, cast)
		}
		b.WriteByte('}')
	default:
		b.WriteString("?")
	}
}

// FormatDouble writes f as Java's Double.toString does: plain notation with
// at least one fractional digit for 1e-3 <= |f| < 1e7 (1.0, 0.25), and
// computerized scientific notation otherwise (1.5E10, 1.0E-5); NaN and
// Infinity are spelled as in Java.
func FormatDouble(f float64) string {
	return string(AppendDouble(nil, f))
}

// AppendDouble appends FormatDouble(f) to dst.
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	a := math.Abs(f)
	if a >= 1e-3 && a < 1e7 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
		for _, c := range dst[start:] {
			if c == '.' {
				return dst
			}
		}
		return append(dst, ".0"...)
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if !bytes.ContainsRune(s, '.') {
		// Java writes at least two significant digits and picks the
		// two-digit decimal closest to f (4.9E-324, not 5.0E-324).
		s = strconv.AppendFloat(buf[:0], f, 'e', 1, 64)
	}
	// s looks like -1.5e+10 or 1e-05.
	e := 0
	for i, c := range s {
		if c == 'e' {
			e = i
			break
		}
	}
	mant, exp := s[:e], s[e+1:]
	dst = append(dst, mant...)
	hasDot := false
	for _, c := range mant {
		if c == '.' {
			hasDot = true
		}
	}
	if !hasDot {
		dst = append(dst, ".0"...)
	}
	dst = append(dst, 'E')
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = exp[1:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

// FormatTimestamp writes ts as ISO-8601 in UTC with milliseconds, as ksqlDB
// does: 2020-01-01T00:00:00.000.
func FormatTimestamp(ts TimestampValue) string {
	return time.UnixMilli(int64(ts)).UTC().Format("2006-01-02T15:04:05.000")
}

// FormatDate writes d as 2020-01-01.
func FormatDate(d DateValue) string {
	return time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02")
}

// FormatTime writes t as 12:30:00, with .SSS when it has milliseconds.
func FormatTime(t TimeValue) string {
	tm := time.UnixMilli(int64(t)).UTC()
	if t%1000 != 0 {
		return tm.Format("15:04:05.000")
	}
	return tm.Format("15:04:05")
}

// ParseTimestamp parses an ISO-8601 timestamp as ksqlDB accepts it in CAST
// and comparisons: a date, optionally followed by T and a time with optional
// fraction and optional zone (Z or ±hh:mm). A value without zone is UTC.
func ParseTimestamp(s string) (TimestampValue, error) {
	s = strings.TrimSpace(s)
	layouts := []string{
		"2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999Z0700",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02T15:04Z07:00",
		"2006-01-02T15:04",
		"2006-01-02T15",
		"2006-01-02",
		"2006-01",
		"2006",
	}
	for _, l := range layouts {
		if tm, err := time.Parse(l, s); err == nil {
			return TimestampValue(tm.UnixMilli()), nil
		}
	}
	return 0, &time.ParseError{Layout: "yyyy-MM-ddTHH:mm:ss.SSS", Value: s, Message: ": not an ISO-8601 timestamp"}
}

// ParseDate parses yyyy-MM-dd, or a prefix yyyy-MM or yyyy of it (the
// first day of the month or year), as ksqlDB's CAST to DATE does.
func ParseDate(s string) (DateValue, error) {
	s = strings.TrimSpace(s)
	var err error
	for _, l := range []string{"2006-01-02", "2006-01", "2006"} {
		var tm time.Time
		if tm, err = time.Parse(l, s); err == nil {
			return DateValue(tm.Unix() / 86400), nil
		}
	}
	return 0, err
}

// ParseTime parses HH:mm[:ss[.SSS]].
func ParseTime(s string) (TimeValue, error) {
	s = strings.TrimSpace(s)
	for _, l := range []string{"15:04:05.999999999", "15:04"} {
		if tm, err := time.Parse(l, s); err == nil {
			d := tm.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))
			return TimeValue(d.Milliseconds()), nil
		}
	}
	return 0, &time.ParseError{Layout: "HH:mm:ss", Value: s, Message: ": not a time"}
}
