package exec

import (
	"context"
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
type repartitionOp struct {
	keys    int
	table   bool
	groupBy bool // a null key column is logged (see topology.Step.NullKeysLogged)
	counts  *counters
	errs    ErrorSink
	out     Batch
}

func newRepartitionOp(st topology.Step) *repartitionOp {
	return &repartitionOp{keys: st.Keys, table: st.Table, groupBy: st.NullKeysLogged}
}

func (r *repartitionOp) Open(_ context.Context, oc *OpContext) error {
	r.counts, r.errs = oc.counts, oc.Errors
	return nil
}

func (r *repartitionOp) OnBatch(ctx context.Context, _ int, b *Batch, out Emitter) error {
	r.out.Reset()
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
