package qtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/registry"
)

// checkPost checks the case's post-conditions against the catalog and the
// broker's topics.
func (h *harness) checkPost(ctx context.Context) error {
	p := h.run.Case.Post
	if p == nil {
		return nil
	}
	cat := h.eng.Catalog()
	for _, want := range p.Sources {
		if err := checkPostSource(cat, want); err != nil {
			return fmt.Errorf("post: source %s: %w", want.Name, err)
		}
	}
	if p.Topics == nil {
		return nil
	}
	topics, err := h.client.ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("runner: list topics: %w", err)
	}
	if p.Topics.Blacklist != "" {
		re, err := regexp.Compile("^(?:" + p.Topics.Blacklist + ")$")
		if err != nil {
			return fmt.Errorf("post: blacklist %q: %w", p.Topics.Blacklist, err)
		}
		for _, t := range topics {
			if re.MatchString(t.Name) {
				return fmt.Errorf("post: topic %s exists but matches the blacklist %s", t.Name, p.Topics.Blacklist)
			}
		}
	}
	for _, want := range p.Topics.Topics {
		if err := h.checkPostTopic(ctx, cat, want); err != nil {
			return fmt.Errorf("post: topic %s: %w", want.Name, err)
		}
	}
	return nil
}

func checkPostSource(cat *catalog.Catalog, want PostSource) error {
	src, ok := cat.Source(want.Name)
	if !ok {
		return errors.New("is not in the catalog")
	}
	if want.Type != "" && !strings.EqualFold(want.Type, string(src.Kind)) {
		return fmt.Errorf("is a %s, expected a %s", strings.ToLower(string(src.Kind)), strings.ToLower(want.Type))
	}
	if want.Schema != nil {
		if err := checkSchema(cat, src, *want.Schema); err != nil {
			return err
		}
	}
	if kf := want.KeyFormat; kf != nil {
		if kf.Format != "" && !strings.EqualFold(kf.Format, src.KeyFormat) {
			return fmt.Errorf("key format is %s, expected %s", src.KeyFormat, kf.Format)
		}
		var gotType string
		var gotSize int64
		if src.Window != nil {
			gotType, gotSize = string(src.Window.Type), src.Window.Size
		}
		if kf.WindowType != "" && !strings.EqualFold(kf.WindowType, gotType) {
			return fmt.Errorf("key window type is %q, expected %q", gotType, kf.WindowType)
		}
		if kf.WindowSize != nil && *kf.WindowSize != gotSize {
			return fmt.Errorf("key window size is %d, expected %d", gotSize, *kf.WindowSize)
		}
	}
	if want.ValueFormat != nil && !strings.EqualFold(*want.ValueFormat, src.ValueFormat) {
		return fmt.Errorf("value format is %s, expected %s", src.ValueFormat, *want.ValueFormat)
	}
	if want.ValueFeatures != nil {
		var fs []string
		if err := json.Unmarshal(*want.ValueFeatures, &fs); err == nil {
			wantUnwrap := false
			for _, f := range fs {
				if strings.EqualFold(f, "UNWRAP_SINGLES") {
					wantUnwrap = true
				}
			}
			unwrapped := strings.EqualFold(strings.Trim(src.ValueProps[format.WrapSingleValue], "' "), "false")
			if wantUnwrap != unwrapped {
				return fmt.Errorf("value features %v, but WRAP_SINGLE_VALUE is %q", fs, src.ValueProps[format.WrapSingleValue])
			}
		}
	}
	if want.IsSource != nil && *want.IsSource != src.IsSource {
		return fmt.Errorf("isSource is %v, expected %v", src.IsSource, *want.IsSource)
	}
	return nil
}

// checkSchema compares src's columns with an expected schema such as
// "K INT KEY, V STRING": the same columns in order, each a key or value
// column as expected, of the same type.
func checkSchema(cat *catalog.Catalog, src *catalog.Source, schema string) error {
	want, err := parseSchema(cat, src.Kind, schema)
	if err != nil {
		return fmt.Errorf("expected schema %q cannot be read: %w", schema, err)
	}
	var got []schemaColumn
	for _, c := range src.Key {
		got = append(got, schemaColumn{c.Name, c.Type, true})
	}
	for _, c := range src.Value {
		got = append(got, schemaColumn{c.Name, c.Type, false})
	}
	if !sameSchema(want, got) {
		return fmt.Errorf("schema is %s, expected %s", formatSchema(got), formatSchema(want))
	}
	return nil
}

type schemaColumn struct {
	name string
	typ  *types.Type
	key  bool
}

func sameSchema(a, b []schemaColumn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].key != b[i].key || !a[i].typ.Equal(b[i].typ) {
			return false
		}
	}
	return true
}

func formatSchema(cols []schemaColumn) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "`" + c.name + "` " + c.typ.String()
		if c.key {
			parts[i] += " KEY"
		}
	}
	return strings.Join(parts, ", ")
}

var primaryKey = regexp.MustCompile(`(?i)\bPRIMARY\s+KEY\b`)

