package format

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/sluice-sql/sluice/internal/types"
)

// pbCols covers every SQL type, nested types included.
var pbCols = append(append([]types.Column{}, allCols...),
	types.Column{Name: "AS", Type: types.ArrayOf(types.StructOf(types.Field{Name: "N", Type: types.StringType}))},
	types.Column{Name: "MS", Type: types.MapOf(types.StringType, types.StructOf(types.Field{Name: "ADDR", Type: types.StringType}))},
	types.Column{Name: "AL", Type: types.ArrayOf(types.BigintType)},
	types.Column{Name: "AD", Type: types.ArrayOf(types.DecimalOf(4, 2))},
	types.Column{Name: "DEEP", Type: types.StructOf(types.Field{Name: "IN", Type: types.StructOf(types.Field{Name: "X", Type: types.TimestampType})})},
)

func pbRow() []any {
	return []any{true, int32(-7), int64(10827272222), 1.5, dec("-12.3650"), "x\"é", []byte{1, 2},
		types.TimestampValue(-1500), types.DateValue(-10), types.TimeValue(3723004), []any{"a", "b"},
		&types.MapValue{Keys: []any{"a", "b"}, Values: []any{int32(1), int32(2)}}, types.StructValue{4.5, int32(2)}, "q",
		[]any{types.StructValue{"n1"}, types.StructValue{"n2"}},
		&types.MapValue{Keys: []any{"k0"}, Values: []any{types.StructValue{"addr1"}}},
		[]any{int64(1), int64(-1), int64(1 << 40)},
		[]any{dec("1.25"), dec("-0.01")},
		types.StructValue{types.StructValue{types.TimestampValue(1234)}},
	}
}

func pbEqual(t *testing.T, what string, got, want []any) {
	t.Helper()
	for i := range want {
		if !valueEqual(got[i], want[i]) {
			t.Errorf("%s: column %d = %#v, want %#v", what, i, got[i], want[i])
		}
	}
}

// valueEqual compares SQL values, decimals by value and scale.
func valueEqual(a, b any) bool {
	switch x := a.(type) {
	case types.Dec:
		y, ok := b.(types.Dec)
		return ok && x.String() == y.String()
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case types.StructValue:
		y, ok := b.(types.StructValue)
		return ok && valueEqual([]any(x), []any(y))
	case *types.MapValue:
		y, ok := b.(*types.MapValue)
		return ok && valueEqual(x.Keys, y.Keys) && valueEqual(x.Values, y.Values)
	}
	return reflect.DeepEqual(a, b)
}

