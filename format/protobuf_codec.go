package format

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluice-sql/sluice/internal/types"
)

// pbKind says how a field's single value is carried.
type pbKind uint8

const (
	pbScalar    pbKind = iota // a protobuf scalar (or enum)
	pbStruct                  // a message read as a STRUCT
	pbDecimal                 // confluent.type.Decimal
	pbTimestamp               // google.protobuf.Timestamp
	pbDate                    // google.type.Date
	pbTime                    // google.type.TimeOfDay
	pbWrapper                 // google.protobuf.*Value; inner is the value
	pbOneof                   // a oneof read as a STRUCT of its fields (members)
)

// pbMaxDepth bounds message nesting on decode.
const pbMaxDepth = 100

// pbField is the plan for one message field bound to a SQL slot.
type pbField struct {
	num  protowire.Number
	kind protoreflect.Kind // of a single value
	mk   pbKind
	sql  *types.Type // of a single value (the element of a list)
	list bool
	// presence: the field tracks whether it is set (a proto3 optional
	// scalar), so an absent one reads as null and a zero is written.
	presence bool
	// key and val are the entry fields of a map field.
	key, val *pbField
	msg      *pbMsg   // pbStruct
	inner    *pbField // pbWrapper
	enum     protoreflect.EnumValueDescriptors
	// members are the fields of a oneof (pbOneof), in the STRUCT's field
	// order.
	members []*pbField
}

// pbMsg is the plan for a message bound to SQL slots (columns or STRUCT
// fields), in slot order.
type pbMsg struct {
	name   protoreflect.FullName
	fields []*pbField
	// byNum maps a field number to its slot (-1: not read); numbers beyond
	// it are looked up in big.
	byNum []int16
	big   map[protowire.Number]int
}

func (m *pbMsg) slot(n protowire.Number) int {
	if int(n) < len(m.byNum) {
		return int(m.byNum[n])
	}
	if i, ok := m.big[n]; ok {
		return i
	}
	return -1
}

// protobufCodec is PROTOBUF / PROTOBUF_NOSR over the bare message bytes.
type protobufCodec struct {
	msg       *pbMsg
	unwrapped bool
}

func newProtobufCodec(md protoreflect.MessageDescriptor, cols []types.Column, unwrapped bool) (*protobufCodec, error) {
	if unwrapped && len(cols) != 1 {
		return nil, fmt.Errorf("an unwrapped PROTOBUF value has exactly one column, not %d", len(cols))
	}
	fields := make([]types.Field, len(cols))
	for i, c := range cols {
		fields[i] = types.Field(c)
	}
	m, err := bindMsg(md, fields, unwrapped)
	if err != nil {
		return nil, err
	}
	return &protobufCodec{msg: m, unwrapped: unwrapped}, nil
}

func bindMsg(md protoreflect.MessageDescriptor, fields []types.Field, unwrapped bool) (*pbMsg, error) {
	m := &pbMsg{name: md.FullName(), fields: make([]*pbField, len(fields))}
	mfs := md.Fields()
	maxNum := protowire.Number(0)
	for i, sf := range fields {
		var fd protoreflect.FieldDescriptor
		if unwrapped {
			if mfs.Len() == 0 {
				return nil, fmt.Errorf("protobuf message '%s' has no field to read '%s' from", md.FullName(), sf.Name)
			}
			fd = mfs.Get(0)
		} else {
			fd = findProtoField(mfs, sf.Name)
			if fd == nil {
				if od := findProtoOneof(md.Oneofs(), sf.Name); od != nil {
					f, err := bindOneof(od, sf.Type)
					if err != nil {
						return nil, err
					}
					m.fields[i] = f
					for _, mf := range f.members {
						maxNum = max(maxNum, mf.num)
					}
					continue
				}
				return nil, fmt.Errorf("protobuf message '%s' has no field '%s'; declare only the message's fields, or leave the columns out to take them from the schema", md.FullName(), sf.Name)
			}
		}
		f, err := bindField(fd, sf.Type)
		if err != nil {
			return nil, err
		}
		m.fields[i] = f
		maxNum = max(maxNum, f.num)
	}
	each := func(set func(n protowire.Number, i int)) {
		for i, f := range m.fields {
			if f.mk != pbOneof {
				set(f.num, i)
				continue
			}
			for _, mf := range f.members {
				set(mf.num, i)
			}
		}
	}
	if maxNum < 1024 {
		m.byNum = make([]int16, maxNum+1)
		for i := range m.byNum {
			m.byNum[i] = -1
		}
		each(func(n protowire.Number, i int) { m.byNum[n] = int16(i) })
	} else {
		m.big = make(map[protowire.Number]int, len(m.fields))
		each(func(n protowire.Number, i int) { m.big[n] = i })
	}
	return m, nil
}

