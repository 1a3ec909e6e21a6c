package format

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluice-sql/sluice/internal/types"
)

// PROTOBUF and PROTOBUF_NOSR.
//
// A .proto text (with its imports, given by name) is compiled with
// protocompile into descriptors once, when a codec is built. The codec then
// runs a plan derived from the descriptor (protobuf_codec.go): a
// hand-written wire reader and writer that converts straight between the
// protobuf wire format and the Go values of package types, with no
// reflection and no intermediate message per record.
//
// The SQL types of message fields follow ksqlDB (through Confluent's
// protobuf converter):
//
//	int32, sint32, sfixed32                 INTEGER
//	uint32, fixed32, (s)int64, (s)fixed64,  BIGINT
//	uint64
//	float, double                           DOUBLE
//	bool                                    BOOLEAN
//	string, enum (by value name)            STRING
//	bytes                                   BYTES
//	confluent.type.Decimal                  DECIMAL(p, s) from the field's
//	                                        (confluent.field_meta) params
//	google.protobuf.Timestamp               TIMESTAMP
//	google.type.Date                        DATE
//	google.type.TimeOfDay                   TIME
//	google.protobuf.*Value wrappers         the wrapped scalar, nullable
//	repeated T                              ARRAY<T>
//	map<K, V>                               MAP<K, V>
//	any other message                       STRUCT of its fields
//
// Proto3 has no null scalars: a null scalar is written as an absent field
// and an absent scalar reads as its default (0, "", false, empty bytes, the
// first enum value, an empty array or map), as ksqlDB reads it. Absent
// message-typed fields (STRUCT, DECIMAL, TIMESTAMP, DATE, TIME, wrappers)
// read as null.

// The files a schema may import besides google/protobuf/*.proto, which
// protocompile supplies.
var protoBuiltins = map[string]string{
	"confluent/meta.proto": `syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
}
extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
`,
	"confluent/type/decimal.proto": `syntax = "proto3";
package confluent.type;
message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
`,
	"google/type/date.proto": `syntax = "proto3";
package google.type;
message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
`,
	"google/type/timeofday.proto": `syntax = "proto3";
package google.type;
message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
`,
}

// Full names of the message types with a SQL meaning of their own.
const (
	pbDecimalName   = "confluent.type.Decimal"
	pbTimestampName = "google.protobuf.Timestamp"
	pbDateName      = "google.type.Date"
	pbTimeName      = "google.type.TimeOfDay"
	pbFieldMetaNum  = 1088
)

// compileProto compiles schema, whose imports are looked up in refs (by
// import name) and then among the built-in and standard files, and returns
// its file descriptor.
func compileProto(schema string, refs map[string]string) (protoreflect.FileDescriptor, error) {
	name := "schema.proto"
	for i := 0; refs[name] != ""; i++ {
		name = "schema" + strconv.Itoa(i) + ".proto"
	}
	srcs := make(map[string]string, len(refs)+len(protoBuiltins)+1)
	for k, v := range protoBuiltins {
		srcs[k] = v
	}
	for k, v := range refs {
		srcs[k] = v
	}
	srcs[name] = schema
	var first error
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(srcs),
		}),
		Reporter: reporter.NewReporter(func(err reporter.ErrorWithPos) error {
			if first == nil {
				first = err
			}
			return err
		}, nil),
	}
	files, err := c.Compile(context.Background(), name)
	if err != nil {
		if first != nil {
			err = first
		}
		return nil, fmt.Errorf("invalid protobuf schema: %v", strings.TrimPrefix(err.Error(), name+":"))
	}
	return files[0], nil
}

// findMessage returns the message fullName of fd (the first message when
// fullName is empty), searching fd's imports too when it is not in fd.
func findMessage(fd protoreflect.FileDescriptor, fullName string) (protoreflect.MessageDescriptor, error) {
	if fullName == "" {
		if fd.Messages().Len() == 0 {
			return nil, fmt.Errorf("the protobuf schema defines no message")
		}
		return fd.Messages().Get(0), nil
	}
	want := protoreflect.FullName(strings.TrimPrefix(fullName, "."))
	if md := findIn(fd, want); md != nil {
		return md, nil
	}
	imports := fd.Imports()
	for i := 0; i < imports.Len(); i++ {
		if md := findIn(imports.Get(i).FileDescriptor, want); md != nil {
			return md, nil
		}
	}
	return nil, fmt.Errorf("the protobuf schema has no message named '%s'; check the *_SCHEMA_FULL_NAME property", fullName)
}

func findIn(fd protoreflect.FileDescriptor, want protoreflect.FullName) protoreflect.MessageDescriptor {
	var walk func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor
	walk = func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			if m.FullName() == want {
				return m
			}
			if r := walk(m.Messages()); r != nil {
				return r
			}
		}
		return nil
	}
	return walk(fd.Messages())
}