func TestProtobufSchema(t *testing.T) {
	cols := []types.Column{
		{Name: "ID", Type: types.IntType},
		{Name: "DEC", Type: types.DecimalOf(6, 4)},
		{Name: "S", Type: types.StructOf(types.Field{Name: "A", Type: types.StringType}, types.Field{Name: "T", Type: types.StructOf(types.Field{Name: "B", Type: types.BooleanType})})},
		{Name: "A", Type: types.ArrayOf(types.StructOf(types.Field{Name: "D", Type: types.DateType}))},
		{Name: "M", Type: types.MapOf(types.StringType, types.TimeType)},
		{Name: "TS", Type: types.TimestampType},
		{Name: "KSQL COL", Type: types.BytesType},
	}
	got, err := ProtobufSchema(cols, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `syntax = "proto3";

import "confluent/meta.proto";
import "confluent/type/decimal.proto";
import "google/protobuf/timestamp.proto";
import "google/type/date.proto";
import "google/type/timeofday.proto";

message ConnectDefault1 {
  int32 ID = 1;
  confluent.type.Decimal DEC = 2 [(confluent.field_meta) = { params: [{ key: "precision", value: "6" }, { key: "scale", value: "4" }] }];
  ConnectDefault2 S = 3;
  repeated ConnectDefault4 A = 4;
  map<string, google.type.TimeOfDay> M = 5;
  google.protobuf.Timestamp TS = 6;
  bytes KSQL_COL = 7;

  message ConnectDefault2 {
    string A = 1;
    ConnectDefault3 T = 2;

    message ConnectDefault3 {
      bool B = 1;
    }
  }

  message ConnectDefault4 {
    google.type.Date D = 1;
  }
}
`
	if got != want {
		t.Errorf("ProtobufSchema =\n%s\nwant\n%s", got, want)
	}
	// The generated schema reads back as the same columns.
	back, err := ProtobufColumns(got, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	cols[6].Name = "KSQL_COL"
	if len(back) != len(cols) {
		t.Fatalf("columns = %v", back)
	}
	for i := range cols {
		if back[i].Name != cols[i].Name || !back[i].Type.Equal(cols[i].Type) {
			t.Errorf("column %d = %s %s, want %s %s", i, back[i].Name, back[i].Type, cols[i].Name, cols[i].Type)
		}
	}

	for _, bad := range []types.Column{
		{Name: "AA", Type: types.ArrayOf(types.ArrayOf(types.IntType))},
		{Name: "MD", Type: types.MapOf(types.DoubleType, types.IntType)},
		{Name: "MA", Type: types.MapOf(types.StringType, types.ArrayOf(types.IntType))},
	} {
		if _, err := ProtobufSchema([]types.Column{bad}, false); err == nil || !strings.Contains(err.Error(), bad.Name) {
			t.Errorf("ProtobufSchema(%s %s) error = %v", bad.Name, bad.Type, err)
		}
	}
	if _, err := ProtobufSchema(cols, true); err == nil {
		t.Error("unwrapped schema of several columns: want an error")
	}
}

// The schema of every column of pbCols compiles and reads back as pbCols.
func TestProtobufSchemaAllTypes(t *testing.T) {
	s, err := ProtobufSchema(pbCols, false)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ProtobufColumns(s, nil, "")
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	for i := range pbCols {
		if back[i].Name != pbCols[i].Name || !back[i].Type.Equal(pbCols[i].Type) {
			t.Errorf("column %d = %s %s, want %s %s", i, back[i].Name, back[i].Type, pbCols[i].Name, pbCols[i].Type)
		}
	}
}

const pbOrderProto = `syntax = "proto3";
package shop.v1;

import "common/money.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/timestamp.proto";

message Header { string id = 1; }

message Order {
  enum State { NEW = 0; PAID = 1; SHIPPED = 2; }
  message Line {
    string sku = 1;
    uint32 qty = 2;
    common.Money price = 3;
  }
  uint64 order_id = 1;
  State state = 2;
  repeated Line lines = 3;
  map<string, float> weights = 4;
  google.protobuf.StringValue note = 5;
  google.protobuf.Timestamp placed = 6;
  sint32 delta = 7;
  fixed64 f64 = 8;
  sfixed32 sf32 = 9;
  repeated int32 codes = 10;
  Header header = 11;
}
`

var pbRefs = map[string]string{
	"common/money.proto": `syntax = "proto3";
package common;
message Money { string currency = 1; int64 units = 2; }
`,
}

func TestProtobufColumns(t *testing.T) {
	cols, err := ProtobufColumns(pbOrderProto, pbRefs, "shop.v1.Order")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Name+" "+c.Type.String())
	}
	got := strings.Join(names, ", ")
	want := "order_id BIGINT, state STRING, lines ARRAY<STRUCT<`sku` STRING, `qty` BIGINT, `price` STRUCT<`currency` STRING, `units` BIGINT>>>, " +
		"weights MAP<STRING, DOUBLE>, note STRING, placed TIMESTAMP, delta INTEGER, f64 BIGINT, sf32 INTEGER, codes ARRAY<INTEGER>, header STRUCT<`id` STRING>"
	if got != want {
		t.Errorf("columns =\n%s\nwant\n%s", got, want)
	}
	first, err := ProtobufColumns(pbOrderProto, pbRefs, "")
	if err != nil || len(first) != 1 || first[0].Name != "id" {
		t.Errorf("first message columns = %v, %v", first, err)
	}
	nested, err := ProtobufColumns(pbOrderProto, pbRefs, "shop.v1.Order.Line")
	if err != nil || len(nested) != 3 {
		t.Errorf("nested message columns = %v, %v", nested, err)
	}
	imported, err := ProtobufColumns(pbOrderProto, pbRefs, "common.Money")
	if err != nil || len(imported) != 2 {
		t.Errorf("imported message columns = %v, %v", imported, err)
	}

	for _, tt := range []struct{ schema, name, msg string }{
		{pbOrderProto, "shop.v1.Nope", "no message named 'shop.v1.Nope'"},
		{`syntax = "proto3"; message A { B b = 1; }`, "", "invalid protobuf schema"},
		{`syntax = "proto3"; import "missing.proto"; message A { int32 x = 1; }`, "", "invalid protobuf schema"},
		{`syntax = "proto3"; message R { R next = 1; }`, "", "recursive"},
		{`syntax = "proto3";`, "", "no message"},
	} {
		_, err := ProtobufColumns(tt.schema, pbRefs, tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ProtobufColumns(%q, %q) error = %v, want %q", tt.schema, tt.name, err, tt.msg)
		}
	}
}

