package types

import (
	"bytes"
	"strings"
)

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

// Own returns a value equal to v that shares no memory with what v was
// decoded from. Decoders box numbers and strings out of slabs shared by a
// whole batch (format.Arena) and may slice BYTES out of a record: a value
// that state keeps beyond the batch (an accumulator's MIN, LATEST or
// TOPK values) would keep all of that alive. Own copies strings and bytes
// and boxes numbers anew (Go boxes small integers without allocating);
// arrays, structs and maps are copied with their elements owned. A DECIMAL
// is immutable and already its own.
func Own(v any) any {
	switch x := v.(type) {
	case string:
		return strings.Clone(x)
	case int64:
		return x
	case int32:
		return x
	case float64:
		return x
	case TimestampValue:
		return x
	case DateValue:
		return x
	case TimeValue:
		return x
	case []byte:
		return bytes.Clone(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Own(e)
		}
		return out
	case StructValue:
		if x == nil {
			return x
		}
		out := make(StructValue, len(x))
		for i, e := range x {
			out[i] = Own(e)
		}
		return out
	case *MapValue:
		if x == nil {
			return x
		}
		out := &MapValue{Keys: make([]any, len(x.Keys)), Values: make([]any, len(x.Values))}
		for i, e := range x.Keys {
			out.Keys[i] = Own(e)
		}
		for i, e := range x.Values {
			out.Values[i] = Own(e)
		}
		return out
	}
	return v
}
