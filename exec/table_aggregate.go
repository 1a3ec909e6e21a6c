package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
)

// changeState is what aggregateOp needs to aggregate a table's changes,
// with Kafka Streams' KGroupedTable semantics, and to pass its groups' old
// rows on to a HAVING filter.
type changeState struct {
	// withOld makes every output row a change carrying the group's
	// previous row (nil for a new group), for a filter that follows.
	withOld bool
	// oldKey is the group key of a change's old row.
	oldKey []byte
	slab   rowSlab
	// regroup, when the input rows are a regrouping Repartition's change
	// records (topology.RegroupSchema), is the number of columns of one
	// row after the key; 0 otherwise.
	regroup int
}

// rowSlab hands out rows that stay valid until reset, in chunks, so that
// emitting rows allocates per batch rather than per row.
type rowSlab struct{ cur []any }

func (s *rowSlab) alloc(w int) []any {
	if len(s.cur)+w > cap(s.cur) {
		s.cur = make([]any, 0, max(1024, 16*w))
	}
	n := len(s.cur)
	s.cur = s.cur[:n+w]
	return s.cur[n : n+w : n+w]
}

func (s *rowSlab) reset() {
	clear(s.cur)
	s.cur = s.cur[:0]
}

// onChange aggregates row i of b, a change of a table carrying its key's
// old row: the old row is retracted from its group and the new row, if
// any, added to its group. When both fall in the same group one row goes
// out; otherwise the old group's row, then the new group's. A group whose
// last row left stays, with COUNT at zero, as in ksqlDB.
func (a *aggregateOp) onChange(b *Batch, i int) error {
	old, _ := b.Old(i)
	return a.change(b.Row(i), old, b.Kind(i).Base() == Insert, b.Time(i))
}

// onRecord aggregates row i of b, a change record of a regrouping
// Repartition: its old row, when it carries one, is retracted from the
// record's group, and its new row, when it carries one, added to it.
func (a *aggregateOp) onRecord(b *Batch, i int) error {
	at := topology.PseudoColumns + len(a.groupBy)
	w := a.changes.regroup
	in := b.Row(i)
	change, _ := in[at+2*w].(int32)
	var old []any
	if change&topology.RegroupRetract != 0 {
		// The old row is laid out as the new one: the record's
		// pseudo-columns and key, then its own columns.
		old = a.changes.slab.alloc(at + w)
		copy(old, in[:at])
		copy(old[at:], in[at+w:at+2*w])
	}
	isNew := change&topology.RegroupAdd != 0
	if isNew {
		in = in[: at+w : at+w]
	}
	return a.change(in, old, isNew, b.Time(i))
}

// change aggregates a change at time: old (nil when none) leaves its
// group, and in, when isNew, joins its group.
func (a *aggregateOp) change(in, old []any, isNew bool, time int64) error {
	nk := len(a.groupBy)
	w := topology.PseudoColumns + nk + len(a.aggs)
	var oldOut, newOut []any
	if old != nil {
		oldOut = a.changes.slab.alloc(w)
		if !a.groupKey(old, oldOut, false) {
			oldOut = nil
		}
		a.changes.oldKey = append(a.changes.oldKey[:0], a.key...)
	}
	if isNew {
		newOut = a.changes.slab.alloc(w)
		if !a.groupKey(in, newOut, true) {
			newOut = nil
		}
	}
	src := in
	if !isNew {
		src = old
	}
	for _, row := range [][]any{oldOut, newOut} {
		if row == nil {
			continue
		}
		row[0] = a.box.Int64(time)
		row[1] = a.partition
		row[2] = nil
		if a.pseudoIn {
			row[1], row[2] = src[1], src[2]
		}
	}
	if oldOut != nil && newOut != nil && bytes.Equal(a.changes.oldKey, a.key) {
		if err := a.load(); err != nil {
			return err
		}
		prev := a.oldRow(newOut)
		if a.found {
			if err := a.fold(old, true); err != nil {
				return err
			}
		}
		return a.finish(in, newOut, prev, time, false)
	}
	if oldOut != nil {
		newKey := a.key
		a.key = a.changes.oldKey
		err := a.load()
		if err == nil && a.found {
			prev := a.oldRow(oldOut)
			if err = a.fold(old, true); err == nil {
				err = a.finish(old, oldOut, prev, time, true)
			}
		}
		a.key, a.changes.oldKey = newKey, a.key
		if err != nil {
			return err
		}
	}
	if newOut != nil {
		if err := a.load(); err != nil {
			return err
		}
		return a.finish(in, newOut, a.oldRow(newOut), time, false)
	}
	return nil
}