// pbOneofName is the name Kafka Connect's protobuf converter gives the
// STRUCT field holding oneof od: the oneof's name, '_', its index among
// the message's oneofs.
func pbOneofName(od protoreflect.OneofDescriptor) string {
	return fmt.Sprintf("%s_%d", od.Name(), od.Index())
}

// findProtoOneof finds the oneof (not a proto3 optional's synthetic one)
// a column or STRUCT field name names: as Connect names it (pbOneofName),
// or by the oneof's own name, in any case.
func findProtoOneof(ods protoreflect.OneofDescriptors, name string) protoreflect.OneofDescriptor {
	for i := 0; i < ods.Len(); i++ {
		od := ods.Get(i)
		if od.IsSynthetic() {
			continue
		}
		if strings.EqualFold(pbOneofName(od), name) || strings.EqualFold(string(od.Name()), name) {
			return od
		}
	}
	return nil
}

// bindOneof binds oneof od to a STRUCT of (some of) its fields: at most
// one is set in a row read, and the first set one is written.
func bindOneof(od protoreflect.OneofDescriptor, t *types.Type) (*pbField, error) {
	if t == nil || t.Kind != types.Struct {
		return nil, fmt.Errorf("protobuf oneof '%s' cannot be read as %s; declare the column as a STRUCT of the oneof's fields", od.Name(), t)
	}
	f := &pbField{kind: protoreflect.MessageKind, mk: pbOneof, sql: t, members: make([]*pbField, len(t.Fields))}
	for i, sf := range t.Fields {
		fd := findProtoField(od.Fields(), sf.Name)
		if fd == nil {
			return nil, fmt.Errorf("protobuf oneof '%s' has no field '%s'", od.Name(), sf.Name)
		}
		mf, err := bindField(fd, sf.Type)
		if err != nil {
			return nil, err
		}
		f.members[i] = mf
	}
	return f, nil
}

// member returns the index of the oneof member with number num.
func (f *pbField) member(num protowire.Number) int {
	for j, mf := range f.members {
		if mf.num == num {
			return j
		}
	}
	return -1
}

func findProtoField(mfs protoreflect.FieldDescriptors, name string) protoreflect.FieldDescriptor {
	if fd := mfs.ByName(protoreflect.Name(name)); fd != nil {
		return fd
	}
	scrubbed := protoScrubName(name)
	for i := 0; i < mfs.Len(); i++ {
		fd := mfs.Get(i)
		if strings.EqualFold(string(fd.Name()), name) || string(fd.Name()) == scrubbed {
			return fd
		}
	}
	return nil
}