// ProtobufColumns returns the SQL columns of message fullName (the first
// message when empty) of the .proto text schema, whose imports are given by
// name in refs.
func ProtobufColumns(schema string, refs map[string]string, fullName string) ([]types.Column, error) {
	fd, err := compileProto(schema, refs)
	if err != nil {
		return nil, err
	}
	md, err := findMessage(fd, fullName)
	if err != nil {
		return nil, err
	}
	fs, err := protoMessageFields(md, nil)
	if err != nil {
		return nil, err
	}
	return fieldColumns(fs), nil
}

// fieldColumns returns a record's fields as columns.
func fieldColumns(fs []types.Field) []types.Column {
	cols := make([]types.Column, len(fs))
	for i, f := range fs {
		cols[i] = types.Column(f)
	}
	return cols
}

// protoMessageFields returns the SQL fields of message md as Kafka
// Connect's protobuf converter gives them: first each oneof (but a proto3
// optional's synthetic one) as a STRUCT of its fields named
// <oneof>_<index>, of which a record sets one, then the fields outside
// the oneofs, in order.
func protoMessageFields(md protoreflect.MessageDescriptor, seen []protoreflect.FullName) ([]types.Field, error) {
	var out []types.Field
	ods := md.Oneofs()
	for i := 0; i < ods.Len(); i++ {
		od := ods.Get(i)
		if od.IsSynthetic() {
			continue
		}
		ofs := od.Fields()
		st := &types.Type{Kind: types.Struct, Fields: make([]types.Field, 0, ofs.Len())}
		for j := 0; j < ofs.Len(); j++ {
			t, err := protoFieldType(ofs.Get(j), seen)
			if err != nil {
				return nil, err
			}
			st.Fields = append(st.Fields, types.Field{Name: string(ofs.Get(j).Name()), Type: t})
		}
		out = append(out, types.Field{Name: pbOneofName(od), Type: st})
	}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		if od := f.ContainingOneof(); od != nil && !od.IsSynthetic() {
			continue
		}
		t, err := protoFieldType(f, seen)
		if err != nil {
			return nil, err
		}
		out = append(out, types.Field{Name: string(f.Name()), Type: t})
	}
	return out, nil
}

// protoFieldType is the SQL type of field f; seen holds the messages being
// expanded, to refuse recursive types.
func protoFieldType(f protoreflect.FieldDescriptor, seen []protoreflect.FullName) (*types.Type, error) {
	if f.IsMap() {
		k, err := protoSingleType(f.MapKey(), seen)
		if err != nil {
			return nil, err
		}
		v, err := protoSingleType(f.MapValue(), seen)
		if err != nil {
			return nil, err
		}
		return types.MapOf(k, v), nil
	}
	t, err := protoSingleType(f, seen)
	if err != nil {
		return nil, err
	}
	if f.IsList() {
		return types.ArrayOf(t), nil
	}
	return t, nil
}

// protoSingleType is the SQL type of one value of field f (an element, for
// a repeated field).
func protoSingleType(f protoreflect.FieldDescriptor, seen []protoreflect.FullName) (*types.Type, error) {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return types.BooleanType, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return types.IntType, nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return types.BigintType, nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return types.DoubleType, nil
	case protoreflect.StringKind, protoreflect.EnumKind:
		return types.StringType, nil
	case protoreflect.BytesKind:
		return types.BytesType, nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		md := f.Message()
		switch md.FullName() {
		case pbDecimalName:
			p, s := protoDecimalParams(f)
			return types.DecimalOf(p, s), nil
		case pbTimestampName:
			return types.TimestampType, nil
		case pbDateName:
			return types.DateType, nil
		case pbTimeName:
			return types.TimeType, nil
		}
		if t := protoWrapperType(md.FullName()); t != nil {
			return t, nil
		}
		for _, s := range seen {
			if s == md.FullName() {
				return nil, fmt.Errorf("protobuf message '%s' is recursive, which SQL types cannot represent", md.FullName())
			}
		}
		seen = append(seen, md.FullName())
		fs, err := protoMessageFields(md, seen)
		if err != nil {
			return nil, err
		}
		return &types.Type{Kind: types.Struct, Fields: fs}, nil
	}
	return nil, fmt.Errorf("protobuf field '%s' has unsupported kind %s", f.FullName(), f.Kind())
}

// protoWrapperType is the SQL type of a google.protobuf wrapper message, or
// nil.
func protoWrapperType(n protoreflect.FullName) *types.Type {
	switch n {
	case "google.protobuf.BoolValue":
		return types.BooleanType
	case "google.protobuf.Int32Value":
		return types.IntType
	case "google.protobuf.Int64Value", "google.protobuf.UInt32Value", "google.protobuf.UInt64Value":
		return types.BigintType
	case "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		return types.DoubleType
	case "google.protobuf.StringValue":
		return types.StringType
	case "google.protobuf.BytesValue":
		return types.BytesType
	}
	return nil
}

