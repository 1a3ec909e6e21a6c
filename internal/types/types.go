package types

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Kind is the family of a SQL type.
type Kind uint8

// The SQL type kinds, in ksqlDB's vocabulary.
const (
	Unknown Kind = iota
	Boolean
	Int
	Bigint
	Double
	Decimal
	String
	Bytes
	Timestamp
	Date
	Time
	Array
	Map
	Struct
)

var kindNames = [...]string{
	Unknown:   "UNKNOWN",
	Boolean:   "BOOLEAN",
	Int:       "INTEGER",
	Bigint:    "BIGINT",
	Double:    "DOUBLE",
	Decimal:   "DECIMAL",
	String:    "STRING",
	Bytes:     "BYTES",
	Timestamp: "TIMESTAMP",
	Date:      "DATE",
	Time:      "TIME",
	Array:     "ARRAY",
	Map:       "MAP",
	Struct:    "STRUCT",
}

// String returns the kind's SQL name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText writes the kind's SQL name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind written by MarshalText.
func (k *Kind) UnmarshalText(b []byte) error {
	s := string(b)
	for i, n := range kindNames {
		if n == s {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("types: unknown kind %q", s)
}

// Type is a SQL type. Values of Type are immutable once built; share them
// freely. Primitive types are the package variables below.
type Type struct {
	Kind Kind `json:"kind"`
	// Precision and Scale are set for DECIMAL.
	Precision int `json:"precision,omitempty"`
	Scale     int `json:"scale,omitempty"`
	// Elem is the element type of an ARRAY and the value type of a MAP.
	Elem *Type `json:"elem,omitempty"`
	// Key is the key type of a MAP.
	Key *Type `json:"key,omitempty"`
	// Fields are the fields of a STRUCT, in order.
	Fields []Field `json:"fields,omitempty"`
	// Name is the custom type name this type was declared with, if any
	// (CREATE TYPE); informational only.
	Name string `json:"name,omitempty"`
}

// Field is one field of a STRUCT type.
type Field struct {
	Name string `json:"name"`
	Type *Type  `json:"type"`
}

// The primitive types.
var (
	BooleanType   = &Type{Kind: Boolean}
	IntType       = &Type{Kind: Int}
	BigintType    = &Type{Kind: Bigint}
	DoubleType    = &Type{Kind: Double}
	StringType    = &Type{Kind: String}
	BytesType     = &Type{Kind: Bytes}
	TimestampType = &Type{Kind: Timestamp}
	DateType      = &Type{Kind: Date}
	TimeType      = &Type{Kind: Time}
)

// DecimalOf returns DECIMAL(precision, scale).
func DecimalOf(precision, scale int) *Type {
	return &Type{Kind: Decimal, Precision: precision, Scale: scale}
}

// ArrayOf returns ARRAY<elem>.
func ArrayOf(elem *Type) *Type { return &Type{Kind: Array, Elem: elem} }

// MapOf returns MAP<key, value>.
func MapOf(key, value *Type) *Type { return &Type{Kind: Map, Key: key, Elem: value} }

// StructOf returns STRUCT<fields...>.
func StructOf(fields ...Field) *Type { return &Type{Kind: Struct, Fields: fields} }

// String spells the type as ksqlDB prints it: INTEGER, BIGINT, STRING,
// DECIMAL(10, 2), ARRAY<STRING>, MAP<STRING, INTEGER>, STRUCT<`A` INTEGER>.
func (t *Type) String() string {
	if t == nil {
		return "NULL"
	}
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Type) write(b *strings.Builder) {
	switch t.Kind {
	case Decimal:
		fmt.Fprintf(b, "DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Array:
		b.WriteString("ARRAY<")
		t.Elem.write(b)
		b.WriteString(">")
	case Map:
		b.WriteString("MAP<")
		t.Key.write(b)
		b.WriteString(", ")
		t.Elem.write(b)
		b.WriteString(">")
	case Struct:
		b.WriteString("STRUCT<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + f.Name + "` ")
			f.Type.write(b)
		}
		b.WriteString(">")
	default:
		b.WriteString(t.Kind.String())
	}
}

// Equal reports whether two types are the same SQL type (custom type names
// are ignored).
func (t *Type) Equal(o *Type) bool {
	if t == nil || o == nil {
		return t == o
	}
	if t.Kind != o.Kind || t.Precision != o.Precision || t.Scale != o.Scale {
		return false
	}
	switch t.Kind {
	case Array:
		return t.Elem.Equal(o.Elem)
	case Map:
		return t.Key.Equal(o.Key) && t.Elem.Equal(o.Elem)
	case Struct:
		if len(t.Fields) != len(o.Fields) {
			return false
		}
		for i := range t.Fields {
			if t.Fields[i].Name != o.Fields[i].Name || !t.Fields[i].Type.Equal(o.Fields[i].Type) {
				return false
			}
		}
	}
	return true
}

// IsNumeric reports whether t is INT, BIGINT, DECIMAL or DOUBLE.
func (t *Type) IsNumeric() bool {
	switch t.Kind {
	case Int, Bigint, Decimal, Double:
		return true
	}
	return false
}

// Column is a named, typed column of a schema.
type Column struct {
	Name string `json:"name"`
	Type *Type  `json:"type"`
}

// MarshalJSON is the default struct encoding; declared so Type satisfies
// json.Marshaler consistently with Unmarshal.
func (t *Type) MarshalJSON() ([]byte, error) {
	type plain Type
	return json.Marshal((*plain)(t))
}

// UnmarshalJSON reads a type written by MarshalJSON, reusing the shared
// primitive values.
func (t *Type) UnmarshalJSON(b []byte) error {
	type plain Type
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	return nil
}