func bindField(fd protoreflect.FieldDescriptor, t *types.Type) (*pbField, error) {
	if t == nil {
		return nil, fmt.Errorf("protobuf field '%s' is bound to a column without a type", fd.Name())
	}
	if fd.IsMap() {
		if t.Kind != types.Map {
			return nil, pbMismatch(fd, t)
		}
		k, err := bindSingle(fd.MapKey(), t.Key)
		if err != nil {
			return nil, err
		}
		v, err := bindSingle(fd.MapValue(), t.Elem)
		if err != nil {
			return nil, err
		}
		return &pbField{num: fd.Number(), kind: fd.Kind(), sql: t, key: k, val: v}, nil
	}
	if fd.IsList() {
		if t.Kind != types.Array {
			return nil, pbMismatch(fd, t)
		}
		f, err := bindSingle(fd, t.Elem)
		if err != nil {
			return nil, err
		}
		f.list = true
		return f, nil
	}
	f, err := bindSingle(fd, t)
	if err != nil {
		return nil, err
	}
	f.presence = fd.HasPresence() && f.mk == pbScalar
	return f, nil
}

func pbMismatch(fd protoreflect.FieldDescriptor, t *types.Type) error {
	what := string(fd.Kind().String())
	if fd.Kind() == protoreflect.MessageKind {
		what = string(fd.Message().FullName())
	}
	if fd.IsList() {
		what = "repeated " + what
	}
	if fd.IsMap() {
		what = "map"
	}
	return fmt.Errorf("protobuf field '%s' (%s) cannot be read as %s; declare the column with the field's type", fd.Name(), what, t)
}

