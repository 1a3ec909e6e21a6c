package format

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/registry"
)

// The Confluent wire format puts a five-byte header before the body of a
// schema-registry record: magic byte 0, then the writer schema's id as a
// 4-byte big-endian integer.
const (
	confluentMagic  = 0
	confluentHeader = 5
)

// appendConfluentHeader appends the header for schema id to dst.
func appendConfluentHeader(dst []byte, id int) []byte {
	return binary.BigEndian.AppendUint32(append(dst, confluentMagic), uint32(id))
}

// splitConfluent returns the schema id and body of a record in the
// Confluent wire format.
func splitConfluent(b []byte) (int, []byte, error) {
	if len(b) < confluentHeader {
		return 0, nil, fmt.Errorf("record of %d bytes is too short for the schema-registry header (magic byte and 4-byte schema id)", len(b))
	}
	if b[0] != confluentMagic {
		return 0, nil, fmt.Errorf("unknown magic byte %d; the record was not written with a schema-registry serializer", b[0])
	}
	return int(binary.BigEndian.Uint32(b[1:confluentHeader])), b[confluentHeader:], nil
}

// SR is what a codec of a schema-registry format (AVRO, JSON_SR,
// PROTOBUF) needs besides its columns: the registry and the topic, whose
// key or value subject the encoder writes under. Without a Registry such
// a codec is built (so that statements can be checked), but every Decode
// and Encode fails with ErrNoRegistry.
type SR struct {
	Registry registry.Client
	Topic    string
}

// The codec properties (in KeyProps / ValueProps, without the KEY_ or
// VALUE_ prefix of the WITH clause) of the schema-registry formats.
const (
	// SchemaID is the id of the schema the encoder writes with.
	SchemaID = "SCHEMA_ID"
	// SchemaFullName is the full name of the record (AVRO) or message
	// (PROTOBUF) the codec reads and writes.
	SchemaFullName = "SCHEMA_FULL_NAME"
)

// NullableRepresentation (KEY_/VALUE_PROTOBUF_NULLABLE_REPRESENTATION in
// the WITH clause) is how a PROTOBUF or PROTOBUF_NOSR schema generated for
// the columns declares their scalar fields: NullableOptional or
// NullableWrapper (see ProtobufSchemaNullable).
const NullableRepresentation = "PROTOBUF_NULLABLE_REPRESENTATION"

// SchemasEnable, set to true (KEY_SCHEMAS_ENABLE, VALUE_SCHEMAS_ENABLE in
// the WITH clause), makes a JSON codec write and read Kafka Connect's JSON
// envelope, as JsonConverter's schemas.enable does (see connect_json.go).
// It is a property of the JSON format only.
const SchemasEnable = "SCHEMAS_ENABLE"

// unsupportedConfigs refuses the schema-registry properties a format
// without a registry has no use for, with ksqlDB's message and its names
// for them (schemaId, fullSchemaName), and SchemasEnable outside JSON.
// side is "KEY" or "VALUE".
func unsupportedConfigs(f, side string, props map[string]string) error {
	var names []string
	if _, ok := props[SchemaID]; ok && !IsRegistryFormat(f) {
		names = append(names, "schemaId")
	}
	if _, ok := props[SchemaFullName]; ok && !IsRegistryFormat(f) {
		names = append(names, "fullSchemaName")
	}
	if len(names) > 0 {
		return fmt.Errorf("%s does not support the following configs: [%s]", f, strings.Join(names, ", "))
	}
	if _, ok := props[NullableRepresentation]; ok && f != Protobuf && f != ProtobufNoSR {
		return fmt.Errorf("Property %s_%s can only be enabled with protobuf format", side, NullableRepresentation)
	}
	if _, ok := props[SchemasEnable]; ok && f != JSON {
		return fmt.Errorf("%s_SCHEMAS_ENABLE is a property of the JSON format, not of %s: remove it, or use %s_FORMAT='JSON'", side, f, side)
	}
	return nil
}

// schemasEnabled reports whether props turn Connect's envelope on.
func schemasEnabled(side string, props map[string]string) (bool, error) {
	v, ok := props[SchemasEnable]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "'")) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s_SCHEMAS_ENABLE must be true or false, not %q", side, v)
}

