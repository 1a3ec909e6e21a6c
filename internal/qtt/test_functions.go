package qtt

import (
	"errors"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// The corpus calls a few functions that exist only in ksqlDB's own test
// setup, as its harness loads them. The runner registers the ones whose
// behaviour the corpus spells out; the server binary never links them.
func init() {
	register := func(name string, ret *types.Type) {
		expr.Register(&expr.Func{
			Name:        name,
			Description: "Test function of the conformance corpus: returns its first argument, fails when the second is false.",
			Check: func(a []*types.Type) (*types.Type, error) {
				if len(a) != 2 || a[0] == nil || a[0].Kind != ret.Kind || a[1] == nil || a[1].Kind != types.Boolean {
					return nil, errors.New("Function '" + name + "' does not accept these parameters")
				}
				return ret, nil
			},
			Build: func([]*types.Type, *types.Type) (expr.Impl, error) {
				return expr.Strict(func(v []any) (any, error) {
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
}