func bindSingle(fd protoreflect.FieldDescriptor, t *types.Type) (*pbField, error) {
	if t == nil {
		return nil, fmt.Errorf("protobuf field '%s' is bound to a column without a type", fd.Name())
	}
	f := &pbField{num: fd.Number(), kind: fd.Kind(), sql: t}
	ok := false
	switch fd.Kind() {
	case protoreflect.BoolKind:
		ok = t.Kind == types.Boolean
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		switch t.Kind {
		case types.Int, types.Bigint, types.Double, types.Timestamp, types.Date, types.Time:
			ok = true
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		ok = t.Kind == types.Double
	case protoreflect.StringKind:
		ok = t.Kind == types.String
	case protoreflect.EnumKind:
		ok = t.Kind == types.String
		f.enum = fd.Enum().Values()
	case protoreflect.BytesKind:
		ok = t.Kind == types.Bytes
	case protoreflect.MessageKind, protoreflect.GroupKind:
		md := fd.Message()
		switch md.FullName() {
		case pbDecimalName:
			f.mk, ok = pbDecimal, t.Kind == types.Decimal
		case pbTimestampName:
			f.mk, ok = pbTimestamp, t.Kind == types.Timestamp
		case pbDateName:
			f.mk, ok = pbDate, t.Kind == types.Date
		case pbTimeName:
			f.mk, ok = pbTime, t.Kind == types.Time
		default:
			if protoWrapperType(md.FullName()) != nil {
				inner, err := bindSingle(md.Fields().ByNumber(1), t)
				if err != nil {
					return nil, err
				}
				f.mk, f.inner, ok = pbWrapper, inner, true
				break
			}
			if t.Kind != types.Struct {
				break
			}
			m, err := bindMsg(md, t.Fields, false)
			if err != nil {
				return nil, err
			}
			f.mk, f.msg, ok = pbStruct, m, true
		}
	}
	if !ok {
		return nil, pbMismatch(fd, t)
	}
	return f, nil
}

// zero is the value of an absent field.
func (f *pbField) zero() any {
	if f.mk == pbOneof {
		return nil
	}
	if f.key != nil {
		return &types.MapValue{}
	}
	if f.list {
		return []any{}
	}
	if f.presence {
		return nil
	}
	return f.zeroSingle()
}

func (f *pbField) zeroSingle() any {
	if f.mk != pbScalar {
		return nil
	}
	if f.kind == protoreflect.EnumKind {
		if f.enum.Len() > 0 {
			return string(f.enum.Get(0).Name())
		}
		return ""
	}
	return pbZeroOf(f.sql)
}

func pbZeroOf(t *types.Type) any {
	switch t.Kind {
	case types.Boolean:
		return false
	case types.Int:
		return int32(0)
	case types.Bigint:
		return int64(0)
	case types.Double:
		return float64(0)
	case types.String:
		return ""
	case types.Bytes:
		return []byte{}
	case types.Timestamp:
		return types.TimestampValue(0)
	case types.Date:
		return types.DateValue(0)
	case types.Time:
		return types.TimeValue(0)
	}
	return nil
}

var errPBTruncated = errors.New("truncated or malformed protobuf message")

// Decode implements Codec.
func (c *protobufCodec) Decode(b []byte, dst []any) error {
	if len(dst) != len(c.msg.fields) {
		return fmt.Errorf("PROTOBUF codec decodes %d columns, got a row of %d", len(c.msg.fields), len(dst))
	}
	if b == nil {
		for i := range dst {
			dst[i] = nil
		}
		return nil
	}
	if err := c.msg.decode(b, dst, 0); err != nil {
		return fmt.Errorf("failed to deserialize PROTOBUF message '%s': %w", c.msg.name, err)
	}
	return nil
}

func (m *pbMsg) decode(b []byte, dst []any, depth int) error {
	if depth > pbMaxDepth {
		return fmt.Errorf("messages nested deeper than %d", pbMaxDepth)
	}
	for i, f := range m.fields {
		dst[i] = f.zero()
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errPBTruncated
		}
		b = b[n:]
		i := m.slot(num)
		if i < 0 {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return errPBTruncated
			}
			b = b[n:]
			continue
		}
		f := m.fields[i]
		var err error
		switch {
		case f.mk == pbOneof:
			// The member read last is the one set, as protobuf reads a
			// oneof (which holds neither repeated nor map fields).
			j := f.member(num)
			sv := make(types.StructValue, len(f.members))
			sv[j], n, err = f.members[j].decodeSingle(typ, b, depth)
			dst[i] = sv
		case f.key != nil:
			n, err = f.decodeEntry(typ, b, dst[i].(*types.MapValue), depth)
		case f.list:
			n, err = f.decodeList(typ, b, &dst[i], depth)
		default:
			var v any
			v, n, err = f.decodeSingle(typ, b, depth)
			dst[i] = v
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (f *pbField) packable() bool {
	return f.mk == pbScalar && f.kind != protoreflect.StringKind && f.kind != protoreflect.BytesKind
}

func (f *pbField) decodeList(typ protowire.Type, b []byte, slot *any, depth int) (int, error) {
	list, _ := (*slot).([]any)
	if typ == protowire.BytesType && f.packable() {
		body, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, errPBTruncated
		}
		wt := f.wireType()
		for len(body) > 0 {
			v, m, err := f.decodeSingle(wt, body, depth)
			if err != nil {
				return 0, err
			}
			list = append(list, v)
			body = body[m:]
		}
		*slot = list
		return n, nil
	}
	v, n, err := f.decodeSingle(typ, b, depth)
	if err != nil {
		return 0, err
	}
	*slot = append(list, v)
	return n, nil
}

func (f *pbField) decodeEntry(typ protowire.Type, b []byte, mv *types.MapValue, depth int) (int, error) {
	if typ != protowire.BytesType {
		return 0, fmt.Errorf("field %d has wire type %d, want a length-delimited map entry", f.num, typ)
	}
	body, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, errPBTruncated
	}
	k, v := f.key.zeroSingle(), f.val.zeroSingle()
	for len(body) > 0 {
		num, wt, m := protowire.ConsumeTag(body)
		if m < 0 {
			return 0, errPBTruncated
		}
		body = body[m:]
		var err error
		switch num {
		case 1:
			k, m, err = f.key.decodeSingle(wt, body, depth)
		case 2:
			v, m, err = f.val.decodeSingle(wt, body, depth)
		default:
			m = protowire.ConsumeFieldValue(num, wt, body)
			if m < 0 {
				err = errPBTruncated
			}
		}
		if err != nil {
			return 0, err
		}
		body = body[m:]
	}
	if i := mv.Index(k); i >= 0 {
		mv.Values[i] = v
	} else {
		mv.Keys = append(mv.Keys, k)
		mv.Values = append(mv.Values, v)
	}
	return n, nil
}

