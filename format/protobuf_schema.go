package format

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
)

// ProtobufSchema returns the proto3 text ksqlDB registers for cols: one
// message ConnectDefault1 with a field per column, numbered from 1 in
// column order. STRUCT types become messages ConnectDefault2, 3, ... nested
// in the message that uses them, ARRAY a repeated field, MAP a map<> field,
// DECIMAL confluent.type.Decimal with its precision and scale in
// (confluent.field_meta) params, TIMESTAMP google.protobuf.Timestamp, DATE
// google.type.Date and TIME google.type.TimeOfDay. With unwrapped, cols
// has a single column, which is the message's single field.
func ProtobufSchema(cols []types.Column, unwrapped bool) (string, error) {
	return ProtobufSchemaNamed(cols, unwrapped, "")
}

// ProtobufSchemaNamed is ProtobufSchema with the top message named as
// fullName says (a *_SCHEMA_FULL_NAME property, as ksqlDB registers it):
// io.test.value is message value of package io.test. An empty fullName is
// ConnectDefault1 with no package.
func ProtobufSchemaNamed(cols []types.Column, unwrapped bool, fullName string) (string, error) {
	return ProtobufSchemaNullable(cols, unwrapped, fullName, "")
}

// The values of NullableRepresentation: how a generated schema marks the
// scalar fields of nullable columns.
const (
	// NullableOptional declares each scalar field optional (proto3
	// presence): a null is left out, a zero is written.
	NullableOptional = "OPTIONAL"
	// NullableWrapper declares each scalar field as the google.protobuf
	// wrapper message of its type.
	NullableWrapper = "WRAPPER"
)

// ProtobufSchemaNullable is ProtobufSchemaNamed with the scalar fields
// of the messages (not the elements of repeated fields or maps) declared
// as nullable says: "" (plain proto3 scalars, whose null reads back as
// the default), NullableOptional or NullableWrapper
// (KEY_/VALUE_PROTOBUF_NULLABLE_REPRESENTATION).
func ProtobufSchemaNullable(cols []types.Column, unwrapped bool, fullName, nullable string) (string, error) {
	if unwrapped && len(cols) != 1 {
		return "", fmt.Errorf("an unwrapped protobuf schema has exactly one column, not %d", len(cols))
	}
	g := &protoGen{imports: map[string]bool{}, nullable: strings.ToUpper(nullable)}
	pkg := ""
	if fullName = strings.TrimPrefix(fullName, "."); fullName != "" {
		if i := strings.LastIndexByte(fullName, '.'); i >= 0 {
			pkg, g.root = fullName[:i], fullName[i+1:]
		} else {
			g.root = fullName
		}
	}
	fields := make([]types.Field, len(cols))
	for i, c := range cols {
		fields[i] = types.Field(c)
	}
	body, err := g.message(fields, "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\n\n")
	if pkg != "" {
		fmt.Fprintf(&b, "package %s;\n\n", pkg)
	}
	if len(g.imports) > 0 {
		imps := make([]string, 0, len(g.imports))
		for k := range g.imports {
			imps = append(imps, k)
		}
		sort.Strings(imps)
		for _, imp := range imps {
			fmt.Fprintf(&b, "import %q;\n", imp)
		}
		b.WriteString("\n")
	}
	b.WriteString(body)
	return b.String(), nil
}

type protoGen struct {
	// next counts the messages given a default name: only unnamed
	// messages take a number, so the nested messages of a named top
	// message are numbered from ConnectDefault1.
	next    int
	started bool
	imports map[string]bool
	// root, when set, names the top message.
	root string
	// nullable is the representation of nullable scalar fields.
	nullable string
}

// message writes a message for fields, named ConnectDefault<n> (or root,
// for the top message when set), indented by indent.
func (g *protoGen) message(fields []types.Field, indent string) (string, error) {
	name := g.nextName()
	var b, nested strings.Builder
	fmt.Fprintf(&b, "%smessage %s {\n", indent, name)
	in := indent + "  "
	for i, f := range fields {
		decl, err := g.field(f, i+1, in, &nested)
		if err != nil {
			return "", err
		}
		b.WriteString(decl)
	}
	if nested.Len() > 0 {
		b.WriteString("\n")
		b.WriteString(nested.String())
	}
	fmt.Fprintf(&b, "%s}\n", indent)
	return b.String(), nil
}

