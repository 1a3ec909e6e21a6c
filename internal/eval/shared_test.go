package eval

import (
	"sync/atomic"
	"testing"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// calls counts the calls of TEST_COUNTED, which returns its argument.
var calls atomic.Int64

func init() {
	Register(&Func{
		Name: "TEST_COUNTED", Description: "a test's identity function that counts its calls",
		Check: func(ts []*types.Type) (*types.Type, error) { return types.BigintType, nil },
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict(func(a []any) (any, error) { calls.Add(1); return a[0], nil }), nil
		},
	})
}

func TestSharedComputesOncePerRow(t *testing.T) {
	col := expr.Column(0, "X", types.BigintType)
	counted := func() *expr.Expr {
		return &expr.Expr{Op: expr.OpCall, Func: "TEST_COUNTED", Type: types.BigintType, Args: []*expr.Expr{col}}
	}
	plus := func(a, b *expr.Expr) *expr.Expr {
		return &expr.Expr{Op: expr.OpAdd, Type: types.BigintType, Args: []*expr.Expr{a, b}}
	}
	// TEST_COUNTED(X) + TEST_COUNTED(X), and TEST_COUNTED(X) alone.
	es := []*expr.Expr{plus(counted(), counted()), counted()}
	sh, err := CompileShared(es)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []int64{3, 5} {
		calls.Store(0)
		sh.Row()
		row := []any{x}
		if v, err := sh.Eval(0, row); err != nil || v != 2*x {
			t.Fatalf("row %d: expression 0 = %v, %v", x, v, err)
		}
		if v, err := sh.Eval(1, row); err != nil || v != x {
			t.Fatalf("row %d: expression 1 = %v, %v", x, v, err)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("row %d: TEST_COUNTED ran %d times, want once", x, n)
		}
	}
	// Compile alone shares nothing.
	ev, err := Compile(es[0])
	if err != nil {
		t.Fatal(err)
	}
	calls.Store(0)
	if v, _ := ev.Eval([]any{int64(4)}); v != int64(8) || calls.Load() != 2 {
		t.Errorf("Compile: %v with %d calls, want 8 with 2", v, calls.Load())
	}
}

func TestSharedLeavesRandom(t *testing.T) {
	random := func() *expr.Expr { return &expr.Expr{Op: expr.OpCall, Func: "RANDOM", Type: types.DoubleType} }
	sh, err := CompileShared([]*expr.Expr{random(), random()})
	if err != nil {
		t.Fatal(err)
	}
	sh.Row()
	a, _ := sh.Eval(0, nil)
	b, _ := sh.Eval(1, nil)
	if a == b {
		t.Errorf("RANDOM() twice in a row gave %v both times", a)
	}
	// Without Row nothing is reused.
	col := expr.Column(0, "X", types.BigintType)
	counted := &expr.Expr{Op: expr.OpCall, Func: "TEST_COUNTED", Type: types.BigintType, Args: []*expr.Expr{col}}
	sh, err = CompileShared([]*expr.Expr{counted, counted})
	if err != nil {
		t.Fatal(err)
	}
	calls.Store(0)
	_, _ = sh.Eval(0, []any{int64(1)})
	_, _ = sh.Eval(1, []any{int64(2)})
	if calls.Load() != 2 {
		t.Errorf("before any Row: %d calls, want 2", calls.Load())
	}
}
