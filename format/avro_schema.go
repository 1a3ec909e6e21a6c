package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/sluice-sql/sluice/internal/types"
)

// avroSchema is a parsed Avro schema.
type avroSchema struct {
	// typ is the Avro type: null, boolean, int, long, float, double,
	// bytes, string, record, enum, array, map, fixed or union.
	typ      string
	logical  string
	prec     int
	scale    int
	name     string // full name of a named type
	fields   []avroField
	items    *avroSchema // array
	values   *avroSchema // map
	branches []*avroSchema
	symbols  []string
	size     int
	// mapEntry marks a record Connect wrote as a map's entry
	// (connect.internal.type MapEntry).
	mapEntry bool
}

type avroField struct {
	name string
	typ  *avroSchema
	// def is the field's default, as the schema's JSON gives it, when
	// hasDef: what a writer writes for a field it has no value for.
	def    any
	hasDef bool
}

// The names ksqlDB gives the schemas it generates.
const (
	avroRecordName = "KsqlDataSourceSchema"
	avroNamespace  = "io.confluent.ksql.avro_schemas"
)

// AvroKeySchemaName returns the full name ksqlDB gives the Avro key
// schema of a source it creates without KEY_SCHEMA_FULL_NAME, so that
// each source's key record has a name of its own: the source's name,
// its words (split at '_') capitalized and joined, then "Key", in
// io.confluent.ksql.avro_schemas (ORDERS_BY_USER gives
// io.confluent.ksql.avro_schemas.OrdersByUserKey).
func AvroKeySchemaName(source string) string {
	var b strings.Builder
	b.WriteString(avroNamespace)
	b.WriteByte('.')
	for _, w := range strings.Split(source, "_") {
		for i := 0; i < len(w); i++ {
			c := w[i]
			switch {
			case i == 0 && 'a' <= c && c <= 'z':
				c -= 'a' - 'A'
			case i > 0 && 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			b.WriteByte(c)
		}
	}
	b.WriteString("Key")
	return b.String()
}

// parseAvroSchema parses the JSON text of an Avro schema. refs are the
// texts of referenced schemas, whose named types the schema may use.
func parseAvroSchema(text string, refs []string) (*avroSchema, error) {
	named := map[string]*avroSchema{}
	for _, r := range refs {
		var v any
		if err := json.Unmarshal([]byte(r), &v); err != nil {
			return nil, fmt.Errorf("invalid referenced Avro schema: %v", err)
		}
		if _, err := parseAvro(v, "", named); err != nil {
			return nil, err
		}
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("invalid Avro schema: %v", err)
	}
	return parseAvro(v, "", named)
}

func fullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

func parseAvro(v any, ns string, named map[string]*avroSchema) (*avroSchema, error) {
	switch x := v.(type) {
	case string:
		switch x {
		case "null", "boolean", "int", "long", "float", "double", "bytes", "string":
			return &avroSchema{typ: x}, nil
		}
		if s, ok := named[fullName(x, ns)]; ok {
			return s, nil
		}
		if s, ok := named[x]; ok {
			return s, nil
		}
		return nil, fmt.Errorf("unknown Avro type %q", x)
	case []any:
		u := &avroSchema{typ: "union"}
		for _, b := range x {
			s, err := parseAvro(b, ns, named)
			if err != nil {
				return nil, err
			}
			u.branches = append(u.branches, s)
		}
		return u, nil
	case map[string]any:
		t, _ := x["type"].(string)
		if t == "" {
			if inner, ok := x["type"]; ok {
				return parseAvro(inner, ns, named)
			}
			return nil, fmt.Errorf("Avro schema object without a type")
		}
		s := &avroSchema{typ: t}
		s.logical, _ = x["logicalType"].(string)
		if p, ok := x["precision"].(float64); ok {
			s.prec = int(p)
		}
		if sc, ok := x["scale"].(float64); ok {
			s.scale = int(sc)
		}
		switch t {
		case "record", "error", "enum", "fixed":
			name, _ := x["name"].(string)
			if n, ok := x["namespace"].(string); ok {
				ns = n
			}
			s.name = fullName(name, ns)
			if i := strings.LastIndexByte(s.name, '.'); i >= 0 {
				ns = s.name[:i]
			}
			named[s.name] = s
			if _, dup := named[name]; !dup {
				named[name] = s
			}
		}
		switch t {
		case "null", "boolean", "int", "long", "float", "double", "bytes", "string":
		case "record", "error":
			s.typ = "record"
			s.mapEntry = x["connect.internal.type"] == "MapEntry"
			fs, _ := x["fields"].([]any)
			for _, f := range fs {
				fm, ok := f.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("invalid field in Avro record %s", s.name)
				}
				name, _ := fm["name"].(string)
				ft, err := parseAvro(fm["type"], ns, named)
				if err != nil {
					return nil, err
				}
				def, hasDef := fm["default"]
				s.fields = append(s.fields, avroField{name: name, typ: ft, def: def, hasDef: hasDef})
			}
		case "enum":
			syms, _ := x["symbols"].([]any)
			for _, y := range syms {
				str, _ := y.(string)
				s.symbols = append(s.symbols, str)
			}
		case "fixed":
			n, _ := x["size"].(float64)
			s.size = int(n)
		case "array":
			it, err := parseAvro(x["items"], ns, named)
			if err != nil {
				return nil, err
			}
			s.items = it
		case "map":
			vs, err := parseAvro(x["values"], ns, named)
			if err != nil {
				return nil, err
			}
			s.values = vs
		default:
			if n, ok := named[fullName(t, ns)]; ok {
				return n, nil
			}
			return nil, fmt.Errorf("unknown Avro type %q", t)
		}
		return s, nil
	}
	return nil, fmt.Errorf("invalid Avro schema element %v", v)
}

