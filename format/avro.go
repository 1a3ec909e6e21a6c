package format

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/registry"
)

// avroRead decodes one Avro value of a writer schema into a SQL value of
// the reader's type (schema resolution happens when it is compiled).
type avroRead func(r *avroReader) (any, error)

// avroWrite appends the Avro encoding of a SQL value.
type avroWrite func(dst []byte, v any) ([]byte, error)

// avroCodec is the AVRO codec: the Confluent header, then Avro binary.
// Decoding resolves the writer schema (looked up by the header's id, once
// per id) against the codec's columns: fields match columns by name (exact
// first, then ignoring case), missing fields read as null, and numbers are
// promoted as Avro's resolution rules allow.
type avroCodec struct {
	cols      []types.Column
	unwrapped bool
	sr        SR
	subject   string
	schemaID  int
	fullName  string
	plans     schemaCache[*avroPlan]

	encOnce sync.Once
	encErr  error
	encID   int
	enc     func(dst []byte, row []any) ([]byte, error)
}

type avroPlan struct {
	read func(r *avroReader, dst []any) error
}

func newAvroCodec(cols []types.Column, unwrapped bool, sr SR, subject string, schemaID int, fullName string) *avroCodec {
	c := &avroCodec{cols: cols, unwrapped: unwrapped && len(cols) == 1, sr: sr, subject: subject, schemaID: schemaID, fullName: fullName}
	c.plans.reg = sr.Registry
	c.plans.compile = func(s registry.Schema) (*avroPlan, error) {
		if t := strings.ToUpper(s.Type); t != "" && t != registry.Avro {
			return nil, fmt.Errorf("schema id %d is a %s schema, not AVRO", s.ID, t)
		}
		w, err := parseRegistered(sr.Registry, s)
		if err != nil {
			return nil, fmt.Errorf("schema id %d: %w", s.ID, err)
		}
		p, err := c.planRead(w)
		if err != nil {
			return nil, fmt.Errorf("schema id %d does not match the columns: %w", s.ID, err)
		}
		return p, nil
	}
	return c
}

// parseRegistered parses a registered Avro schema with its references.
func parseRegistered(reg registry.Client, s registry.Schema) (*avroSchema, error) {
	var refs []string
	for _, ref := range s.References {
		rs, err := reg.Version(context.Background(), ref.Subject, ref.Version)
		if err != nil {
			return nil, fmt.Errorf("reference %s: %w", ref.Name, err)
		}
		refs = append(refs, rs.Schema)
	}
	return parseAvroSchema(s.Schema, refs)
}