// protoDecimalParams reads precision and scale from the field's
// (confluent.field_meta) params; without them a decimal is DECIMAL(64, 0).
func protoDecimalParams(f protoreflect.FieldDescriptor) (precision, scale int) {
	precision = 64
	opts := f.Options()
	if opts == nil {
		return precision, 0
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(opts)
	if err != nil {
		return precision, 0
	}
	params := map[string]string{}
	forEachField(b, func(num protowire.Number, typ protowire.Type, v []byte) {
		if num != pbFieldMetaNum || typ != protowire.BytesType {
			return
		}
		forEachField(v, func(num protowire.Number, typ protowire.Type, entry []byte) {
			if num != 2 || typ != protowire.BytesType {
				return
			}
			var k, val string
			forEachField(entry, func(num protowire.Number, typ protowire.Type, s []byte) {
				if typ != protowire.BytesType {
					return
				}
				switch num {
				case 1:
					k = string(s)
				case 2:
					val = string(s)
				}
			})
			params[k] = val
		})
	})
	if p, err := strconv.Atoi(params["precision"]); err == nil && p > 0 {
		precision = p
	}
	if s, err := strconv.Atoi(params["scale"]); err == nil && s >= 0 {
		scale = s
	}
	return precision, scale
}

// forEachField calls fn with each length-delimited field of the message b
// (other wire types are skipped); it stops at malformed input.
func forEachField(b []byte, fn func(protowire.Number, protowire.Type, []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return
			}
			fn(num, typ, v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return
		}
		b = b[m:]
	}
}

// ProtobufMessageIndexes returns the Confluent message-index prefix that
// names message fullName (the first message when empty) of schema: a single
// 0 byte for the first top-level message, and otherwise the zigzag varint
// count of indexes followed by each zigzag varint index, from the
// top-level message down through nested messages.
func ProtobufMessageIndexes(schema string, refs map[string]string, fullName string) ([]byte, error) {
	fd, err := compileProto(schema, refs)
	if err != nil {
		return nil, err
	}
	md, err := findMessage(fd, fullName)
	if err != nil {
		return nil, err
	}
	if md.ParentFile().Path() != fd.Path() {
		return nil, fmt.Errorf("protobuf message '%s' is defined in an import, not in the schema itself", md.FullName())
	}
	var path []int
	for d := protoreflect.Descriptor(md); d != nil; d = d.Parent() {
		if _, ok := d.(protoreflect.FileDescriptor); ok {
			break
		}
		path = append(path, d.Index())
	}
	if len(path) == 1 && path[0] == 0 {
		return []byte{0}, nil
	}
	out := protowire.AppendVarint(nil, protowire.EncodeZigZag(int64(len(path))))
	for i := len(path) - 1; i >= 0; i-- {
		out = protowire.AppendVarint(out, protowire.EncodeZigZag(int64(path[i])))
	}
	return out, nil
}

// NewProtobufBody returns a codec over the bare protobuf encoding (no
// Confluent header) of message fullName (the first message when empty) of
// schema, reading and writing cols. Columns bind to message fields by name
// (exactly, then ignoring case); with unwrapped, the single column is the
// message's single field whatever its name.
func NewProtobufBody(schema string, refs map[string]string, fullName string, cols []types.Column, unwrapped bool) (Codec, error) {
	fd, err := compileProto(schema, refs)
	if err != nil {
		return nil, err
	}
	md, err := findMessage(fd, fullName)
	if err != nil {
		return nil, err
	}
	return newProtobufCodec(md, cols, unwrapped)
}

// newProtobufNoSR is PROTOBUF_NOSR: the message ProtobufSchemaNullable
// generates for cols, with no registry and no header.
func newProtobufNoSR(cols []types.Column, unwrapped bool, nullable string) (Codec, error) {
	schema, err := ProtobufSchemaNullable(cols, unwrapped, "", nullable)
	if err != nil {
		return nil, err
	}
	return NewProtobufBody(schema, nil, "", cols, unwrapped)
}

// ReadBack returns what reading a value of the given format, written from
// vals (the values of cols, with props its WITH properties), gives back,
// for the formats that do not keep every value as given: a PROTOBUF or
// PROTOBUF_NOSR value has no null scalars, so they read back as their
// defaults (0, "", false, an empty array or map), unless
// PROTOBUF_NULLABLE_REPRESENTATION declares them. It returns nil for the
// other formats. ksqlDB keeps a table's rows in its state in the table's
// value format, so a pull query sees them as read back.
func ReadBack(format string, cols []types.Column, props map[string]string) (func(vals []any) error, error) {
	f := strings.ToUpper(strings.Trim(strings.TrimSpace(format), "'"))
	if f != Protobuf && f != ProtobufNoSR || len(cols) == 0 {
		return nil, nil
	}
	unwrapped := false
	if v, ok := props[WrapSingleValue]; ok && f == ProtobufNoSR {
		unwrapped = strings.EqualFold(strings.Trim(strings.TrimSpace(v), "'"), "false")
	}
	c, err := newProtobufNoSR(cols, unwrapped, props[NullableRepresentation])
	if err != nil {
		return nil, err
	}
	return func(vals []any) error {
		b, err := c.Encode([]byte{}, vals)
		if err != nil {
			return err
		}
		if b == nil {
			b = []byte{}
		}
		return c.Decode(b, vals)
	}, nil
}