// wireType is the wire type of a single value of a scalar field.
func (f *pbField) wireType() protowire.Type {
	switch f.kind {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind, protoreflect.GroupKind:
		return protowire.BytesType
	}
	return protowire.VarintType
}

// decodeSingle reads one value of f with wire type typ from b, returning it
// and the bytes consumed.
func (f *pbField) decodeSingle(typ protowire.Type, b []byte, depth int) (any, int, error) {
	if want := f.wireType(); typ != want {
		return nil, 0, fmt.Errorf("field %d has wire type %d, want %d", f.num, typ, want)
	}
	if f.mk != pbScalar {
		body, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, 0, errPBTruncated
		}
		v, err := f.decodeMessage(body, depth+1)
		return v, n, err
	}
	var i int64
	switch typ {
	case protowire.VarintType:
		u, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return nil, 0, errPBTruncated
		}
		switch f.kind {
		case protoreflect.BoolKind:
			return u != 0, n, nil
		case protoreflect.EnumKind:
			if ev := f.enum.ByNumber(protoreflect.EnumNumber(int32(u))); ev != nil {
				return string(ev.Name()), n, nil
			}
			return nil, 0, fmt.Errorf("field %d: %d is not a value of its enum", f.num, int32(u))
		case protoreflect.Int32Kind:
			i = int64(int32(u))
		case protoreflect.Sint32Kind:
			i = int64(int32(protowire.DecodeZigZag(u & math.MaxUint32)))
		case protoreflect.Uint32Kind:
			i = int64(uint32(u))
		case protoreflect.Sint64Kind:
			i = protowire.DecodeZigZag(u)
		default:
			i = int64(u)
		}
		return f.fromInt(i), n, nil
	case protowire.Fixed32Type:
		u, n := protowire.ConsumeFixed32(b)
		if n < 0 {
			return nil, 0, errPBTruncated
		}
		switch f.kind {
		case protoreflect.FloatKind:
			return float64(math.Float32frombits(u)), n, nil
		case protoreflect.Sfixed32Kind:
			i = int64(int32(u))
		default:
			i = int64(u)
		}
		return f.fromInt(i), n, nil
	case protowire.Fixed64Type:
		u, n := protowire.ConsumeFixed64(b)
		if n < 0 {
			return nil, 0, errPBTruncated
		}
		if f.kind == protoreflect.DoubleKind {
			return math.Float64frombits(u), n, nil
		}
		return f.fromInt(int64(u)), n, nil
	}
	s, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return nil, 0, errPBTruncated
	}
	if f.kind == protoreflect.StringKind {
		if !utf8.Valid(s) {
			return nil, 0, fmt.Errorf("field %d: string is not valid UTF-8", f.num)
		}
		return string(s), n, nil
	}
	return append([]byte{}, s...), n, nil
}

func (f *pbField) fromInt(i int64) any {
	switch f.sql.Kind {
	case types.Int:
		return int32(i)
	case types.Double:
		return float64(i)
	case types.Timestamp:
		return types.TimestampValue(i)
	case types.Date:
		return types.DateValue(i)
	case types.Time:
		return types.TimeValue(i)
	}
	return i
}

// pbInts reads the varint fields 1..4 of a small message (Timestamp, Date,
// TimeOfDay) as int64s; field 1 of Decimal is returned as raw bytes.
func pbInts(b []byte) (v [5]int64, raw []byte, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return v, nil, errPBTruncated
		}
		b = b[n:]
		switch {
		case typ == protowire.VarintType && num >= 1 && num <= 4:
			u, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return v, nil, errPBTruncated
			}
			v[num] = int64(u)
			n = m
		case typ == protowire.BytesType && num == 1:
			s, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return v, nil, errPBTruncated
			}
			raw = s
			n = m
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return v, nil, errPBTruncated
			}
		}
		b = b[n:]
	}
	return v, raw, nil
}