// nonNull returns the one non-null branch of an optional union, or s.
func (s *avroSchema) nonNull() *avroSchema {
	if s.typ != "union" {
		return s
	}
	var out *avroSchema
	for _, b := range s.branches {
		if b.typ == "null" {
			continue
		}
		if out != nil {
			return s
		}
		out = b
	}
	if out == nil {
		return s
	}
	return out
}

// unionMembers returns the non-null branches of a union of more than one
// of them (a general union), by index, or nil.
func (s *avroSchema) unionMembers() map[int]*avroSchema {
	if s.typ != "union" {
		return nil
	}
	m := map[int]*avroSchema{}
	for i, b := range s.branches {
		if b.typ != "null" {
			m[i] = b
		}
	}
	if len(m) < 2 {
		return nil
	}
	return m
}

// unionMemberName is the name of the STRUCT field a branch of a general
// union reads as (as Connect's Avro converter names it): a named type's
// name without its namespace, else the type.
func unionMemberName(b *avroSchema) string {
	switch b.typ {
	case "record", "enum", "fixed":
		if i := strings.LastIndexByte(b.name, '.'); i >= 0 {
			return b.name[i+1:]
		}
		return b.name
	}
	return b.typ
}

// sqlType returns the SQL type of an Avro schema, as ksqlDB infers it.
func (s *avroSchema) sqlType() (*types.Type, error) {
	s = s.nonNull()
	if s.unionMembers() != nil {
		// A general union is a STRUCT of one field per non-null branch,
		// of which the branch written is set.
		var fs []types.Field
		for _, b := range s.branches {
			if b.typ == "null" {
				continue
			}
			t, err := b.sqlType()
			if err != nil {
				return nil, err
			}
			fs = append(fs, types.Field{Name: unionMemberName(b), Type: t})
		}
		return types.StructOf(fs...), nil
	}
	switch s.typ {
	case "boolean":
		return types.BooleanType, nil
	case "int":
		switch s.logical {
		case "date":
			return types.DateType, nil
		case "time-millis":
			return types.TimeType, nil
		}
		return types.IntType, nil
	case "long":
		switch s.logical {
		case "timestamp-millis", "local-timestamp-millis":
			return types.TimestampType, nil
		case "time-micros":
			return types.TimeType, nil
		case "timestamp-micros":
			return types.TimestampType, nil
		}
		return types.BigintType, nil
	case "float", "double":
		return types.DoubleType, nil
	case "bytes", "fixed":
		if s.logical == "decimal" {
			return types.DecimalOf(s.prec, s.scale), nil
		}
		return types.BytesType, nil
	case "string", "enum":
		return types.StringType, nil
	case "array":
		if e := s.items.nonNull(); e.typ == "record" && isMapEntry(e) {
			k, err := e.fields[0].typ.sqlType()
			if err != nil {
				return nil, err
			}
			v, err := e.fields[1].typ.sqlType()
			if err != nil {
				return nil, err
			}
			return types.MapOf(k, v), nil
		}
		e, err := s.items.sqlType()
		if err != nil {
			return nil, err
		}
		return types.ArrayOf(e), nil
	case "map":
		v, err := s.values.sqlType()
		if err != nil {
			return nil, err
		}
		return types.MapOf(types.StringType, v), nil
	case "record":
		fs := make([]types.Field, 0, len(s.fields))
		for _, f := range s.fields {
			t, err := f.typ.sqlType()
			if err != nil {
				return nil, err
			}
			fs = append(fs, types.Field{Name: f.name, Type: t})
		}
		return types.StructOf(fs...), nil
	}
	return nil, fmt.Errorf("Avro type %s has no SQL type", s.typ)
}

