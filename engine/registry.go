package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/registry"
)

// withInfer returns d with the schema registry's column inference for
// CREATE STREAM/TABLE statements without columns.
func (e *Engine) withInfer(ctx context.Context, d planner.Defaults) planner.Defaults {
	d.Infer = func(topic string, key bool, f string, props map[string]string) ([]types.Column, error) {
		return format.InferColumns(ctx, e.cfg.Registry, topic, key, f, props)
	}
	return d
}

// checkRegistry refuses a schema-registry format when the engine has no
// registry.
func (e *Engine) checkRegistry(pos ast.Pos, keyFormat, valueFormat string) error {
	if e.cfg.Registry != nil {
		return nil
	}
	for _, f := range []struct{ prop, name string }{{"KEY_FORMAT", keyFormat}, {"VALUE_FORMAT", valueFormat}} {
		if format.IsRegistryFormat(f.name) {
			return userError(pos, "%s '%s' needs a schema registry, and %v", f.prop, strings.ToUpper(f.name), format.ErrNoRegistry)
		}
	}
	return nil
}

// registerSchemas registers the key and value schemas of src's topic in
// the schema registry, for its schema-registry formats. With onlyNew,
// a subject that already has a schema is left as it is (a CREATE over an
// existing topic); otherwise a schema the subject's compatibility rule
// refuses fails the statement. A side with a schema id registers that
// schema under the subject, as it is, once every side is checked; for a
// query's sink (query), the schema's columns must be the query's.
func (e *Engine) registerSchemas(ctx context.Context, pos ast.Pos, src *catalog.Source, onlyNew, query bool) error {
	if e.cfg.Registry == nil {
		return nil
	}
	var raws []rawSchema
	unwrapValue := strings.EqualFold(strings.Trim(src.ValueProps[format.WrapSingleValue], "'"), "false")
	for _, side := range []struct {
		format    string
		cols      []types.Column
		props     map[string]string
		unwrapped bool
		subject   string
	}{
		{src.KeyFormat, src.Key, src.KeyProps, len(src.Key) == 1 && !strings.EqualFold(src.KeyFormat, format.Protobuf), registry.KeySubject(src.Topic)},
		{src.ValueFormat, src.Value, src.ValueProps, unwrapValue && len(src.Value) == 1, registry.ValueSubject(src.Topic)},
	} {
		f := strings.ToUpper(side.format)
		if !format.IsRegistryFormat(f) || len(side.cols) == 0 {
			continue
		}
		if id, ok := side.props[format.SchemaID]; ok {
			raw, err := e.schemaByID(ctx, pos, src.Topic, f, side.subject == registry.KeySubject(src.Topic), id, side.cols, query)
			if err != nil {
				return err
			}
			raws = append(raws, rawSchema{subject: side.subject, key: side.subject == registry.KeySubject(src.Topic), id: raw.ID, schema: raw})
			continue
		}
		if onlyNew {
			if _, err := e.cfg.Registry.Latest(ctx, side.subject); err == nil {
				continue
			}
		}
		s, err := format.RegistrySchema(f, side.cols, side.unwrapped, side.props)
		if err != nil {
			return userError(pos, "%v", err)
		}
		if _, err := e.cfg.Registry.Register(ctx, side.subject, s); err != nil {
			if errors.Is(err, registry.ErrIncompatible) {
				return userError(pos, "Could not register schema for topic: %v; the new columns must be compatible with the subject's earlier schema (add only optional columns)", err)
			}
			return internal("cannot register the schema of subject %s: %v", side.subject, err)
		}
	}
	for _, r := range raws {
		got, err := e.cfg.Registry.Register(ctx, r.subject, r.schema)
		if err != nil {
			if errors.Is(err, registry.ErrIncompatible) {
				return userError(pos, "Could not register schema for topic: %v\nThe schema of the id must be compatible with the subject's earlier schema.", err)
			}
			return internal("cannot register the schema of subject %s: %v", r.subject, err)
		}
		if got != r.id {
			prop := "VALUE_SCHEMA_ID"
			if r.key {
				prop = "KEY_SCHEMA_ID"
			}
			return userError(pos, "Schema id registered is %d which is different from provided %s %d.\nTopic: %s\nSubject: %s\nSchema: %s", got, prop, r.id, src.Topic, r.subject, r.schema.Schema)
		}
	}
	return nil
}

// rawSchema is a registered schema a statement names by id, to register
// under its topic's subject.
type rawSchema struct {
	subject string
	key     bool
	id      int
	schema  registry.Schema
}

// schemaByID returns the schema with id (a KEY_SCHEMA_ID or
// VALUE_SCHEMA_ID) for a side of topic in format f, refused as ksqlDB
// does when the registry does not hold it or it is of another type. For
// a query's sink (query) the columns the schema gives must be cols, in
// order, with their names and types; the schema may have more after them.
func (e *Engine) schemaByID(ctx context.Context, pos ast.Pos, topic, f string, key bool, id string, cols []types.Column, query bool) (registry.Schema, error) {
	n, _ := strconv.Atoi(id)
	s, err := e.cfg.Registry.ByID(ctx, n)
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			return s, userError(pos, "%v", format.SchemaIDNotFound(topic, key, n))
		}
		return s, internal("cannot read schema id %d from the schema registry: %v", n, err)
	}
	want := format.SchemaTypeOf(f)
	if got := format.NormSchemaType(s.Type); got != want {
		return s, userError(pos, "%v", format.WrongSchemaType(topic, id, key, want, got))
	}
	if !query {
		return s, nil
	}
	props := map[string]string{format.SchemaID: id}
	inferred, err := format.InferColumns(ctx, e.cfg.Registry, topic, key, f, props)
	if err != nil {
		return s, userError(pos, "%v", err)
	}
	if missing := missingColumns(cols, inferred); len(missing) > 0 {
		side, ns := "value", ""
		if key {
			side, ns = "key", " KEY"
		}
		return s, userError(pos, "The following %s columns are changed, missing or reordered: %s. Schema from schema registry is %s\nName and cast the query's columns as the schema's fields are, in the same order, e.g. SELECT X AS `x`.", side, ksqlColumns(missing, ns), ksqlColumns(inferred, ns))
	}
	return s, nil
}

// missingColumns returns the columns of cols that are not at the same
// position, with the same name and type, in inferred.
func missingColumns(cols, inferred []types.Column) []types.Column {
	var out []types.Column
	for i, c := range cols {
		if i >= len(inferred) || inferred[i].Name != c.Name || !inferred[i].Type.Equal(c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// ksqlColumns writes columns as ksqlDB lists them in messages.
func ksqlColumns(cols []types.Column, ns string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "`" + c.Name + "` " + c.Type.String() + ns
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
