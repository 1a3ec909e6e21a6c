package rest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/types"
)

// appendRow appends row as a JSON array of ksqlDB's REST value forms.
func appendRow(b []byte, row []any, cols []types.Column) []byte {
	b = append(b, '[')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		var t *types.Type
		if i < len(cols) {
			t = cols[i].Type
		}
		b = appendValue(b, v, t)
	}
	return append(b, ']')
}

// appendValue appends v, a value of type t laid out as package types
// documents, as ksqlDB's REST API writes it: numbers (decimals too) as JSON
// numbers, structs and maps as objects, bytes in base64, TIMESTAMP, DATE
// and TIME as ISO-8601 strings. t may be nil.
func appendValue(b []byte, v any, t *types.Type) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		return appendDouble(b, x)
	case float32:
		return appendDouble(b, float64(x))
	case types.Dec:
		return append(b, x.String()...)
	case string:
		return appendString(b, x)
	case []byte:
		return appendString(b, base64.StdEncoding.EncodeToString(x))
	case types.TimestampValue:
		return appendString(b, types.FormatTimestamp(x))
	case types.DateValue:
		return appendString(b, types.FormatDate(x))
	case types.TimeValue:
		return appendString(b, types.FormatTime(x))
	case []any:
		var et *types.Type
		if t != nil {
			et = t.Elem
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e, et)
		}
		return append(b, ']')
	case *types.MapValue:
		var kt, vt *types.Type
		if t != nil {
			kt, vt = t.Key, t.Elem
		}
		b = append(b, '{')
		if x != nil {
			for i, k := range x.Keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, types.FormatValue(k, kt))
				b = append(b, ':')
				var val any
				if i < len(x.Values) {
					val = x.Values[i]
				}
				b = appendValue(b, val, vt)
			}
		}
		return append(b, '}')
	case types.StructValue:
		b = append(b, '{')
		for i, f := range x {
			if i > 0 {
				b = append(b, ',')
			}
			name := "F" + strconv.Itoa(i)
			var ft *types.Type
			if t != nil && i < len(t.Fields) {
				name, ft = t.Fields[i].Name, t.Fields[i].Type
			}
			b = appendString(b, name)
			b = append(b, ':')
			b = appendValue(b, f, ft)
		}
		return append(b, '}')
	}
	if t != nil && t.Kind == types.Decimal {
		return append(b, fmt.Sprint(v)...)
	}
	return appendString(b, fmt.Sprint(v))
}

// appendDouble writes a DOUBLE as Java does (1.0, 1.5E10); NaN and the
// infinities, which JSON cannot spell as numbers, as strings.
func appendDouble(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendString(b, types.FormatDouble(f))
	}
	return append(b, types.FormatDouble(f)...)
}

// appendString appends s as a JSON string; bytes that are not valid UTF-8
// become U+FFFD.
func appendString(b []byte, s string) []byte { return format.AppendJSONString(b, s) }

// jsonMarshal is json.Marshal without escaping <, > and &.
func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// schemaString spells a query's columns as ksqlDB's /query header does:
// "`ID` STRING KEY, `CNT` BIGINT". As in ksqlDB, a pull query's key
// columns (and window bounds) say KEY; a push query's and a PRINT's
// columns say nothing of keys.
func schemaString(s *api.Stream) string {
	var sb strings.Builder
	for i, c := range s.Columns {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("`" + c.Name + "` " + c.Type.String())
		if s.Pull && c.Role.String() == "KEY" {
			sb.WriteString(" KEY")
		}
	}
	return sb.String()
}

// schemaJSON is ksqlDB's SchemaInfo: a type with its struct fields or
// element type.
type schemaJSON struct {
	Type         string      `json:"type"`
	Fields       []fieldJSON `json:"fields"`
	MemberSchema *schemaJSON `json:"memberSchema"`
}

// fieldJSON is ksqlDB's FieldInfo; Type is "KEY" for key columns, and
// absent otherwise.
type fieldJSON struct {
	Name   string      `json:"name"`
	Schema *schemaJSON `json:"schema"`
	Type   string      `json:"type,omitempty"`
}

func schemaOf(t *types.Type) *schemaJSON {
	if t == nil {
		return &schemaJSON{Type: "NULL"}
	}
	s := &schemaJSON{Type: t.Kind.String()}
	switch t.Kind {
	case types.Array, types.Map:
		s.MemberSchema = schemaOf(t.Elem)
	case types.Struct:
		s.Fields = []fieldJSON{}
		for _, f := range t.Fields {
			s.Fields = append(s.Fields, fieldJSON{Name: f.Name, Schema: schemaOf(f.Type)})
		}
	case types.Decimal:
		s.Type = t.String()
	}
	return s
}
