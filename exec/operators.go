package exec

import (
	"fmt"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
)

// operatorKind builds the operator of one step kind.
type operatorKind struct {
	// stateless says the operator keeps no state and needs no task: it
	// may run in a Pipeline, over rows read from a table's state.
	stateless bool
	// build compiles step st over input rows laid out as in, whose key
	// columns (indexes into in) are keys. It returns the operator and the
	// key columns of the rows it emits.
	build func(st *topology.Step, in []types.Column, keys map[int]bool) (Operator, map[int]bool, error)
}

// operators is the operator of every step kind, by the settings the plan
// gives each step (topology.Complete): persistent and push query tasks
// build their stages' steps with it, Pipeline the stateless ones.
var operators = map[topology.StepKind]operatorKind{
	topology.Filter: {stateless: true, build: func(st *topology.Step, _ []types.Column, keys map[int]bool) (Operator, map[int]bool, error) {
		op, err := newFilterOp(st.Predicate, st.Retract)
		return op, keys, err
	}},
	topology.Project: {stateless: true, build: func(st *topology.Step, _ []types.Column, keys map[int]bool) (Operator, map[int]bool, error) {
		op, err := newProjectOp(st.Exprs, keys)
		return op, keys, err
	}},
	topology.FlatMap: {stateless: true, build: func(st *topology.Step, _ []types.Column, keys map[int]bool) (Operator, map[int]bool, error) {
		op, err := newFlatMapOp(st.Exprs, st.TableFuncs)
		return op, keys, err
	}},
	topology.Rekey: {build: func(st *topology.Step, _ []types.Column, keys map[int]bool) (Operator, map[int]bool, error) {
		p, err := newProjectOp(st.Exprs, keys)
		if err != nil {
			return nil, nil, err
		}
		p.rekey, p.withOld = true, st.WithOld
		return p, keyColumns(topology.PseudoColumns, st.Keys), nil
	}},
	topology.Aggregate: {build: func(st *topology.Step, in []types.Column, _ map[int]bool) (Operator, map[int]bool, error) {
		if st.Window != nil {
			w, err := newWindowAggregateOp(*st, in)
			if err != nil {
				return nil, nil, err
			}
			w.withOld = st.WithOld
			// The window bounds follow the key columns.
			return w, keyColumns(topology.PseudoColumns, st.Keys+2), nil
		}
		a, err := newAggregateOp(*st, in)
		if err != nil {
			return nil, nil, err
		}
		a.changes.withOld = st.WithOld
		return a, keyColumns(topology.PseudoColumns, st.Keys), nil
	}},
	topology.Materialize: {build: func(st *topology.Step, in []types.Column, keys map[int]bool) (Operator, map[int]bool, error) {
		m, err := newMaterializeOp(*st, in)
		if err != nil {
			return nil, nil, err
		}
		m.passAll = st.PassAll
		return m, keys, nil
	}},
	topology.Repartition: {build: func(st *topology.Step, _ []types.Column, keys map[int]bool) (Operator, map[int]bool, error) {
		r, err := newRepartitionOp(*st)
		return r, keys, err
	}},
	topology.Join: {build: func(st *topology.Step, in []types.Column, _ map[int]bool) (Operator, map[int]bool, error) {
		j, err := newJoinOp(*st, in)
		if err != nil {
			return nil, nil, err
		}
		return j, keyColumns(topology.PseudoColumns, st.Keys), nil
	}},
}

// newOperator builds the operator of step st (see operators); stateless
// refuses a step whose operator keeps state.
func newOperator(st *topology.Step, in []types.Column, keys map[int]bool, stateless bool) (Operator, map[int]bool, error) {
	k, ok := operators[st.Kind]
	switch {
	case stateless && !k.stateless:
		return nil, nil, fmt.Errorf("exec: a %s step cannot run over a table's rows", st.Kind)
	case !ok:
		return nil, nil, fmt.Errorf("exec: unknown step kind %q", st.Kind)
	}
	return k.build(st, in, keys)
}