func (f *pbField) decodeMessage(b []byte, depth int) (any, error) {
	switch f.mk {
	case pbStruct:
		sv := make(types.StructValue, len(f.msg.fields))
		if err := f.msg.decode(b, sv, depth); err != nil {
			return nil, err
		}
		return sv, nil
	case pbWrapper:
		v := f.inner.zeroSingle()
		for len(b) > 0 {
			num, typ, n := protowire.ConsumeTag(b)
			if n < 0 {
				return nil, errPBTruncated
			}
			b = b[n:]
			if num == 1 {
				var err error
				v, n, err = f.inner.decodeSingle(typ, b, depth)
				if err != nil {
					return nil, err
				}
			} else if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, errPBTruncated
			}
			b = b[n:]
		}
		return v, nil
	}
	v, raw, err := pbInts(b)
	if err != nil {
		return nil, err
	}
	switch f.mk {
	case pbTimestamp:
		return types.TimestampValue(v[1]*1000 + int64(int32(v[2]))/1e6), nil
	case pbDate:
		return types.DateValue(daysFromCivil(int32(v[1]), int32(v[2]), int32(v[3]))), nil
	case pbTime:
		return types.TimeValue(int32(v[1])*3600000 + int32(v[2])*60000 + int32(v[3])*1000 + int32(v[4])/1e6), nil
	}
	// pbDecimal: two's-complement big-endian unscaled value and its scale.
	u := new(big.Int).SetBytes(raw)
	if len(raw) > 0 && raw[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
	}
	scale := int(int32(v[3]))
	if scale < 0 || scale > 1000 {
		return nil, fmt.Errorf("field %d: decimal scale %d out of range", f.num, scale)
	}
	d := types.DecFromBig(u, scale)
	if d.Scale != f.sql.Scale {
		d = d.Rescale(f.sql.Scale)
	}
	return d, nil
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar.
func daysFromCivil(y, m, d int32) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := yy
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := yy - era*400
	mp := (int64(m) + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int32) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	yy := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	dd := doy - (153*mp+2)/5 + 1
	mm := mp + 3
	if mm > 12 {
		mm -= 12
	}
	if mm <= 2 {
		yy++
	}
	return int32(yy), int32(mm), int32(dd)
}

// Encode implements Codec. Null scalars and proto3 defaults are left out,
// as protobuf writes them.
func (c *protobufCodec) Encode(dst []byte, row []any) ([]byte, error) {
	if len(row) != len(c.msg.fields) {
		return nil, fmt.Errorf("PROTOBUF codec encodes %d columns, got a row of %d", len(c.msg.fields), len(row))
	}
	if c.unwrapped && row[0] == nil {
		return nil, nil
	}
	if dst == nil {
		dst = []byte{}
	}
	return c.msg.encode(dst, row)
}

