package render

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// Described reports whether e is a description (DESCRIBE, DESCRIBE
// FUNCTION, EXPLAIN) rather than a listing: JSON output writes it as one
// object (DescriptionJSON), where a listing's rows are objects each.
func Described(e *sluicev1.Entity) bool {
	switch e.GetKind().(type) {
	case *sluicev1.Entity_Source, *sluicev1.Entity_Function, *sluicev1.Entity_Plan, *sluicev1.Entity_ConnectorDescription:
		return true
	}
	return false
}

// DescriptionJSON writes a description as one JSON object, its fields
// named as the protobuf's JSON names (recordsIn, keyFormat ...): numbers
// and booleans as themselves (64-bit integers too), enums by name, a
// string left empty as null.
func DescriptionJSON(e *sluicev1.Entity) string {
	var b strings.Builder
	switch k := e.GetKind().(type) {
	case *sluicev1.Entity_Source:
		writeMessage(&b, k.Source.ProtoReflect())
	case *sluicev1.Entity_Function:
		writeMessage(&b, k.Function.ProtoReflect())
	case *sluicev1.Entity_Plan:
		writeMessage(&b, k.Plan.ProtoReflect())
	case *sluicev1.Entity_ConnectorDescription:
		writeMessage(&b, k.ConnectorDescription.ProtoReflect())
	default:
		writeMessage(&b, e.ProtoReflect())
	}
	return b.String()
}

func writeMessage(b *strings.Builder, m protoreflect.Message) {
	b.WriteByte('{')
	fields := m.Descriptor().Fields()
	first := true
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && !m.Has(fd) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeJSONString(b, fd.JSONName())
		b.WriteByte(':')
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			b.WriteByte('[')
			for j := 0; j < l.Len(); j++ {
				if j > 0 {
					b.WriteByte(',')
				}
				writeScalar(b, fd, l.Get(j), false)
			}
			b.WriteByte(']')
		case fd.IsMap():
			// Keys in order, so that the same map writes the same text.
			var keys []protoreflect.MapKey
			v.Map().Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				keys = append(keys, k)
				return true
			})
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			b.WriteByte('{')
			for n, k := range keys {
				if n > 0 {
					b.WriteByte(',')
				}
				writeJSONString(b, k.String())
				b.WriteByte(':')
				writeScalar(b, fd.MapValue(), v.Map().Get(k), false)
			}
			b.WriteByte('}')
		case fd.Kind() == protoreflect.MessageKind && !m.Has(fd):
			b.WriteString("null")
		default:
			writeScalar(b, fd, v, true)
		}
	}
	b.WriteByte('}')
}

// writeScalar writes one value of field fd; empty strings are null when
// nullEmpty is set (a field, not a list's element).
func writeScalar(b *strings.Builder, fd protoreflect.FieldDescriptor, v protoreflect.Value, nullEmpty bool) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		writeMessage(b, v.Message())
	case protoreflect.StringKind:
		if nullEmpty && v.String() == "" {
			b.WriteString("null")
			return
		}
		writeJSONString(b, v.String())
	case protoreflect.BoolKind:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case protoreflect.EnumKind:
		writeJSONString(b, enumName(fd.Enum(), v.Enum()))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			writeJSONString(b, strconv.FormatFloat(f, 'g', -1, 64))
			return
		}
		b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case protoreflect.BytesKind:
		writeJSONString(b, string(v.Bytes()))
	default:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	}
}

// writeJSONString writes s as a JSON string.
func writeJSONString(b *strings.Builder, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}

// enumName is an enum value's name without its type's prefix: TABLE for
// SOURCE_KIND_TABLE.
func enumName(e protoreflect.EnumDescriptor, n protoreflect.EnumNumber) string {
	v := e.Values().ByNumber(n)
	if v == nil {
		return strconv.Itoa(int(n))
	}
	var prefix strings.Builder
	for i, r := range string(e.Name()) {
		if i > 0 && r >= 'A' && r <= 'Z' {
			prefix.WriteByte('_')
		}
		prefix.WriteRune(r)
	}
	return strings.TrimPrefix(string(v.Name()), strings.ToUpper(prefix.String())+"_")
}
