package rest

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/types"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te\back`, "tab\tnl\ncr\r", "\x00\x1f", "héllo ☃", "<a>&", "bad\xffutf8"} {
		b := appendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q -> %s: %v", s, b, err)
		}
		want := string([]rune(s)) // invalid bytes become U+FFFD
		if got != want {
			t.Errorf("%q -> %s -> %q", s, b, got)
		}
	}
}

func TestAppendValue(t *testing.T) {
	st := types.StructOf(types.Field{Name: "A", Type: types.IntType}, types.Field{Name: "B", Type: types.StringType})
	dec, err := types.ParseDec("12.50")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		v    any
		t    *types.Type
		want string
	}{
		{nil, types.StringType, `null`},
		{int32(3), types.IntType, `3`},
		{int64(-4), types.BigintType, `-4`},
		{1.0, types.DoubleType, `1.0`},
		{math.NaN(), types.DoubleType, `"NaN"`},
		{dec, types.DecimalOf(4, 2), `12.50`},
		{true, types.BooleanType, `true`},
		{[]byte("hi"), types.BytesType, `"aGk="`},
		{types.TimestampValue(0), types.TimestampType, `"1970-01-01T00:00:00.000"`},
		{types.DateValue(1), types.DateType, `"1970-01-02"`},
		{[]any{int32(1), nil}, types.ArrayOf(types.IntType), `[1,null]`},
		{&types.MapValue{Keys: []any{"k"}, Values: []any{int32(2)}}, types.MapOf(types.StringType, types.IntType), `{"k":2}`},
		{types.StructValue{int32(1), "x"}, st, `{"A":1,"B":"x"}`},
	} {
		if got := string(appendValue(nil, tc.v, tc.t)); got != tc.want {
			t.Errorf("appendValue(%v, %s) = %s, want %s", tc.v, tc.t, got, tc.want)
		}
	}
}

// stuckWriter is a response whose client reads nothing: a write fails as
// one does when the write deadline passes, without taking the time.
type stuckWriter struct {
	header   http.Header
	deadline time.Time
}

func (s *stuckWriter) Header() http.Header { return s.header }
func (s *stuckWriter) WriteHeader(int)     {}
func (s *stuckWriter) Flush()              {}

func (s *stuckWriter) SetWriteDeadline(t time.Time) error {
	s.deadline = t
	return nil
}

func (s *stuckWriter) Write([]byte) (int, error) {
	if s.deadline.IsZero() {
		panic("a write without a deadline would block for ever")
	}
	return 0, os.ErrDeadlineExceeded
}

// TestStalledClientDropped checks that a write a client does not take
// fails after the stall timeout, so that its query is stopped.
func TestStalledClientDropped(t *testing.T) {
	h := New(nil, Options{StallTimeout: 20 * time.Millisecond})
	sw := &stuckWriter{header: http.Header{}}
	rw := h.rowWriter(sw)
	rw.write([]byte("[1]\n"))
	if !errors.Is(rw.err, os.ErrDeadlineExceeded) {
		t.Fatalf("write to a stalled client: %v", rw.err)
	}
	rw.write([]byte("[2]\n")) // no second wait
	rw.done()
	if !sw.deadline.IsZero() {
		t.Errorf("the deadline outlives the response: %v", sw.deadline)
	}
}
