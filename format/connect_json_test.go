package format

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

func TestConnectJSONEnvelope(t *testing.T) {
	cols := []types.Column{
		{Name: "STATUS", Type: types.StringType},
		{Name: "N", Type: types.BigintType},
		{Name: "AMOUNT", Type: types.DecimalOf(10, 2)},
		{Name: "AT", Type: types.TimestampType},
		{Name: "TAGS", Type: types.ArrayOf(types.StringType)},
		{Name: "S", Type: types.StructOf(types.Field{Name: "X", Type: types.IntType})},
	}
	c, err := NewValueCodec(JSON, cols, map[string]string{SchemasEnable: "true"})
	if err != nil {
		t.Fatal(err)
	}
	amount, err := types.ParseDec("10.50")
	if err != nil {
		t.Fatal(err)
	}
	row := []any{"paid", int64(3), amount, types.TimestampValue(1700000000000), []any{"a"}, types.StructValue{int32(7)}}
	b, err := c.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Schema  map[string]any `json:"schema"`
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	wantSchema := `{"type":"struct","fields":[{"type":"string","optional":true,"field":"STATUS"},{"type":"int64","optional":true,"field":"N"},` +
		`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"AMOUNT"},` +
		`{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"AT"},` +
		`{"type":"array","items":{"type":"string","optional":true},"optional":true,"field":"TAGS"},` +
		`{"type":"struct","fields":[{"type":"int32","optional":true,"field":"X"}],"optional":true,"field":"S"}],"optional":false}`
	if got, _ := ConnectJSONSchema(cols, false); got != wantSchema {
		t.Errorf("schema\n%s\nwant\n%s", got, wantSchema)
	}
	if !strings.HasPrefix(string(b), `{"schema":`+wantSchema+`,"payload":{"STATUS":"paid","N":3,"AMOUNT":10.50,"AT":1700000000000`) {
		t.Errorf("record %s", b)
	}
	if env.Payload["STATUS"] != "paid" || env.Payload["N"] != float64(3) {
		t.Errorf("payload %v", env.Payload)
	}
	got := make([]any, len(cols))
	if err := c.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(types.FormatValue(got[2], nil), "10.50") || got[0] != "paid" || got[1] != int64(3) {
		t.Errorf("decoded %v", got)
	}
	// Pruned, the payload's codec is pruned.
	p := c.(interface{ Prune([]bool) Codec }).Prune([]bool{true, false, false, false, false, false})
	got = make([]any, len(cols))
	if err := p.Decode(b, got); err != nil || got[0] != "paid" || got[1] != nil {
		t.Errorf("pruned: %v %v", got, err)
	}
	// Not an envelope.
	if err := c.Decode([]byte(`{"STATUS":"paid"}`), got); err == nil || !strings.Contains(err.Error(), "not a Kafka Connect JSON envelope") {
		t.Errorf("plain JSON: %v", err)
	}
	// A null row and a tombstone.
	if err := c.Decode(nil, got); err != nil || got[0] != nil {
		t.Errorf("tombstone: %v %v", got, err)
	}
}

func TestConnectJSONKey(t *testing.T) {
	key := []types.Column{{Name: "STATUS", Type: types.StringType}}
	c, err := NewKeyCodecProps(JSON, key, map[string]string{SchemasEnable: "true"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Encode(nil, []any{"paid"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"field":"STATUS"}],"optional":false},"payload":{"STATUS":"paid"}}`; string(b) != want {
		t.Errorf("key %s, want %s", b, want)
	}
	got := []any{nil}
	if err := c.Decode(b, got); err != nil || got[0] != "paid" {
		t.Errorf("decoded %v %v", got, err)
	}
	// Without the property, or set to false, plain JSON as before.
	plain, err := NewKeyCodecProps(JSON, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := plain.Encode(nil, []any{"paid"}); string(b) != `"paid"` {
		t.Errorf("plain key %s", b)
	}
	off, err := NewKeyCodecProps(JSON, key, map[string]string{SchemasEnable: "false"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := off.Encode(nil, []any{"paid"}); string(b) != `"paid"` {
		t.Errorf("schemas disabled key %s", b)
	}
	// A single unwrapped value, and its null.
	v, err := NewValueCodec(JSON, []types.Column{{Name: "N", Type: types.BigintType}}, map[string]string{WrapSingleValue: "false", SchemasEnable: "true"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := v.Encode(nil, []any{int64(2)}); string(b) != `{"schema":{"type":"int64","optional":false},"payload":2}` {
		t.Errorf("unwrapped %s", b)
	}
	if b, err := v.Encode(nil, []any{nil}); b != nil || err != nil {
		t.Errorf("unwrapped null %q %v", b, err)
	}
}

// TestFormatConfigsRefused: the schema-registry properties are refused by
// the formats without a registry, with ksqlDB's message and names, and
// SchemasEnable by every format but JSON.
func TestFormatConfigsRefused(t *testing.T) {
	cols := []types.Column{{Name: "A", Type: types.StringType}}
	for _, c := range []struct {
		format string
		key    bool
		props  map[string]string
		want   string
	}{
		{JSON, false, map[string]string{SchemaFullName: "x"}, "JSON does not support the following configs: [fullSchemaName]"},
		{JSON, true, map[string]string{SchemaID: "1"}, "JSON does not support the following configs: [schemaId]"},
		{Kafka, false, map[string]string{SchemaID: "1", SchemaFullName: "x"}, "KAFKA does not support the following configs: [schemaId, fullSchemaName]"},
		{Delimited, true, map[string]string{SchemaFullName: "x"}, "DELIMITED does not support the following configs: [fullSchemaName]"},
		{ProtobufNoSR, false, map[string]string{SchemaFullName: "x"}, "PROTOBUF_NOSR does not support the following configs: [fullSchemaName]"},
		{Avro, false, map[string]string{SchemasEnable: "true"}, "VALUE_SCHEMAS_ENABLE is a property of the JSON format, not of AVRO"},
		{Kafka, true, map[string]string{SchemasEnable: "true"}, "KEY_SCHEMAS_ENABLE is a property of the JSON format, not of KAFKA"},
		{JSON, false, map[string]string{SchemasEnable: "yes"}, `VALUE_SCHEMAS_ENABLE must be true or false, not "yes"`},
	} {
		var err error
		if c.key {
			_, err = NewKeyCodecProps(c.format, cols, c.props)
		} else {
			_, err = NewValueCodec(c.format, cols, c.props)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s key=%v %v: got %v, want %q", c.format, c.key, c.props, err, c.want)
		}
	}
}
