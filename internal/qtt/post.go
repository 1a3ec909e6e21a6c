package qtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
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
	if want.KeyFormat != nil && want.KeyFormat.Format != "" && !strings.EqualFold(want.KeyFormat.Format, src.KeyFormat) {
		return fmt.Errorf("key format is %s, expected %s", src.KeyFormat, want.KeyFormat.Format)
	}
	if want.ValueFormat != nil && want.ValueFormat.Format != "" && !strings.EqualFold(want.ValueFormat.Format, src.ValueFormat) {
		return fmt.Errorf("value format is %s, expected %s", src.ValueFormat, want.ValueFormat.Format)
	}
	return nil
}