// finish adds in to the loaded accumulators (unless retracted, when the
// old row was just taken out), stores them under a.key and emits row with
// their results, at the group's row time once it took the change's time.
func (a *aggregateOp) finish(in, row, prev []any, time int64, retracted bool) error {
	if !retracted {
		if err := a.fold(in, false); err != nil {
			return err
		}
	}
	if t := a.touch(time); t != time {
		// row has the change's time (see onChange): the group's is later.
		row[0], time = a.box.Int64(t), t
	}
	nk := len(a.groupBy)
	for j := range a.aggs {
		res, err := eval.AccumulatorResult(a.accs[j])
		if err != nil {
			a.errs.RowError("error computing "+a.aggs[j].text+": "+err.Error(), in)
			res = nil
		}
		row[topology.PseudoColumns+nk+j] = res
	}
	if err := a.store(); err != nil {
		return err
	}
	a.emit(row, prev, time)
	return nil
}

// fold adds (or retracts) one input row's arguments to the loaded
// accumulators. An old row's errors were logged when it was added.
func (a *aggregateOp) fold(in []any, retract bool) error {
	for j := range a.aggs {
		c := &a.aggs[j]
		var v any
		switch len(c.args) {
		case 0:
		case 1:
			var err error
			v, err = c.args[0].Eval(in)
			if err != nil && !retract {
				a.errs.RowError("error computing "+c.argTexts[0]+": "+err.Error(), in)
			}
		default:
			vs := make([]any, len(c.args))
			for k, ev := range c.args {
				x, err := ev.Eval(in)
				if err != nil && !retract {
					a.errs.RowError("error computing "+c.argTexts[k]+": "+err.Error(), in)
				}
				vs[k] = x
			}
			v = vs
		}
		if !retract {
			a.accs[j].Add(v)
			continue
		}
		if !a.accs[j].Retract(v) {
			return fmt.Errorf("exec: bug: %s cannot retract, yet it aggregates a table", c.text)
		}
	}
	return nil
}

// groupKey computes the group key of in into a.key and the key columns of
// out; ok is false when the row has no group (a null or failing key
// column, logged when log is set).
func (a *aggregateOp) groupKey(in, out []any, log bool) bool {
	a.key = a.key[:0]
	for j, ev := range a.groupBy {
		v, err := ev.Eval(in)
		if err != nil {
			if log {
				a.errs.RowError("error computing group key "+a.keyTexts[j]+": "+err.Error(), in)
			}
			return false
		}
		if v == nil {
			if log {
				a.errs.RowError(nullGroupKey(j), in)
			}
			return false
		}
		p, err := expr.MarshalValue(v, a.keyTypes[j])
		if err != nil {
			if log {
				a.errs.RowError("cannot encode group key "+a.keyTexts[j]+": "+err.Error(), in)
			}
			return false
		}
		a.key = binary.AppendUvarint(a.key, uint64(len(p)))
		a.key = append(a.key, p...)
		out[topology.PseudoColumns+j] = v
	}
	return true
}

// oldRow returns, when a filter follows, the group's row before the
// change: like row (pseudo-columns and key) with the loaded accumulators'
// results; nil for a group without state.
func (a *aggregateOp) oldRow(row []any) []any {
	if !a.changes.withOld || !a.found {
		return nil
	}
	nk := len(a.groupBy)
	old := a.changes.slab.alloc(len(row))
	copy(old, row[:topology.PseudoColumns+nk])
	for j := range a.aggs {
		res, err := eval.AccumulatorResult(a.accs[j])
		if err == nil {
			old[topology.PseudoColumns+nk+j] = res
		}
	}
	return old
}

// emit appends a group's new row, as a change from old when a filter
// follows.
func (a *aggregateOp) emit(row, old []any, time int64) {
	if a.changes.withOld {
		a.out.AppendChange(row, old, time, Insert)
		return
	}
	a.out.Append(row, time, Insert)
}
