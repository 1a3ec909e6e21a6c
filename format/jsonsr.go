package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/registry"
)

// jsonSRCodec is the JSON_SR codec: the Confluent header, then the JSON
// text the JSON codec reads and writes. The writer's schema id must be
// known to the registry (looked up once per id); the JSON itself is read
// by name, as JSON is.
type jsonSRCodec struct {
	json      *jsonCodec
	cols      []types.Column
	unwrapped bool
	sr        SR
	subject   string
	schemaID  int
	ids       schemaCache[struct{}]

	encOnce sync.Once
	encErr  error
	encID   int
}

func newJSONSRCodec(cols []types.Column, unwrapped bool, sr SR, subject string, schemaID int) *jsonSRCodec {
	c := &jsonSRCodec{json: newJSONCodec(cols, unwrapped), cols: cols, unwrapped: unwrapped, sr: sr, subject: subject, schemaID: schemaID}
	c.ids.reg = sr.Registry
	c.ids.compile = func(s registry.Schema) (struct{}, error) {
		if t := strings.ToUpper(s.Type); t != registry.JSON {
			return struct{}{}, fmt.Errorf("schema id %d is a %s schema, not JSON", s.ID, normSchemaType(t))
		}
		return struct{}{}, nil
	}
	return c
}

func normSchemaType(t string) string {
	if t == "" {
		return registry.Avro
	}
	return t
}

// Decode implements Codec.
func (c *jsonSRCodec) Decode(b []byte, dst []any) error {
	if b == nil {
		for i := range dst {
			dst[i] = nil
		}
		return nil
	}
	id, body, err := splitConfluent(b)
	if err != nil {
		return err
	}
	if _, err := c.ids.get(id); err != nil {
		return err
	}
	return c.json.Decode(body, dst)
}

// Prune implements Pruner: the JSON text is read as the pruned JSON
// codec reads it.
func (c *jsonSRCodec) Prune(read []bool) Codec {
	j, ok := c.json.Prune(read).(*jsonCodec)
	if !ok || j == c.json {
		return c
	}
	p := newJSONSRCodec(c.cols, c.unwrapped, c.sr, c.subject, c.schemaID)
	p.json = j
	return p
}

// Encode implements Codec.
func (c *jsonSRCodec) Encode(dst []byte, row []any) ([]byte, error) {
	c.encOnce.Do(c.initEncoder)
	if c.encErr != nil {
		return nil, c.encErr
	}
	if c.unwrapped && row[0] == nil {
		return nil, nil
	}
	return c.json.Encode(appendConfluentHeader(dst, c.encID), row)
}

func (c *jsonSRCodec) initEncoder() {
	generate := func() (string, error) { return JSONSchema(c.cols, c.unwrapped), nil }
	c.encErr = writerSchema(c.sr.Registry, c.subject, c.schemaID, registry.JSON, generate, func(s registry.Schema, from schemaSource) error {
		if from == fromLatest {
			if cols, err := JSONSchemaColumns(s.Schema, "X"); err != nil || !coversColumns(cols, c.cols, c.unwrapped) {
				return errors.New("the latest schema does not hold every column")
			}
		}
		c.encID = s.ID
		return nil
	})
}

// coversColumns reports whether a schema's columns name every column.
func coversColumns(have, want []types.Column, unwrapped bool) bool {
	if unwrapped {
		return len(have) == 1
	}
	for _, w := range want {
		if columnIndex(have, w.Name) < 0 {
			return false
		}
	}
	return true
}

// JSONSchema returns the JSON schema ksqlDB registers for cols under
// JSON_SR: an object of optional properties, or, unwrapped, the single
// column's optional type.
func JSONSchema(cols []types.Column, unwrapped bool) string {
	var b strings.Builder
	if unwrapped && len(cols) == 1 {
		writeJSONSchemaType(&b, cols[0].Type, -1)
		return b.String()
	}
	fs := make([]types.Field, len(cols))
	for i, c := range cols {
		fs[i] = types.Field(c)
	}
	writeJSONSchemaObject(&b, fs)
	return b.String()
}

func writeJSONSchemaObject(b *strings.Builder, fs []types.Field) {
	b.WriteString(`{"type":"object","properties":{`)
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(f.Name))
		b.WriteByte(':')
		writeJSONSchemaType(b, f.Type, i)
	}
	b.WriteString(`}}`)
}

