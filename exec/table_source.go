package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/state"
)

// materializeOp keeps a table's rows, one per key, in a state table of the
// task's TaskCache and turns each input row into a change carrying the
// key's old row: an upsert for a row with a value, a delete for a null
// value. A delete of a key without a row has nothing to change and is
// dropped, as in Kafka Streams. Rows without a key are dropped too: a
// table cannot hold them. A row whose columns cannot be encoded goes to the
// processing log and is dropped (kept as it is, with passAll).
type materializeOp struct {
	codec rowCodec
	table string
	cache *state.TaskCache
	errs  ErrorSink
	out   Batch
	key   []byte
	// olds holds the decoded old rows of the batch being processed.
	olds rowSlab
	// passAll passes every input row on as it comes, without old rows:
	// the step keeps a sink's rows and nothing after it needs changes.
	passAll bool
}

// rowCodec encodes a table row as a state entry: the key columns in the
// entry's key, every other column in its value, each as a length-prefixed
// expr.MarshalValue.
type rowCodec struct {
	schema []types.Column
	// keyFrom and keyTo bound the key columns in the row.
	keyFrom, keyTo int
}

func newRowCodec(schema []types.Column, keys int) rowCodec {
	from := 0
	if len(schema) >= topology.PseudoColumns && schema[0].Name == topology.RowTime &&
		schema[1].Name == topology.RowPartition && schema[2].Name == topology.RowOffset {
		from = topology.PseudoColumns
	}
	return rowCodec{schema: schema, keyFrom: from, keyTo: from + keys}
}

func (c *rowCodec) isKey(i int) bool { return i >= c.keyFrom && i < c.keyTo }

// appendKey appends the encoded key columns of row to dst; ok is false when
// the row has no key (every key column null).
func (c *rowCodec) appendKey(dst []byte, row []any) (_ []byte, ok bool, err error) {
	for i := c.keyFrom; i < c.keyTo; i++ {
		if row[i] != nil {
			ok = true
		}
	}
	if !ok {
		return dst, false, nil
	}
	for i := c.keyFrom; i < c.keyTo; i++ {
		if dst, err = appendField(dst, row[i], c.schema[i].Type); err != nil {
			return dst, false, fmt.Errorf("cannot encode key column %s: %w", c.schema[i].Name, err)
		}
	}
	return dst, true, nil
}

// value encodes the non-key columns of row.
func (c *rowCodec) value(row []any) ([]byte, error) {
	var v []byte
	var err error
	for i, col := range c.schema {
		if c.isKey(i) {
			continue
		}
		if v, err = appendField(v, row[i], col.Type); err != nil {
			return nil, fmt.Errorf("cannot encode column %s: %w", col.Name, err)
		}
	}
	return v, nil
}

// decode fills row, laid out as the schema, from a state entry.
func (c *rowCodec) decode(key, value []byte, row []any) error {
	var err error
	for i := c.keyFrom; i < c.keyTo; i++ {
		if row[i], key, err = readField(key, c.schema[i].Type); err != nil {
			return err
		}
	}
	for i, col := range c.schema {
		if c.isKey(i) {
			continue
		}
		if row[i], value, err = readField(value, col.Type); err != nil {
			return err
		}
	}
	if len(key) != 0 || len(value) != 0 {
		return errors.New("trailing bytes")
	}
	return nil
}

// Field encodings: a tag byte, then the value. Scalars common in keys and
// values get a compact binary form; everything else is a length-prefixed
// expr.MarshalValue.
const (
	fieldNull byte = iota
	fieldFalse
	fieldTrue
	fieldInt    // zig-zag varint, INT or BIGINT
	fieldDouble // 8 bytes, IEEE 754 bits
	fieldString // uvarint length, bytes
	fieldJSON   // uvarint length, expr.MarshalValue
)

func appendField(dst []byte, v any, t *types.Type) ([]byte, error) {
	if v == nil {
		return append(dst, fieldNull), nil
	}
	var kind types.Kind
	if t != nil {
		kind = t.Kind
	}
	switch x := v.(type) {
	case bool:
		if kind == types.Boolean && x {
			return append(dst, fieldTrue), nil
		}
		if kind == types.Boolean {
			return append(dst, fieldFalse), nil
		}
	case int32:
		if kind == types.Int {
			return binary.AppendVarint(append(dst, fieldInt), int64(x)), nil
		}
	case int64:
		if kind == types.Bigint {
			return binary.AppendVarint(append(dst, fieldInt), x), nil
		}
	case float64:
		if kind == types.Double {
			return binary.BigEndian.AppendUint64(append(dst, fieldDouble), math.Float64bits(x)), nil
		}
	case string:
		if kind == types.String {
			dst = binary.AppendUvarint(append(dst, fieldString), uint64(len(x)))
			return append(dst, x...), nil
		}
	}
	p, err := expr.MarshalValue(v, t)
	if err != nil {
		return dst, err
	}
	dst = binary.AppendUvarint(append(dst, fieldJSON), uint64(len(p)))
	return append(dst, p...), nil
}

var errTruncated = errors.New("truncated field")

