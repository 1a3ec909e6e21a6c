package format

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/registry"
)

// Codec converts between the bytes of a record key or value and a row of
// SQL values. A Codec is immutable and safe for concurrent use.
type Codec interface {
	// Decode fills dst, which has one slot per column of the codec's
	// schema, from b. Values follow the Go representation of package
	// types. dst does not retain b. Decoding nil bytes (a null key or a
	// tombstone) sets every column to nil.
	Decode(b []byte, dst []any) error
	// Encode appends the encoding of row (one value per column) to dst and
	// returns the extended buffer. A codec may return nil for a row that
	// encodes as a null record (an unwrapped null, or no key columns).
	Encode(dst []byte, row []any) ([]byte, error)
}

// The format names, as written in WITH clauses (compared case-insensitively).
const (
	JSON         = "JSON"
	Kafka        = "KAFKA"
	Delimited    = "DELIMITED"
	Avro         = "AVRO"
	Protobuf     = "PROTOBUF"
	ProtobufNoSR = "PROTOBUF_NOSR"
	JSONSR       = "JSON_SR"
	None         = "NONE"
)

// WrapSingleValue is the value property that, set to false, makes a
// single-column value an anonymous value instead of an object.
const WrapSingleValue = "WRAP_SINGLE_VALUE"

func checkFormat(prop, format string) (string, error) {
	f := strings.ToUpper(strings.TrimSpace(format))
	switch f {
	case JSON, Kafka, Delimited, None, ProtobufNoSR, Avro, JSONSR, Protobuf:
		return f, nil
	}
	return f, fmt.Errorf("Unknown format: %s", format)
}

// NewValueCodec returns the codec for record values of the given format over
// cols. props are the source's WITH properties (upper-case names):
// WRAP_SINGLE_VALUE, VALUE_DELIMITER for DELIMITED, and for JSON
// SchemasEnable, which writes and reads Kafka Connect's JSON envelope
// (see connect_json.go).
func NewValueCodec(format string, cols []types.Column, props map[string]string) (Codec, error) {
	return NewValueCodecSR(format, cols, props, SR{})
}

// NewValueCodecSR is NewValueCodec with the schema registry the AVRO,
// JSON_SR and PROTOBUF formats use; props may hold SchemaID and
// SchemaFullName.
func NewValueCodecSR(format string, cols []types.Column, props map[string]string, sr SR) (Codec, error) {
	f, err := checkFormat("VALUE_FORMAT", format)
	if err != nil {
		return nil, err
	}
	if f == None {
		if len(cols) > 0 {
			return nil, fmt.Errorf("The 'NONE' format can only be used when no columns are defined. Got: %s", columnList(cols, ""))
		}
		return noKey{}, nil
	}
	if _, ok := props[ValueDelimiter]; ok && f != Delimited {
		return nil, fmt.Errorf("%s does not support the following configs: [delimiter]", f)
	}
	if err := unsupportedConfigs(f, "VALUE", props); err != nil {
		return nil, err
	}
	wrap := true
	v, wrapSet := props[WrapSingleValue]
	if wrapSet {
		switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "'")) {
		case "false":
			wrap = false
		case "true":
		default:
			return nil, fmt.Errorf("WRAP_SINGLE_VALUE must be true or false, not %q", v)
		}
	}
	switch f {
	case Kafka, Delimited:
		if wrapSet && wrap {
			return nil, fmt.Errorf("Format '%s' does not support '%s' set to '%s'.", f, WrapSingleValue, strings.Trim(strings.TrimSpace(v), "'"))
		}
		if f == Kafka {
			return newKafkaCodec(cols, false)
		}
		return newDelimitedCodec(cols, props, ValueDelimiter, false)
	}
	if !wrap && len(cols) != 1 {
		return nil, fmt.Errorf("'%s' is only valid for single-field value schemas; this schema has %d columns", WrapSingleValue, len(cols))
	}
	if f == Protobuf && wrapSet && !wrap {
		// A PROTOBUF value is always a message.
		return nil, fmt.Errorf("Format '%s' does not support '%s' set to '%s'.", f, WrapSingleValue, strings.Trim(strings.TrimSpace(v), "'"))
	}
	if f == ProtobufNoSR {
		return newProtobufNoSR(cols, !wrap, props[NullableRepresentation])
	}
	if f == Avro || f == JSONSR || f == Protobuf {
		return newSRCodec(f, cols, !wrap, sr, registry.ValueSubject(sr.Topic), props)
	}
	if err := checkJSONTypes(cols); err != nil {
		return nil, err
	}
	if on, err := schemasEnabled("VALUE", props); err != nil {
		return nil, err
	} else if on {
		return newConnectJSONCodec(cols, !wrap)
	}
	return newJSONCodec(cols, !wrap), nil
}

