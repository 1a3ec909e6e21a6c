package format

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

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
