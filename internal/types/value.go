package types

// TimestampValue is a TIMESTAMP value: milliseconds since the Unix epoch, UTC.
type TimestampValue int64

// DateValue is a DATE value: days since the Unix epoch.
type DateValue int32

// TimeValue is a TIME value: milliseconds since midnight.
type TimeValue int32

// MapValue is a MAP value. Keys are unique; order is insertion order.
type MapValue struct {
	Keys   []any
	Values []any
}

// StructValue is a STRUCT value: one value per field of its type, in order.
type StructValue []any
