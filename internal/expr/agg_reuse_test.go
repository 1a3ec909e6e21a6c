package expr

import (
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

// TestReusableAccumulators checks that AppendBinary appends what
// MarshalBinary returns, and that UnmarshalBinary then restores it into a
// reused accumulator.
func TestReusableAccumulators(t *testing.T) {
	def := countAgg()
	a, err := def.New(nil, types.BigintType, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := a.(ReusableAccumulator)
	if !ok {
		t.Fatal("COUNT's accumulator is not reusable")
	}
	fresh, _ := r.AppendBinary(nil)
	for range 300 {
		r.Add(nil)
	}
	m, _ := r.MarshalBinary()
	p, _ := r.AppendBinary([]byte("x"))
	if string(p) != "x"+string(m) {
		t.Fatalf("AppendBinary %q, MarshalBinary %q", p, m)
	}
	if err := r.UnmarshalBinary(fresh); err != nil || r.Result() != int64(0) {
		t.Fatalf("fresh state: %v %v", r.Result(), err)
	}
	if err := r.UnmarshalBinary(m); err != nil || r.Result() != int64(300) {
		t.Fatalf("restored state: %v %v", r.Result(), err)
	}
}
