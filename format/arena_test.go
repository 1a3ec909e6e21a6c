package format

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

// TestArena boxes more values than a slab holds, collects garbage, and
// finds every value as it was boxed.
func TestArena(t *testing.T) {
	var a Arena
	var got []any
	for i := range 3 * arenaSlots {
		got = append(got, a.Int64(int64(i)*1_000_003-7), a.String([]byte(fmt.Sprint("s", i))))
	}
	long := strings.Repeat("x", arenaBytes)
	got = append(got, a.String([]byte(long)), a.String(nil), a.Int64(5))
	runtime.GC()
	for i := range 3 * arenaSlots {
		if v, ok := got[2*i].(int64); !ok || v != int64(i)*1_000_003-7 {
			t.Fatalf("int %d boxed as %#v", i, got[2*i])
		}
		if v, ok := got[2*i+1].(string); !ok || v != fmt.Sprint("s", i) {
			t.Fatalf("string %d boxed as %#v", i, got[2*i+1])
		}
	}
	n := len(got)
	if got[n-3] != long || got[n-2] != "" || got[n-1] != int64(5) {
		t.Fatalf("long, empty or small value boxed as %v, %#v, %#v", len(got[n-3].(string)), got[n-2], got[n-1])
	}
	var ints, floats []any
	for i := range 3 * arenaSlots {
		ints = append(ints, a.Int32(int32(i)*1_003-7))
		floats = append(floats, a.Float64(float64(i)/4))
	}
	runtime.GC()
	for i := range 3 * arenaSlots {
		if v, ok := ints[i].(int32); !ok || v != int32(i)*1_003-7 {
			t.Fatalf("int32 %d boxed as %#v", i, ints[i])
		}
		if v, ok := floats[i].(float64); !ok || v != float64(i)/4 {
			t.Fatalf("float64 %d boxed as %#v", i, floats[i])
		}
	}
	var none *Arena
	if none.Int64(1000) != int64(1000) || none.String([]byte("x")) != "x" || none.Int32(1000) != int32(1000) || none.Float64(0.5) != 0.5 {
		t.Fatal("a nil arena boxes differently")
	}
}

// TestJSONFieldCase reads members whose names differ from the columns'
// in case, and ignores others.
func TestJSONFieldCase(t *testing.T) {
	cols := []types.Column{{Name: "ID", Type: types.BigintType}, {Name: "NAME", Type: types.StringType}}
	c, err := NewValueCodec("JSON", cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]any, len(cols))
	if err := c.Decode([]byte(`{"Id":3,"NAME":"a\"b","name2":1,"other":"x"}`), row); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(row) != `[3 a"b]` {
		t.Fatalf("decoded %v", row)
	}
}