func columnIndex(cols []types.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	for i, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

func fieldIndex(fs []types.Field, name string) int {
	for i, f := range fs {
		if f.Name == name {
			return i
		}
	}
	for i, f := range fs {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// wrapped reports whether the writer schema w is read as a record of the
// columns rather than as the single column's value.
func (c *avroCodec) wrapped(w *avroSchema) bool {
	rec := w.nonNull().typ == "record"
	if !c.unwrapped {
		return rec || len(c.cols) != 1
	}
	return rec && c.cols[0].Type.Kind != types.Struct
}

func (c *avroCodec) planRead(w *avroSchema) (*avroPlan, error) {
	if !c.wrapped(w) {
		rd, err := compileAvroRead(w, c.cols[0].Type)
		if err != nil {
			return nil, err
		}
		return &avroPlan{read: func(r *avroReader, dst []any) error {
			v, err := rd(r)
			dst[0] = v
			return err
		}}, nil
	}
	nullIdx, rec := -1, w
	if w.typ == "union" {
		rec = w.nonNull()
		if rec == w {
			return nil, errors.New("a union of several records cannot be read as columns")
		}
		for i, b := range w.branches {
			if b.typ == "null" {
				nullIdx = i
			}
		}
	}
	if rec.typ != "record" {
		return nil, fmt.Errorf("Avro %s cannot be read as %d columns", rec.typ, len(c.cols))
	}
	slots := make([]int, len(rec.fields))
	reads := make([]avroRead, len(rec.fields))
	for i, f := range rec.fields {
		slots[i] = columnIndex(c.cols, f.name)
		var t *types.Type
		if slots[i] >= 0 {
			t = c.cols[slots[i]].Type
		}
		rd, err := compileAvroRead(f.typ, t)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
		reads[i] = rd
	}
	isUnion := w.typ == "union"
	return &avroPlan{read: func(r *avroReader, dst []any) error {
		if isUnion {
			idx, err := r.long()
			if err != nil {
				return err
			}
			if int(idx) == nullIdx {
				return nil
			}
		}
		for i, rd := range reads {
			v, err := rd(r)
			if err != nil {
				return fmt.Errorf("field %s: %w", rec.fields[i].name, err)
			}
			if slots[i] >= 0 {
				dst[slots[i]] = v
			}
		}
		return nil
	}}, nil
}

// Decode implements Codec.
func (c *avroCodec) Decode(b []byte, dst []any) error {
	for i := range dst {
		dst[i] = nil
	}
	if b == nil {
		return nil
	}
	id, body, err := splitConfluent(b)
	if err != nil {
		return err
	}
	p, err := c.plans.get(id)
	if err != nil {
		return err
	}
	r := avroReader{b: body}
	if err := p.read(&r, dst); err != nil {
		return fmt.Errorf("cannot decode Avro with schema id %d: %w", id, err)
	}
	return nil
}

// Encode implements Codec.
func (c *avroCodec) Encode(dst []byte, row []any) ([]byte, error) {
	c.encOnce.Do(c.initEncoder)
	if c.encErr != nil {
		return nil, c.encErr
	}
	if c.unwrapped && row[0] == nil {
		return nil, nil
	}
	return c.enc(appendConfluentHeader(dst, c.encID), row)
}

// WriterSchema returns the Avro schema the codec registers for its columns.
func (c *avroCodec) generated() string { return AvroSchema(c.cols, c.unwrapped, c.fullName) }

func (c *avroCodec) initEncoder() {
	generate := func() (string, error) { return c.generated(), nil }
	c.encErr = writerSchema(c.sr.Registry, c.subject, c.schemaID, registry.Avro, generate, func(s registry.Schema, from schemaSource) error {
		w, err := parseRegistered(c.sr.Registry, s)
		if err == nil {
			// A schema named by id may leave columns out; one the codec
			// picks must hold every column.
			c.enc, err = c.planWrite(w, from != fromID)
		}
		switch {
		case err == nil:
			c.encID = s.ID
		case from == fromID:
			err = fmt.Errorf("schema id %d does not match the columns %s", c.schemaID, columnList(c.cols, ""))
		case from == fromGenerated:
			err = fmt.Errorf("cannot encode columns %s in Avro: %w", columnList(c.cols, ""), err)
		}
		return err
	})
}

// planWrite compiles the encoder of rows in writer schema w. With all,
// every column must have a field.
func (c *avroCodec) planWrite(w *avroSchema, all bool) (func([]byte, []any) ([]byte, error), error) {
	if !c.wrapped(w) {
		wr, err := compileAvroWrite(w, c.cols[0].Type)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, row []any) ([]byte, error) { return wr(dst, row[0]) }, nil
	}
	rec, unionIdx := w, -1
	if w.typ == "union" {
		rec = w.nonNull()
		for i, b := range w.branches {
			if b == rec {
				unionIdx = i
			}
		}
	}
	if rec.typ != "record" {
		return nil, fmt.Errorf("Avro %s cannot hold %d columns", rec.typ, len(c.cols))
	}
	slots := make([]int, len(rec.fields))
	writes := make([]avroWrite, len(rec.fields))
	used := 0
	for i, f := range rec.fields {
		slots[i] = columnIndex(c.cols, f.name)
		var t *types.Type
		if slots[i] >= 0 {
			t = c.cols[slots[i]].Type
			used++
		}
		if t == nil && f.hasDef {
			// A field no column fills takes the schema's default.
			f := f
			writes[i] = func(dst []byte, _ any) ([]byte, error) { return appendAvroDefault(dst, f.typ, f.def) }
			continue
		}
		wr, err := compileAvroWrite(f.typ, t)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
		writes[i] = wr
	}
	if all && used < len(c.cols) {
		return nil, errors.New("the schema lacks columns")
	}
	return func(dst []byte, row []any) ([]byte, error) {
		if unionIdx >= 0 {
			dst = appendAvroLong(dst, int64(unionIdx))
		}
		var err error
		for i, wr := range writes {
			var v any
			if slots[i] >= 0 {
				v = row[slots[i]]
			}
			if dst, err = wr(dst, v); err != nil {
				return nil, fmt.Errorf("field %s: %w", rec.fields[i].name, err)
			}
		}
		return dst, nil
	}, nil
}

func mismatch(w *avroSchema, t *types.Type) error {
	return fmt.Errorf("Avro %s cannot be read as %s", w.typ, t)
}

// compileAvroRead returns the reader of values of writer schema w as SQL
// type t; a nil t skips the value.
func compileAvroRead(w *avroSchema, t *types.Type) (avroRead, error) {
	if t != nil && t.Kind == types.Struct && w.unionMembers() != nil {
		return compileAvroUnionRead(w, t)
	}
	switch w.typ {
	case "union":
		reads := make([]avroRead, len(w.branches))
		for i, b := range w.branches {
			rd, err := compileAvroRead(b, t)
			if err != nil {
				// Only branches the data actually uses fail.
				e := err
				rd = func(*avroReader) (any, error) { return nil, e }
			}
			reads[i] = rd
		}
		return unionReader(reads), nil
	case "null":
		return func(*avroReader) (any, error) { return nil, nil }, nil
	}
	if t == nil {
		return compileAvroSkip(w)
	}
	switch w.typ {
	case "boolean":
		if t.Kind != types.Boolean {
			return nil, mismatch(w, t)
		}
		return func(r *avroReader) (any, error) {
			b, err := r.fixed(1)
			if err != nil {
				return nil, err
			}
			return b[0] != 0, nil
		}, nil
	case "int", "long":
		conv, err := intConv(w, t)
		if err != nil {
			return nil, err
		}
		return func(r *avroReader) (any, error) {
			v, err := r.long()
			if err != nil {
				return nil, err
			}
			if w.typ == "int" && (v < math.MinInt32 || v > math.MaxInt32) {
				return nil, fmt.Errorf("Avro int %d overflows 32 bits", v)
			}
			return conv(v)
		}, nil
	case "float", "double":
		if t.Kind != types.Double && t.Kind != types.Decimal {
			return nil, mismatch(w, t)
		}
		return func(r *avroReader) (any, error) {
			var f float64
			var err error
			if w.typ == "float" {
				f, err = r.float()
			} else {
				f, err = r.double()
			}
			if err != nil {
				return nil, err
			}
			if t.Kind == types.Decimal {
				d, err := types.DecFromFloat64(f)
				if err != nil {
					return nil, err
				}
				return d.Rescale(t.Scale), nil
			}
			return f, nil
		}, nil
	case "string", "enum":
		if t.Kind != types.String && !(t.Kind == types.Bytes && w.typ == "string") {
			return nil, mismatch(w, t)
		}
		if w.typ == "enum" {
			return func(r *avroReader) (any, error) {
				i, err := r.long()
				if err != nil {
					return nil, err
				}
				if i < 0 || int(i) >= len(w.symbols) {
					return nil, fmt.Errorf("Avro enum index %d out of range", i)
				}
				return w.symbols[i], nil
			}, nil
		}
		if t.Kind == types.Bytes {
			return func(r *avroReader) (any, error) {
				b, err := r.bytes()
				return append([]byte(nil), b...), err
			}, nil
		}
		return func(r *avroReader) (any, error) { return r.str() }, nil
	case "bytes", "fixed":
		read := func(r *avroReader) ([]byte, error) {
			if w.typ == "fixed" {
				return r.fixed(w.size)
			}
			return r.bytes()
		}
		switch {
		case t.Kind == types.Decimal && w.logical == "decimal":
			return func(r *avroReader) (any, error) {
				b, err := read(r)
				if err != nil {
					return nil, err
				}
				d := decimalFromBytes(b, w.scale)
				if w.scale != t.Scale {
					d = d.Rescale(t.Scale)
				}
				return d, nil
			}, nil
		case t.Kind == types.Bytes:
			return func(r *avroReader) (any, error) {
				b, err := read(r)
				return append([]byte(nil), b...), err
			}, nil
		case t.Kind == types.String && w.typ == "bytes" && w.logical == "":
			return func(r *avroReader) (any, error) {
				b, err := read(r)
				return string(b), err
			}, nil
		}
		return nil, mismatch(w, t)
	case "array":
		if t.Kind == types.Map {
			e := w.items.nonNull()
			if e.typ != "record" || len(e.fields) != 2 {
				return nil, mismatch(w, t)
			}
			kr, err := compileAvroRead(e.fields[0].typ, t.Key)
			if err != nil {
				return nil, err
			}
			vr, err := compileAvroRead(e.fields[1].typ, t.Elem)
			if err != nil {
				return nil, err
			}
			var entry avroRead = func(r *avroReader) (any, error) {
				k, err := kr(r)
				if err != nil {
					return nil, err
				}
				v, err := vr(r)
				return [2]any{k, v}, err
			}
			if w.items.typ == "union" {
				inner := entry
				entry = func(r *avroReader) (any, error) {
					if _, err := r.long(); err != nil {
						return nil, err
					}
					return inner(r)
				}
			}
			return func(r *avroReader) (any, error) {
				m := &types.MapValue{}
				err := r.blocks(func() error {
					kv, err := entry(r)
					if err != nil {
						return err
					}
					p := kv.([2]any)
					m.Keys = append(m.Keys, p[0])
					m.Values = append(m.Values, p[1])
					return nil
				})
				return m, err
			}, nil
		}
		if t.Kind != types.Array {
			return nil, mismatch(w, t)
		}
		er, err := compileAvroRead(w.items, t.Elem)
		if err != nil {
			return nil, err
		}
		return func(r *avroReader) (any, error) {
			out := []any{}
			err := r.blocks(func() error {
				v, err := er(r)
				out = append(out, v)
				return err
			})
			return out, err
		}, nil
	case "map":
		if t.Kind != types.Map || t.Key == nil || t.Key.Kind != types.String {
			return nil, mismatch(w, t)
		}
		vr, err := compileAvroRead(w.values, t.Elem)
		if err != nil {
			return nil, err
		}
		return func(r *avroReader) (any, error) {
			m := &types.MapValue{}
			err := r.blocks(func() error {
				k, err := r.str()
				if err != nil {
					return err
				}
				v, err := vr(r)
				if err != nil {
					return err
				}
				m.Keys = append(m.Keys, k)
				m.Values = append(m.Values, v)
				return nil
			})
			return m, err
		}, nil
	case "record":
		if t.Kind != types.Struct {
			return nil, mismatch(w, t)
		}
		slots := make([]int, len(w.fields))
		reads := make([]avroRead, len(w.fields))
		for i, f := range w.fields {
			slots[i] = fieldIndex(t.Fields, f.name)
			var ft *types.Type
			if slots[i] >= 0 {
				ft = t.Fields[slots[i]].Type
			}
			rd, err := compileAvroRead(f.typ, ft)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.name, err)
			}
			reads[i] = rd
		}
		n := len(t.Fields)
		return func(r *avroReader) (any, error) {
			out := make(types.StructValue, n)
			for i, rd := range reads {
				v, err := rd(r)
				if err != nil {
					return nil, err
				}
				if slots[i] >= 0 {
					out[slots[i]] = v
				}
			}
			return out, nil
		}, nil
	}
	return nil, mismatch(w, t)
}

