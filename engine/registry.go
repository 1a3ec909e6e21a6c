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
// refuses fails the statement.
func (e *Engine) registerSchemas(ctx context.Context, pos ast.Pos, src *catalog.Source, onlyNew bool) error {
	if e.cfg.Registry == nil {
		return nil
	}
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
			n, _ := strconv.Atoi(id)
			if _, err := e.cfg.Registry.ByID(ctx, n); err != nil {
				prefix := "VALUE"
				if side.subject == registry.KeySubject(src.Topic) {
					prefix = "KEY"
				}
				return userError(pos, "%s_SCHEMA_ID %d does not exist in the schema registry; register the schema first, or leave %s_SCHEMA_ID out to register one from the columns", prefix, n, prefix)
			}
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
	return nil
}