// ErrNoRegistry says a schema-registry format was used without a registry.
var ErrNoRegistry = errors.New("no schema registry is configured; start the server with --schema-registry-url=URL, or in playground mode")

// IsRegistryFormat reports whether format f needs a schema registry.
func IsRegistryFormat(f string) bool {
	switch strings.ToUpper(strings.TrimSpace(f)) {
	case Avro, Protobuf, JSONSR:
		return true
	}
	return false
}

// schemaCache caches the registry's schemas by id, compiled by a codec, so
// that the hot path asks the registry once per id.
type schemaCache[T any] struct {
	mu      sync.RWMutex
	byID    map[int]T
	errs    map[int]error
	compile func(registry.Schema) (T, error)
	reg     registry.Client
}

func (c *schemaCache[T]) get(id int) (T, error) {
	c.mu.RLock()
	v, ok := c.byID[id]
	err := c.errs[id]
	c.mu.RUnlock()
	if ok || err != nil {
		return v, err
	}
	var zero T
	if c.reg == nil {
		return zero, ErrNoRegistry
	}
	s, err := c.reg.ByID(context.Background(), id)
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			// Not cached: the id may be registered later.
			return zero, fmt.Errorf("schema id %d not found in the schema registry", id)
		}
		return zero, fmt.Errorf("cannot fetch schema id %d: %w", id, err)
	}
	v, err = c.compile(s)
	c.mu.Lock()
	if c.byID == nil {
		c.byID = map[int]T{}
	}
	if err != nil {
		if c.errs == nil {
			c.errs = map[int]error{}
		}
		c.errs[id] = err
	} else {
		c.byID[id] = v
	}
	c.mu.Unlock()
	return v, err
}

// RegistrySchema returns the schema ksqlDB registers for cols in format f
// (AVRO or JSON_SR); unwrapped writes a single column bare. props may name
// the Avro record (SchemaFullName).
func RegistrySchema(f string, cols []types.Column, unwrapped bool, props map[string]string) (registry.Schema, error) {
	switch strings.ToUpper(f) {
	case Avro:
		return registry.Schema{Type: registry.Avro, Schema: AvroSchema(cols, unwrapped, strings.Trim(props[SchemaFullName], "'"))}, nil
	case JSONSR:
		return registry.Schema{Type: registry.JSON, Schema: JSONSchema(cols, unwrapped)}, nil
	case Protobuf:
		text, err := ProtobufSchemaNullable(cols, unwrapped, strings.Trim(props[SchemaFullName], "'"), props[NullableRepresentation])
		return registry.Schema{Type: registry.Protobuf, Schema: text}, err
	}
	return registry.Schema{}, fmt.Errorf("format %s has no schema to register here", f)
}

// RowKey and RowVal name the column of a key or value schema read whole
// (unwrapped) from the registry.
const (
	RowKey = "ROWKEY"
	RowVal = "ROWVAL"
)