func intConv(w *avroSchema, t *types.Type) (func(int64) (any, error), error) {
	micros := w.logical == "timestamp-micros" || w.logical == "time-micros" || w.logical == "local-timestamp-micros"
	switch t.Kind {
	case types.Int:
		return func(v int64) (any, error) {
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("value %d does not fit INTEGER", v)
			}
			return int32(v), nil
		}, nil
	case types.Bigint:
		return func(v int64) (any, error) { return v, nil }, nil
	case types.Double:
		return func(v int64) (any, error) { return float64(v), nil }, nil
	case types.Decimal:
		return func(v int64) (any, error) { return types.DecFromInt64(v).Rescale(t.Scale), nil }, nil
	case types.Timestamp:
		return func(v int64) (any, error) {
			if micros {
				v /= 1000
			}
			return types.TimestampValue(v), nil
		}, nil
	case types.Date:
		return func(v int64) (any, error) { return types.DateValue(v), nil }, nil
	case types.Time:
		return func(v int64) (any, error) {
			if micros {
				v /= 1000
			}
			return types.TimeValue(v), nil
		}, nil
	}
	return nil, mismatch(w, t)
}

func compileAvroSkip(w *avroSchema) (avroRead, error) {
	var skip func(r *avroReader) error
	switch w.typ {
	case "null":
		skip = func(*avroReader) error { return nil }
	case "boolean":
		skip = func(r *avroReader) error { _, err := r.fixed(1); return err }
	case "int", "long", "enum":
		skip = func(r *avroReader) error { _, err := r.long(); return err }
	case "float":
		skip = func(r *avroReader) error { _, err := r.fixed(4); return err }
	case "double":
		skip = func(r *avroReader) error { _, err := r.fixed(8); return err }
	case "bytes", "string":
		skip = func(r *avroReader) error { _, err := r.bytes(); return err }
	case "fixed":
		skip = func(r *avroReader) error { _, err := r.fixed(w.size); return err }
	default:
		// Records, arrays, maps and unions: read into a throwaway value
		// of the writer's own SQL type.
		t, err := w.sqlType()
		if err != nil {
			return nil, err
		}
		rd, err := compileAvroRead(w, t)
		if err != nil {
			return nil, err
		}
		return func(r *avroReader) (any, error) {
			_, err := rd(r)
			return nil, err
		}, nil
	}
	return func(r *avroReader) (any, error) { return nil, skip(r) }, nil
}

