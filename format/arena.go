package format

import "unsafe"

// Arena boxes decoded values into interfaces from slabs allocated a few
// kilobytes at a time, instead of one heap allocation per BIGINT or two
// per STRING. A value boxed from an arena is immutable like any other and
// lives as long as something references it (which keeps its slab alive);
// an arena never writes a slab slot twice, so one arena serves a task's
// batches one after another. An Arena is not safe for concurrent use; the
// zero Arena is ready.
type Arena struct {
	ints   []int64
	int32s []int32
	floats []float64
	strs   []string
	buf    []byte
}

const (
	// arenaSlots is the number of values of a slab of ints or strings.
	arenaSlots = 512
	// arenaBytes is the size of a slab of string bytes; a longer string
	// gets its own.
	arenaBytes = 16 << 10
)

// eface is the layout of an empty interface.
type eface struct {
	typ, data unsafe.Pointer
}

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	int64Type   = typeWord(int64(0))
	int32Type   = typeWord(int32(0))
	float64Type = typeWord(float64(0))
	stringType  = typeWord("")
)

// boxed returns the interface of type typ whose value is at p, which must
// point at a value of that type that nothing writes again.
func boxed(typ, p unsafe.Pointer) any {
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

// Int64 returns n as an interface.
func (a *Arena) Int64(n int64) any {
	if a == nil || uint64(n) < 256 {
		// Go boxes small values without allocating.
		return n
	}
	if len(a.ints) == cap(a.ints) {
		a.ints = make([]int64, 0, arenaSlots)
	}
	a.ints = append(a.ints, n)
	return boxed(int64Type, unsafe.Pointer(&a.ints[len(a.ints)-1]))
}

// Int32 returns n as an interface.
func (a *Arena) Int32(n int32) any {
	if a == nil || uint32(n) < 256 {
		return n
	}
	if len(a.int32s) == cap(a.int32s) {
		a.int32s = make([]int32, 0, arenaSlots)
	}
	a.int32s = append(a.int32s, n)
	return boxed(int32Type, unsafe.Pointer(&a.int32s[len(a.int32s)-1]))
}

// Float64 returns f as an interface.
func (a *Arena) Float64(f float64) any {
	if a == nil {
		return f
	}
	if len(a.floats) == cap(a.floats) {
		a.floats = make([]float64, 0, arenaSlots)
	}
	a.floats = append(a.floats, f)
	return boxed(float64Type, unsafe.Pointer(&a.floats[len(a.floats)-1]))
}

// String returns a copy of b as a string in an interface.
func (a *Arena) String(b []byte) any {
	if a == nil {
		return string(b)
	}
	if len(b) == 0 {
		return ""
	}
	var s string
	if len(b) > arenaBytes/4 {
		s = string(b)
	} else {
		if cap(a.buf)-len(a.buf) < len(b) {
			a.buf = make([]byte, 0, arenaBytes)
		}
		start := len(a.buf)
		a.buf = append(a.buf, b...)
		s = unsafe.String(&a.buf[start], len(b))
	}
	if len(a.strs) == cap(a.strs) {
		a.strs = make([]string, 0, arenaSlots)
	}
	a.strs = append(a.strs, s)
	return boxed(stringType, unsafe.Pointer(&a.strs[len(a.strs)-1]))
}

// ArenaCodec is a Codec that can box the values it decodes from an Arena.
type ArenaCodec interface {
	Codec
	// DecodeArena is Decode, boxing values from a.
	DecodeArena(a *Arena, b []byte, dst []any) error
}

// DecodeIn decodes b with c into dst, boxing values from a when c can.
func DecodeIn(c Codec, a *Arena, b []byte, dst []any) error {
	if ac, ok := c.(ArenaCodec); ok {
		return ac.DecodeArena(a, b, dst)
	}
	return c.Decode(b, dst)
}

// A Pruner is a Codec that can decode only some of its columns.
type Pruner interface {
	// Prune returns a codec that decodes the columns where read is true
	// and leaves the others null, refusing the same records as the
	// codec does.
	Prune(read []bool) Codec
}

// Prune returns c decoding only the columns where read is true, when c
// can skip columns; else c, which decodes them all. read nil means all.
func Prune(c Codec, read []bool) Codec {
	if p, ok := c.(Pruner); ok && read != nil {
		return p.Prune(read)
	}
	return c
}
