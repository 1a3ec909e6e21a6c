package types

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// Compare orders two non-null values of the same SQL kind, returning -1, 0
// or +1. Numeric values of different kinds (int32, int64, float64, Dec) are
// compared by value. Booleans order false before true; strings and bytes
// compare bytewise. ARRAY, MAP and STRUCT values have no order; use Equal.
func Compare(a, b any) (int, error) {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0, nil
			case !x:
				return -1, nil
			}
			return 1, nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case TimestampValue:
		if y, ok := b.(TimestampValue); ok {
			return cmpInt(int64(x), int64(y)), nil
		}
	case DateValue:
		if y, ok := b.(DateValue); ok {
			return cmpInt(int64(x), int64(y)), nil
		}
	case TimeValue:
		if y, ok := b.(TimeValue); ok {
			return cmpInt(int64(x), int64(y)), nil
		}
	case int32, int64, float64, Dec:
		return compareNumbers(a, b)
	}
	return 0, fmt.Errorf("cannot compare %s with %s", goKindName(a), goKindName(b))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	// NaN sorts after everything, as Java's Double.compare does.
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	}
	return -1
}

func compareNumbers(a, b any) (int, error) {
	switch x := a.(type) {
	case int32:
		switch y := b.(type) {
		case int32:
			return cmpInt(int64(x), int64(y)), nil
		case int64:
			return cmpInt(int64(x), y), nil
		case float64:
			return cmpFloat(float64(x), y), nil
		case Dec:
			return DecFromInt64(int64(x)).Cmp(y), nil
		}
	case int64:
		switch y := b.(type) {
		case int32:
			return cmpInt(x, int64(y)), nil
		case int64:
			return cmpInt(x, y), nil
		case float64:
			return cmpFloat(float64(x), y), nil
		case Dec:
			return DecFromInt64(x).Cmp(y), nil
		}
	case float64:
		switch y := b.(type) {
		case int32:
			return cmpFloat(x, float64(y)), nil
		case int64:
			return cmpFloat(x, float64(y)), nil
		case float64:
			return cmpFloat(x, y), nil
		case Dec:
			return cmpFloat(x, y.Float64()), nil
		}
	case Dec:
		switch y := b.(type) {
		case int32:
			return x.Cmp(DecFromInt64(int64(y))), nil
		case int64:
			return x.Cmp(DecFromInt64(y)), nil
		case float64:
			return cmpFloat(x.Float64(), y), nil
		case Dec:
			return x.Cmp(y), nil
		}
	}
	return 0, fmt.Errorf("cannot compare %s with %s", goKindName(a), goKindName(b))
}

// Equal reports whether two values are equal as ksqlDB's = compares them:
// numbers by value across numeric kinds (1 = 1.0), ARRAY element by element,
// MAP by its set of entries, STRUCT field by field. Two nils are equal here;
// SQL comparison with null is the caller's concern.
func Equal(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case StructValue:
		y, ok := b.(StructValue)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *MapValue:
		y, ok := b.(*MapValue)
		if !ok {
			return false
		}
		if x == nil || y == nil {
			return x == y
		}
		if len(x.Keys) != len(y.Keys) {
			return false
		}
		for i, k := range x.Keys {
			j := y.Index(k)
			if j < 0 || !Equal(x.Values[i], y.Values[j]) {
				return false
			}
		}
		return true
	}
	c, err := Compare(a, b)
	return err == nil && c == 0
}

// Index returns the position of key k in m, or -1.
func (m *MapValue) Index(k any) int {
	if m == nil {
		return -1
	}
	for i, mk := range m.Keys {
		if Equal(mk, k) {
			return i
		}
	}
	return -1
}

// Get returns the value for key k and whether it is present.
func (m *MapValue) Get(k any) (any, bool) {
	i := m.Index(k)
	if i < 0 {
		return nil, false
	}
	return m.Values[i], true
}

func goKindName(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case bool:
		return "BOOLEAN"
	case int32:
		return "INTEGER"
	case int64:
		return "BIGINT"
	case float64:
		return "DOUBLE"
	case Dec:
		return "DECIMAL"
	case string:
		return "STRING"
	case []byte:
		return "BYTES"
	case TimestampValue:
		return "TIMESTAMP"
	case DateValue:
		return "DATE"
	case TimeValue:
		return "TIME"
	case []any:
		return "ARRAY"
	case *MapValue:
		return "MAP"
	case StructValue:
		return "STRUCT"
	}
	return fmt.Sprintf("%T", v)
}
