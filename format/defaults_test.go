package format

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

// TestAvroWriteDefaults: a field with no value, or a null for a field the
// schema does not make optional, takes the field's default.
func TestAvroWriteDefaults(t *testing.T) {
	w, err := parseAvroSchema(`{"type":"record","name":"R","fields":[
		{"name":"N","type":"long","default":10},
		{"name":"S","type":"string"},
		{"name":"U","type":["null","string"],"default":null},
		{"name":"A","type":{"type":"array","items":"int"},"default":[1,2]}]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := types.StructOf(types.Field{Name: "S", Type: types.StringType}, types.Field{Name: "N", Type: types.BigintType})
	wr, err := compileAvroWrite(w, row)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wr(nil, types.StructValue{"x", nil})
	if err != nil {
		t.Fatal(err)
	}
	// N=10 (zigzag 20), S="x", U: branch 0 (null), A: a block of 2 items
	// (zigzag 4) 1, 2 (2, 4), then the end of blocks.
	want := []byte{20, 2, 'x', 0, 4, 2, 4, 0}
	if !bytes.Equal(got, want) {
		t.Errorf("encoded %v, want %v", got, want)
	}
	if _, err := appendAvroDefault(nil, &avroSchema{typ: "int"}, "ten"); err == nil {
		t.Error("a string default for an int was taken")
	}
}

// TestProtobufSchemaNamed: a *_SCHEMA_FULL_NAME names the top message and
// its package, as ksqlDB registers it; only unnamed messages take a
// default name, so the nested one is ConnectDefault1.
func TestProtobufSchemaNamed(t *testing.T) {
	cols := []types.Column{{Name: "V", Type: types.StructOf(types.Field{Name: "V1", Type: types.StringType})}}
	got, err := ProtobufSchemaNamed(cols, false, "io.test.value")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package io.test;", "message value {", "message ConnectDefault1 {"} {
		if !strings.Contains(got, want) {
			t.Errorf("schema lacks %q:\n%s", want, got)
		}
	}
	md, err := ProtobufColumns(got, nil, "io.test.value")
	if err != nil || len(md) != 1 || md[0].Name != "V" {
		t.Errorf("columns of the named message: %v, %v", md, err)
	}
}

// TestProtobufNullable: OPTIONAL scalars keep null apart from zero, as
// WRAPPER ones do.
func TestProtobufNullable(t *testing.T) {
	cols := []types.Column{{Name: "S", Type: types.StringType}, {Name: "N", Type: types.IntType}}
	for _, rep := range []string{NullableOptional, NullableWrapper} {
		c, err := newProtobufNoSR(cols, false, rep)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range [][]any{{nil, int32(0)}, {"", nil}} {
			b, err := c.Encode(nil, row)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]any, 2)
			if err := c.Decode(b, got); err != nil {
				t.Fatal(err)
			}
			if got[0] != row[0] || got[1] != row[1] {
				t.Errorf("%s: %v read back as %v", rep, row, got)
			}
		}
	}
	if _, err := NewValueCodec(JSON, cols, map[string]string{NullableRepresentation: NullableOptional}); err == nil || !strings.Contains(err.Error(), "can only be enabled with protobuf format") {
		t.Errorf("JSON took a nullable representation: %v", err)
	}
}
