package shell

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// formatValue renders a value for a table cell: scalars plainly (strings
// unquoted, NULL as null), ARRAY, MAP and STRUCT values as JSON.
func formatValue(v *sluicev1.Value) string {
	switch k := v.GetKind().(type) {
	case *sluicev1.Value_StringValue:
		return k.StringValue
	case *sluicev1.Value_DecimalValue:
		return k.DecimalValue
	case *sluicev1.Value_BytesValue:
		return base64.StdEncoding.EncodeToString(k.BytesValue)
	case *sluicev1.Value_TimestampMillis:
		return formatTimestamp(k.TimestampMillis)
	case *sluicev1.Value_DateDays:
		return formatDate(k.DateDays)
	case *sluicev1.Value_TimeMillis:
		return formatTime(k.TimeMillis)
	}
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

// writeJSON writes v as JSON; temporal and BYTES values become strings.
func writeJSON(b *strings.Builder, v *sluicev1.Value) {
	switch k := v.GetKind().(type) {
	case nil, *sluicev1.Value_NullValue:
		b.WriteString("null")
	case *sluicev1.Value_BoolValue:
		b.WriteString(strconv.FormatBool(k.BoolValue))
	case *sluicev1.Value_IntValue:
		b.WriteString(strconv.FormatInt(k.IntValue, 10))
	case *sluicev1.Value_DoubleValue:
		b.WriteString(formatDouble(k.DoubleValue))
	case *sluicev1.Value_DecimalValue:
		b.WriteString(k.DecimalValue)
	case *sluicev1.Value_StringValue:
		writeJSONString(b, k.StringValue)
	case *sluicev1.Value_BytesValue, *sluicev1.Value_TimestampMillis,
		*sluicev1.Value_DateDays, *sluicev1.Value_TimeMillis:
		writeJSONString(b, formatValue(v))
	case *sluicev1.Value_ArrayValue:
		b.WriteByte('[')
		for i, e := range k.ArrayValue.GetElements() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case *sluicev1.Value_MapValue:
		b.WriteByte('{')
		for i, e := range k.MapValue.GetEntries() {
			if i > 0 {
				b.WriteByte(',')
			}
			key := e.GetKey()
			if _, ok := key.GetKind().(*sluicev1.Value_StringValue); ok {
				writeJSON(b, key)
			} else {
				writeJSONString(b, formatValue(key))
			}
			b.WriteByte(':')
			writeJSON(b, e.GetValue())
		}
		b.WriteByte('}')
	case *sluicev1.Value_StructValue:
		b.WriteByte('{')
		for i, f := range k.StructValue.GetFields() {
			if i > 0 {
				b.WriteByte(',')
			}
			name := f.GetName()
			if name == "" {
				name = "F" + strconv.Itoa(i+1)
			}
			writeJSONString(b, name)
			b.WriteByte(':')
			writeJSON(b, f.GetValue())
		}
		b.WriteByte('}')
	default:
		b.WriteString("?")
	}
}

func writeJSONString(b *strings.Builder, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}

// formatDouble spells a DOUBLE as ksqlDB (Java) does: 1.0, 0.25, 1.0E10.
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsRune(s, '.') {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1.5E+10, 1E-05
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.ContainsRune(mant, '.') {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

func formatTimestamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000")
}

func formatDate(days int32) string {
	return time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02")
}

func formatTime(ms int32) string {
	t := time.UnixMilli(int64(ms)).UTC()
	if ms%1000 != 0 {
		return t.Format("15:04:05.000")
	}
	return t.Format("15:04:05")
}
