package planner

import (
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// SourceSpec is a planned CREATE STREAM/TABLE: the catalog entry and what
// its topic must look like.
type SourceSpec struct {
	Source *catalog.Source
	// Partitions and Replicas are from the WITH clause; Partitions > 0 means
	// the topic is created when missing.
	Partitions int32
	Replicas   int16
}

var reservedColumns = []string{topology.RowTime, topology.RowPartition, topology.RowOffset, "WINDOWSTART", "WINDOWEND"}

// PlanCreateSource checks a CREATE STREAM/TABLE with a column list and returns
// the source it declares. Whether the name is free and the topic exists is
// the caller's to check.
func PlanCreateSource(cat *catalog.Catalog, s *ast.CreateSource, defaults Defaults) (*SourceSpec, error) {
	kind := catalog.Stream
	if s.Kind == ast.Table {
		kind = catalog.Table
	}
	p, err := checkProps(s.Props, sourceProps)
	if err != nil {
		return nil, err
	}
	topic, _, err := p.str("KAFKA_TOPIC", "")
	if err != nil {
		return nil, err
	}
	if topic == "" {
		return nil, errorf(s.Pos, "missing required property KAFKA_TOPIC; add WITH (KAFKA_TOPIC='topic-name', ...)")
	}
	keyFormat, valueFormat, err := p.formats(s.Pos, orKafka(defaults.KeyFormat), defaults.ValueFormat)
	if err != nil {
		return nil, err
	}
	vprops, err := p.valueProps()
	if err != nil {
		return nil, err
	}
	kprops, err := p.keyProps()
	if err != nil {
		return nil, err
	}
	if err := checkSchemaIDs(s, keyFormat, kprops, valueFormat, vprops); err != nil {
		return nil, err
	}
	kprops = withKeySchemaName(keyFormat, s.Name, kprops)
	// The codecs judge the formats and their properties before the
	// columns are looked at, as ksqlDB does.
	if _, err := format.NewValueCodec(valueFormat, nil, vprops); err != nil && strings.Contains(err.Error(), "elimiter") {
		return nil, errorf(s.Pos, "Failed to prepare statement: %v\nExample valid value: ';'", err)
	}
	partitions, err := p.int("PARTITIONS", 0)
	if err != nil {
		return nil, err
	}
	replicas, err := p.int("REPLICAS", 0)
	if err != nil {
		return nil, err
	}
	if partitions < 0 || partitions > 1<<20 {
		prop, _ := s.Props.Get("PARTITIONS")
		return nil, errorf(prop.Pos, "PARTITIONS must be a positive number")
	}
	if len(s.Columns) == 0 && (defaults.Infer == nil || !format.IsRegistryFormat(valueFormat) && !format.IsRegistryFormat(keyFormat)) {
		return nil, errorf(s.Pos, "The statement does not define any columns.\nList them, e.g. CREATE %s %s (ID VARCHAR KEY, V BIGINT) WITH (...), or use a format that reads them from the schema registry (AVRO, PROTOBUF, JSON_SR).", s.Kind, s.Name)
	}
	src := &catalog.Source{
		Name: s.Name, Kind: kind, Topic: topic, Partitions: int32(partitions),
		KeyFormat: keyFormat, ValueFormat: valueFormat, ValueProps: vprops, KeyProps: kprops,
		IsSource: s.IsSource, SQL: s.SQL(),
	}
	seen := map[string]bool{}
	for _, c := range s.Columns {
		for _, r := range reservedColumns {
			if c.Name == r {
				return nil, errorf(c.Pos, "'%s' is a reserved column name. You cannot use it as a name for a column.", c.Name)
			}
		}
		if seen[c.Name] {
			return nil, errorf(c.Pos, "column %s is defined more than once; remove or rename one", c.Name)
		}
		seen[c.Name] = true
		typ, err := types.Resolve(c.Type, cat.Type)
		if err != nil {
			return nil, errorf(c.Pos, "column %s: %v", c.Name, err)
		}
		col := types.Column{Name: c.Name, Type: typ}
		switch c.Constraint {
		case ast.KeyColumn:
			if kind == catalog.Table {
				return nil, errorf(c.Pos, "column %s is a 'KEY' column: use 'PRIMARY KEY' for tables", c.Name)
			}
			src.Key = append(src.Key, col)
		case ast.PrimaryKeyColumn:
			if kind == catalog.Stream {
				return nil, errorf(c.Pos, "column %s is a 'PRIMARY KEY' column: use 'KEY' for streams", c.Name)
			}
			src.Key = append(src.Key, col)
		case ast.HeadersColumn:
			if !typ.Equal(headersType) {
				return nil, errorf(c.Pos, "Invalid type for HEADERS column: expected %s, got %s\nDeclare %s as %s HEADERS: it holds every header of the record, as key and bytes.", headersType, typ, c.Name, headersType)
			}
			if err := checkHeaderColumn(c, src.HeaderKeys); err != nil {
				return nil, err
			}
			src.Headers, src.HeaderKeys = append(src.Headers, col), append(src.HeaderKeys, "")
		case ast.HeaderColumn:
			if typ.Kind != types.Bytes {
				return nil, errorf(c.Pos, "Invalid type for HEADER('%s') column: expected BYTES, got %s\nDeclare %s as BYTES HEADER('%s'): it holds the header's raw bytes; FROM_BYTES decodes them.", c.HeaderKey, typ, c.Name, c.HeaderKey)
			}
			if err := checkHeaderColumn(c, src.HeaderKeys); err != nil {
				return nil, err
			}
			src.Headers, src.HeaderKeys = append(src.Headers, col), append(src.HeaderKeys, c.HeaderKey)
		default:
			src.Value = append(src.Value, col)
		}
	}
	if defaults.Infer != nil {
		if len(src.Key) == 0 && format.IsRegistryFormat(keyFormat) {
			if src.Key, err = defaults.Infer(topic, true, keyFormat, kprops); err != nil {
				return nil, errorf(s.Pos, "%v", err)
			}
		}
		if len(src.Value) == 0 && format.IsRegistryFormat(valueFormat) {
			if src.Value, err = defaults.Infer(topic, false, valueFormat, vprops); err != nil {
				return nil, errorf(s.Pos, "%v", err)
			}
		}
		if err := checkInferred(s.Pos, src); err != nil {
			return nil, err
		}
	}
	if err := checkKeyTypes(s.Pos, src.Key); err != nil {
		return nil, err
	}
	if kind == catalog.Table && len(src.Key) == 0 {
		msg := "Tables require a PRIMARY KEY. Please define the PRIMARY KEY."
		if _, inferred := vprops[format.SchemaID]; inferred {
			// ksqlDB's hint for a table whose value columns come from a
			// registered schema.
			msg += "\nUse a partial schema to define the primary key and still load the value columns from the Schema Registry, for example:\n\tCREATE TABLE " + s.Name + " (ID INT PRIMARY KEY) WITH (...);"
		} else {
			msg += "\nMark the key column, e.g. ID VARCHAR PRIMARY KEY."
		}
		return nil, errorf(s.Pos, "%s", msg)
	}
	if src.Timestamp, src.TimestampFormat, err = timestampColumn(p, src.Columns()); err != nil {
		return nil, err
	}
	if src.Window, err = p.keyWindow(); err != nil {
		return nil, err
	}
	if err := checkCodecs(s.Pos, src.KeyFormat, src.Key, src.KeyProps, src.ValueFormat, src.Value, vprops); err != nil {
		return nil, err
	}
	return &SourceSpec{Source: src, Partitions: int32(partitions), Replicas: int16(replicas)}, nil
}

// headersType is the type of a HEADERS column.
var headersType = types.ArrayOf(types.StructOf(
	types.Field{Name: "KEY", Type: types.StringType},
	types.Field{Name: "VALUE", Type: types.BytesType},
))

// orKafka returns f, or KAFKA when f is empty: the default key format.
func orKafka(f string) string {
	if f == "" {
		return format.Kafka
	}
	return f
}

// checkKeyTypes refuses key columns whose type holds a MAP, as ksqlDB does:
// maps serialize in no fixed order, so equal keys could differ in bytes.
func checkKeyTypes(pos ast.Pos, keys []types.Column) error {
	for _, k := range keys {
		if hasMap(k.Type) {
			return errorf(pos, "Map keys, including types that contain maps, are not supported as they may lead to unexpected behavior due to inconsistent serialization. Key column name: `%s`. Column type: %s. See https://github.com/confluentinc/ksql/issues/6621 for more.", k.Name, k.Type)
		}
	}
	return nil
}

func hasMap(t *types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case types.Map:
		return true
	case types.Array:
		return hasMap(t.Elem)
	case types.Struct:
		for _, f := range t.Fields {
			if hasMap(f.Type) {
				return true
			}
		}
	}
	return false
}

