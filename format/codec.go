package format

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
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
	case JSON, Kafka:
		return f, nil
	case Delimited, Avro, Protobuf, ProtobufNoSR, JSONSR, None:
		return f, fmt.Errorf("%s '%s' is not supported yet; use JSON", prop, f)
	}
	return f, fmt.Errorf("Unknown format: %s", format)
}

// NewValueCodec returns the codec for record values of the given format over
// cols. props are the source's WITH properties (upper-case names); only
// WRAP_SINGLE_VALUE is used so far.
func NewValueCodec(format string, cols []types.Column, props map[string]string) (Codec, error) {
	f, err := checkFormat("VALUE_FORMAT", format)
	if err != nil {
		return nil, err
	}
	wrap := true
	if v, ok := props[WrapSingleValue]; ok {
		switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "'")) {
		case "false":
			wrap = false
		case "true":
		default:
			return nil, fmt.Errorf("WRAP_SINGLE_VALUE must be true or false, not %q", v)
		}
	}
	switch f {
	case Kafka:
		if v, ok := props[WrapSingleValue]; ok && wrap {
			return nil, fmt.Errorf("Format 'KAFKA' does not support '%s' set to '%s'.", WrapSingleValue, v)
		}
		return newKafkaCodec(cols, "value")
	}
	if !wrap && len(cols) != 1 {
		return nil, fmt.Errorf("'%s' is only valid for single-field value schemas; this schema has %d columns", WrapSingleValue, len(cols))
	}
	if err := checkJSONTypes(cols); err != nil {
		return nil, err
	}
	return newJSONCodec(cols, !wrap), nil
}

// NewKeyCodec returns the codec for record keys of the given format over
// the key columns cols. With no key columns, any format gives a codec that
// encodes nil and decodes nothing.
func NewKeyCodec(format string, cols []types.Column) (Codec, error) {
	if len(cols) == 0 {
		if _, err := checkFormat("KEY_FORMAT", format); err != nil && !strings.EqualFold(format, None) {
			return nil, err
		}
		return noKey{}, nil
	}
	f, err := checkFormat("KEY_FORMAT", format)
	if err != nil {
		return nil, err
	}
	if f == Kafka {
		return newKafkaCodec(cols, "key")
	}
	if err := checkJSONTypes(cols); err != nil {
		return nil, err
	}
	return newJSONCodec(cols, len(cols) == 1), nil
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
