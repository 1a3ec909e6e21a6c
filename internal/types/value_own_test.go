package types

import (
	"testing"
	"unsafe"
)

// dataWord is the data pointer of an interface value.
func dataWord(v any) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]
}

func TestOwnSharesNothing(t *testing.T) {
	slab := []byte("a string in a slab")
	s := unsafe.String(&slab[0], 8)
	n := any(int64(1 << 40))
	b := slab[9:]
	in := []any{s, n, b, StructValue{s, n}, &MapValue{Keys: []any{s}, Values: []any{n}}, TimestampValue(1 << 41), 2.5, int32(1 << 20), nil, true}
	got := Own(in)
	if !Equal(got, in) {
		t.Fatalf("Own(%v) = %v, not equal", in, got)
	}
	out := got.([]any)
	if unsafe.StringData(out[0].(string)) == unsafe.StringData(s) {
		t.Error("the string shares its bytes")
	}
	if dataWord(out[1]) == dataWord(n) {
		t.Error("the BIGINT shares its box")
	}
	if &out[2].([]byte)[0] == &b[0] {
		t.Error("the BYTES share their bytes")
	}
	st := out[3].(StructValue)
	if unsafe.StringData(st[0].(string)) == unsafe.StringData(s) || dataWord(st[1]) == dataWord(n) {
		t.Error("the STRUCT's fields are shared")
	}
	m := out[4].(*MapValue)
	if m == in[4].(*MapValue) || unsafe.StringData(m.Keys[0].(string)) == unsafe.StringData(s) || dataWord(m.Values[0]) == dataWord(n) {
		t.Error("the MAP is shared")
	}
	slab[0] = 'A'
	if out[0].(string) != "a string" {
		t.Errorf("the owned string changed with its slab: %q", out[0])
	}
}