// checkCodecs builds the key and value codecs once so that an unsupported
// format or schema is refused when the statement runs, not when the first
// record arrives.
func checkCodecs(pos ast.Pos, keyFormat string, key []types.Column, kprops map[string]string, valueFormat string, value []types.Column, vprops map[string]string) error {
	if _, err := format.NewKeyCodecProps(keyFormat, key, kprops); err != nil {
		return errorf(pos, "%v", err)
	}
	if _, err := format.NewValueCodec(valueFormat, value, vprops); err != nil {
		return errorf(pos, "%v", err)
	}
	return nil
}

// SourceNode returns the plan node that reads s.
func SourceNode(s *catalog.Source) *topology.Source { return s.PlanNode() }

// checkInferred refuses inferred columns whose names clash.
func checkInferred(pos ast.Pos, src *catalog.Source) error {
	seen := map[string]bool{}
	for _, c := range src.Columns() {
		if seen[c.Name] {
			return errorf(pos, "column %s is defined more than once (in the key and value schemas); list the columns instead", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// checkHeaderColumn refuses header column c after the header columns
// declared before it (their keys in seen, "" for HEADERS): a HEADERS
// column already holds every header, so no header column may follow it,
// and two columns may not read the same key.
func checkHeaderColumn(c ast.ColumnDef, seen []string) error {
	for _, k := range seen {
		if k == "" {
			return errorf(c.Pos, "Schema already contains a HEADERS column.\nThe HEADERS column before %s holds every header already; remove %s, or declare it before the HEADERS column.", c.Name, c.Name)
		}
		if c.Constraint == ast.HeaderColumn && k == c.HeaderKey {
			return errorf(c.Pos, "Schema already contains a HEADER('%s') column.\nAnother column reads that header already; remove %s or read another key.", k, c.Name)
		}
	}
	return nil
}

// checkSchemaIDs refuses KEY_SCHEMA_ID and VALUE_SCHEMA_ID as ksqlDB does:
// the format must read its columns from the schema registry, and the
// statement must not list the columns the schema gives. The key is
// judged before the value.
func checkSchemaIDs(s *ast.CreateSource, keyFormat string, kprops map[string]string, valueFormat string, vprops map[string]string) error {
	for _, side := range []struct {
		prefix, format string
		props          map[string]string
		isKey          bool
	}{{"KEY", keyFormat, kprops, true}, {"VALUE", valueFormat, vprops, false}} {
		if _, ok := side.props[format.SchemaID]; !ok {
			continue
		}
		idProp := side.prefix + "_SCHEMA_ID"
		pos := s.Pos
		if prop, ok := s.Props.Get(idProp); ok {
			pos = prop.Pos
		}
		if !format.IsRegistryFormat(side.format) {
			return errorf(pos, "%s_FORMAT should support schema inference when %s is provided. Current format is %s.\nUse AVRO, PROTOBUF or JSON_SR as %s_FORMAT, or leave %s out.", side.prefix, idProp, strings.ToUpper(side.format), side.prefix, idProp)
		}
		for _, c := range s.Columns {
			isKey := c.Constraint == ast.KeyColumn || c.Constraint == ast.PrimaryKeyColumn
			isHeader := c.Constraint == ast.HeadersColumn || c.Constraint == ast.HeaderColumn
			if isKey == side.isKey && !isHeader {
				what := "value"
				if side.isKey {
					what = "key"
				}
				return errorf(c.Pos, "Table elements and %s cannot both exist for create statement.\nThe %s columns come from the schema with that id: remove the %s columns from the statement, or leave %s out.", idProp, what, what, idProp)
			}
		}
	}
	return nil
}