// isMapEntry reports whether a record is the key/value entry Connect uses
// for maps whose keys may be null or are not strings.
func isMapEntry(r *avroSchema) bool {
	return len(r.fields) == 2 && r.fields[0].name == "key" && r.fields[1].name == "value" &&
		(r.mapEntry || strings.HasSuffix(r.name, "MapEntry") || strings.Contains(r.name, "_MapEntry") || strings.HasPrefix(r.name, "io.confluent.connect.avro"))
}

// AvroColumns returns the columns of a registered Avro schema: the fields
// of a record, or a single column named name for any other schema (an
// unwrapped key or value).
func AvroColumns(schema string, refs []string, name string) ([]types.Column, error) {
	s, err := parseAvroSchema(schema, refs)
	if err != nil {
		return nil, err
	}
	return avroColumns(s, name)
}

// AvroKeyColumns returns the key column of a registered Avro key schema.
// A key read from the registry is always unwrapped, so the whole schema,
// a record included, is the type of the one column ROWKEY.
func AvroKeyColumns(schema string, refs []string) ([]types.Column, error) {
	s, err := parseAvroSchema(schema, refs)
	if err != nil {
		return nil, err
	}
	t, err := s.sqlType()
	if err != nil {
		return nil, err
	}
	return []types.Column{{Name: RowKey, Type: t}}, nil
}

func avroColumns(s *avroSchema, name string) ([]types.Column, error) {
	if r := s.nonNull(); r.typ == "record" {
		cols := make([]types.Column, 0, len(r.fields))
		for _, f := range r.fields {
			t, err := f.typ.sqlType()
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.name, err)
			}
			cols = append(cols, types.Column{Name: f.name, Type: t})
		}
		return cols, nil
	}
	t, err := s.sqlType()
	if err != nil {
		return nil, err
	}
	return []types.Column{{Name: name, Type: t}}, nil
}

// AvroSchema returns the Avro schema ksqlDB registers for cols: a record
// of optional fields named fullName (KEY_SCHEMA_FULL_NAME or
// VALUE_SCHEMA_FULL_NAME; io.confluent.ksql.avro_schemas.KsqlDataSourceSchema
// when empty), or, unwrapped, the single column's type. As ksqlDB's
// schemas do (they pass through Kafka Connect's Avro converter), the top
// level is never a union with null; every named type records its full
// name in connect.name; a STRUCT nested in the schema is a record named
// after its path (fullName_FIELD, _MapValue for a map's values) in the
// namespace of the record holding it; and a MAP is an array of key/value
// records named after the map, marked connect.internal.type MapEntry.
func AvroSchema(cols []types.Column, unwrapped bool, fullName string) string {
	if fullName == "" {
		fullName = avroNamespace + "." + avroRecordName
	}
	var b strings.Builder
	if unwrapped && len(cols) == 1 {
		writeAvroType(&b, cols[0].Type, fullName, "", true)
		return b.String()
	}
	fs := make([]types.Field, len(cols))
	for i, c := range cols {
		fs[i] = types.Field(c)
	}
	writeAvroRecord(&b, fullName, "", fs)
	return b.String()
}

// splitAvroName splits a full name into its namespace and name.
func splitAvroName(full string) (ns, name string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// writeAvroName writes the name of a named type with full name full,
// inside a type of namespace outer: the namespace is written only where
// it differs, as Avro prints schemas. It returns the type's namespace.
func writeAvroName(b *strings.Builder, full, outer string) string {
	ns, name := splitAvroName(full)
	b.WriteString(`"name":`)
	b.WriteString(strconv.Quote(name))
	if ns != "" && ns != outer {
		b.WriteString(`,"namespace":`)
		b.WriteString(strconv.Quote(ns))
	}
	return ns
}

// writeAvroRecord writes the record full of fields fs inside namespace
// outer.
func writeAvroRecord(b *strings.Builder, full, outer string, fs []types.Field) {
	b.WriteString(`{"type":"record",`)
	ns := writeAvroName(b, full, outer)
	b.WriteString(`,"fields":[`)
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		writeAvroField(b, f.Name, f.Type, full+"_"+f.Name, ns)
	}
	b.WriteString(`],"connect.name":`)
	b.WriteString(strconv.Quote(full))
	b.WriteByte('}')
}

// writeAvroField writes an optional field of type t whose named types
// take the path full.
func writeAvroField(b *strings.Builder, name string, t *types.Type, full, ns string) {
	b.WriteString(`{"name":`)
	b.WriteString(strconv.Quote(name))
	b.WriteString(`,"type":["null",`)
	writeAvroType(b, t, full, ns, false)
	b.WriteString(`],"default":null}`)
}

