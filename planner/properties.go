package planner

import (
	"fmt"
	"maps"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser/ast"
)

// knownProps are the WITH properties the planner understands, per statement
// family.
var (
	sourceProps = []string{"KAFKA_TOPIC", "FORMAT", "KEY_FORMAT", "VALUE_FORMAT", "PARTITIONS", "REPLICAS", "TIMESTAMP", "WRAP_SINGLE_VALUE", "VALUE_DELIMITER", "KEY_DELIMITER", "TIMESTAMP_FORMAT", "WINDOW_TYPE", "WINDOW_SIZE", "KEY_SCHEMA_ID", "VALUE_SCHEMA_ID", "KEY_SCHEMA_FULL_NAME", "VALUE_SCHEMA_FULL_NAME", "VALUE_AVRO_SCHEMA_FULL_NAME", "KEY_SCHEMAS_ENABLE", "VALUE_SCHEMAS_ENABLE", "KEY_PROTOBUF_NULLABLE_REPRESENTATION", "VALUE_PROTOBUF_NULLABLE_REPRESENTATION"}
	sinkProps   = []string{"KAFKA_TOPIC", "FORMAT", "KEY_FORMAT", "VALUE_FORMAT", "PARTITIONS", "REPLICAS", "TIMESTAMP", "WRAP_SINGLE_VALUE", "VALUE_DELIMITER", "KEY_DELIMITER", "TIMESTAMP_FORMAT", "KEY_SCHEMA_ID", "VALUE_SCHEMA_ID", "KEY_SCHEMA_FULL_NAME", "VALUE_SCHEMA_FULL_NAME", "VALUE_AVRO_SCHEMA_FULL_NAME", "KEY_SCHEMAS_ENABLE", "VALUE_SCHEMAS_ENABLE", "KEY_PROTOBUF_NULLABLE_REPRESENTATION", "VALUE_PROTOBUF_NULLABLE_REPRESENTATION"}
)

// props is a checked WITH list.
type props struct {
	list ast.Properties
}

// laterProps are ksqlDB WITH properties whose features are not supported
// yet; naming them says so instead of calling them invalid.
var laterProps = map[string]string{
	"RETENTION_MS":     "windowed sources",
	"SOURCE_CONNECTOR": "connectors",
}

func checkProps(list ast.Properties, known []string) (props, error) {
	seen := map[string]bool{}
	for _, p := range list {
		if seen[p.Name] {
			return props{}, errorf(p.Pos, "property %s is given twice in the WITH clause; keep one", p.Name)
		}
		seen[p.Name] = true
		ok := false
		for _, k := range known {
			if k == p.Name {
				ok = true
				break
			}
		}
		if feature, later := laterProps[p.Name]; !ok && later {
			return props{}, errorf(p.Pos, "property %s is not supported yet (%s)", p.Name, feature)
		}
		if !ok {
			sorted := append([]string(nil), known...)
			sort.Strings(sorted)
			return props{}, errorf(p.Pos, "invalid config variable in the WITH clause: %s; valid properties are %s", p.Name, strings.Join(sorted, ", "))
		}
	}
	return props{list: list}, nil
}

// str returns a string property, or def when absent.
func (p props) str(name, def string) (string, *ast.Pos, error) {
	prop, ok := p.list.Get(name)
	if !ok {
		return def, nil, nil
	}
	if prop.Value.Kind != ast.StringLit {
		return "", nil, errorf(prop.Pos, "property %s takes a string in single quotes, e.g. %s='value'", name, name)
	}
	return prop.Value.Text, &prop.Pos, nil
}

// int returns an integer property, or def when absent.
func (p props) int(name string, def int64) (int64, error) {
	prop, ok := p.list.Get(name)
	if !ok {
		return def, nil
	}
	v, err := strconv.ParseInt(prop.Value.Text, 10, 64)
	if err != nil || (prop.Value.Kind != ast.IntLit && prop.Value.Kind != ast.StringLit) {
		return 0, errorf(prop.Pos, "property %s takes a whole number, e.g. %s=4", name, name)
	}
	return v, nil
}

// bool returns a boolean property, and whether it was set.
func (p props) bool(name string) (bool, bool, error) {
	prop, ok := p.list.Get(name)
	if !ok {
		return false, false, nil
	}
	switch strings.ToUpper(prop.Value.Text) {
	case "TRUE":
		return true, true, nil
	case "FALSE":
		return false, true, nil
	}
	return false, false, errorf(prop.Pos, "property %s takes true or false", name)
}

