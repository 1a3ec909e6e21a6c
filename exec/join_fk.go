package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
)

// foreignKeyFn is the state of a foreign-key table-table join: the left
// table is kept under its own key, the right table under its key, and the
// index table maps each foreign key to the left keys that reference it,
// so that a right change reaches every left row that joins it. The output
// is keyed by the left table's key.
//
// Both tables are read from the same partition number: a left row finds
// its right row only when the right row's key lands in the same partition
// as the left row's key. That holds for single-partition tables and for
// co-partitioned ones; Kafka Streams' subscription topics, which lift the
// restriction, are not built.
type foreignKeyFn struct {
	fk       eval.Evaluator
	fkText   string
	fkType   *types.Type
	index    string
	rightKey []eval.Evaluator // the right table's key, over a right row
	rkTypes  []*types.Type
	fkbuf    []byte
	oldbuf   []byte
	lkbuf    []byte
}

func (f *foreignKeyFn) init(j *joinOp, st topology.Step) error {
	spec := st.Join
	ev, err := eval.Compile(spec.ForeignKey)
	if err != nil {
		return err
	}
	f.fk, f.fkText, f.fkType = ev, spec.ForeignKey.String(), spec.ForeignKey.Type
	f.index = spec.ExtraState
	// The left table's key: the output key columns, read from the left
	// row's key columns unless LeftKey names them.
	nLeft := st.Keys
	if len(j.keys[leftPort]) == 0 {
		for k := range nLeft {
			c := j.schemas[leftPort][topology.PseudoColumns+k]
			e := expr.Column(topology.PseudoColumns+k, c.Name, c.Type)
			ev, _ := eval.Compile(e)
			j.keys[leftPort] = append(j.keys[leftPort], ev)
			j.keyTexts[leftPort] = append(j.keyTexts[leftPort], e.String())
			j.keyTypes = append(j.keyTypes, c.Type)
		}
	}
	if len(j.keys[leftPort]) != nLeft {
		return fmt.Errorf("exec: foreign-key join keyed by %d left columns outputs %d", len(j.keys[leftPort]), nLeft)
	}
	nRight := len(j.keys[rightPort])
	if nRight == 0 {
		// The right table's key columns: the single one a foreign key
		// matches.
		nRight = 1
		c := j.schemas[rightPort][topology.PseudoColumns]
		ev, _ := eval.Compile(expr.Column(topology.PseudoColumns, c.Name, c.Type))
		f.rightKey = []eval.Evaluator{ev}
		f.rkTypes = []*types.Type{c.Type}
	} else {
		f.rightKey = j.keys[rightPort]
		for _, e := range spec.RightKey {
			f.rkTypes = append(f.rkTypes, e.Type)
		}
	}
	j.codecs[leftPort] = newRowCodec(j.schemas[leftPort], nLeft)
	j.codecs[rightPort] = newRowCodec(j.schemas[rightPort], nRight)
	return nil
}

// rightKeyBytes encodes the right table's key of row into f.fkbuf.
func (f *foreignKeyFn) rightKeyBytes(row []any) (bool, error) {
	f.fkbuf = f.fkbuf[:0]
	for k, ev := range f.rightKey {
		v, err := ev.Eval(row)
		if err != nil || v == nil {
			return false, nil
		}
		if f.fkbuf, err = appendField(f.fkbuf, v, f.rkTypes[k]); err != nil {
			return false, err
		}
	}
	return true, nil
}

// foreignKeyOf encodes the foreign key of a left row into dst; ok is false
// for a null foreign key (or no row).
func (j *joinOp) foreignKeyOf(dst []byte, row []any) ([]byte, bool) {
	if row == nil {
		return dst, false
	}
	f := &j.fk
	v, err := f.fk.Eval(row)
	if err != nil {
		j.errs.RowError("error computing the foreign key "+f.fkText+": "+err.Error(), row)
		return dst, false
	}
	if v == nil {
		return dst, false
	}
	typ := f.fkType
	if len(f.rkTypes) == 1 {
		typ = f.rkTypes[0]
	}
	out, err := appendField(dst, v, typ)
	if err != nil {
		j.errs.RowError("cannot encode the foreign key: "+err.Error(), row)
		return dst, false
	}
	return out, true
}