func writeJSONSchemaType(b *strings.Builder, t *types.Type, index int) {
	b.WriteByte('{')
	if index >= 0 {
		fmt.Fprintf(b, `"connect.index":%d,`, index)
	}
	b.WriteString(`"oneOf":[{"type":"null"},`)
	switch t.Kind {
	case types.Boolean:
		b.WriteString(`{"type":"boolean"}`)
	case types.Int:
		b.WriteString(`{"type":"integer","connect.type":"int32"}`)
	case types.Bigint:
		b.WriteString(`{"type":"integer","connect.type":"int64"}`)
	case types.Double:
		b.WriteString(`{"type":"number","connect.type":"float64"}`)
	case types.Decimal:
		fmt.Fprintf(b, `{"type":"number","title":"org.apache.kafka.connect.data.Decimal","connect.version":1,"connect.type":"bytes","connect.parameters":{"scale":"%d","connect.decimal.precision":"%d"}}`, t.Scale, t.Precision)
	case types.String:
		b.WriteString(`{"type":"string"}`)
	case types.Bytes:
		b.WriteString(`{"type":"string","connect.type":"bytes"}`)
	case types.Timestamp:
		b.WriteString(`{"type":"integer","title":"org.apache.kafka.connect.data.Timestamp","connect.version":1,"connect.type":"int64"}`)
	case types.Date:
		b.WriteString(`{"type":"integer","title":"org.apache.kafka.connect.data.Date","connect.version":1,"connect.type":"int32"}`)
	case types.Time:
		b.WriteString(`{"type":"integer","title":"org.apache.kafka.connect.data.Time","connect.version":1,"connect.type":"int32"}`)
	case types.Array:
		b.WriteString(`{"type":"array","items":`)
		writeJSONSchemaType(b, t.Elem, -1)
		b.WriteByte('}')
	case types.Map:
		b.WriteString(`{"type":"object","additionalProperties":`)
		writeJSONSchemaType(b, t.Elem, -1)
		b.WriteString(`,"connect.type":"map"}`)
	case types.Struct:
		writeJSONSchemaObject(b, t.Fields)
	default:
		b.WriteString(`{"type":"null"}`)
	}
	b.WriteString(`]}`)
}

// JSONSchemaColumns returns the columns of a registered JSON schema: the
// properties of an object (in "connect.index" order when given, else by
// name), or a single column named name for any other schema.
func JSONSchemaColumns(schema, name string) ([]types.Column, error) {
	var v map[string]any
	if err := json.Unmarshal([]byte(schema), &v); err != nil {
		return nil, fmt.Errorf("invalid JSON schema: %v", err)
	}
	defs := jsonSchemaDefs(v)
	root := jsonSchemaNonNull(v, defs)
	if props, ok := root["properties"].(map[string]any); ok && jsonSchemaIs(root, "object") {
		fs, err := jsonSchemaFields(props, defs, 0)
		if err != nil {
			return nil, err
		}
		return fieldColumns(fs), nil
	}
	t, err := jsonSchemaType(v, defs, 0)
	if err != nil {
		return nil, err
	}
	return []types.Column{{Name: name, Type: t}}, nil
}

// JSONSchemaKeyColumns returns the key column of a registered JSON key
// schema: as with Avro, the whole schema, an object included, is the type
// of the one column ROWKEY.
func JSONSchemaKeyColumns(schema string) ([]types.Column, error) {
	var v map[string]any
	if err := json.Unmarshal([]byte(schema), &v); err != nil {
		return nil, fmt.Errorf("invalid JSON schema: %v", err)
	}
	defs := jsonSchemaDefs(v)
	t, err := jsonSchemaType(v, defs, 0)
	if err != nil {
		return nil, err
	}
	return []types.Column{{Name: RowKey, Type: t}}, nil
}

// jsonSchemaDefs returns a schema's definitions by the $ref that names
// them.
func jsonSchemaDefs(v map[string]any) map[string]any {
	defs := map[string]any{}
	for _, k := range []string{"definitions", "$defs"} {
		if d, ok := v[k].(map[string]any); ok {
			for n, s := range d {
				defs["#/"+k+"/"+n] = s
			}
		}
	}
	return defs
}

