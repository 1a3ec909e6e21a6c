package registry

import (
	"context"
	"errors"
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

// ErrInvalid is returned (wrapped) for a schema that does not parse, a
// version that is not a number, or an unknown compatibility level.
var ErrInvalid = errors.New("invalid")

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

// KeySubject and ValueSubject are the subjects of a topic's key and value
// schemas (Confluent's TopicNameStrategy).
func KeySubject(topic string) string   { return topic + "-key" }
func ValueSubject(topic string) string { return topic + "-value" }
