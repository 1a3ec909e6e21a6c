package format

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/registry"
)

func srCols() []types.Column {
	return []types.Column{
		{Name: "I", Type: types.IntType},
		{Name: "B", Type: types.BigintType},
		{Name: "D", Type: types.DoubleType},
		{Name: "S", Type: types.StringType},
		{Name: "DEC", Type: types.DecimalOf(10, 2)},
		{Name: "TS", Type: types.TimestampType},
		{Name: "DT", Type: types.DateType},
		{Name: "TM", Type: types.TimeType},
		{Name: "BY", Type: types.BytesType},
		{Name: "A", Type: types.ArrayOf(types.StringType)},
		{Name: "M", Type: types.MapOf(types.StringType, types.IntType)},
		{Name: "MI", Type: types.MapOf(types.IntType, types.StringType)},
		{Name: "ST", Type: types.StructOf(types.Field{Name: "X", Type: types.IntType}, types.Field{Name: "Y", Type: types.StringType})},
		{Name: "BO", Type: types.BooleanType},
	}
}

func srRow() []any {
	return []any{
		int32(-7), int64(1) << 40, 1.5, "héllo", types.NewDec(-12345, 2), types.TimestampValue(1234567890123),
		types.DateValue(19000), types.TimeValue(3600000), []byte{0, 1, 255}, []any{"a", nil},
		&types.MapValue{Keys: []any{"k"}, Values: []any{int32(3)}},
		&types.MapValue{Keys: []any{int32(1)}, Values: []any{"one"}},
		types.StructValue{int32(1), nil}, true,
	}
}

func TestSRRoundTrip(t *testing.T) {
	for _, f := range []string{Avro, JSONSR} {
		reg := registry.NewMemory()
		cols, want := srCols(), srRow()
		// Avro and JSON maps have string keys: ksqlDB refuses others.
		if _, err := NewValueCodecSR(f, cols, nil, SR{Registry: reg, Topic: "t"}); f == Avro && (err == nil || err.Error() != "Avro only supports MAPs with STRING keys") {
			t.Errorf("a MAP<INTEGER, STRING> column in Avro: %v", err)
		}
		cols = append(cols[:11:11], cols[12:]...)
		want = append(want[:11:11], want[12:]...)
		c, err := NewValueCodecSR(f, cols, nil, SR{Registry: reg, Topic: "t"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Encode(nil, want)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if b[0] != 0 {
			t.Fatalf("%s: no magic byte", f)
		}
		got := make([]any, len(cols))
		if err := c.Decode(b, got); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i := range want {
			if !types.Equal(want[i], got[i]) && !reflect.DeepEqual(want[i], got[i]) {
				t.Errorf("%s column %s: got %#v, want %#v", f, cols[i].Name, got[i], want[i])
			}
		}
		s, err := reg.Latest(context.Background(), "t-value")
		if err != nil {
			t.Fatal(err)
		}
		if f == Avro {
			if !strings.Contains(s.Schema, avroRecordName) {
				t.Errorf("schema %s", s.Schema)
			}
			inferred, err := AvroColumns(s.Schema, nil, "ROWVAL")
			if err != nil {
				t.Fatal(err)
			}
			for i := range cols {
				if !inferred[i].Type.Equal(cols[i].Type) {
					t.Errorf("inferred %v, want %v", inferred[i], cols[i])
				}
			}
		} else {
			inferred, err := JSONSchemaColumns(s.Schema, "ROWVAL")
			if err != nil {
				t.Fatal(err)
			}
			for i := range cols {
				if cols[i].Type.Kind != types.Decimal && (inferred[i].Name != cols[i].Name || !inferred[i].Type.Equal(cols[i].Type)) {
					t.Errorf("inferred %v, want %v", inferred[i], cols[i])
				}
			}
		}
		for _, bad := range []struct {
			b    []byte
			want string
		}{
			{[]byte{1, 0, 0, 0, 1, 2}, "unknown magic byte 1"},
			{[]byte{0, 0, 0, 0, 99, 2}, "schema id 99 not found"},
			{[]byte{0, 0}, "too short"},
		} {
			if err := c.Decode(bad.b, got); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%s: decode %v: %v, want %q", f, bad.b, err, bad.want)
			}
		}
	}
}

func TestAvroResolution(t *testing.T) {
	reg := registry.NewMemory()
	ctx := context.Background()
	// A writer with an extra field, a long where the reader wants DOUBLE,
	// and without the reader's column Z.
	id, _ := reg.Register(ctx, "t-value", registry.Schema{Schema: `{"type":"record","name":"r","fields":[{"name":"extra","type":{"type":"array","items":"string"}},{"name":"a","type":"long"},{"name":"S","type":["null","string"]}]}`})
	c, _ := NewValueCodecSR(Avro, []types.Column{{Name: "A", Type: types.DoubleType}, {Name: "S", Type: types.StringType}, {Name: "Z", Type: types.IntType}}, nil, SR{Registry: reg, Topic: "t"})
	b := appendConfluentHeader(nil, id)
	b = appendAvroLong(b, 1)
	b = appendAvroString(b, "x")
	b = append(b, 0)
	b = appendAvroLong(b, 42)
	b = appendAvroLong(b, 1)
	b = appendAvroString(b, "s")
	got := make([]any, 3)
	if err := c.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []any{42.0, "s", nil}) {
		t.Errorf("got %#v", got)
	}
	// An unwrapped key.
	k, _ := NewKeyCodecSR(Avro, []types.Column{{Name: "K", Type: types.StringType}}, nil, SR{Registry: reg, Topic: "t"})
	kb, err := k.Encode(nil, []any{"key"})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Decode(kb, got[:1]); err != nil || got[0] != "key" {
		t.Errorf("key: %v %v", got[0], err)
	}
	if _, err := NewValueCodec(Avro, []types.Column{{Name: "A", Type: types.IntType}}, nil); err != nil {
		t.Fatal(err)
	}
	nc, _ := NewValueCodec(Avro, []types.Column{{Name: "A", Type: types.IntType}}, nil)
	if _, err := nc.Encode(nil, []any{int32(1)}); err == nil || !strings.Contains(err.Error(), "--schema-registry-url") {
		t.Errorf("no registry: %v", err)
	}
}

func TestAvroKeySchemaName(t *testing.T) {
	for in, want := range map[string]string{
		"FOO":      "FooKey",
		"foo":      "FooKey",
		"fOoBaR":   "FoobarKey",
		"FOO_BAR":  "FooBarKey",
		"Foo_Bar":  "FooBarKey",
		"_X":       "XKey",
		"A__B":     "ABKey",
		"ÉTÉ_2":    "ÉtÉ2Key",
		"my-keys":  "My-keysKey",
		"ORDERS_1": "Orders1Key",
	} {
		if got := AvroKeySchemaName(in); got != "io.confluent.ksql.avro_schemas."+want {
			t.Errorf("AvroKeySchemaName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAvroSchemaRoot(t *testing.T) {
	// The top level of a generated schema is never optional; a logical
	// type there has no connect.version, as Connect rebuilds it.
	for _, c := range []struct {
		t    *types.Type
		want string
	}{
		{types.IntType, `"int"`},
		{types.ArrayOf(types.StringType), `{"type":"array","items":["null","string"]}`},
		{types.TimestampType, `{"type":"long","connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}`},
	} {
		if got := AvroSchema([]types.Column{{Name: "K", Type: c.t}}, true, ""); got != c.want {
			t.Errorf("AvroSchema(%s) = %s, want %s", c.t, got, c.want)
		}
	}
}