// unionSlot returns the field of STRUCT t a general union's branch b
// reads as, by name ignoring case, or -1.
func unionSlot(b *avroSchema, t *types.Type) int {
	name := unionMemberName(b)
	for i, f := range t.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// compileAvroUnionRead reads a general union as STRUCT t: the field of
// the branch written holds its value, the others are null.
func compileAvroUnionRead(w *avroSchema, t *types.Type) (avroRead, error) {
	reads := make([]avroRead, len(w.branches))
	for i, b := range w.branches {
		if b.typ == "null" {
			reads[i] = func(*avroReader) (any, error) { return nil, nil }
			continue
		}
		slot := unionSlot(b, t)
		var rd avroRead
		var err error
		if slot < 0 {
			err = fmt.Errorf("Avro union branch %s has no field in %s", unionMemberName(b), t)
		} else {
			rd, err = compileAvroRead(b, t.Fields[slot].Type)
		}
		if err != nil {
			e := err // only branches the data uses fail
			reads[i] = func(*avroReader) (any, error) { return nil, e }
			continue
		}
		reads[i] = func(r *avroReader) (any, error) {
			v, err := rd(r)
			if err != nil {
				return nil, err
			}
			sv := make(types.StructValue, len(t.Fields))
			sv[slot] = v
			return sv, nil
		}
	}
	return unionReader(reads), nil
}

// compileAvroUnionWrite writes STRUCT t to a general union: the branch
// of its first non-null field, or null.
func compileAvroUnionWrite(w *avroSchema, t *types.Type) (avroWrite, error) {
	nullIdx := -1
	branch := make([]int, len(t.Fields))
	writes := make([]avroWrite, len(t.Fields))
	for i := range branch {
		branch[i] = -1
	}
	for i, b := range w.branches {
		if b.typ == "null" {
			if nullIdx < 0 {
				nullIdx = i
			}
			continue
		}
		if slot := unionSlot(b, t); slot >= 0 && branch[slot] < 0 {
			wr, err := compileAvroWrite(b, t.Fields[slot].Type)
			if err != nil {
				return nil, err
			}
			branch[slot], writes[slot] = i, wr
		}
	}
	return func(dst []byte, v any) ([]byte, error) {
		if sv, ok := v.(types.StructValue); ok {
			for i, fv := range sv {
				if fv != nil && i < len(branch) && branch[i] >= 0 {
					return writes[i](appendAvroLong(dst, int64(branch[i])), fv)
				}
			}
		} else if v != nil {
			return nil, fmt.Errorf("cannot encode %T as an Avro union", v)
		}
		if nullIdx < 0 {
			return nil, errors.New("null value for a union without a null branch in the Avro schema")
		}
		return appendAvroLong(dst, int64(nullIdx)), nil
	}, nil
}

// compileAvroWrite returns the writer of SQL values of type t (nil: the
// field has no column and is written as null) in writer schema w.
func compileAvroWrite(w *avroSchema, t *types.Type) (avroWrite, error) {
	if t != nil && t.Kind == types.Struct && w.unionMembers() != nil {
		return compileAvroUnionWrite(w, t)
	}
	if w.typ == "union" {
		nullIdx, valIdx := -1, -1
		var val avroWrite
		for i, b := range w.branches {
			if b.typ == "null" {
				if nullIdx < 0 {
					nullIdx = i
				}
				continue
			}
			if val != nil || t == nil {
				continue
			}
			if wr, err := compileAvroWrite(b, t); err == nil {
				val, valIdx = wr, i
			}
		}
		if t != nil && val == nil {
			return nil, fmt.Errorf("no branch of the Avro union holds %s", t)
		}
		return func(dst []byte, v any) ([]byte, error) {
			if v == nil {
				if nullIdx < 0 {
					return nil, errors.New("null value for a field that is not optional in the Avro schema")
				}
				return appendAvroLong(dst, int64(nullIdx)), nil
			}
			return val(appendAvroLong(dst, int64(valIdx)), v)
		}, nil
	}
	if w.typ == "null" {
		return func(dst []byte, v any) ([]byte, error) { return dst, nil }, nil
	}
	if t == nil {
		return func([]byte, any) ([]byte, error) {
			return nil, errors.New("the Avro schema has a required field that no column fills")
		}, nil
	}
	nullErr := func() error { return errors.New("null value for a field that is not optional in the Avro schema") }
	switch w.typ {
	case "boolean":
		if t.Kind != types.Boolean {
			return nil, mismatch(w, t)
		}
		return func(dst []byte, v any) ([]byte, error) {
			b, ok := v.(bool)
			if !ok {
				return nil, nullErr()
			}
			if b {
				return append(dst, 1), nil
			}
			return append(dst, 0), nil
		}, nil
	case "int", "long":
		switch t.Kind {
		case types.Int, types.Bigint, types.Date, types.Time, types.Timestamp:
		default:
			return nil, mismatch(w, t)
		}
		micros := w.logical == "timestamp-micros" || w.logical == "time-micros"
		return func(dst []byte, v any) ([]byte, error) {
			var n int64
			switch x := v.(type) {
			case int32:
				n = int64(x)
			case int64:
				n = x
			case types.DateValue:
				n = int64(x)
			case types.TimeValue:
				n = int64(x)
			case types.TimestampValue:
				n = int64(x)
			default:
				return nil, nullErr()
			}
			if micros {
				n *= 1000
			}
			if w.typ == "int" && (n < math.MinInt32 || n > math.MaxInt32) {
				return nil, fmt.Errorf("value %d does not fit an Avro int", n)
			}
			return appendAvroLong(dst, n), nil
		}, nil
	case "float", "double":
		if !t.IsNumeric() {
			return nil, mismatch(w, t)
		}
		return func(dst []byte, v any) ([]byte, error) {
			var f float64
			switch x := v.(type) {
			case float64:
				f = x
			case int32:
				f = float64(x)
			case int64:
				f = float64(x)
			case types.Dec:
				f = x.Float64()
			default:
				return nil, nullErr()
			}
			if w.typ == "float" {
				return appendLE32(dst, math.Float32bits(float32(f))), nil
			}
			return appendLE64(dst, math.Float64bits(f)), nil
		}, nil
	case "string", "enum":
		if t.Kind != types.String {
			return nil, mismatch(w, t)
		}
		return func(dst []byte, v any) ([]byte, error) {
			s, ok := v.(string)
			if !ok {
				return nil, nullErr()
			}
			if w.typ == "enum" {
				for i, sym := range w.symbols {
					if sym == s {
						return appendAvroLong(dst, int64(i)), nil
					}
				}
				return nil, fmt.Errorf("%q is not a symbol of Avro enum %s", s, w.name)
			}
			return appendAvroString(dst, s), nil
		}, nil
	case "bytes", "fixed":
		switch {
		case t.Kind == types.Decimal && w.logical == "decimal":
			return func(dst []byte, v any) ([]byte, error) {
				d, ok := v.(types.Dec)
				if !ok {
					return nil, nullErr()
				}
				b := decimalBytes(d, w.scale)
				if w.typ == "fixed" {
					if len(b) > w.size {
						return nil, fmt.Errorf("decimal %s does not fit fixed(%d)", d, w.size)
					}
					pad := byte(0)
					if len(b) > 0 && b[0]&0x80 != 0 {
						pad = 0xff
					}
					for i := len(b); i < w.size; i++ {
						dst = append(dst, pad)
					}
					return append(dst, b...), nil
				}
				return appendAvroBytes(dst, b), nil
			}, nil
		case t.Kind == types.Bytes:
			return func(dst []byte, v any) ([]byte, error) {
				b, ok := v.([]byte)
				if !ok {
					return nil, nullErr()
				}
				if w.typ == "fixed" {
					if len(b) != w.size {
						return nil, fmt.Errorf("%d bytes do not fit fixed(%d)", len(b), w.size)
					}
					return append(dst, b...), nil
				}
				return appendAvroBytes(dst, b), nil
			}, nil
		}
		return nil, mismatch(w, t)
	case "array":
		if t.Kind == types.Map {
			e := w.items.nonNull()
			if e.typ != "record" || len(e.fields) != 2 {
				return nil, mismatch(w, t)
			}
			kw, err := compileAvroWrite(e.fields[0].typ, t.Key)
			if err != nil {
				return nil, err
			}
			vw, err := compileAvroWrite(e.fields[1].typ, t.Elem)
			if err != nil {
				return nil, err
			}
			entryIdx := -1
			if w.items.typ == "union" {
				for i, b := range w.items.branches {
					if b == e {
						entryIdx = i
					}
				}
			}
			return func(dst []byte, v any) ([]byte, error) {
				m, ok := v.(*types.MapValue)
				if !ok {
					return nil, nullErr()
				}
				var err error
				if len(m.Keys) > 0 {
					dst = appendAvroLong(dst, int64(len(m.Keys)))
					for i := range m.Keys {
						if entryIdx >= 0 {
							dst = appendAvroLong(dst, int64(entryIdx))
						}
						if dst, err = kw(dst, m.Keys[i]); err != nil {
							return nil, err
						}
						if dst, err = vw(dst, m.Values[i]); err != nil {
							return nil, err
						}
					}
				}
				return append(dst, 0), nil
			}, nil
		}
		if t.Kind != types.Array {
			return nil, mismatch(w, t)
		}
		ew, err := compileAvroWrite(w.items, t.Elem)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, v any) ([]byte, error) {
			a, ok := v.([]any)
			if !ok {
				return nil, nullErr()
			}
			var err error
			if len(a) > 0 {
				dst = appendAvroLong(dst, int64(len(a)))
				for _, x := range a {
					if dst, err = ew(dst, x); err != nil {
						return nil, err
					}
				}
			}
			return append(dst, 0), nil
		}, nil
	case "map":
		if t.Kind != types.Map || t.Key == nil || t.Key.Kind != types.String {
			return nil, mismatch(w, t)
		}
		vw, err := compileAvroWrite(w.values, t.Elem)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, v any) ([]byte, error) {
			m, ok := v.(*types.MapValue)
			if !ok {
				return nil, nullErr()
			}
			var err error
			if len(m.Keys) > 0 {
				dst = appendAvroLong(dst, int64(len(m.Keys)))
				for i, k := range m.Keys {
					s, _ := k.(string)
					dst = appendAvroString(dst, s)
					if dst, err = vw(dst, m.Values[i]); err != nil {
						return nil, err
					}
				}
			}
			return append(dst, 0), nil
		}, nil
	case "record":
		if t.Kind != types.Struct {
			return nil, mismatch(w, t)
		}
		slots := make([]int, len(w.fields))
		writes := make([]avroWrite, len(w.fields))
		for i, f := range w.fields {
			slots[i] = fieldIndex(t.Fields, f.name)
			var ft *types.Type
			if slots[i] >= 0 {
				ft = t.Fields[slots[i]].Type
			}
			wr, err := compileAvroWrite(f.typ, ft)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.name, err)
			}
			if f.hasDef {
				// A null (or no column) takes the field's default, as
				// Avro's writers fill a field the datum lacks.
				def, err := appendAvroDefault(nil, f.typ, f.def)
				if err != nil {
					return nil, fmt.Errorf("field %s: default: %w", f.name, err)
				}
				inner := wr
				wr = func(dst []byte, v any) ([]byte, error) {
					if v == nil {
						return append(dst, def...), nil
					}
					return inner(dst, v)
				}
			}
			writes[i] = wr
		}
		return func(dst []byte, v any) ([]byte, error) {
			s, ok := v.(types.StructValue)
			if !ok {
				return nil, nullErr()
			}
			var err error
			for i, wr := range writes {
				var x any
				if slots[i] >= 0 && slots[i] < len(s) {
					x = s[slots[i]]
				}
				if dst, err = wr(dst, x); err != nil {
					return nil, err
				}
			}
			return dst, nil
		}, nil
	}
	return nil, mismatch(w, t)
}

