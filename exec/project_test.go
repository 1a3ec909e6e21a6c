package exec

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// TestProjectSpan projects a span of the input columns: rows with a value
// pass on as their span, a NullValue row keeps only its key columns.
func TestProjectSpan(t *testing.T) {
	es := []*expr.Expr{expr.Column(1, "K", types.BigintType), expr.Column(2, "V", types.StringType)}
	p, err := newProjectOp(es, map[int]bool{1: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.span || p.first != 1 {
		t.Fatalf("span %v from %d", p.span, p.first)
	}
	var in Batch
	in.Append([]any{int64(10), int64(1), "a"}, 10, Insert)
	in.Append([]any{int64(11), int64(2), "stale"}, 11, NullValue)
	in.Append([]any{int64(12), int64(3), "c"}, 12, Insert)
	var got []string
	err = p.OnBatch(context.Background(), 0, &in, emitterFunc(func(_ context.Context, b *Batch) error {
		for i := 0; i < b.Len(); i++ {
			got = append(got, fmt.Sprintf("%v@%d/%v", b.Row(i), b.Time(i), b.Kind(i) == NullValue))
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[[1 a]@10/false [2 <nil>]@11/true [3 c]@12/false]"; fmt.Sprint(got) != want {
		t.Errorf("projected %v, want %s", got, want)
	}
	// Not a span: out of order, or not only columns.
	for _, es := range [][]*expr.Expr{
		{expr.Column(2, "V", types.StringType), expr.Column(1, "K", types.BigintType)},
		{expr.Column(1, "K", types.BigintType), expr.Literal(int64(1), types.BigintType)},
	} {
		if p, err := newProjectOp(es, nil); err != nil || p.span {
			t.Errorf("%v: span %v, %v", es, p != nil && p.span, err)
		}
	}
}