// formats resolves FORMAT, KEY_FORMAT and VALUE_FORMAT, with defaults used
// when none is given (zero defaults mean required).
func (p props) formats(stmtPos ast.Pos, defKey, defValue string) (key, value string, err error) {
	fmtName, fpos, err := p.str("FORMAT", "")
	if err != nil {
		return "", "", err
	}
	key, kpos, err := p.str("KEY_FORMAT", "")
	if err != nil {
		return "", "", err
	}
	value, vpos, err := p.str("VALUE_FORMAT", "")
	if err != nil {
		return "", "", err
	}
	if fmtName != "" {
		if kpos != nil {
			return "", "", errorf(*kpos, "Cannot supply both 'KEY_FORMAT' and 'FORMAT' properties, as 'FORMAT' sets both key and value formats. Either use just 'FORMAT', or use 'KEY_FORMAT' and 'VALUE_FORMAT'.")
		}
		if vpos != nil {
			return "", "", errorf(*vpos, "Cannot supply both 'VALUE_FORMAT' and 'FORMAT' properties, as 'FORMAT' sets both key and value formats. Either use just 'FORMAT', or use 'KEY_FORMAT' and 'VALUE_FORMAT'.")
		}
		key, value = fmtName, fmtName
	}
	if key == "" {
		key = defKey
	}
	if value == "" {
		value = defValue
	}
	if value == "" {
		return "", "", errorf(stmtPos, "Statement is missing the 'VALUE_FORMAT' property from the WITH clause. Either provide one or set a default via the 'ksql.persistence.default.format.value' config. For example: WITH (VALUE_FORMAT='JSON').")
	}
	key, value = strings.ToUpper(key), strings.ToUpper(value)
	for _, f := range []struct {
		name string
		pos  *ast.Pos
	}{{key, kpos}, {value, vpos}} {
		if !knownFormat(f.name) {
			pos := stmtPos
			switch {
			case f.pos != nil:
				pos = *f.pos
			case fpos != nil:
				pos = *fpos
			}
			return "", "", errorf(pos, "Unknown format: %s. Known formats are JSON, KAFKA, DELIMITED, NONE, AVRO, PROTOBUF, PROTOBUF_NOSR and JSON_SR.", f.name)
		}
	}
	return key, value, nil
}

// knownFormat reports whether name is one of ksqlDB's format names, whether
// or not Sluice supports it yet.
func knownFormat(name string) bool {
	switch name {
	case format.JSON, format.Kafka, format.Delimited, format.None, format.Avro, format.Protobuf, format.ProtobufNoSR, format.JSONSR:
		return true
	}
	return false
}

// Defaults are the session's default formats
// (ksql.persistence.default.format.key and .value); empty Value means
// none.
type Defaults struct {
	KeyFormat, ValueFormat string
	// Infer, when set, returns the key or value columns of a source
	// whose statement lists none, from the topic's schema in the schema
	// registry (a schema-registry format). props are the codec's
	// properties (format.SchemaID, format.SchemaFullName). A missing key
	// schema gives no columns and no error.
	Infer func(topic string, key bool, format string, props map[string]string) ([]types.Column, error)
}

