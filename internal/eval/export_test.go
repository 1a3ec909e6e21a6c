package eval

import "github.com/sluice-sql/sluice/internal/types"

func dec(s string) types.Dec {
	d, err := types.ParseDec(s)
	if err != nil {
		panic(err)
	}
	return d
}

// Dec is dec for the tests of package eval_test.
var Dec = dec
