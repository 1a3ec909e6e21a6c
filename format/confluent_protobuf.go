package format

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/registry"
)

// protobufSRCodec is the PROTOBUF codec: the Confluent header, the
// message indexes that name the message in the writer's schema, then the
// protobuf message. Decoding compiles the writer's schema once per id.
type protobufSRCodec struct {
	cols      []types.Column
	unwrapped bool
	sr        SR
	subject   string
	schemaID  int
	fullName  string
	nullable  string
	plans     schemaCache[*protobufPlan]

	encOnce sync.Once
	encErr  error
	encID   int
	encPlan *protobufPlan
}

// protobufPlan is the codec of one registered schema: the message-index
// prefix of the message the columns read, and the message's body codec.
type protobufPlan struct {
	indexes []byte
	body    Codec
}

func newProtobufSRCodec(cols []types.Column, unwrapped bool, sr SR, subject string, schemaID int, fullName, nullable string) *protobufSRCodec {
	c := &protobufSRCodec{cols: cols, unwrapped: unwrapped && len(cols) == 1, sr: sr, subject: subject, schemaID: schemaID, fullName: fullName, nullable: nullable}
	c.plans.reg = sr.Registry
	c.plans.compile = func(s registry.Schema) (*protobufPlan, error) {
		if t := strings.ToUpper(s.Type); t != registry.Protobuf {
			return nil, fmt.Errorf("schema id %d is a %s schema, not PROTOBUF", s.ID, normSchemaType(t))
		}
		return c.plan(s)
	}
	return c
}

// protobufRefs returns the texts of a schema's references by import name.
func protobufRefs(reg registry.Client, s registry.Schema) (map[string]string, error) {
	if len(s.References) == 0 {
		return nil, nil
	}
	refs := map[string]string{}
	for _, r := range s.References {
		rs, err := reg.Version(context.Background(), r.Subject, r.Version)
		if err != nil {
			return nil, fmt.Errorf("reference %s: %w", r.Name, err)
		}
		refs[r.Name] = rs.Schema
	}
	return refs, nil
}

func (c *protobufSRCodec) plan(s registry.Schema) (*protobufPlan, error) {
	refs, err := protobufRefs(c.sr.Registry, s)
	if err != nil {
		return nil, err
	}
	idx, err := ProtobufMessageIndexes(s.Schema, refs, c.fullName)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", s.ID, err)
	}
	body, err := NewProtobufBody(s.Schema, refs, c.fullName, c.cols, c.unwrapped)
	if err != nil {
		return nil, fmt.Errorf("schema id %d does not match the columns: %w", s.ID, err)
	}
	return &protobufPlan{indexes: idx, body: body}, nil
}

// splitIndexes splits the message-index prefix off a body.
func splitIndexes(b []byte) ([]byte, []byte, error) {
	n, m := protowire.ConsumeVarint(b)
	if m < 0 {
		return nil, nil, errors.New("truncated protobuf message indexes")
	}
	count := protowire.DecodeZigZag(n)
	if count < 0 || count > 64 {
		return nil, nil, fmt.Errorf("invalid protobuf message-index count %d", count)
	}
	pos := m
	for range count {
		_, m := protowire.ConsumeVarint(b[pos:])
		if m < 0 {
			return nil, nil, errors.New("truncated protobuf message indexes")
		}
		pos += m
	}
	return b[:pos], b[pos:], nil
}

// sameIndexes reports whether two message-index prefixes name the same
// message ([0] may be written as the count 1 and index 0).
func sameIndexes(a, b []byte) bool {
	norm := func(x []byte) []byte {
		if bytes.Equal(x, []byte{2, 0}) {
			return []byte{0}
		}
		return x
	}
	return bytes.Equal(norm(a), norm(b))
}

// Decode implements Codec.
func (c *protobufSRCodec) Decode(b []byte, dst []any) error {
	if b == nil {
		for i := range dst {
			dst[i] = nil
		}
		return nil
	}
	id, body, err := splitConfluent(b)
	if err != nil {
		return err
	}
	p, err := c.plans.get(id)
	if err != nil {
		return err
	}
	idx, msg, err := splitIndexes(body)
	if err != nil {
		return err
	}
	if !sameIndexes(idx, p.indexes) {
		return fmt.Errorf("the record's message indexes %v do not name the message the columns read in schema id %d", idx, id)
	}
	return p.body.Decode(msg, dst)
}

// Encode implements Codec.
func (c *protobufSRCodec) Encode(dst []byte, row []any) ([]byte, error) {
	c.encOnce.Do(c.initEncoder)
	if c.encErr != nil {
		return nil, c.encErr
	}
	dst = append(appendConfluentHeader(dst, c.encID), c.encPlan.indexes...)
	return c.encPlan.body.Encode(dst, row)
}

func (c *protobufSRCodec) initEncoder() {
	generate := func() (string, error) { return ProtobufSchemaNullable(c.cols, c.unwrapped, c.fullName, c.nullable) }
	c.encErr = writerSchema(c.sr.Registry, c.subject, c.schemaID, registry.Protobuf, generate, func(s registry.Schema, from schemaSource) error {
		if from == fromLatest {
			refs, _ := protobufRefs(c.sr.Registry, s)
			if have, err := ProtobufColumns(s.Schema, refs, c.fullName); err != nil || !coversColumns(have, c.cols, c.unwrapped) {
				return errors.New("the latest schema does not hold every column")
			}
		}
		p, err := c.plan(s)
		if err != nil {
			return err
		}
		c.encPlan, c.encID = p, s.ID
		return nil
	})
}