// parseSchema reads an expected schema with the SQL parser, as the column
// list of a CREATE statement.
func parseSchema(cat *catalog.Catalog, kind catalog.Kind, schema string) ([]schemaColumn, error) {
	// The corpus writes table keys as KEY or PRIMARY KEY; read both as a
	// stream's column list, which takes KEY.
	schema = primaryKey.ReplaceAllString(schema, "KEY")
	st, err := parser.ParseOne("CREATE STREAM QTT_POST_SCHEMA (" + schema + ") WITH (KAFKA_TOPIC='qtt', VALUE_FORMAT='JSON');")
	if err != nil {
		return nil, err
	}
	cs, ok := st.(*ast.CreateSource)
	if !ok {
		return nil, fmt.Errorf("not a column list")
	}
	out := make([]schemaColumn, 0, len(cs.Columns))
	for _, c := range cs.Columns {
		t, err := types.Resolve(c.Type, cat.Type)
		if err != nil {
			return nil, err
		}
		key := c.Constraint == ast.KeyColumn || c.Constraint == ast.PrimaryKeyColumn
		out = append(out, schemaColumn{c.Name, t, key})
	}
	return out, nil
}

// ksqlInternal matches the name of a persistent query's internal topic
// as ksqlDB gives it: _confluent-ksql-<service id>query_<query id>-<name>,
// where a query id ends with the query's number, counted from 0.
var ksqlInternal = regexp.MustCompile(`^_confluent-ksql-.*query_[A-Z]+(?:_.*)?_(\d+)-(.+)$`)

// topicName returns the name Sluice gives the topic ksqlDB calls name: an
// internal topic of ksqlDB's n-th persistent query is the same internal
// topic of the engine's n-th query, under the engine's prefix.
func (h *harness) topicName(name string) string {
	m := ksqlInternal.FindStringSubmatch(name)
	if m == nil {
		return name
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n >= len(h.queries) {
		return name
	}
	return h.eng.InternalTopicPrefix() + h.queries[n] + "-" + m[2]
}

func (h *harness) checkPostTopic(ctx context.Context, cat *catalog.Catalog, want PostTopic) error {
	name := want.Name
	want.Name = h.topicName(want.Name)
	info, err := h.client.DescribeTopic(ctx, want.Name)
	if errors.Is(err, kafka.ErrUnknownTopic) {
		return errors.New("does not exist")
	}
	if err != nil {
		return err
	}
	if want.Partitions != nil && *want.Partitions != info.Partitions {
		return fmt.Errorf("has %d partitions, expected %d", info.Partitions, *want.Partitions)
	}
	// The schemas ksqlDB registers for its internal topics (repartition,
	// changelog) have no counterpart: Sluice writes those topics in its
	// own lossless encoding, registered nowhere. A user topic's schemas
	// are compared.
	internal := ksqlInternal.MatchString(name)
	if len(want.KeySchema) > 0 && !internal {
		if err := h.checkTopicSchema(ctx, registry.KeySubject(want.Name), want.KeySchema); err != nil {
			return err
		}
	}
	if len(want.ValueSchema) > 0 && !internal {
		if err := h.checkTopicSchema(ctx, registry.ValueSubject(want.Name), want.ValueSchema); err != nil {
			return err
		}
	}
	var src *catalog.Source
	for _, s := range cat.Sources() {
		if s.Topic == want.Name {
			src = s
			break
		}
	}
	if src == nil {
		return nil
	}
	if kf := want.KeyFormat; kf != nil {
		if kf.Format != "" && !strings.EqualFold(kf.Format, src.KeyFormat) {
			return fmt.Errorf("key format is %s, expected %s", src.KeyFormat, kf.Format)
		}
		if err := checkFormatProps("key", kf.Properties, src.KeyProps); err != nil {
			return err
		}
	}
	if vf := want.ValueFormat; vf != nil {
		if vf.Format != "" && !strings.EqualFold(vf.Format, src.ValueFormat) {
			return fmt.Errorf("value format is %s, expected %s", src.ValueFormat, vf.Format)
		}
		if err := checkFormatProps("value", vf.Properties, src.ValueProps); err != nil {
			return err
		}
	}
	return nil
}

// checkFormatProps compares the format properties ksqlDB reports for a
// side of a topic with those of the source writing it (ksqlDB compares
// them for topics, not for sources): fullSchemaName, the name of the
// schema the side registers, must be the same or absent from both.
// Properties Sluice does not keep are not compared.
func checkFormatProps(side string, want, got map[string]string) error {
	w, wok := want["fullSchemaName"]
	g, gok := got[format.SchemaFullName]
	g = strings.Trim(g, "'")
	if wok != gok || w != g {
		return fmt.Errorf("%s format's fullSchemaName is %q, expected %q", side, g, w)
	}
	return nil
}

// checkTopicSchema compares the latest schema of subject with want: as
// JSON values (so the order of an object's members does not count) for
// Avro and JSON schemas, as text with its runs of white space made one
// for a protobuf schema given as a string.
func (h *harness) checkTopicSchema(ctx context.Context, subject string, want json.RawMessage) error {
	var w any
	if err := json.Unmarshal(want, &w); err != nil {
		return fmt.Errorf("expected schema of %s: %w", subject, err)
	}
	if w == nil {
		return nil
	}
	s, err := h.reg.Latest(ctx, subject)
	if err != nil {
		return fmt.Errorf("has no schema under %s, expected %s", subject, want)
	}
	if text, ok := w.(string); ok {
		if strings.Join(strings.Fields(text), " ") != strings.Join(strings.Fields(s.Schema), " ") {
			return fmt.Errorf("schema of %s is\n%s\nexpected\n%s", subject, s.Schema, text)
		}
		return nil
	}
	var g any
	if err := json.Unmarshal([]byte(s.Schema), &g); err != nil || !reflect.DeepEqual(g, w) {
		return fmt.Errorf("schema of %s is %s, expected %s", subject, s.Schema, want)
	}
	return nil
}
