package qtt

import (
	"errors"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/types"
)

// The corpus calls a few functions that exist only in ksqlDB's own test
// setup, as its harness loads them. The runner registers the ones whose
// behaviour the corpus spells out; the server binary never links them.
func init() {
	register := func(name string, ret *types.Type) {
		eval.Register(&eval.Func{
			Name:        name,
			Description: "Test function of the conformance corpus: returns its first argument, fails when the second is false.",
			Check: func(a []*types.Type) (*types.Type, error) {
				if len(a) != 2 || a[0] == nil || a[0].Kind != ret.Kind || a[1] == nil || a[1].Kind != types.Boolean {
					return nil, errors.New("Function '" + name + "' does not accept these parameters")
				}
				return ret, nil
			},
			Build: func([]*types.Type, *types.Type) (eval.Impl, error) {
				return eval.Strict(func(v []any) (any, error) {
					if !v[1].(bool) {
						return nil, errors.New(name + " was evaluated")
					}
					return v[0], nil
				}), nil
			},
		})
	}
	register("WHENCONDITION", types.BooleanType)
	register("WHENRESULT", types.IntType)
	eval.Register(badUDF)
}

// badUDF is ksqlDB's BAD_UDF test function as the group-by cases use it:
// on a STRING it returns null on every other call, starting with the first
// (each compiled call counts its own calls); on an INT it always fails; on
// a BOOLEAN it fails when the argument is true and returns 0 otherwise.
var badUDF = &eval.Func{
	Name:        "BAD_UDF",
	Description: "Test function of the conformance corpus: null every other call on a STRING, fails on an INT.",
	Check: func(a []*types.Type) (*types.Type, error) {
		if len(a) == 1 && a[0] != nil {
			switch a[0].Kind {
			case types.String, types.Int:
				return types.StringType, nil
			case types.Boolean:
				return types.IntType, nil
			}
		}
		return nil, errors.New("Function 'BAD_UDF' does not accept these parameters")
	},
	Build: func(a []*types.Type, _ *types.Type) (eval.Impl, error) {
		switch a[0].Kind {
		case types.String:
			calls := 0
			return func(row []any, args []eval.ArgFunc) (any, error) {
				calls++
				if calls%2 == 1 {
					return nil, nil
				}
				return args[0](row)
			}, nil
		case types.Int:
			return func([]any, []eval.ArgFunc) (any, error) { return nil, errors.New("boom!") }, nil
		}
		return eval.Strict(func(v []any) (any, error) {
			if v[0].(bool) {
				return nil, errors.New("boom!")
			}
			return int32(0), nil
		}), nil
	},
}