// InferColumns returns the key or value columns of topic from its schema
// in the registry: the schema with props' SchemaID, or the subject's
// latest. A value record or message gives its fields, and any other value
// schema the column ROWVAL. An AVRO or JSON_SR key is always read
// unwrapped: the whole key schema, even a record, is the type of the one
// column ROWKEY. A PROTOBUF key is a message whose one field is the key
// column (the message SchemaFullName names); a message of several fields
// is refused, as keys of several columns are not inferred. A key subject
// that does not exist gives no columns.
func InferColumns(ctx context.Context, reg registry.Client, topic string, key bool, f string, props map[string]string) ([]types.Column, error) {
	if reg == nil {
		return nil, ErrNoRegistry
	}
	subject, what, name := registry.ValueSubject(topic), "values", RowVal
	if key {
		subject, what, name = registry.KeySubject(topic), "keys", RowKey
	}
	var s registry.Schema
	var err error
	idProp, byID := props[SchemaID]
	if byID {
		id, _ := strconv.Atoi(idProp)
		if s, err = reg.ByID(ctx, id); err != nil {
			return nil, SchemaIDNotFound(topic, key, id)
		}
	} else if s, err = reg.Latest(ctx, subject); err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			if key {
				return nil, nil
			}
			return nil, fmt.Errorf("Schema for message %s on topic '%s' does not exist in the Schema Registry.Subject: %s; register a schema for it, or list the columns in the statement", what, topic, subject)
		}
		return nil, fmt.Errorf("cannot read subject %s from the schema registry: %w", subject, err)
	}
	typ := normSchemaType(strings.ToUpper(s.Type))
	// wrongType refuses a schema of another type than format f reads.
	wrongType := func(want string) error {
		return WrongSchemaType(topic, idProp, key, want, typ)
	}
	var cols []types.Column
	switch strings.ToUpper(f) {
	case Avro:
		if typ != registry.Avro {
			return nil, wrongType(registry.Avro)
		}
		var refs []string
		for _, r := range s.References {
			rs, err := reg.Version(ctx, r.Subject, r.Version)
			if err != nil {
				return nil, fmt.Errorf("reference %s of subject %s: %w", r.Name, subject, err)
			}
			refs = append(refs, rs.Schema)
		}
		if key {
			cols, err = AvroKeyColumns(s.Schema, refs)
		} else {
			cols, err = AvroColumns(s.Schema, refs, name)
		}
	case JSONSR:
		if typ != registry.JSON {
			return nil, wrongType(registry.JSON)
		}
		if key {
			cols, err = JSONSchemaKeyColumns(s.Schema)
		} else {
			cols, err = JSONSchemaColumns(s.Schema, name)
		}
	case Protobuf:
		if typ != registry.Protobuf {
			return nil, wrongType(registry.Protobuf)
		}
		refs, rerr := protobufRefs(reg, s)
		if rerr != nil {
			return nil, fmt.Errorf("subject %s: %w", subject, rerr)
		}
		cols, err = ProtobufColumns(s.Schema, refs, strings.Trim(props[SchemaFullName], "'"))
	default:
		return nil, fmt.Errorf("columns cannot be inferred for format %s yet; list them in the statement", f)
	}
	if err != nil {
		side := "value"
		if key {
			side = "key"
		}
		return nil, fmt.Errorf("Unable to verify if the %s schema for %s is compatible with ksqlDB.\nReason: %v", side, schemaOrigin(topic, idProp), err)
	}
	if strings.EqualFold(f, Protobuf) && strings.Trim(props[SchemaFullName], "'") == "" {
		if err := singleDefinition(s.Schema, key); err != nil {
			return nil, err
		}
	}
	if key && len(cols) > 1 {
		return nil, fmt.Errorf("The key schema for topic %s has %d columns, and a key of several columns cannot be read from the schema registry; list the key columns in the statement, or name a message of one field with KEY_SCHEMA_FULL_NAME", topic, len(cols))
	}
	if !byID {
		// ksqlDB names columns inferred from a subject's latest schema in
		// upper case, and keeps the schema's names when its id is given.
		for i := range cols {
			cols[i].Name = strings.ToUpper(cols[i].Name)
		}
	}
	return cols, nil
}

// schemaOrigin names where a registry schema came from as ksqlDB does:
// "topic: T", with ", schema id: N" when an id was given.
func schemaOrigin(topic, id string) string {
	var parts []string
	if topic != "" {
		parts = append(parts, "topic: "+topic)
	}
	if id != "" {
		parts = append(parts, "schema id: "+id)
	}
	return strings.Join(parts, ", ")
}

// SchemaIDNotFound is ksqlDB's refusal of a KEY_SCHEMA_ID or
// VALUE_SCHEMA_ID the registry does not hold.
func SchemaIDNotFound(topic string, key bool, id int) error {
	what, subject := "values", registry.ValueSubject(topic)
	if key {
		what, subject = "keys", registry.KeySubject(topic)
	}
	prop := "VALUE_SCHEMA_ID"
	if key {
		prop = "KEY_SCHEMA_ID"
	}
	return fmt.Errorf("Schema for message %s on topic '%s' does not exist in the Schema Registry.\nSubject: %s\nSchema Id: %d\nRegister the schema first, or give the id of a registered schema in %s.", what, topic, subject, id, prop)
}