func readField(b []byte, t *types.Type) (any, []byte, error) {
	if len(b) == 0 {
		return nil, nil, errTruncated
	}
	tag, b := b[0], b[1:]
	switch tag {
	case fieldNull:
		return nil, b, nil
	case fieldFalse:
		return false, b, nil
	case fieldTrue:
		return true, b, nil
	case fieldInt:
		n, k := binary.Varint(b)
		if k <= 0 {
			return nil, nil, errTruncated
		}
		if t.Kind == types.Int {
			return int32(n), b[k:], nil
		}
		return n, b[k:], nil
	case fieldDouble:
		if len(b) < 8 {
			return nil, nil, errTruncated
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), b[8:], nil
	case fieldString, fieldJSON:
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, nil, errTruncated
		}
		p, rest := b[k:k+int(n)], b[k+int(n):]
		if tag == fieldString {
			return string(p), rest, nil
		}
		v, err := expr.UnmarshalValue(p, t)
		return v, rest, err
	}
	return nil, nil, fmt.Errorf("unknown field tag %d", tag)
}

// newMaterializeOp compiles a Materialize step; in is its input schema.
func newMaterializeOp(st topology.Step, in []types.Column) (*materializeOp, error) {
	if st.StateTable == "" {
		return nil, errors.New("exec: materialize step without a state table")
	}
	return &materializeOp{codec: newRowCodec(in, st.Keys), table: st.StateTable}, nil
}

func (m *materializeOp) Open(_ context.Context, oc *OpContext) error {
	if oc.State == nil {
		return errors.New("exec: a materialized table needs a state store")
	}
	m.cache = oc.State
	m.errs = oc.Errors
	return nil
}

func (m *materializeOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	m.out.Reset()
	m.olds.reset()
	width := len(m.codec.schema)
	var carry headerCarry
	for i := 0; i < b.Len(); i++ {
		carry.next(&m.out, b, i)
		row, kind := b.Row(i), b.Kind(i)
		if kind&KeyAbsent != 0 {
			continue
		}
		var ok bool
		var err error
		if m.key, ok, err = m.codec.appendKey(m.key[:0], row); err != nil {
			m.errs.RowError("cannot keep the row of the table: "+err.Error(), row)
			continue
		}
		if !ok {
			continue
		}
		if m.passAll {
			if err := m.keep(row, kind); err != nil {
				return err
			}
			continue
		}
		prev, found, err := m.cache.Get(m.table, m.key)
		if err != nil {
			return fmt.Errorf("exec: read table state: %w", err)
		}
		var old []any
		if found {
			old = m.olds.alloc(width)
			if err := m.codec.decode(m.key, prev, old); err != nil {
				return fmt.Errorf("exec: corrupt table state in %s: %w", m.table, err)
			}
		}
		if kind.Base() == NullValue {
			if !found {
				continue
			}
			if err := m.cache.Delete(m.table, m.key); err != nil {
				return fmt.Errorf("exec: write table state: %w", err)
			}
			m.out.AppendChange(row, old, b.Time(i), NullValue)
			continue
		}
		v, err := m.codec.value(row)
		if err != nil {
			m.errs.RowError("cannot keep the row of the table: "+err.Error(), row)
			continue
		}
		if err := m.cache.Put(m.table, m.key, v); err != nil {
			return fmt.Errorf("exec: write table state: %w", err)
		}
		m.out.AppendChange(row, old, b.Time(i), kind.Base())
	}
	carry.done(&m.out)
	if m.passAll {
		return out.Emit(ctx, b)
	}
	if m.out.Len() == 0 {
		return nil
	}
	return out.Emit(ctx, &m.out)
}

// keep writes row under m.key, or deletes the key for a null value,
// without reading what was there.
func (m *materializeOp) keep(row []any, kind ChangeKind) error {
	if kind.Base() == NullValue {
		if err := m.cache.Delete(m.table, m.key); err != nil {
			return fmt.Errorf("exec: write table state: %w", err)
		}
		return nil
	}
	v, err := m.codec.value(row)
	if err != nil {
		m.errs.RowError("cannot keep the row of the table: "+err.Error(), row)
		return nil
	}
	if err := m.cache.Put(m.table, m.key, v); err != nil {
		return fmt.Errorf("exec: write table state: %w", err)
	}
	return nil
}

func (m *materializeOp) OnCommit(context.Context, Emitter) error { return nil }
func (m *materializeOp) Close(context.Context) error             { return nil }

var _ Operator = (*materializeOp)(nil)

// IsMaterialization reports whether g only materializes its source table:
// a persistent query without a sink whose last step is a Materialize, as
// CREATE SOURCE TABLE runs so that pull queries can read the table.
func IsMaterialization(g *topology.Graph) bool {
	return g.Sink == nil && len(g.Steps) > 0 && g.Steps[len(g.Steps)-1].Kind == topology.Materialize
}

// persistent reports whether g runs as a persistent query: it commits its
// offsets and state, and its state has changelog topics.
func persistent(g *topology.Graph) bool { return g.Sink != nil || IsMaterialization(g) }

