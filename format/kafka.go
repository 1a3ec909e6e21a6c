package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/internal/types"
)

// kafkaCodec is the KAFKA format: one column in Kafka's primitive serdes.
type kafkaCodec struct {
	kind types.Kind
}

func newKafkaCodec(cols []types.Column, key bool) (Codec, error) {
	suffix := ""
	if key {
		suffix = " KEY"
	}
	fail := func(reason, instead string) error {
		if key {
			return keySchemaError(Kafka, cols, reason)
		}
		return errors.New(reason + "; " + instead)
	}
	if len(cols) != 1 {
		return nil, fail(fmt.Sprintf("The 'KAFKA' format only supports a single field. Got: %s", columnList(cols, suffix)), "use JSON or DELIMITED for several columns")
	}
	t := cols[0].Type
	switch t.Kind {
	case types.Int, types.Bigint, types.Double, types.String, types.Bytes:
		return kafkaCodec{kind: t.Kind}, nil
	}
	return nil, fail(fmt.Sprintf("The 'KAFKA' format does not support type '%s'", t.Kind), "use JSON for this type")
}

func (c kafkaCodec) Decode(b []byte, dst []any) error { return c.DecodeArena(nil, b, dst) }

func (c kafkaCodec) DecodeArena(a *Arena, b []byte, dst []any) error {
	if len(dst) != 1 {
		return fmt.Errorf("KAFKA codec decodes 1 column, got a row of %d", len(dst))
	}
	if b == nil {
		dst[0] = nil
		return nil
	}
	want := 0
	switch c.kind {
	case types.Int:
		want = 4
	case types.Bigint, types.Double:
		want = 8
	}
	if want != 0 && len(b) != want {
		return fmt.Errorf("KAFKA %s needs %d bytes, got %d", c.kind, want, len(b))
	}
	switch c.kind {
	case types.Int:
		dst[0] = int32(binary.BigEndian.Uint32(b))
	case types.Bigint:
		dst[0] = a.Int64(int64(binary.BigEndian.Uint64(b)))
	case types.Double:
		dst[0] = math.Float64frombits(binary.BigEndian.Uint64(b))
	case types.String:
		dst[0] = a.String(b)
	case types.Bytes:
		dst[0] = append([]byte{}, b...)
	}
	return nil
}

func (c kafkaCodec) Encode(dst []byte, row []any) ([]byte, error) {
	if len(row) != 1 {
		return nil, fmt.Errorf("KAFKA codec encodes 1 column, got a row of %d", len(row))
	}
	v := row[0]
	if v == nil {
		return nil, nil
	}
	var ok bool
	switch c.kind {
	case types.Int:
		var x int32
		if x, ok = v.(int32); ok {
			return binary.BigEndian.AppendUint32(dst, uint32(x)), nil
		}
	case types.Bigint:
		var x int64
		if x, ok = v.(int64); ok {
			return binary.BigEndian.AppendUint64(dst, uint64(x)), nil
		}
	case types.Double:
		var x float64
		if x, ok = v.(float64); ok {
			return binary.BigEndian.AppendUint64(dst, math.Float64bits(x)), nil
		}
	case types.String:
		var x string
		if x, ok = v.(string); ok {
			if dst == nil {
				dst = make([]byte, 0, len(x))
			}
			return append(dst, x...), nil
		}
	case types.Bytes:
		var x []byte
		if x, ok = v.([]byte); ok {
			if dst == nil {
				dst = make([]byte, 0, len(x))
			}
			return append(dst, x...), nil
		}
	}
	return nil, fmt.Errorf("KAFKA %s column got a %T value", c.kind, v)
}