func TestProtobufMessageIndexes(t *testing.T) {
	for _, tt := range []struct {
		name string
		want []byte
	}{
		{"", []byte{0}},
		{"shop.v1.Header", []byte{0}},
		{"shop.v1.Order", []byte{2, 2}},
		{"shop.v1.Order.Line", []byte{4, 2, 0}},
	} {
		got, err := ProtobufMessageIndexes(pbOrderProto, pbRefs, tt.name)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("ProtobufMessageIndexes(%q) = %v, %v, want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := ProtobufMessageIndexes(pbOrderProto, pbRefs, "common.Money"); err == nil {
		t.Error("index of an imported message: want an error")
	}
}

func TestProtobufRoundTrip(t *testing.T) {
	c, err := NewValueCodec(ProtobufNoSR, pbCols, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := pbRow()
	b, err := c.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]any, len(pbCols))
	if err := c.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	pbEqual(t, "round trip", got, row)

	// The bytes are standard protobuf: the reference implementation reads
	// them with no unknown fields and writes the same bytes back.
	schema, _ := ProtobufSchema(pbCols, false)
	fd, err := compileProto(schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	msg := dynamicpb.NewMessage(fd.Messages().Get(0))
	if err := proto.Unmarshal(b, msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.GetUnknown()) > 0 {
		t.Errorf("unknown fields %x", msg.GetUnknown())
	}
	get := func(name string) protoreflect.Value {
		return msg.Get(fd.Messages().Get(0).Fields().ByName(protoreflect.Name(name)))
	}
	if v := get("I").Int(); v != -7 {
		t.Errorf("I = %d", v)
	}
	ts := get("TS").Message()
	if s, n := ts.Get(ts.Descriptor().Fields().ByNumber(1)).Int(), ts.Get(ts.Descriptor().Fields().ByNumber(2)).Int(); s != -2 || n != 500_000_000 {
		t.Errorf("TS = %d s %d ns", s, n)
	}
	dm := get("M").Message()
	raw := dm.Get(dm.Descriptor().Fields().ByNumber(1)).Bytes()
	if !bytes.Equal(raw, []byte{0xfe, 0x1c, 0xfe}) { // -123650
		t.Errorf("decimal bytes = %x", raw)
	}
	ref, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	again := make([]any, len(pbCols))
	if err := c.Decode(ref, again); err != nil {
		t.Fatal(err)
	}
	pbEqual(t, "via dynamicpb", again, row)

	// Nulls: scalars read back as proto3 defaults, messages as null,
	// collections as empty.
	nulls := make([]any, len(pbCols))
	b, err = c.Encode(nil, nulls)
	if err != nil || b == nil || len(b) != 0 {
		t.Fatalf("Encode(nulls) = %x, %v; want an empty, non-null message", b, err)
	}
	if err := c.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	want := []any{false, int32(0), int64(0), 0.0, nil, "", []byte{}, nil, nil, nil, []any{}, &types.MapValue{}, nil, "",
		[]any{}, &types.MapValue{}, []any{}, []any{}, nil}
	pbEqual(t, "nulls", got, want)
	if err := c.Decode(nil, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != nil {
			t.Errorf("Decode(nil) column %d = %v", i, v)
		}
	}
}

func TestProtobufKeyAndUnwrapped(t *testing.T) {
	key := []types.Column{{Name: "K", Type: types.StringType}}
	kc, err := NewKeyCodec(ProtobufNoSR, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := kc.Encode(nil, []any{"key"})
	if err != nil || !bytes.Equal(b, []byte{0x0a, 3, 'k', 'e', 'y'}) {
		t.Errorf("key = %x, %v", b, err)
	}
	cols := []types.Column{{Name: "V", Type: types.ArrayOf(types.IntType)}}
	c, err := NewValueCodec(ProtobufNoSR, cols, map[string]string{WrapSingleValue: "false"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := c.Encode(nil, []any{nil}); b != nil || err != nil {
		t.Errorf("unwrapped null = %x, %v; want a null record", b, err)
	}
	b, err = c.Encode(nil, []any{[]any{int32(10), nil, int32(-1)}})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]any, 1)
	if err := c.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	pbEqual(t, "unwrapped", got, []any{[]any{int32(10), int32(0), int32(-1)}})

	// Unwrapped binds the single field whatever its name.
	u, err := NewProtobufBody(`syntax = "proto3"; message W { repeated int32 whatever = 1; }`, nil, "", cols, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	pbEqual(t, "unwrapped by position", got, []any{[]any{int32(10), int32(0), int32(-1)}})
}

func TestProtobufBodyRegistered(t *testing.T) {
	cols, err := ProtobufColumns(pbOrderProto, pbRefs, "shop.v1.Order")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewProtobufBody(pbOrderProto, pbRefs, "shop.v1.Order", cols, false)
	if err != nil {
		t.Fatal(err)
	}
	row := []any{int64(math.MaxUint32 + 1), "PAID",
		[]any{types.StructValue{"s1", int64(3), types.StructValue{"EUR", int64(5)}}},
		&types.MapValue{Keys: []any{"w"}, Values: []any{0.5}},
		nil, types.TimestampValue(1000), int32(-5), int64(-9), int32(-3), []any{int32(1), int32(2)}, types.StructValue{"h"}}
	b, err := c.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]any, len(cols))
	if err := c.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	pbEqual(t, "order", got, row)
	// A wrapper holding its default is present, unlike a null one.
	row[4] = ""
	b, _ = c.Encode(nil, row)
	if err := c.Decode(b, got); err != nil || got[4] != "" {
		t.Errorf("empty StringValue = %#v, %v", got[4], err)
	}
	if _, err := c.Encode(nil, append(row[:1:1], "LOST")); err == nil {
		t.Error("encode of a short row: want an error")
	}
	row[1] = "LOST"
	if _, err := c.Encode(nil, row); err == nil || !strings.Contains(err.Error(), "LOST") {
		t.Errorf("unknown enum value error = %v", err)
	}

	// Columns declared by the user bind by name, ignoring case.
	some := []types.Column{{Name: "ORDER_ID", Type: types.BigintType}, {Name: "STATE", Type: types.StringType}}
	sc, err := NewProtobufBody(pbOrderProto, pbRefs, "shop.v1.Order", some, false)
	if err != nil {
		t.Fatal(err)
	}
	two := make([]any, 2)
	if err := sc.Decode(b, two); err != nil || two[0] != int64(math.MaxUint32+1) || two[1] != "PAID" {
		t.Errorf("by name = %v, %v", two, err)
	}
	for _, tt := range []struct {
		col types.Column
		msg string
	}{
		{types.Column{Name: "NOPE", Type: types.IntType}, "no field 'NOPE'"},
		{types.Column{Name: "state", Type: types.IntType}, "cannot be read as INTEGER"},
		{types.Column{Name: "lines", Type: types.StringType}, "cannot be read as STRING"},
	} {
		_, err := NewProtobufBody(pbOrderProto, pbRefs, "shop.v1.Order", []types.Column{tt.col}, false)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("bind %s %s error = %v, want %q", tt.col.Name, tt.col.Type, err, tt.msg)
		}
	}
}

