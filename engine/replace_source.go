package engine

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/types"
)

// sourceUpgradeProblem says why CREATE OR REPLACE may not turn old into
// next, as ksqlDB's check of a replaced source words it, or "". A source
// keeps its kind, its topic and formats and its timestamp column; its key
// columns stay as they are, and its other columns keep their names, types
// and places, so that new value columns can only come at the end. The
// queries reading it then read the rows they were planned for.
func sourceUpgradeProblem(old, next *catalog.Source) string {
	var issues []string
	issue := func(prop, from, to string) {
		issues = append(issues, fmt.Sprintf("DataSource '`%s`' has %s = %s which is not upgradeable to %s", old.Name, prop, from, to))
	}
	if old.Kind != next.Kind {
		issue("type", ksqlType(old.Kind), ksqlType(next.Kind))
	}
	if from, to := topicText(old), topicText(next); from != to {
		issue("topic", from, to)
	}
	if from, to := timestampText(old), timestampText(next); from != to {
		issue("timestampColumn", from, to)
	}
	if why := schemaChange(old, next); why != "" {
		issues = append(issues, fmt.Sprintf("DataSource '`%s`' has schema = %s which is not upgradeable to %s. (%s)", old.Name, schemaText(old), schemaText(next), why))
	}
	return strings.Join(issues, "\n\tAND ")
}

func ksqlType(k catalog.Kind) string {
	if k == catalog.Table {
		return "KTABLE"
	}
	return "KSTREAM"
}

func topicText(s *catalog.Source) string {
	kprops := s.KeyProps
	if kprops[format.SchemaFullName] == format.AvroKeySchemaName(s.Name) {
		// The key schema's default name is no property of the statement
		// (and sources created before it was given have none).
		kprops = maps.Clone(kprops)
		delete(kprops, format.SchemaFullName)
	}
	text := fmt.Sprintf("%s (KEY_FORMAT=%s%s, VALUE_FORMAT=%s%s", s.Topic, s.KeyFormat, propsText(kprops), s.ValueFormat, propsText(s.ValueProps))
	if s.Window != nil {
		text += ", WINDOW=" + s.Window.String()
	}
	return text + ")"
}

func propsText(ps map[string]string) string {
	if len(ps) == 0 {
		return ""
	}
	var parts []string
	for k, v := range ps {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return " " + strings.Join(parts, " ")
}

func timestampText(s *catalog.Source) string {
	if s.Timestamp == "" {
		return "Optional.empty"
	}
	if s.TimestampFormat != "" {
		return "Optional[`" + s.Timestamp + "` '" + s.TimestampFormat + "']"
	}
	return "Optional[`" + s.Timestamp + "`]"
}

// column is one column of a source's schema as the check compares it:
// its name, type, role and place.
type column struct {
	text  string
	index int
}

func schemaColumns(s *catalog.Source) (key, all []column) {
	add := func(c types.Column, suffix string) {
		col := column{text: "`" + c.Name + "` " + c.Type.String() + suffix, index: len(all)}
		all = append(all, col)
		if suffix == " KEY" {
			key = append(key, col)
		}
	}
	for _, c := range s.Key {
		add(c, " KEY")
	}
	for _, c := range s.Value {
		add(c, "")
	}
	for i, c := range s.Headers {
		add(c, headerConstraint(s, i))
	}
	return key, all
}

func schemaText(s *catalog.Source) string {
	_, all := schemaColumns(s)
	parts := make([]string, len(all))
	for i, c := range all {
		parts[i] = c.text
	}
	return strings.Join(parts, ", ")
}

// schemaChange names the columns of old that next changes, drops or moves:
// the key columns first, which must stay identical.
func schemaChange(old, next *catalog.Source) string {
	ok, oa := schemaColumns(old)
	nk, na := schemaColumns(next)
	if d := missing(ok, nk); d != "" {
		return "Key columns must be identical. The following key columns are changed, missing or reordered: " + d
	}
	if d := missing(oa, na); d != "" {
		return "The following columns are changed, missing or reordered: " + d
	}
	return ""
}

func missing(from, to []column) string {
	have := map[column]bool{}
	for _, c := range to {
		have[c] = true
	}
	var out []string
	for _, c := range from {
		if !have[c] {
			out = append(out, c.text)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "[" + strings.Join(out, ", ") + "]"
}
