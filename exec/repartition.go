package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
)

// repartitionOp ends the stage before a Repartition: it hands the sink the
// rows to write to the repartition topic, without their pseudo-columns
// (the record time travels as the record's timestamp). Rows without a
// value, and rows with a null key column, which the steps after the
// repartition would drop, are dropped here (a stream's rows without a
// value counted as such).
//
// Over a table (Step.Table) a row that deletes its key goes on as a
// tombstone of it instead, so that the table read back from the topic
// loses the key too.
//
// A regrouping Repartition (Step.Regroup) writes each change as change
// records instead (see topology.RegroupSchema and regroup).
type repartitionOp struct {
	keys    int
	table   bool
	groupBy bool // a null key column is logged (see topology.Step.NullKeysLogged)
	regroup *regrouper
	counts  *counters
	errs    ErrorSink
	out     Batch
}

func newRepartitionOp(st topology.Step) (*repartitionOp, error) {
	r := &repartitionOp{keys: st.Keys, table: st.Table, groupBy: st.NullKeysLogged}
	if st.Regroup {
		width, ok := topology.RegroupWidth(st.Schema, st.Keys)
		if !ok {
			return nil, fmt.Errorf("exec: regrouping repartition to %s without the layout of change records", st.Topic)
		}
		r.regroup = &regrouper{width: width}
		for _, c := range st.Schema[topology.PseudoColumns : topology.PseudoColumns+st.Keys] {
			r.regroup.keyTypes = append(r.regroup.keyTypes, c.Type)
		}
	}
	return r, nil
}

func (r *repartitionOp) Open(_ context.Context, oc *OpContext) error {
	r.counts, r.errs = oc.counts, oc.Errors
	return nil
}

func (r *repartitionOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	r.out.Reset()
	if r.regroup != nil {
		r.regroup.records(b, r.keys, r.errs, &r.out)
		if r.out.Len() == 0 {
			return nil
		}
		return out.Emit(ctx, &r.out)
	}
	var nulls int64
rows:
	for i := 0; i < b.Len(); i++ {
		kind := Insert
		switch b.Kind(i).Base() {
		case Insert, UpdateAfter:
		case Delete, NullValue:
			if !r.table {
				if b.Kind(i).Base() == NullValue {
					nulls++
				}
				continue
			}
			kind = NullValue
		default:
			continue
		}
		row := b.Row(i)[topology.PseudoColumns:]
		for j, v := range row[:r.keys] {
			if v == nil {
				if r.groupBy && kind == Insert && r.errs != nil {
					r.errs.RowError(nullGroupKey(j), b.Row(i))
				}
				continue rows
			}
		}
		r.out.Append(row, b.Time(i), kind)
		r.out.SetHeaders(r.out.Len()-1, b.Headers(i))
	}
	r.counts.addNulls(nulls)
	if r.out.Len() == 0 {
		return nil
	}
	return out.Emit(ctx, &r.out)
}

func (r *repartitionOp) OnCommit(context.Context, Emitter) error { return nil }
func (r *repartitionOp) Close(context.Context) error             { return nil }

var _ Operator = (*repartitionOp)(nil)

// regrouper turns a table's rekeyed changes into the change records of a
// regrouping Repartition (see topology.RegroupSchema): the old row's
// retraction from its group and the new row's addition to its group, in
// one record when the groups are the same.
type regrouper struct {
	// width is the number of columns of one row after its key columns.
	width    int
	keyTypes []*types.Type
	// newKey and oldKey are scratch for the encoded group keys, part
	// for one key value.
	newKey, oldKey, part []byte
	// arena backs the records of a batch; used is how much of it the
	// last batch's took.
	arena []any
	used  int
}

