package registry

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// The schema types, as Confluent's API names them. An empty type means AVRO.
const (
	Avro     = "AVRO"
	Protobuf = "PROTOBUF"
	JSON     = "JSON"
)

// Reference names another registered schema that a schema imports.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Schema is one registered schema.
type Schema struct {
	ID         int         `json:"id"`
	Subject    string      `json:"subject,omitempty"`
	Version    int         `json:"version,omitempty"`
	Type       string      `json:"schemaType,omitempty"`
	Schema     string      `json:"schema"`
	References []Reference `json:"references,omitempty"`
}

// ErrNotFound is returned (wrapped) when a subject, version or id is unknown.
var ErrNotFound = errors.New("not found")

// ErrIncompatible is returned (wrapped) when a new schema breaks the
// subject's compatibility rule.
var ErrIncompatible = errors.New("schema being registered is incompatible with an earlier schema")

// Client is what the engine needs of a schema registry.
type Client interface {
	// Register adds s under subject and returns its id. Registering a
	// schema the subject already holds returns its existing id.
	Register(ctx context.Context, subject string, s Schema) (int, error)
	// ByID returns the schema with the given id.
	ByID(ctx context.Context, id int) (Schema, error)
	// Latest returns the subject's newest version.
	Latest(ctx context.Context, subject string) (Schema, error)
	// Version returns one version of a subject.
	Version(ctx context.Context, subject string, version int) (Schema, error)
	// Subjects lists the registered subjects.
	Subjects(ctx context.Context) ([]string, error)
	// DeleteSubject removes a subject and returns the versions it had.
	DeleteSubject(ctx context.Context, subject string) ([]int, error)
}

// Memory is a registry held in memory. It is safe for concurrent use.
type Memory struct {
	mu       sync.Mutex
	nextID   int
	byID     map[int]Schema
	subjects map[string][]Schema // versions in order
	// Compatible, when set, is asked before a new version is added to a
	// subject that already has versions.
	Compatible func(prev []Schema, next Schema) error
}

// NewMemory returns an empty in-memory registry.
func NewMemory() *Memory {
	return &Memory{nextID: 1, byID: map[int]Schema{}, subjects: map[string][]Schema{}}
}

func normType(t string) string {
	if t == "" {
		return Avro
	}
	return t
}

func sameSchema(a, b Schema) bool {
	if normType(a.Type) != normType(b.Type) || a.Schema != b.Schema || len(a.References) != len(b.References) {
		return false
	}
	for i := range a.References {
		if a.References[i] != b.References[i] {
			return false
		}
	}
	return true
}

// Register implements Client.
func (m *Memory) Register(_ context.Context, subject string, s Schema) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.Type = normType(s.Type)
	versions := m.subjects[subject]
	for _, v := range versions {
		if sameSchema(v, s) {
			return v.ID, nil
		}
	}
	if len(versions) > 0 && m.Compatible != nil {
		if err := m.Compatible(versions, s); err != nil {
			return 0, fmt.Errorf("subject %s: %w: %v", subject, ErrIncompatible, err)
		}
	}
	id := 0
	for _, old := range m.byID { // the same schema under another subject keeps its id
		if sameSchema(old, s) {
			id = old.ID
			break
		}
	}
	if id == 0 {
		id = m.nextID
		m.nextID++
	}
	s.ID, s.Subject, s.Version = id, subject, len(versions)+1
	if _, ok := m.byID[id]; !ok {
		m.byID[id] = s
	}
	m.subjects[subject] = append(versions, s)
	return id, nil
}

// ByID implements Client.
func (m *Memory) ByID(_ context.Context, id int) (Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[id]
	if !ok {
		return Schema{}, fmt.Errorf("schema id %d: %w", id, ErrNotFound)
	}
	return s, nil
}

// Latest implements Client.
func (m *Memory) Latest(_ context.Context, subject string) (Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.subjects[subject]
	if len(v) == 0 {
		return Schema{}, fmt.Errorf("subject %s: %w", subject, ErrNotFound)
	}
	return v[len(v)-1], nil
}

// Version implements Client.
func (m *Memory) Version(_ context.Context, subject string, version int) (Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.subjects[subject]
	if version < 1 || version > len(v) {
		return Schema{}, fmt.Errorf("subject %s version %d: %w", subject, version, ErrNotFound)
	}
	return v[version-1], nil
}

// Subjects implements Client.
func (m *Memory) Subjects(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.subjects))
	for s := range m.subjects {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

// DeleteSubject implements Client.
func (m *Memory) DeleteSubject(_ context.Context, subject string) ([]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.subjects[subject]
	if !ok {
		return nil, fmt.Errorf("subject %s: %w", subject, ErrNotFound)
	}
	delete(m.subjects, subject)
	out := make([]int, len(v))
	for i, s := range v {
		out[i] = s.Version
	}
	return out, nil
}

// KeySubject and ValueSubject are the subjects of a topic's key and value
// schemas (Confluent's TopicNameStrategy).
func KeySubject(topic string) string   { return topic + "-key" }
func ValueSubject(topic string) string { return topic + "-value" }