func jsonSchemaIs(s map[string]any, typ string) bool {
	switch t := s["type"].(type) {
	case string:
		return t == typ
	case []any:
		for _, x := range t {
			if x == typ {
				return true
			}
		}
	case nil:
		return typ == "object" && s["properties"] != nil
	}
	return false
}

// jsonSchemaNonNull resolves $ref and strips a null alternative.
func jsonSchemaNonNull(s map[string]any, defs map[string]any) map[string]any {
	for range 16 {
		if ref, ok := s["$ref"].(string); ok {
			if d, ok := defs[ref].(map[string]any); ok {
				s = d
				continue
			}
		}
		for _, k := range []string{"oneOf", "anyOf"} {
			if alts, ok := s[k].([]any); ok {
				var keep map[string]any
				n := 0
				for _, a := range alts {
					am, _ := a.(map[string]any)
					if am == nil || am["type"] == "null" {
						continue
					}
					keep, n = am, n+1
				}
				if n == 1 {
					s = keep
					goto next
				}
			}
		}
		return s
	next:
	}
	return s
}

func jsonSchemaFields(props map[string]any, defs map[string]any, depth int) ([]types.Field, error) {
	type named struct {
		name  string
		index float64
		s     map[string]any
	}
	var list []named
	for n, p := range props {
		pm, _ := p.(map[string]any)
		idx, ok := pm["connect.index"].(float64)
		if !ok {
			idx = 1e9
		}
		list = append(list, named{n, idx, pm})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].index != list[j].index {
			return list[i].index < list[j].index
		}
		return list[i].name < list[j].name
	})
	fs := make([]types.Field, 0, len(list))
	for _, p := range list {
		t, err := jsonSchemaType(p.s, defs, depth+1)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", p.name, err)
		}
		fs = append(fs, types.Field{Name: p.name, Type: t})
	}
	return fs, nil
}

func jsonSchemaType(s map[string]any, defs map[string]any, depth int) (*types.Type, error) {
	if depth > 32 {
		return nil, fmt.Errorf("JSON schema nests too deeply")
	}
	s = jsonSchemaNonNull(s, defs)
	ct, _ := s["connect.type"].(string)
	title, _ := s["title"].(string)
	switch {
	case jsonSchemaIs(s, "boolean"):
		return types.BooleanType, nil
	case jsonSchemaIs(s, "integer"):
		switch {
		case strings.HasSuffix(title, ".Timestamp"):
			return types.TimestampType, nil
		case strings.HasSuffix(title, ".Date"):
			return types.DateType, nil
		case strings.HasSuffix(title, ".Time"):
			return types.TimeType, nil
		case ct == "int32" || ct == "int16" || ct == "int8":
			return types.IntType, nil
		}
		return types.BigintType, nil
	case jsonSchemaIs(s, "number"):
		if strings.HasSuffix(title, ".Decimal") {
			p, sc := 64, 0
			if params, ok := s["connect.parameters"].(map[string]any); ok {
				if v, ok := params["connect.decimal.precision"].(string); ok {
					p, _ = strconv.Atoi(v)
				}
				if v, ok := params["scale"].(string); ok {
					sc, _ = strconv.Atoi(v)
				}
			}
			return types.DecimalOf(p, sc), nil
		}
		return types.DoubleType, nil
	case jsonSchemaIs(s, "string"):
		if ct == "bytes" {
			return types.BytesType, nil
		}
		return types.StringType, nil
	case jsonSchemaIs(s, "array"):
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return nil, fmt.Errorf("JSON schema array without items")
		}
		e, err := jsonSchemaType(items, defs, depth+1)
		if err != nil {
			return nil, err
		}
		return types.ArrayOf(e), nil
	case jsonSchemaIs(s, "object"):
		if props, ok := s["properties"].(map[string]any); ok {
			fs, err := jsonSchemaFields(props, defs, depth)
			if err != nil {
				return nil, err
			}
			return types.StructOf(fs...), nil
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			v, err := jsonSchemaType(ap, defs, depth+1)
			if err != nil {
				return nil, err
			}
			return types.MapOf(types.StringType, v), nil
		}
		return types.StructOf(), nil
	}
	return nil, fmt.Errorf("JSON schema type %v has no SQL type", s["type"])
}