// records appends to out the change records of the rows of b, rekeyed
// changes that carry their rekeyed old rows; keys is the number of key
// columns. A row whose group key has a null has no group: the new row's
// is logged (the old row's was, when it was new).
func (g *regrouper) records(b *Batch, keys int, errs ErrorSink, out *Batch) {
	w := keys + 2*g.width + 1
	// The last batch's records are gone: the sink took them.
	clear(g.arena[:g.used])
	if cap(g.arena) < 2*b.Len()*w {
		g.arena = make([]any, 2*b.Len()*w)
	}
	arena := g.arena[:0]
	defer func() { g.used = len(arena) }()
	record := func(key []any, add, retract []any, change int32, time int64) {
		n := len(arena)
		arena = arena[:n+w]
		rec := arena[n : n+w : n+w]
		copy(rec, key)
		if add != nil {
			copy(rec[keys:], add[keys:])
		}
		if retract != nil {
			copy(rec[keys+g.width:], retract[keys:])
		}
		rec[w-1] = change
		out.Append(rec, time, Insert)
	}
	for i := 0; i < b.Len(); i++ {
		row, time := b.Row(i)[topology.PseudoColumns:], b.Time(i)
		var add, retract []any
		switch b.Kind(i).Base() {
		case Insert, UpdateAfter:
			add = row
		case Delete, NullValue:
		default:
			continue
		}
		if old, _ := b.Old(i); old != nil {
			retract = old[topology.PseudoColumns:]
		}
		if add != nil {
			var msg string
			if g.newKey, msg = g.groupKey(g.newKey, add[:keys]); msg != "" {
				if errs != nil {
					errs.RowError(msg, b.Row(i))
				}
				add = nil
			}
		}
		if retract != nil {
			var msg string
			if g.oldKey, msg = g.groupKey(g.oldKey, retract[:keys]); msg != "" {
				retract = nil
			}
		}
		from := out.Len()
		switch {
		case add != nil && retract != nil && bytes.Equal(g.newKey, g.oldKey):
			record(add[:keys], add, retract, topology.RegroupAdd|topology.RegroupRetract, time)
		default:
			if retract != nil {
				record(retract[:keys], nil, retract, topology.RegroupRetract, time)
			}
			if add != nil {
				record(add[:keys], add, nil, topology.RegroupAdd, time)
			}
		}
		out.SetHeaders(from, b.Headers(i))
	}
}

// groupKey encodes the key columns of a row into dst, each value
// length-prefixed; when one of them is null, or cannot be encoded, the
// row has no group and msg says why.
func (g *regrouper) groupKey(dst []byte, key []any) (_ []byte, msg string) {
	dst = dst[:0]
	for j, v := range key {
		if v == nil {
			return dst, nullGroupKey(j)
		}
		p, err := expr.AppendValue(g.part[:0], v, g.keyTypes[j])
		if err != nil {
			return dst, fmt.Sprintf("cannot encode group key %d: %v", j, err)
		}
		g.part = p
		dst = binary.AppendUvarint(dst, uint64(len(p)))
		dst = append(dst, p...)
	}
	return dst, ""
}

// internalCodec encodes the key or the value of a repartition topic's
// records: the columns as one array of exact values (expr.MarshalValue),
// which reads back to the same values and types.
type internalCodec struct {
	t *types.Type
}

func newInternalCodec(cols []types.Column) *internalCodec {
	fields := make([]types.Field, len(cols))
	for i, c := range cols {
		fields[i] = types.Field(c)
	}
	return &internalCodec{t: types.StructOf(fields...)}
}

// Decode implements format.Codec.
func (c *internalCodec) Decode(b []byte, dst []any) error {
	if b == nil {
		clear(dst)
		return nil
	}
	v, err := expr.UnmarshalValue(b, c.t)
	if err != nil {
		return err
	}
	s, ok := v.(types.StructValue)
	if !ok || len(s) != len(dst) {
		return fmt.Errorf("expected %d columns", len(dst))
	}
	copy(dst, s)
	return nil
}

// Encode implements format.Codec.
func (c *internalCodec) Encode(dst []byte, row []any) ([]byte, error) {
	return expr.AppendRow(dst, row, c.t)
}

// nullGroupKey is ksqlDB's processing-log message for a row whose j-th
// GROUP BY expression (from 0) is null: it has no group.
func nullGroupKey(j int) string {
	return fmt.Sprintf("Group-by column with index %d resolved to null. The source row will be excluded from the table.", j)
}