// WrongSchemaType is ksqlDB's refusal of a registry schema of type actual
// (AVRO, JSON, PROTOBUF) for a format that reads schemas of type want; id
// is the schema id given, if any.
func WrongSchemaType(topic, id string, key bool, want, actual string) error {
	side, prop := "Value", "VALUE_FORMAT"
	if key {
		side, prop = "Key", "KEY_FORMAT"
	}
	return fmt.Errorf("%s schema is not in the expected format. You may want to set %s to '%s'.\n%s\nexpected format: %s\nactual format from Schema Registry: %s", side, prop, actual, schemaOrigin(topic, id), want, actual)
}

// singleDefinition refuses a PROTOBUF schema that defines several
// top-level types when no *_SCHEMA_FULL_NAME picks one, as ksqlDB does.
func singleDefinition(schema string, key bool) error {
	names := protoTopLevelNames(schema)
	if len(names) < 2 {
		return nil
	}
	side, prop := "Value", "VALUE_SCHEMA_FULL_NAME"
	if key {
		side, prop = "Key", "KEY_SCHEMA_FULL_NAME"
	}
	return fmt.Errorf("%s schema has multiple schema definitions. \n\n- %s\n\nPlease specify a schema full name in the WITH clause using %s", side, strings.Join(names, "\n- "), prop)
}

// schemaSource says where writerSchema found the schema it hands on.
type schemaSource int

const (
	fromID        schemaSource = iota // the SCHEMA_ID the source names
	fromLatest                        // the subject's latest version
	fromGenerated                     // generated from the columns and registered
)

// writerSchema finds the schema an encoder of subject writes with and
// hands it to use: the schema with id schemaID when one is set; else the
// subject's latest schema of type typ, when use accepts it; else the
// schema generate returns, registered under the subject.
func writerSchema(reg registry.Client, subject string, schemaID int, typ string, generate func() (string, error), use func(registry.Schema, schemaSource) error) error {
	if reg == nil {
		return ErrNoRegistry
	}
	ctx := context.Background()
	if schemaID > 0 {
		s, err := reg.ByID(ctx, schemaID)
		if err != nil {
			return fmt.Errorf("schema id %d: %w", schemaID, err)
		}
		return use(s, fromID)
	}
	if s, err := reg.Latest(ctx, subject); err == nil && strings.EqualFold(cmp.Or(s.Type, registry.Avro), typ) && use(s, fromLatest) == nil {
		return nil
	}
	text, err := generate()
	if err != nil {
		return err
	}
	s := registry.Schema{Type: typ, Schema: text}
	if s.ID, err = reg.Register(ctx, subject, s); err != nil {
		return fmt.Errorf("cannot register the schema of subject %s: %w", subject, err)
	}
	return use(s, fromGenerated)
}

// protoTopLevelNames lists the full names of the messages a
// .proto text declares at its top level, in order; nested ones are not
// listed.
func protoTopLevelNames(schema string) []string {
	var pkg string
	var names []string
	depth := 0
	toks := protoTokens(schema)
	for i := 0; i < len(toks); i++ {
		switch t := toks[i]; t {
		case "{":
			depth++
		case "}":
			depth--
		case "package":
			if depth == 0 && i+1 < len(toks) {
				pkg = toks[i+1]
			}
		case "message":
			if depth == 0 && i+1 < len(toks) {
				name := toks[i+1]
				if pkg != "" {
					name = pkg + "." + name
				}
				names = append(names, name)
			}
		}
	}
	return names
}

// protoTokens splits a .proto text into words and the punctuation
// characters between them, leaving out comments and string literals.
func protoTokens(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += end + 4
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '.' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			toks = append(toks, string(c))
			i++
		}
	}
	return toks
}

// SchemaTypeOf is the registry schema type format f reads and writes.
func SchemaTypeOf(f string) string {
	switch strings.ToUpper(f) {
	case JSONSR:
		return registry.JSON
	case Protobuf:
		return registry.Protobuf
	}
	return registry.Avro
}

// NormSchemaType is a registry schema's type in upper case, AVRO when
// the registry gives none.
func NormSchemaType(t string) string { return normSchemaType(strings.ToUpper(t)) }
