package eval

import (
	"testing"
	"unsafe"

	"github.com/sluice-sql/sluice/internal/types"
)

// TestAccumulatorsOwnWhatTheyKeep: an accumulator that keeps the values
// it is given keeps copies, so that the buffer a value was decoded into
// (a batch's arena, which it would otherwise keep alive) can be written
// again without changing the state.
func TestAccumulatorsOwnWhatTheyKeep(t *testing.T) {
	cases := []struct {
		name   string
		args   []*types.Type
		params []any
	}{
		{"MAX", ts(tStr), nil},
		{"MIN", ts(tStr), nil},
		{"LATEST_BY_OFFSET", ts(tStr), nil},
		{"LATEST_BY_OFFSET", ts(tStr, tInt), []any{int32(2)}},
		{"EARLIEST_BY_OFFSET", ts(tStr), nil},
		{"COLLECT_LIST", ts(tStr), nil},
		{"COLLECT_SET", ts(tStr), nil},
		{"TOPK", ts(tStr, tInt), []any{int32(3)}},
		{"HISTOGRAM", ts(tStr), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, acc, ret := newAgg(t, c.name, c.args, c.params)
			buf := []byte("kept")
			acc.Add(unsafe.String(&buf[0], len(buf)))
			want := types.Own(acc.Result())
			copy(buf, "XXXX")
			if got := acc.Result(); !types.Equal(got, want) {
				t.Fatalf("%s changed with the buffer its value came from: %v, want %v (%s)", c.name, got, want, ret)
			}
		})
	}
}
