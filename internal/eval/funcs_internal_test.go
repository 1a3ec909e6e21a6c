package eval

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

func TestMimeBase64(t *testing.T) {
	s := mimeBase64(make([]byte, 60))
	if lines := strings.Split(s, "\r\n"); len(lines) != 2 || len(lines[0]) != 76 {
		t.Errorf("mimeBase64 of 60 bytes = %q; want a 76-character line, CRLF, the rest", s)
	}
	b, err := lenientBase64(s)
	if err != nil || len(b) != 60 {
		t.Errorf("lenientBase64(mimeBase64(60 bytes)) = %d bytes, %v", len(b), err)
	}
}

func TestValueSet(t *testing.T) {
	s := newValueSet(0)
	for i := range 100 {
		if !s.add(float64(i % 50)) {
			if i < 50 {
				t.Fatalf("add(%d) reported a duplicate", i)
			}
		} else if i >= 50 {
			t.Fatalf("add(%d) missed a duplicate", i)
		}
	}
	if !s.add(math.NaN()) || s.add(math.NaN()) || s.add(math.Copysign(0, -1)) || !s.add(nil) || s.add(nil) {
		t.Errorf("NaN, -0 or null handled wrongly: %v", s.vals)
	}
	if len(s.vals) != 52 {
		t.Errorf("len = %d, want 52", len(s.vals))
	}
	d := newValueSet(0)
	for i := range 30 {
		d.add(types.NewDec(int64(i%10), 1))
		d.add(fmt.Sprint(i % 10))
	}
	if len(d.vals) != 20 {
		t.Errorf("mixed set has %d values, want 20", len(d.vals))
	}
}

func TestToJSONNonFinite(t *testing.T) {
	if got := string(toJSON(nil, []any{math.Inf(1), 1e-7}, types.ArrayOf(types.DoubleType))); got != `["Infinity",1.0E-7]` {
		t.Errorf("toJSON = %s", got)
	}
}

func TestJavaRound(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want int64
	}{
		{0.5, 1}, {-0.5, 0}, {1.5, 2}, {-1.5, -1}, {2.5, 3}, {0.49999999999999994, 0},
		{math.NaN(), 0}, {1e300, math.MaxInt64}, {-1e300, math.MinInt64}, {-2.7, -3},
	} {
		if got := javaRound(tt.in); got != tt.want {
			t.Errorf("javaRound(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestJavaRegexp(t *testing.T) {
	for in, want := range map[string]string{
		`abc`:           `abc`,
		`\p{Alpha}+`:    `[a-zA-Z]+`,
		`[\p{Digit}_]`:  `[0-9_]`,
		`\P{Lower}`:     `[^a-z]`,
		`end\Z`:         `end(?:\n?\z)`,
		`\p{L}\d`:       `\p{L}\d`,
		`[\]\p{Upper}]`: `[\]A-Z]`,
	} {
		if got := javaRegexp(in); got != want {
			t.Errorf("javaRegexp(%q) = %q, want %q", in, got, want)
		}
	}
}
