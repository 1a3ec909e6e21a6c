package eval

import (
	"fmt"

	"github.com/sluice-sql/sluice/internal/types"
)

func init() {
	Register(&Func{
		Name:        "AS_VALUE",
		Description: "AS_VALUE(col): copies a key column into the value; the result is not a key column.",
		Check: func(args []*types.Type) (*types.Type, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("AS_VALUE takes exactly one argument, got %d", len(args))
			}
			if args[0] == nil {
				return nil, fmt.Errorf("AS_VALUE cannot take an untyped NULL; cast it to a type")
			}
			return args[0], nil
		},
		Build: func(args []*types.Type, ret *types.Type) (Impl, error) {
			return func(row []any, a []ArgFunc) (any, error) { return a[0](row) }, nil
		},
	})
}