func (m *pbMsg) encode(dst []byte, vals []any) ([]byte, error) {
	var err error
	for i, f := range m.fields {
		v := vals[i]
		if v == nil {
			continue
		}
		switch {
		case f.mk == pbOneof:
			sv, ok := v.(types.StructValue)
			if !ok {
				return nil, fmt.Errorf("cannot encode %T as a protobuf oneof", v)
			}
			// One member of a oneof is set: the first non-null field,
			// written even when it holds its zero.
			for j, mv := range sv {
				if mv == nil || j >= len(f.members) {
					continue
				}
				if dst, err = f.members[j].appendSingle(dst, mv, false); err != nil {
					return nil, err
				}
				break
			}
		case f.key != nil:
			mv, ok := v.(*types.MapValue)
			if !ok {
				return nil, fmt.Errorf("cannot encode %T as a protobuf map", v)
			}
			for j, k := range mv.Keys {
				dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
				start := len(dst)
				if k != nil {
					if dst, err = f.key.appendSingle(dst, k, false); err != nil {
						return nil, err
					}
				}
				if ev := mv.Values[j]; ev != nil {
					if dst, err = f.val.appendSingle(dst, ev, false); err != nil {
						return nil, err
					}
				}
				dst = pbPatchLen(dst, start)
			}
		case f.list:
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("cannot encode %T as a protobuf repeated field", v)
			}
			if len(list) == 0 {
				continue
			}
			if f.packable() {
				dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
				start := len(dst)
				for _, e := range list {
					if e == nil {
						e = f.zeroSingle()
					}
					if dst, err = f.appendScalar(dst, e); err != nil {
						return nil, err
					}
				}
				dst = pbPatchLen(dst, start)
				continue
			}
			for _, e := range list {
				if e == nil {
					if f.mk != pbScalar {
						dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
						dst = append(dst, 0)
						continue
					}
					e = f.zeroSingle()
				}
				if dst, err = f.appendSingle(dst, e, false); err != nil {
					return nil, err
				}
			}
		default:
			if dst, err = f.appendSingle(dst, v, !f.presence); err != nil {
				return nil, err
			}
		}
	}
	return dst, nil
}

// pbPatchLen turns the bytes from start into a length-delimited value by
// inserting their length at start.
func pbPatchLen(dst []byte, start int) []byte {
	n := len(dst) - start
	s := protowire.SizeVarint(uint64(n))
	for range s {
		dst = append(dst, 0)
	}
	copy(dst[start+s:], dst[start:start+n])
	protowire.AppendVarint(dst[start:start], uint64(n))
	return dst
}

// appendSingle appends field f holding v (not nil); with omitZero a scalar
// equal to its proto3 default is left out.
func (f *pbField) appendSingle(dst []byte, v any, omitZero bool) ([]byte, error) {
	if f.mk == pbScalar {
		if omitZero && pbIsZero(f, v) {
			return dst, nil
		}
		dst = protowire.AppendTag(dst, f.num, f.wireType())
		return f.appendScalar(dst, v)
	}
	dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
	start := len(dst)
	var err error
	switch f.mk {
	case pbStruct:
		sv, ok := v.(types.StructValue)
		if !ok || len(sv) != len(f.msg.fields) {
			return nil, fmt.Errorf("cannot encode %T as protobuf message '%s'", v, f.msg.name)
		}
		if dst, err = f.msg.encode(dst, sv); err != nil {
			return nil, err
		}
	case pbWrapper:
		if dst, err = f.inner.appendSingle(dst, v, true); err != nil {
			return nil, err
		}
	case pbTimestamp:
		ms, ok := v.(types.TimestampValue)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as a protobuf Timestamp", v)
		}
		sec, rem := int64(ms)/1000, int64(ms)%1000
		if rem < 0 {
			sec, rem = sec-1, rem+1000
		}
		dst = pbAppendInt(dst, 1, sec)
		dst = pbAppendInt(dst, 2, rem*1e6)
	case pbDate:
		d, ok := v.(types.DateValue)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as a protobuf Date", v)
		}
		y, m, dd := civilFromDays(int64(d))
		dst = pbAppendInt(dst, 1, int64(y))
		dst = pbAppendInt(dst, 2, int64(m))
		dst = pbAppendInt(dst, 3, int64(dd))
	case pbTime:
		t, ok := v.(types.TimeValue)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as a protobuf TimeOfDay", v)
		}
		ms := int64(t)
		dst = pbAppendInt(dst, 1, ms/3600000)
		dst = pbAppendInt(dst, 2, ms/60000%60)
		dst = pbAppendInt(dst, 3, ms/1000%60)
		dst = pbAppendInt(dst, 4, ms%1000*1e6)
	case pbDecimal:
		d, ok := v.(types.Dec)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as a protobuf Decimal", v)
		}
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendBytes(dst, pbTwosComplement(d.BigInt()))
		dst = pbAppendInt(dst, 2, int64(d.Precision()))
		dst = pbAppendInt(dst, 3, int64(d.Scale))
	}
	return pbPatchLen(dst, start), nil
}