// field writes the declaration of field f with tag num; messages it needs
// are appended to nested.
func (g *protoGen) field(f types.Field, num int, indent string, nested *strings.Builder) (string, error) {
	name := protoScrubName(f.Name)
	t := f.Type
	if t == nil {
		return "", fmt.Errorf("column '%s' has no type", f.Name)
	}
	var label, opts string
	var typ string
	var err error
	switch t.Kind {
	case types.Array:
		if t.Elem != nil && (t.Elem.Kind == types.Array || t.Elem.Kind == types.Map) {
			return "", fmt.Errorf("PROTOBUF cannot represent '%s' of type %s: an array element cannot be an array or a map; use a STRUCT element", f.Name, t)
		}
		label = "repeated "
		typ, opts, err = g.single(t.Elem, f.Name, indent, nested)
	case types.Map:
		var k string
		switch {
		case t.Key == nil:
			err = fmt.Errorf("column '%s' has no map key type", f.Name)
		case t.Key.Kind == types.String:
			k = "string"
		case t.Key.Kind == types.Int:
			k = "int32"
		case t.Key.Kind == types.Bigint:
			k = "int64"
		case t.Key.Kind == types.Boolean:
			k = "bool"
		default:
			err = fmt.Errorf("PROTOBUF cannot represent '%s' of type %s: map keys must be STRING, INTEGER, BIGINT or BOOLEAN", f.Name, t)
		}
		if err != nil {
			return "", err
		}
		if t.Elem != nil && (t.Elem.Kind == types.Array || t.Elem.Kind == types.Map) {
			return "", fmt.Errorf("PROTOBUF cannot represent '%s' of type %s: a map value cannot be an array or a map; use a STRUCT value", f.Name, t)
		}
		var v string
		v, opts, err = g.single(t.Elem, f.Name, indent, nested)
		typ = "map<" + k + ", " + v + ">"
	default:
		typ, opts, err = g.single(t, f.Name, indent, nested)
		if w, scalar := protoWrappers[typ]; scalar && err == nil {
			switch g.nullable {
			case NullableOptional:
				label = "optional "
			case NullableWrapper:
				g.imports["google/protobuf/wrappers.proto"] = true
				typ = w
			}
		}
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%s%s %s = %d%s;\n", indent, label, typ, name, num, opts), nil
}

// single returns the protobuf type name (and field options) of one value of
// SQL type t.
func (g *protoGen) single(t *types.Type, col, indent string, nested *strings.Builder) (typ, opts string, err error) {
	if t == nil {
		return "", "", fmt.Errorf("column '%s' has no element type", col)
	}
	switch t.Kind {
	case types.Boolean:
		return "bool", "", nil
	case types.Int:
		return "int32", "", nil
	case types.Bigint:
		return "int64", "", nil
	case types.Double:
		return "double", "", nil
	case types.String:
		return "string", "", nil
	case types.Bytes:
		return "bytes", "", nil
	case types.Decimal:
		g.imports["confluent/meta.proto"] = true
		g.imports["confluent/type/decimal.proto"] = true
		return "confluent.type.Decimal", fmt.Sprintf(` [(confluent.field_meta) = { params: [{ key: "precision", value: "%d" }, { key: "scale", value: "%d" }] }]`, t.Precision, t.Scale), nil
	case types.Timestamp:
		g.imports["google/protobuf/timestamp.proto"] = true
		return "google.protobuf.Timestamp", "", nil
	case types.Date:
		g.imports["google/type/date.proto"] = true
		return "google.type.Date", "", nil
	case types.Time:
		g.imports["google/type/timeofday.proto"] = true
		return "google.type.TimeOfDay", "", nil
	case types.Struct:
		n := "ConnectDefault" + strconv.Itoa(g.next+1)
		body, err := g.message(t.Fields, indent)
		if err != nil {
			return "", "", err
		}
		if nested.Len() > 0 {
			nested.WriteString("\n")
		}
		nested.WriteString(body)
		return n, "", nil
	}
	return "", "", fmt.Errorf("PROTOBUF cannot represent column '%s' of type %s", col, t)
}

// nextName names the next message: root for the top one when set, else
// the next ConnectDefault<n>.
func (g *protoGen) nextName() string {
	if !g.started {
		g.started = true
		if g.root != "" {
			return g.root
		}
	}
	g.next++
	return "ConnectDefault" + strconv.Itoa(g.next)
}

// protoWrappers are the google.protobuf wrapper messages of the scalar
// types a generated schema writes.
var protoWrappers = map[string]string{
	"bool":   "google.protobuf.BoolValue",
	"int32":  "google.protobuf.Int32Value",
	"int64":  "google.protobuf.Int64Value",
	"double": "google.protobuf.DoubleValue",
	"string": "google.protobuf.StringValue",
	"bytes":  "google.protobuf.BytesValue",
}

// protoScrubName makes s a valid protobuf identifier: characters other than
// letters, digits and '_' become '_', and a leading digit gets an 'x'.
func protoScrubName(s string) string {
	if s == "" {
		return "x"
	}
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if b[0] >= '0' && b[0] <= '9' {
		return "x" + string(b)
	}
	return string(b)
}
