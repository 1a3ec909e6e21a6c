package api

import (
	"context"
	"errors"
	"io"
	"testing"
)

// TestStreamTombstones checks that NextRow returns a stream's tombstones,
// marked, and Next skips them.
func TestStreamTombstones(t *testing.T) {
	rows := []Row{{Values: []any{1}}, {Values: []any{2, nil}, Tombstone: true}, {Values: []any{3}}}
	open := func() *Stream {
		i := 0
		return NewRowStream("q", nil, func(context.Context) (Row, error) {
			if i == len(rows) {
				return Row{}, io.EOF
			}
			i++
			return rows[i-1], nil
		}, func() {}, nil)
	}
	ctx := context.Background()
	s := open()
	for i, want := range rows {
		r, err := s.NextRow(ctx)
		if err != nil || r.Tombstone != want.Tombstone || r.Values[0] != want.Values[0] {
			t.Fatalf("NextRow %d = %v, %v; want %v", i, r, err, want)
		}
	}
	s = open()
	for _, want := range []any{1, 3} {
		if v, err := s.Next(ctx); err != nil || v[0] != want {
			t.Fatalf("Next = %v, %v; want [%v]", v, err, want)
		}
	}
	if _, err := s.Next(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Next at the end = %v, want io.EOF", err)
	}
}