// TestProtobufOneof: a oneof is one STRUCT column, named after the oneof
// and its index and placed before the other fields (a nested message's
// too); the member read last is the one set; a write sets the first
// non-null field, even at its zero; a proto3 optional is no oneof.
func TestProtobufOneof(t *testing.T) {
	schema := `syntax = "proto3"; message O { string id = 1; oneof pick { string s = 2; int32 n = 3; } optional int32 o = 4; ` +
		`I inner = 5; } message I { int32 a = 1; oneof x { bool b = 2; } oneof y { bool c = 3; } }`
	cols, err := ProtobufColumns(schema, nil, "O")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Name+" "+c.Type.String())
	}
	want := "pick_0 STRUCT<`s` STRING, `n` INTEGER>, id STRING, o INTEGER, inner STRUCT<`x_0` STRUCT<`b` BOOLEAN>, `y_1` STRUCT<`c` BOOLEAN>, `a` INTEGER>"
	if got := strings.Join(names, ", "); got != want {
		t.Fatalf("columns =\n%s\nwant\n%s", got, want)
	}
	c, err := NewProtobufBody(schema, nil, "O", cols, false)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]any, len(cols))
	// id "a", s "x", then n 7: n wins.
	if err := c.Decode([]byte{0x0a, 0x01, 'a', 0x12, 0x01, 'x', 0x18, 0x07}, got); err != nil {
		t.Fatal(err)
	}
	pbEqual(t, "last member", got, []any{types.StructValue{nil, int32(7)}, "a", nil, nil})
	row := []any{types.StructValue{nil, int32(0)}, "b", nil, types.StructValue{types.StructValue{false}, nil, int32(0)}}
	b, err := c.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	pbEqual(t, "zero member", got, row)
	if _, err := NewProtobufBody(schema, nil, "O", []types.Column{{Name: "PICK_0", Type: types.StructOf(types.Field{Name: "z", Type: types.IntType})}}, false); err == nil || !strings.Contains(err.Error(), "oneof 'pick' has no field 'z'") {
		t.Errorf("bind of a field the oneof lacks: %v", err)
	}
}

