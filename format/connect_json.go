package format

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
)

// This file is the JSON format in Kafka Connect's envelope, the records
// Kafka's JsonConverter writes and reads with schemas.enable=true:
//
//	{"schema": {"type":"struct","fields":[...],"optional":false},
//	 "payload": {"ID":1,"STATUS":"paid"}}
//
// A JSON key or value opts in with KEY_SCHEMAS_ENABLE=true or
// VALUE_SCHEMAS_ENABLE=true in the WITH clause (SchemasEnable, after
// JsonConverter's schemas.enable): Connect's sinks that need a record's schema (the JDBC sink
// among them) then take Sluice's output with JsonConverter, without a
// schema registry. The payload is the JSON format's own encoding, which is
// what JsonConverter reads for each schema: DECIMAL as a number (the
// NUMERIC decimal format, which JsonConverter reads whatever its
// decimal.format), TIMESTAMP as epoch milliseconds (Connect's Timestamp),
// DATE as days since the epoch (Date), TIME as milliseconds of the day
// (Time), BYTES as base64. Every column is optional, as SQL columns are
// nullable; a null row is a null record (a tombstone), as without the
// envelope. A key is a struct of its columns, even of one (Connect's
// sinks name a table's key columns after a record key's fields; Debezium
// writes its keys so); a value of one column is unwrapped with
// WRAP_SINGLE_VALUE=false, as without the envelope. Decoding reads the
// payload and skips the schema.

// connectJSONCodec wraps the JSON codec's payload in Connect's envelope.
type connectJSONCodec struct {
	inner *jsonCodec
	// head is what Encode writes before the payload: `{"schema":...,"payload":`.
	head []byte
}

func newConnectJSONCodec(cols []types.Column, bare bool) (*connectJSONCodec, error) {
	var schema strings.Builder
	if bare {
		if len(cols) != 1 {
			return nil, fmt.Errorf("an unwrapped value has one column, not %d", len(cols))
		}
		if err := connectSchema(&schema, cols[0].Type, false); err != nil {
			return nil, fmt.Errorf("column %s: %w", cols[0].Name, err)
		}
	} else {
		fields := make([]types.Field, len(cols))
		for i, c := range cols {
			fields[i] = types.Field(c)
		}
		if err := connectSchema(&schema, types.StructOf(fields...), false); err != nil {
			return nil, err
		}
	}
	head := append([]byte(`{"schema":`), schema.String()...)
	head = append(head, `,"payload":`...)
	return &connectJSONCodec{inner: newJSONCodec(cols, bare), head: head}, nil
}

// ConnectJSONSchema is the Connect schema the envelope of a record over
// cols carries (see connect_json.go): for docs and tests.
func ConnectJSONSchema(cols []types.Column, bare bool) (string, error) {
	c, err := newConnectJSONCodec(cols, bare)
	if err != nil {
		return "", err
	}
	s := strings.TrimPrefix(string(c.head), `{"schema":`)
	return strings.TrimSuffix(s, `,"payload":`), nil
}

// connectSchema writes t as a Connect schema in JsonConverter's JSON.
func connectSchema(b *strings.Builder, t *types.Type, optional bool) error {
	if t == nil {
		return fmt.Errorf("a column without a type has no Connect schema")
	}
	logical := func(typ, logicalName string) {
		b.WriteString(`{"type":"` + typ + `","optional":` + strconv.FormatBool(optional) + `,"name":"` + logicalName + `","version":1}`)
	}
	prim := ""
	switch t.Kind {
	case types.Boolean:
		prim = "boolean"
	case types.Int:
		prim = "int32"
	case types.Bigint:
		prim = "int64"
	case types.Double:
		prim = "double"
	case types.String:
		prim = "string"
	case types.Bytes:
		prim = "bytes"
	case types.Decimal:
		b.WriteString(`{"type":"bytes","optional":` + strconv.FormatBool(optional) +
			`,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"` + strconv.Itoa(t.Scale) +
			`","connect.decimal.precision":"` + strconv.Itoa(t.Precision) + `"}}`)
		return nil
	case types.Timestamp:
		logical("int64", "org.apache.kafka.connect.data.Timestamp")
		return nil
	case types.Date:
		logical("int32", "org.apache.kafka.connect.data.Date")
		return nil
	case types.Time:
		logical("int32", "org.apache.kafka.connect.data.Time")
		return nil
	case types.Array:
		b.WriteString(`{"type":"array","items":`)
		if err := connectSchema(b, t.Elem, true); err != nil {
			return err
		}
		b.WriteString(`,"optional":` + strconv.FormatBool(optional) + `}`)
		return nil
	case types.Map:
		b.WriteString(`{"type":"map","keys":`)
		key := t.Key
		if key == nil {
			key = types.StringType
		}
		if err := connectSchema(b, key, false); err != nil {
			return err
		}
		b.WriteString(`,"values":`)
		if err := connectSchema(b, t.Elem, true); err != nil {
			return err
		}
		b.WriteString(`,"optional":` + strconv.FormatBool(optional) + `}`)
		return nil
	case types.Struct:
		b.WriteString(`{"type":"struct","fields":[`)
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			var fb strings.Builder
			if err := connectSchema(&fb, f.Type, true); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			// The field's name goes inside its schema object.
			s := fb.String()
			b.WriteString(s[:len(s)-1])
			b.WriteString(`,"field":`)
			b.Write(AppendJSONString(nil, f.Name))
			b.WriteByte('}')
		}
		b.WriteString(`],"optional":` + strconv.FormatBool(optional) + `}`)
		return nil
	default:
		return fmt.Errorf("type %s has no Connect schema", t)
	}
	b.WriteString(`{"type":"` + prim + `","optional":` + strconv.FormatBool(optional) + `}`)
	return nil
}

func (c *connectJSONCodec) Encode(dst []byte, row []any) ([]byte, error) {
	if c.inner.bare && len(row) == 1 && row[0] == nil {
		return nil, nil
	}
	start := len(dst)
	dst = append(dst, c.head...)
	out, err := c.inner.Encode(dst, row)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return dst[:start], nil
	}
	return append(out, '}'), nil
}

func (c *connectJSONCodec) Decode(b []byte, dst []any) error { return c.DecodeArena(nil, b, dst) }

// DecodeArena reads the envelope's payload with the JSON codec. A record
// that is not an envelope is refused, saying so.
func (c *connectJSONCodec) DecodeArena(a *Arena, b []byte, dst []any) error {
	if b == nil {
		return c.inner.DecodeArena(a, nil, dst)
	}
	d := jsonDecoder{b: b}
	d.ws()
	start, end := -1, -1
	err := d.object(func(name []byte) error {
		if string(name) == "payload" {
			start = d.i
			err := d.skip()
			end = d.i
			return err
		}
		return d.skip()
	})
	if err != nil {
		return d.wrap(err)
	}
	if start < 0 {
		return fmt.Errorf("not a Kafka Connect JSON envelope: the record has no \"payload\" (a JSON key or value with *_SCHEMAS_ENABLE=true is read as {\"schema\": ..., \"payload\": ...})")
	}
	return c.inner.DecodeArena(a, b[start:end], dst)
}

// Prune prunes the payload's codec.
func (c *connectJSONCodec) Prune(read []bool) Codec {
	p, ok := c.inner.Prune(read).(*jsonCodec)
	if !ok || p == c.inner {
		return c
	}
	return &connectJSONCodec{inner: p, head: c.head}
}