func pbAppendInt(dst []byte, num protowire.Number, v int64) []byte {
	if v == 0 {
		return dst
	}
	dst = protowire.AppendTag(dst, num, protowire.VarintType)
	return protowire.AppendVarint(dst, uint64(v))
}

// pbTwosComplement is x as Java's BigInteger.toByteArray writes it.
func pbTwosComplement(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	m := new(big.Int).Neg(x)
	m.Sub(m, big.NewInt(1))
	n := m.BitLen()/8 + 1
	y := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	y.Add(y, x)
	b := y.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	return b
}

func pbIsZero(f *pbField, v any) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case int32:
		return x == 0
	case int64:
		return x == 0
	case float64:
		return x == 0 && !math.Signbit(x)
	case string:
		if f.kind == protoreflect.EnumKind {
			return f.enum.Len() > 0 && string(f.enum.Get(0).Name()) == x && f.enum.Get(0).Number() == 0
		}
		return x == ""
	case []byte:
		return len(x) == 0
	case types.TimestampValue:
		return x == 0
	case types.DateValue:
		return x == 0
	case types.TimeValue:
		return x == 0
	}
	return false
}

// appendScalar appends the bare value (no tag) of scalar field f.
func (f *pbField) appendScalar(dst []byte, v any) ([]byte, error) {
	switch f.kind {
	case protoreflect.BoolKind:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as protobuf bool", v)
		}
		return protowire.AppendVarint(dst, protowire.EncodeBool(b)), nil
	case protoreflect.StringKind:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as protobuf string", v)
		}
		return protowire.AppendString(dst, s), nil
	case protoreflect.BytesKind:
		b, ok := v.([]byte)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as protobuf bytes", v)
		}
		return protowire.AppendBytes(dst, b), nil
	case protoreflect.EnumKind:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as protobuf enum", v)
		}
		ev := f.enum.ByName(protoreflect.Name(s))
		if ev == nil {
			return nil, fmt.Errorf("'%s' is not a value of protobuf enum field %d", s, f.num)
		}
		return protowire.AppendVarint(dst, uint64(int64(ev.Number()))), nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		x, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("cannot encode %T as protobuf %s", v, f.kind)
		}
		if f.kind == protoreflect.FloatKind {
			return protowire.AppendFixed32(dst, math.Float32bits(float32(x))), nil
		}
		return protowire.AppendFixed64(dst, math.Float64bits(x)), nil
	}
	var i int64
	switch x := v.(type) {
	case int32:
		i = int64(x)
	case int64:
		i = x
	case types.TimestampValue:
		i = int64(x)
	case types.DateValue:
		i = int64(x)
	case types.TimeValue:
		i = int64(x)
	case float64:
		i = int64(x)
	default:
		return nil, fmt.Errorf("cannot encode %T as protobuf %s", v, f.kind)
	}
	switch f.kind {
	case protoreflect.Int32Kind:
		return protowire.AppendVarint(dst, uint64(int64(int32(i)))), nil
	case protoreflect.Sint32Kind:
		return protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(int32(i)))), nil
	case protoreflect.Uint32Kind:
		return protowire.AppendVarint(dst, uint64(uint32(i))), nil
	case protoreflect.Sint64Kind:
		return protowire.AppendVarint(dst, protowire.EncodeZigZag(i)), nil
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return protowire.AppendFixed32(dst, uint32(i)), nil
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return protowire.AppendFixed64(dst, uint64(i)), nil
	}
	return protowire.AppendVarint(dst, uint64(i)), nil
}