func TestProtobufDecodeErrors(t *testing.T) {
	c, err := NewValueCodec(ProtobufNoSR, pbCols, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, err := c.Encode(nil, pbRow())
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]any, len(pbCols))
	for _, in := range [][]byte{
		{0x08},                              // a tag with no value
		{0x0a, 5, 'a'},                      // a string shorter than its length
		{0x30, 1},                           // S (field 6) as a varint
		{0x32, 2, 0xff, 0xfe},               // S not UTF-8
		{0x80},                              // a truncated tag
		{0x00, 0x01},                        // field number 0
		{0x0f},                              // wire type 7
		good[:len(good)-1],                  // truncated
		append([]byte{0x6a, 3}, 0x0a, 5, 0), // a nested struct cut short
	} {
		if err := c.Decode(in, dst); err == nil {
			t.Errorf("Decode(%x) = %v, want an error", in, dst)
		}
	}
	deep := []byte{}
	for range 200 {
		deep = append([]byte{0x6a, byte(len(deep))}, deep...)
		if len(deep) > 120 {
			break
		}
	}
	_ = c.Decode(deep, dst)
}

func FuzzProtobufDecode(f *testing.F) {
	c, err := NewValueCodec(ProtobufNoSR, pbCols, nil)
	if err != nil {
		f.Fatal(err)
	}
	row := pbRow()
	for i := range row {
		one := make([]any, len(row))
		one[i] = row[i]
		b, err := c.Encode(nil, one)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	all, _ := c.Encode(nil, row)
	f.Add(all)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		dst := make([]any, len(pbCols))
		if err := c.Decode(b, dst); err != nil {
			return
		}
		out, err := c.Encode(nil, dst)
		if err != nil {
			t.Fatalf("re-encode of %x: %v", b, err)
		}
		back := make([]any, len(pbCols))
		if err := c.Decode(out, back); err != nil {
			t.Fatalf("decode of re-encoded %x: %v", out, err)
		}
	})
}

