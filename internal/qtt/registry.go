package qtt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/registry"
)

// fixedIDs is a run's schema registry: a registry.Memory whose schemas
// may be registered under the ids a case declares (keySchemaId,
// valueSchemaId). Ids are translated both ways.
type fixedIDs struct {
	*registry.Memory
	mu      sync.Mutex
	toMem   map[int]int // declared id -> the Memory's id
	fromMem map[int]int
}

func newFixedIDs() *fixedIDs {
	return &fixedIDs{Memory: registry.NewMemory(), toMem: map[int]int{}, fromMem: map[int]int{}}
}

func (r *fixedIDs) out(id int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.fromMem[id]; ok {
		return d
	}
	return id
}

func (r *fixedIDs) in(id int) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.toMem[id]; ok {
		return m, true
	}
	if _, ok := r.fromMem[id]; ok { // the Memory's id is hidden behind a declared one
		return 0, false
	}
	return id, true
}

// registerAs registers s under subject with the declared id (0: any).
func (r *fixedIDs) registerAs(ctx context.Context, subject string, s registry.Schema, id int) error {
	mem, err := r.Memory.Register(ctx, subject, s)
	if err != nil {
		return err
	}
	if id > 0 {
		r.mu.Lock()
		r.toMem[id], r.fromMem[mem] = mem, id
		r.mu.Unlock()
	}
	return nil
}

// Register implements registry.Client.
func (r *fixedIDs) Register(ctx context.Context, subject string, s registry.Schema) (int, error) {
	id, err := r.Memory.Register(ctx, subject, s)
	return r.out(id), err
}

// ByID implements registry.Client.
func (r *fixedIDs) ByID(ctx context.Context, id int) (registry.Schema, error) {
	m, ok := r.in(id)
	if !ok {
		return registry.Schema{}, fmt.Errorf("schema id %d: %w", id, registry.ErrNotFound)
	}
	s, err := r.Memory.ByID(ctx, m)
	s.ID = r.out(s.ID)
	return s, err
}

// Latest implements registry.Client.
func (r *fixedIDs) Latest(ctx context.Context, subject string) (registry.Schema, error) {
	s, err := r.Memory.Latest(ctx, subject)
	s.ID = r.out(s.ID)
	return s, err
}

// Version implements registry.Client.
func (r *fixedIDs) Version(ctx context.Context, subject string, version int) (registry.Schema, error) {
	s, err := r.Memory.Version(ctx, subject, version)
	s.ID = r.out(s.ID)
	return s, err
}

// registerSchemas registers the schemas the case's topics declare, as
// ksqlDB's test harness does before the statements run.
func (h *harness) registerSchemas(ctx context.Context) error {
	h.reg = newFixedIDs()
	for _, t := range h.run.Case.Topics {
		for _, side := range []struct {
			schema  json.RawMessage
			id      int
			format  string
			subject string
			refs    []SchemaReference
		}{
			{t.KeySchema, t.KeySchemaID, t.KeyFormat, registry.KeySubject(t.Name), t.KeySchemaReferences},
			{t.ValueSchema, t.ValueSchemaID, t.ValueFormat, registry.ValueSubject(t.Name), t.ValueSchemaReferences},
		} {
			if isNull(side.schema) {
				continue
			}
			f := side.format
			if f == "" {
				f = t.Format
			}
			f = strings.ToUpper(strings.ReplaceAll(f, "{FORMAT}", h.run.Format))
			s := registry.Schema{Type: schemaType(f)}
			var str string
			if json.Unmarshal(side.schema, &str) == nil {
				s.Schema = str
			} else {
				var b bytes.Buffer
				if err := json.Compact(&b, side.schema); err != nil {
					return fmt.Errorf("runner: topic %s schema: %w", t.Name, err)
				}
				s.Schema = b.String()
			}
			for _, ref := range side.refs {
				rs := registry.Schema{Type: schemaType(ref.Format), Schema: ref.Schema}
				if err := h.reg.registerAs(ctx, ref.Name, rs, 0); err != nil {
					return fmt.Errorf("runner: topic %s reference %s: %w", t.Name, ref.Name, err)
				}
				got, err := h.reg.Latest(ctx, ref.Name)
				if err != nil {
					return fmt.Errorf("runner: topic %s reference %s: %w", t.Name, ref.Name, err)
				}
				s.References = append(s.References, registry.Reference{Name: ref.Name, Subject: ref.Name, Version: got.Version})
			}
			if err := h.reg.registerAs(ctx, side.subject, s, side.id); err != nil {
				return fmt.Errorf("runner: topic %s: %w", t.Name, err)
			}
		}
	}
	return nil
}

// schemaType is the registry's schema type for a format name.
func schemaType(f string) string {
	switch strings.ToUpper(f) {
	case format.JSON, format.JSONSR:
		return registry.JSON
	case format.Protobuf, format.ProtobufNoSR:
		return registry.Protobuf
	}
	return registry.Avro
}
