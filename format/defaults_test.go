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
// its package, as ksqlDB registers it.
func TestProtobufSchemaNamed(t *testing.T) {
	cols := []types.Column{{Name: "V", Type: types.StructOf(types.Field{Name: "V1", Type: types.StringType})}}
	got, err := ProtobufSchemaNamed(cols, false, "io.test.value")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package io.test;", "message value {", "message ConnectDefault2 {"} {
		if !strings.Contains(got, want) {
			t.Errorf("schema lacks %q:\n%s", want, got)
		}
	}
	md, err := ProtobufColumns(got, nil, "io.test.value")
	if err != nil || len(md) != 1 || md[0].Name != "V" {
		t.Errorf("columns of the named message: %v, %v", md, err)
	}
}