func BenchmarkProtobufDecode(b *testing.B) {
	cols := []types.Column{
		{Name: "ID", Type: types.BigintType}, {Name: "NAME", Type: types.StringType},
		{Name: "PRICE", Type: types.DoubleType}, {Name: "QTY", Type: types.IntType},
		{Name: "TS", Type: types.TimestampType},
	}
	c, err := NewValueCodec(ProtobufNoSR, cols, nil)
	if err != nil {
		b.Fatal(err)
	}
	msg, _ := c.Encode(nil, []any{int64(123456), "widget", 9.99, int32(3), types.TimestampValue(1700000000000)})
	dst := make([]any, len(cols))
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Decode(msg, dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProtobufEncode(b *testing.B) {
	cols := []types.Column{
		{Name: "ID", Type: types.BigintType}, {Name: "NAME", Type: types.StringType},
		{Name: "PRICE", Type: types.DoubleType}, {Name: "QTY", Type: types.IntType},
		{Name: "TS", Type: types.TimestampType},
	}
	c, err := NewValueCodec(ProtobufNoSR, cols, nil)
	if err != nil {
		b.Fatal(err)
	}
	row := []any{int64(123456), "widget", 9.99, int32(3), types.TimestampValue(1700000000000)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = c.Encode(buf[:0], row); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadBack: a PROTOBUF value reads null scalars back as their
// defaults and a null STRUCT as null; declared nullable scalars and other
// formats keep their nulls.
func TestReadBack(t *testing.T) {
	cols := []types.Column{
		{Name: "N", Type: types.BigintType},
		{Name: "S", Type: types.StringType},
		{Name: "A", Type: types.ArrayOf(types.StringType)},
		{Name: "R", Type: types.StructOf(types.Field{Name: "X", Type: types.BigintType})},
	}
	for _, c := range []struct {
		format string
		props  map[string]string
		want   string
	}{
		{"PROTOBUF", nil, "[0  [] <nil>]"},
		{"protobuf_nosr", nil, "[0  [] <nil>]"},
		{"PROTOBUF_NOSR", map[string]string{NullableRepresentation: "OPTIONAL"}, "[<nil> <nil> [] <nil>]"},
		{"JSON", nil, "[<nil> <nil> <nil> <nil>]"},
		{"AVRO", nil, "[<nil> <nil> <nil> <nil>]"},
	} {
		rb, err := ReadBack(c.format, cols, c.props)
		if err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		vals := make([]any, len(cols))
		if rb != nil {
			if err := rb(vals); err != nil {
				t.Fatalf("%s: %v", c.format, err)
			}
		}
		if got := fmt.Sprint(vals); got != c.want {
			t.Errorf("%s %v: read back %s, want %s", c.format, c.props, got, c.want)
		}
	}
	rb, _ := ReadBack("PROTOBUF", cols, nil)
	vals := []any{int64(3), "x", []any{"a"}, types.StructValue{int64(4)}}
	if err := rb(vals); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(vals); got != "[3 x [a] [4]]" {
		t.Errorf("values read back as %s", got)
	}
}