func appendLE32(dst []byte, u uint32) []byte {
	return append(dst, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
}

func appendLE64(dst []byte, u uint64) []byte {
	return appendLE32(appendLE32(dst, uint32(u)), uint32(u>>32))
}

// appendAvroDefault appends the encoding in schema w of def, a field's
// default as its JSON gives it (Avro 1.11, "Complex Types": a union's
// default is of its first branch, bytes and fixed are strings of code
// points 0-255).
func appendAvroDefault(dst []byte, w *avroSchema, def any) ([]byte, error) {
	bad := func() error { return fmt.Errorf("default %v does not fit Avro type %s", def, w.typ) }
	switch w.typ {
	case "null":
		if def != nil {
			return nil, bad()
		}
		return dst, nil
	case "boolean":
		b, ok := def.(bool)
		if !ok {
			return nil, bad()
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case "int", "long":
		f, ok := def.(float64)
		if !ok || f != math.Trunc(f) {
			return nil, bad()
		}
		return appendAvroLong(dst, int64(f)), nil
	case "float":
		f, ok := def.(float64)
		if !ok {
			return nil, bad()
		}
		return appendLE32(dst, math.Float32bits(float32(f))), nil
	case "double":
		f, ok := def.(float64)
		if !ok {
			return nil, bad()
		}
		return appendLE64(dst, math.Float64bits(f)), nil
	case "string":
		str, ok := def.(string)
		if !ok {
			return nil, bad()
		}
		return appendAvroString(dst, str), nil
	case "bytes", "fixed":
		str, ok := def.(string)
		if !ok {
			return nil, bad()
		}
		b := make([]byte, 0, len(str))
		for _, r := range str {
			if r > 255 {
				return nil, bad()
			}
			b = append(b, byte(r))
		}
		if w.typ == "fixed" {
			if len(b) != w.size {
				return nil, bad()
			}
			return append(dst, b...), nil
		}
		return appendAvroBytes(dst, b), nil
	case "enum":
		str, ok := def.(string)
		if !ok {
			return nil, bad()
		}
		for i, sym := range w.symbols {
			if sym == str {
				return appendAvroLong(dst, int64(i)), nil
			}
		}
		return nil, bad()
	case "union":
		if len(w.branches) == 0 {
			return nil, bad()
		}
		return appendAvroDefault(appendAvroLong(dst, 0), w.branches[0], def)
	case "array":
		items, ok := def.([]any)
		if !ok {
			return nil, bad()
		}
		if len(items) > 0 {
			dst = appendAvroLong(dst, int64(len(items)))
			for _, it := range items {
				var err error
				if dst, err = appendAvroDefault(dst, w.items, it); err != nil {
					return nil, err
				}
			}
		}
		return append(dst, 0), nil
	case "map":
		m, ok := def.(map[string]any)
		if !ok {
			return nil, bad()
		}
		if len(m) > 0 {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			dst = appendAvroLong(dst, int64(len(keys)))
			for _, k := range keys {
				var err error
				if dst, err = appendAvroDefault(appendAvroString(dst, k), w.values, m[k]); err != nil {
					return nil, err
				}
			}
		}
		return append(dst, 0), nil
	case "record":
		m, ok := def.(map[string]any)
		if !ok {
			return nil, bad()
		}
		for _, f := range w.fields {
			v, ok := m[f.name]
			if !ok {
				if !f.hasDef {
					return nil, fmt.Errorf("default of record %s lacks field %s", w.name, f.name)
				}
				v = f.def
			}
			var err error
			if dst, err = appendAvroDefault(dst, f.typ, v); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
	return nil, bad()
}

// unionReader reads an Avro union: its branch index, then the branch with
// that index's reader.
func unionReader(reads []avroRead) avroRead {
	return func(r *avroReader) (any, error) {
		i, err := r.long()
		if err != nil {
			return nil, err
		}
		if i < 0 || int(i) >= len(reads) {
			return nil, fmt.Errorf("Avro union index %d out of range", i)
		}
		return reads[i](r)
	}
}