// keyProps returns the format properties the key codec takes:
// KEY_DELIMITER.
func (p props) keyProps() (map[string]string, error) {
	out := map[string]string{}
	if _, ok := p.list.Get("KEY_DELIMITER"); ok {
		d, _, err := p.str("KEY_DELIMITER", "")
		if err != nil {
			return nil, err
		}
		out["KEY_DELIMITER"] = d
	}
	if err := p.schemaProps(out, "KEY_"); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// withKeySchemaName returns the key properties of source name with
// ksqlDB's default name for an AVRO key schema
// (format.AvroKeySchemaName) where KEY_SCHEMA_FULL_NAME gives none.
func withKeySchemaName(keyFormat, name string, kprops map[string]string) map[string]string {
	if !strings.EqualFold(keyFormat, format.Avro) {
		return kprops
	}
	if _, ok := kprops[format.SchemaFullName]; ok {
		return kprops
	}
	out := maps.Clone(kprops)
	if out == nil {
		out = map[string]string{}
	}
	out[format.SchemaFullName] = format.AvroKeySchemaName(name)
	return out
}

// schemaProps adds the schema-registry properties of the key or value
// (prefix KEY_ or VALUE_) to out, without their prefix.
func (p props) schemaProps(out map[string]string, prefix string) error {
	if prop, ok := p.list.Get(prefix + "SCHEMA_ID"); ok {
		id := strings.TrimSpace(prop.Value.Text)
		if n, err := strconv.Atoi(id); err != nil || n <= 0 || (prop.Value.Kind != ast.IntLit && prop.Value.Kind != ast.StringLit) {
			return errorf(prop.Pos, "%sSCHEMA_ID must be a positive integer, e.g. %sSCHEMA_ID=1, not %s", prefix, prefix, prop.Value.Text)
		}
		out[format.SchemaID] = id
	}
	for _, name := range []string{prefix + "SCHEMA_FULL_NAME", prefix + "AVRO_SCHEMA_FULL_NAME"} {
		if _, ok := p.list.Get(name); ok {
			v, _, err := p.str(name, "")
			if err != nil {
				return err
			}
			out[format.SchemaFullName] = v
		}
	}
	// How a generated protobuf schema declares nullable scalars (the
	// format refuses it for formats other than the protobuf ones).
	if prop, ok := p.list.Get(prefix + "PROTOBUF_NULLABLE_REPRESENTATION"); ok {
		v, _, err := p.str(prop.Name, "")
		if err != nil {
			return err
		}
		switch rep := strings.ToUpper(strings.TrimSpace(v)); rep {
		case format.NullableOptional, format.NullableWrapper:
			out[format.NullableRepresentation] = rep
		default:
			return errorf(prop.Pos, "Invalid value %s for property %s: String must be one of: %s, %s", v, prop.Name, format.NullableOptional, format.NullableWrapper)
		}
	}
	// JSON's opt-in to Kafka Connect's envelope (format.SchemasEnable).
	on, set, err := p.bool(prefix + "SCHEMAS_ENABLE")
	if err != nil {
		return err
	}
	if set {
		out[format.SchemasEnable] = strconv.FormatBool(on)
	}
	return nil
}

// valueProps returns the format properties the value codec takes:
// WRAP_SINGLE_VALUE and VALUE_DELIMITER.
func (p props) valueProps() (map[string]string, error) {
	out := map[string]string{}
	wrap, set, err := p.bool("WRAP_SINGLE_VALUE")
	if err != nil {
		return nil, err
	}
	if set {
		out["WRAP_SINGLE_VALUE"] = strconv.FormatBool(wrap)
	}
	if _, ok := p.list.Get("VALUE_DELIMITER"); ok {
		d, _, err := p.str("VALUE_DELIMITER", "")
		if err != nil {
			return nil, err
		}
		out["VALUE_DELIMITER"] = d
	}
	if err := p.schemaProps(out, "VALUE_"); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// keyWindow reads WINDOW_TYPE and WINDOW_SIZE: the windowing of a source's
// keys, nil when the keys are not windowed.
func (p props) keyWindow() (*topology.KeyWindow, error) {
	typ, typPos, err := p.str("WINDOW_TYPE", "")
	if err != nil {
		return nil, err
	}
	size, sizePos, err := p.str("WINDOW_SIZE", "")
	if err != nil {
		return nil, err
	}
	if typPos == nil {
		if sizePos != nil {
			return nil, errorf(*sizePos, "'WINDOW_SIZE' should only be set with WINDOW_TYPE; add WINDOW_TYPE='TUMBLING', 'HOPPING' or 'SESSION'.")
		}
		return nil, nil
	}
	w := &topology.KeyWindow{Type: topology.WindowType(strings.ToUpper(strings.TrimSpace(typ)))}
	switch w.Type {
	case topology.Session:
		if sizePos != nil {
			return nil, errorf(*sizePos, "'WINDOW_SIZE' should not be set for SESSION windows.")
		}
		return w, nil
	case topology.Tumbling, topology.Hopping:
	default:
		return nil, errorf(*typPos, "Invalid value for WINDOW_TYPE: '%s'. Valid values are SESSION, HOPPING, TUMBLING.", typ)
	}
	if sizePos == nil {
		return nil, errorf(*typPos, "Tumbling and Hopping window types should set WINDOW_SIZE in the WITH clause.")
	}
	ms, err := parseDuration(size)
	if err != nil {
		return nil, errorf(*sizePos, "Configuration WINDOW_SIZE is invalid: %v", err)
	}
	w.Size = ms
	return w, nil
}

// parseDuration reads a duration such as '30 seconds' in milliseconds, as
// ksqlDB's WINDOW_SIZE takes it (the parser has checked its shape).
func parseDuration(s string) (int64, error) {
	parts := strings.Fields(s)
	if len(parts) != 2 {
		return 0, fmt.Errorf("Invalid duration: '%s'. Expected a number and a time unit, e.g. '30 SECONDS'", s)
	}
	n, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("Invalid duration: '%s'. Not a number: '%s'", s, parts[0])
	}
	unit := strings.ToUpper(parts[1])
	var ms int64
	switch strings.TrimSuffix(unit, "S") {
	case "NANOSECOND":
		return n / 1_000_000, nil
	case "MICROSECOND":
		return n / 1000, nil
	case "MILLISECOND":
		ms = 1
	case "SECOND":
		ms = 1000
	case "MINUTE":
		ms = 60 * 1000
	case "HOUR":
		ms = 60 * 60 * 1000
	case "DAY":
		ms = 24 * 60 * 60 * 1000
	default:
		return 0, fmt.Errorf("Invalid duration: '%s'. Unknown time unit: '%s'", s, unit)
	}
	return n * ms, nil
}