// writeAvroType writes type t, named full where it is a named type,
// inside namespace ns. root is the schema's top level, where Connect
// rebuilds a logical type without its version.
func writeAvroType(b *strings.Builder, t *types.Type, full, ns string, root bool) {
	version := `"connect.version":1,`
	if root {
		version = ""
	}
	switch t.Kind {
	case types.Boolean:
		b.WriteString(`"boolean"`)
	case types.Int:
		b.WriteString(`"int"`)
	case types.Bigint:
		b.WriteString(`"long"`)
	case types.Double:
		b.WriteString(`"double"`)
	case types.String:
		b.WriteString(`"string"`)
	case types.Bytes:
		b.WriteString(`"bytes"`)
	case types.Decimal:
		fmt.Fprintf(b, `{"type":"bytes","scale":%d,"precision":%d,%s"connect.parameters":{"scale":"%d","connect.decimal.precision":"%d"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}`, t.Scale, t.Precision, version, t.Scale, t.Precision)
	case types.Timestamp:
		fmt.Fprintf(b, `{"type":"long",%s"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}`, version)
	case types.Date:
		fmt.Fprintf(b, `{"type":"int",%s"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}`, version)
	case types.Time:
		fmt.Fprintf(b, `{"type":"int",%s"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}`, version)
	case types.Array:
		b.WriteString(`{"type":"array","items":["null",`)
		writeAvroType(b, t.Elem, full, ns, false)
		b.WriteString(`]}`)
	case types.Map:
		// Connect writes a map whose keys may be null (every SQL type is
		// nullable) as an array of entries.
		b.WriteString(`{"type":"array","items":{"type":"record",`)
		entryNS := writeAvroName(b, full, ns)
		b.WriteString(`,"fields":[`)
		writeAvroField(b, "key", t.Key, full+"_MapKey", entryNS)
		b.WriteByte(',')
		writeAvroField(b, "value", t.Elem, full+"_MapValue", entryNS)
		b.WriteString(`],"connect.internal.type":"MapEntry"},"connect.name":`)
		b.WriteString(strconv.Quote(full))
		b.WriteByte('}')
	case types.Struct:
		writeAvroRecord(b, full, ns, t.Fields)
	default:
		b.WriteString(`"null"`)
	}
}

// CheckAvroColumns refuses columns ksqlDB cannot write in Avro, with its
// messages: a name Avro does not allow for a record or field (the record
// named fullName, or KsqlDataSourceSchema, and those of STRUCTs, named
// after their path), and a MAP whose keys are not STRING.
func CheckAvroColumns(cols []types.Column, unwrapped bool, fullName string) error {
	root := avroRecordName
	if fullName != "" {
		root = fullName[strings.LastIndexByte(fullName, '.')+1:]
	}
	fs := make([]types.Field, len(cols))
	for i, c := range cols {
		fs[i] = types.Field(c)
	}
	var err error
	if unwrapped && len(cols) == 1 {
		err = checkAvroNames(cols[0].Type, root)
	} else {
		err = checkAvroNames(types.StructOf(fs...), root)
	}
	if err != nil {
		return fmt.Errorf("Schema is not compatible with Avro: %w", err)
	}
	for _, c := range cols {
		if avroNonStringKeys(c.Type) {
			return errors.New("Avro only supports MAPs with STRING keys")
		}
	}
	return nil
}

// checkAvroNames checks the record and field names of t, whose record (a
// STRUCT) is named name, in the order Avro builds them: a record's name,
// then each field's type before the field's name.
func checkAvroNames(t *types.Type, name string) error {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case types.Array:
		return checkAvroNames(t.Elem, name)
	case types.Map:
		return checkAvroNames(t.Elem, name+"_MapValue")
	case types.Struct:
		if err := avroValidName(name); err != nil {
			return err
		}
		for _, f := range t.Fields {
			if err := checkAvroNames(f.Type, name+"_"+f.Name); err != nil {
				return err
			}
			if err := avroValidName(f.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// avroValidName checks an Avro name: a letter or '_', then letters,
// digits and '_'; the error is Avro's.
func avroValidName(n string) error {
	if n == "" {
		return errors.New("Empty name")
	}
	for i, r := range n {
		switch {
		case r == '_' || unicode.IsLetter(r):
		case i > 0 && unicode.IsDigit(r):
		case i == 0:
			return fmt.Errorf("Illegal initial character: %s", n)
		default:
			return fmt.Errorf("Illegal character in: %s", n)
		}
	}
	return nil
}

// avroNonStringKeys reports whether t holds a MAP whose keys are not
// STRING.
func avroNonStringKeys(t *types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case types.Map:
		return t.Key == nil || t.Key.Kind != types.String || avroNonStringKeys(t.Elem)
	case types.Array:
		return avroNonStringKeys(t.Elem)
	case types.Struct:
		for _, f := range t.Fields {
			if avroNonStringKeys(f.Type) {
				return true
			}
		}
	}
	return false
}