// NewKeyCodec returns the codec for record keys of the given format over
// the key columns cols. With no key columns, any format gives a codec that
// encodes nil and decodes nothing.
func NewKeyCodec(format string, cols []types.Column) (Codec, error) {
	return NewKeyCodecProps(format, cols, nil)
}

// NewKeyCodecProps is NewKeyCodec with the source's WITH properties, of
// which KEY_DELIMITER (for DELIMITED) is used.
func NewKeyCodecProps(format string, cols []types.Column, props map[string]string) (Codec, error) {
	return NewKeyCodecSR(format, cols, props, SR{})
}

// NewKeyCodecSR is NewKeyCodecProps with the schema registry the AVRO,
// JSON_SR and PROTOBUF formats use; props may hold SchemaID and
// SchemaFullName.
func NewKeyCodecSR(format string, cols []types.Column, props map[string]string, sr SR) (Codec, error) {
	f, err := checkFormat("KEY_FORMAT", format)
	if len(cols) == 0 {
		if err != nil {
			return nil, err
		}
		return noKey{}, nil
	}
	if err != nil {
		return nil, err
	}
	if _, ok := props[KeyDelimiter]; ok && f != Delimited {
		return nil, fmt.Errorf("%s does not support the following configs: [delimiter]", f)
	}
	if err := unsupportedConfigs(f, "KEY", props); err != nil {
		return nil, err
	}
	switch f {
	case None:
		return nil, fmt.Errorf("The 'NONE' format can only be used when no columns are defined. Got: %s", columnList(cols, " KEY"))
	case Kafka:
		return newKafkaCodec(cols, true)
	case Delimited:
		return newDelimitedCodec(cols, props, KeyDelimiter, true)
	case ProtobufNoSR:
		return newProtobufNoSR(cols, false, props[NullableRepresentation])
	case Avro, JSONSR:
		return newSRCodec(f, cols, len(cols) == 1, sr, registry.KeySubject(sr.Topic), props)
	case Protobuf: // a PROTOBUF key is always a message
		return newSRCodec(f, cols, false, sr, registry.KeySubject(sr.Topic), props)
	}
	if err := checkJSONTypes(cols); err != nil {
		return nil, err
	}
	if on, err := schemasEnabled("KEY", props); err != nil {
		return nil, err
	} else if on {
		// In Connect's envelope a key is a struct of its columns, even of
		// one: Connect's sinks take a record key's fields as the names of
		// the key columns.
		return newConnectJSONCodec(cols, false)
	}
	return newJSONCodec(cols, len(cols) == 1), nil
}

func newSRCodec(f string, cols []types.Column, unwrapped bool, sr SR, subject string, props map[string]string) (Codec, error) {
	id := 0
	if v, ok := props[SchemaID]; ok {
		n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(v), "'"))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("schema id must be a positive integer, not %q", v)
		}
		id = n
	}
	if f == Protobuf {
		name := strings.Trim(props[SchemaFullName], "'")
		if id == 0 { // check the columns now, as PROTOBUF_NOSR does
			if _, err := ProtobufSchema(cols, unwrapped); err != nil {
				return nil, err
			}
		}
		return newProtobufSRCodec(cols, unwrapped, sr, subject, id, name, props[NullableRepresentation]), nil
	}
	if f == JSONSR {
		if err := checkJSONTypes(cols); err != nil {
			return nil, err
		}
		return newJSONSRCodec(cols, unwrapped, sr, subject, id), nil
	}
	name := strings.Trim(props[SchemaFullName], "'")
	if err := CheckAvroColumns(cols, unwrapped, name); err != nil {
		return nil, err
	}
	return newAvroCodec(cols, unwrapped, sr, subject, id, name), nil
}

type noKey struct{}

func (noKey) Decode([]byte, []any) error                 { return nil }
func (noKey) Encode(dst []byte, _ []any) ([]byte, error) { return dst[:len(dst):len(dst)], nil }

func checkJSONTypes(cols []types.Column) error {
	var walk func(t *types.Type) error
	walk = func(t *types.Type) error {
		if t == nil {
			return nil
		}
		switch t.Kind {
		case types.Map:
			if t.Key == nil || t.Key.Kind != types.String {
				return fmt.Errorf("JSON only supports MAP types with STRING keys")
			}
			return walk(t.Elem)
		case types.Array:
			return walk(t.Elem)
		case types.Struct:
			for _, f := range t.Fields {
				if err := walk(f.Type); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, c := range cols {
		if err := walk(c.Type); err != nil {
			return err
		}
	}
	return nil
}