func (j *joinOp) foreignKey(in int, b *Batch, i int) error {
	if in == rightPort {
		return j.foreignKeyRight(b, i)
	}
	f := &j.fk
	newRow, old, ok, err := j.tableChange(leftPort, b, i)
	if err != nil || !ok {
		return err
	}
	lk := append(f.lkbuf[:0], j.kbuf...)
	f.lkbuf = lk
	var newOK, oldOK bool
	f.fkbuf, newOK = j.foreignKeyOf(f.fkbuf[:0], newRow)
	f.oldbuf, oldOK = j.foreignKeyOf(f.oldbuf[:0], old)
	if oldOK && (!newOK || !bytes.Equal(f.oldbuf, f.fkbuf)) {
		if err := j.indexUpdate(f.oldbuf, lk, false); err != nil {
			return err
		}
	}
	if newOK && (!oldOK || !bytes.Equal(f.oldbuf, f.fkbuf)) {
		if err := j.indexUpdate(f.fkbuf, lk, true); err != nil {
			return err
		}
	}
	var right, oldRight []any
	if newOK {
		if right, err = j.getRow(rightPort, f.fkbuf); err != nil {
			return err
		}
	}
	if oldOK {
		if oldRight, err = j.getRow(rightPort, f.oldbuf); err != nil {
			return err
		}
	}
	// As Kafka Streams' subscriptions do: a new left row without its
	// right row emits nothing (INNER), a changed or deleted one deletes
	// its key whatever it joined before.
	t := b.Time(i)
	newOut := j.result(leftPort, newRow, right, b.Row(i), t)
	oldOut := j.result(leftPort, old, oldRight, b.Row(i), t)
	switch {
	case newOut != nil || oldOut != nil:
		j.change(newOut, oldOut, t)
	case old != nil:
		j.tombstone(t)
	}
	return nil
}

// foreignKeyRight applies a change of the right table and emits the join
// result of every left row referencing its key.
func (j *joinOp) foreignKeyRight(b *Batch, i int) error {
	f := &j.fk
	row := b.Row(i)
	if b.Kind(i)&KeyAbsent != 0 {
		return nil
	}
	ok, err := f.rightKeyBytes(row)
	if err != nil || !ok {
		return err
	}
	var newRow, old []any
	if b.Kind(i).Base() != NullValue {
		newRow = row
	}
	if j.mat[rightPort] {
		old, _ = b.Old(i)
	} else {
		if old, err = j.getRow(rightPort, f.fkbuf); err != nil {
			return err
		}
		if newRow == nil && old == nil {
			return nil
		}
		if err := j.keepRow(rightPort, f.fkbuf, newRow); err != nil {
			return err
		}
	}
	refs, found, err := j.cache.Get(f.index, f.fkbuf)
	if err != nil || !found {
		return err
	}
	t := b.Time(i)
	for len(refs) > 0 {
		n, m := binary.Uvarint(refs)
		if m <= 0 || n > uint64(len(refs)-m) {
			return fmt.Errorf("exec: corrupt join state in %s", f.index)
		}
		lk := refs[m : m+int(n)]
		refs = refs[m+int(n):]
		left, err := j.getRow(leftPort, lk)
		if err != nil {
			return err
		}
		if left == nil {
			continue
		}
		for k := range j.nKey {
			j.key[k] = left[j.codecs[leftPort].keyFrom+k]
		}
		j.change(j.result(leftPort, left, newRow, row, t), j.result(leftPort, left, old, row, t), t)
	}
	return nil
}

// indexUpdate adds the left key lk to, or removes it from, the left keys
// referencing the foreign key fk.
func (j *joinOp) indexUpdate(fk, lk []byte, add bool) error {
	f := &j.fk
	refs, _, err := j.cache.Get(f.index, fk)
	if err != nil {
		return fmt.Errorf("exec: read join state: %w", err)
	}
	out := make([]byte, 0, len(refs)+len(lk)+2)
	for len(refs) > 0 {
		n, m := binary.Uvarint(refs)
		if m <= 0 || n > uint64(len(refs)-m) {
			return fmt.Errorf("exec: corrupt join state in %s", f.index)
		}
		k := refs[m : m+int(n)]
		if !bytes.Equal(k, lk) {
			out = append(out, refs[:m+int(n)]...)
		}
		refs = refs[m+int(n):]
	}
	if add {
		out = binary.AppendUvarint(out, uint64(len(lk)))
		out = append(out, lk...)
	}
	if len(out) == 0 {
		err = j.cache.Delete(f.index, fk)
	} else {
		err = j.cache.Put(f.index, fk, out)
	}
	if err != nil {
		return fmt.Errorf("exec: write join state: %w", err)
	}
	return nil
}
