package topology

import (
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// PruneSources works out which value columns of g's source, and of the
// sources of its joins' right inputs, the query reads anywhere, and records
// the others in Source.Unused. It walks the steps from the output back to
// the source, keeping the set of columns each step's input must carry:
//
//   - the output (a sink or a push query's rows) reads every column of the
//     last step;
//   - a Filter reads what the steps after it read and its predicate's
//     columns; one that retracts rows (over a table) reads every column;
//   - a Project or Rekey (whose expressions compute its whole output row)
//     reads the columns of the expressions of the output columns read
//     later, and a Rekey those of its new key columns;
//   - a Repartition of a stream's rows writes them to its topic for the
//     steps after it: it reads what they read and its key columns (the
//     columns they do not read go through as nulls);
//   - a FlatMap reads what the steps after it read of its input columns and
//     the columns of its arrays;
//   - an Aggregate reads the columns of its grouping expressions and of its
//     aggregates' arguments and parameters;
//   - a Join reads what the steps after it read of the columns it copies
//     from each side, and each side's join expressions, key columns and
//     window bounds (see joinReads); a foreign-key join reads everything;
//   - a Materialize and a Repartition of a table's changes keep or
//     forward whole rows and read every column, as does any other step.
//
// The source's TIMESTAMP column is read as well. When in doubt a column is
// read: leaving a read column null would change results, decoding an
// unread one only costs time.
func PruneSources(g *Graph) { pruneSources(g, nil) }

// pruneSources is PruneSources for a graph whose output columns are read
// where out is true; nil means all of them.
func pruneSources(g *Graph, out []bool) {
	if g == nil || g.Source == nil {
		return
	}
	in := g.Source.Schema()
	need := readColumns(in, g.Steps, out)
	valueStart := PseudoColumns + len(g.Source.Key)
	if g.Source.Window != nil {
		valueStart += 2
	}
	g.Source.Unused = nil
	for j, c := range g.Source.Value {
		if !need[valueStart+j] && c.Name != g.Source.Timestamp {
			g.Source.Unused = append(g.Source.Unused, c.Name)
		}
	}
}

// readColumns returns, for each column of in (the source row), whether
// steps or the output after them read it; out says which columns of the
// last step's output are read, nil meaning all. It prunes the sources of
// the joins' right inputs on the way.
func readColumns(in []types.Column, steps []Step, out []bool) []bool {
	schemaOf := func(i int) []types.Column {
		if i < 0 {
			return in
		}
		return steps[i].Schema
	}
	// need is over the output of step i, starting with the last one's.
	need := out
	if n := len(schemaOf(len(steps) - 1)); len(need) != n {
		need = all(n)
	}
	for i := len(steps) - 1; i >= 0; i-- {
		st := &steps[i]
		nIn := len(schemaOf(i - 1))
		next := make([]bool, nIn)
		mark := func(es ...*expr.Expr) bool {
			for _, e := range es {
				for _, c := range expr.Columns(e) {
					if c < 0 || c >= nIn {
						return false
					}
					next[c] = true
				}
			}
			return true
		}
		ok := true
		switch st.Kind {
		case Filter:
			if st.Retract || len(need) != nIn {
				ok = false
				break
			}
			copy(next, need)
			ok = mark(st.Predicate)
		case Project, Rekey:
			for j, e := range st.Exprs {
				key := st.Kind == Rekey && j < PseudoColumns+st.Keys
				if len(need) != len(st.Exprs) || need[j] || key {
					ok = ok && mark(e)
				}
			}
		case Repartition:
			if st.Table || len(need) != nIn {
				ok = false
				break
			}
			copy(next, need)
			for j := 0; j < PseudoColumns+st.Keys && j < nIn; j++ {
				next[j] = true
			}
		case FlatMap:
			if len(need) < nIn {
				ok = false
				break
			}
			copy(next, need[:nIn])
			ok = mark(st.Exprs...)
		case Aggregate:
			ok = mark(st.GroupBy...)
			for _, a := range st.Aggs {
				ok = ok && mark(a.Args...) && mark(a.Params...)
			}
		case Join:
			ok = joinReads(st, schemaOf(i-1), need, next)
		default:
			ok = false
		}
		if !ok {
			next = all(nIn)
		}
		need = next
	}
	return need
}

// joinReads works out what a Join step reads of its left input (in, into
// left) from what the steps after it read of its output (need), and prunes
// its right input's source likewise. The joined row copies both rows after
// their pseudo-columns; besides the copied columns that are read later,
// each side reads the columns of its join expressions, its key columns and
// its window bounds, and a stream-stream join keeps its rows in its state
// with the columns read later. A foreign-key join reads every column of
// both sides. ok is false when the step is not laid out as expected: left
// must then be all read.
func joinReads(st *Step, in []types.Column, need, left []bool) (ok bool) {
	j := st.Join
	if j == nil || j.Right == nil {
		return false
	}
	right := j.Right.Output
	nl, nr := len(in)-PseudoColumns, len(right)-PseudoColumns
	if j.ForeignKey != nil || nl < len(j.LeftKey) || nr < len(j.RightKey) || len(need) != PseudoColumns+st.Keys+nl+nr {
		pruneSources(j.Right, nil)
		return false
	}
	rightNeed := make([]bool, len(right))
	at := PseudoColumns + st.Keys
	copy(left[PseudoColumns:], need[at:at+nl])
	copy(rightNeed[PseudoColumns:], need[at+nl:])
	for side, es := range [2][]*expr.Expr{j.LeftKey, j.RightKey} {
		read, schema := left, in
		if side == 1 {
			read, schema = rightNeed, right
		}
		for c := 0; c < PseudoColumns+len(es); c++ {
			read[c] = true
		}
		for c, col := range schema {
			if col.Name == WindowStart || col.Name == WindowEnd {
				read[c] = true
			}
		}
		for _, e := range es {
			for _, c := range expr.Columns(e) {
				if c < 0 || c >= len(read) {
					pruneSources(j.Right, nil)
					return false
				}
				read[c] = true
			}
		}
	}
	pruneSources(j.Right, rightNeed)
	return true
}

func all(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// ValueRead returns, for each value column of s, whether the query reads
// it; nil when it reads them all.
func (s *Source) ValueRead() []bool {
	if len(s.Unused) == 0 {
		return nil
	}
	unused := make(map[string]bool, len(s.Unused))
	for _, n := range s.Unused {
		unused[n] = true
	}
	read := make([]bool, len(s.Value))
	for j, c := range s.Value {
		read[j] = !unused[c.Name]
	}
	return read
}
