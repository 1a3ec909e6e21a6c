// Package types defines Sluice's SQL types and the Go representation of
// their values.
//
// A value of each type is carried in an `any` as:
//
//	NULL       nil (of any type)
//	BOOLEAN    bool
//	INTEGER    int32
//	BIGINT     int64
//	DOUBLE     float64
//	DECIMAL    Dec (unscaled big integer and scale)
//	STRING     string
//	BYTES      []byte
//	TIMESTAMP  TimestampValue (milliseconds since the Unix epoch, UTC)
//	DATE       DateValue (days since the Unix epoch)
//	TIME       TimeValue (milliseconds since midnight)
//	ARRAY      []any
//	MAP        *MapValue (keys and values in insertion order)
//	STRUCT     StructValue (one value per field of the type, in order)
//
// A row is a []any laid out as its schema's columns.
package types