// MaterializedTable names a table's rows kept by a query: what a pull query
// reads.
type MaterializedTable struct {
	// Namespace is the query's state namespace (its query ID).
	Namespace string
	// StateTable is the Materialize step's state table.
	StateTable string
	// Schema is the rows' layout and Keys the number of key columns, as
	// the step's Schema and Keys.
	Schema []types.Column
	Keys   int
}

// MaterializedTables lists the tables g materializes: one per Materialize
// step, in order.
func MaterializedTables(g *topology.Graph) []MaterializedTable {
	var out []MaterializedTable
	for _, st := range g.Steps {
		if st.Kind == topology.Materialize {
			out = append(out, MaterializedTable{Namespace: g.QueryID, StateTable: st.StateTable, Schema: st.Schema, Keys: st.Keys})
		}
	}
	return out
}

// ScanRows calls fn with every row of one partition of t in the store, in
// key order, laid out as t.Schema, until fn returns false. It reads what
// the query has committed. row is valid only during the call.
func (t MaterializedTable) ScanRows(s *state.Store, partition int32, fn func(row []any) bool) error {
	c := newRowCodec(t.Schema, t.Keys)
	row := make([]any, len(t.Schema))
	var derr error
	err := s.Table(t.Namespace, partition, t.StateTable).Scan(nil, nil, func(k, v []byte) bool {
		if derr = c.decode(k, v, row); derr != nil {
			return false
		}
		return fn(row)
	})
	if err != nil {
		return err
	}
	if derr != nil {
		return fmt.Errorf("exec: corrupt table state in %s of %s: %w", t.StateTable, t.Namespace, derr)
	}
	return nil
}

// Lookup returns the row of one partition of t under the key columns key,
// laid out as t.Schema; ok is false when there is none.
func (t MaterializedTable) Lookup(s *state.Store, partition int32, key []any) (row []any, ok bool, err error) {
	c := newRowCodec(t.Schema, t.Keys)
	probe := make([]any, len(t.Schema))
	copy(probe[c.keyFrom:c.keyTo], key)
	k, ok, err := c.appendKey(nil, probe)
	if err != nil || !ok {
		return nil, false, err
	}
	v, ok, err := s.Table(t.Namespace, partition, t.StateTable).Get(k)
	if err != nil || !ok {
		return nil, false, err
	}
	row = make([]any, len(t.Schema))
	if err := c.decode(k, v, row); err != nil {
		return nil, false, fmt.Errorf("exec: corrupt table state in %s of %s: %w", t.StateTable, t.Namespace, err)
	}
	return row, true, nil
}

// AggregateTable names the groups an Aggregate step of a query keeps: what
// a pull query over a CREATE TABLE AS SELECT ... GROUP BY reads.
type AggregateTable struct {
	// Namespace is the query's state namespace (its query ID).
	Namespace string
	// Step is the Aggregate step; Input is the schema of its input rows.
	Step  topology.Step
	Input []types.Column
}

// AggregateTables lists the Aggregate steps of g, in order.
func AggregateTables(g *topology.Graph) []AggregateTable {
	var out []AggregateTable
	in := g.Source.Schema()
	for _, st := range g.Steps {
		if st.Kind == topology.Aggregate {
			out = append(out, AggregateTable{Namespace: g.QueryID, Step: st, Input: in})
		}
		if st.Schema != nil {
			in = st.Schema
		}
	}
	return out
}

// ScanRows calls fn with every group of one partition of t in the store,
// in key order, until fn returns false. A row is laid out as the step's
// Schema: the pseudo-columns (null: a group has no single record), the
// group key, then one result per aggregate; a HAVING and the projection
// that follow the step in the plan still apply. It reads what the query
// has committed. row is valid only during the call.
func (t AggregateTable) ScanRows(s *state.Store, partition int32, fn func(row []any) bool) error {
	a, err := newAggregateOp(t.Step, t.Input)
	if err != nil {
		return err
	}
	nk := len(a.groupBy)
	row := make([]any, topology.PseudoColumns+nk+len(a.aggs))
	var derr error
	err = s.Table(t.Namespace, partition, t.Step.StateTable).Scan(nil, nil, func(k, v []byte) bool {
		clear(row)
		for j, typ := range a.keyTypes {
			n, m := binary.Uvarint(k)
			if m <= 0 || n > uint64(len(k)-m) {
				derr = errors.New("truncated group key")
				return false
			}
			if row[topology.PseudoColumns+j], derr = expr.UnmarshalValue(k[m:m+int(n)], typ); derr != nil {
				return false
			}
			k = k[m+int(n):]
		}
		if _, derr = a.decodeState(v, true); derr != nil {
			return false
		}
		for j := range a.aggs {
			// A failing aggregate shows null, as the query emitted it.
			res, err := eval.AccumulatorResult(a.accs[j])
			if err == nil {
				row[topology.PseudoColumns+nk+j] = res
			}
		}
		return fn(row)
	})
	if err != nil {
		return err
	}
	if derr != nil {
		return fmt.Errorf("exec: corrupt aggregate state in %s of %s: %w", t.Step.StateTable, t.Namespace, derr)
	}
	return nil
}
