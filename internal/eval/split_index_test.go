package eval_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSplitIndex checks SPLIT(s, sep)[i], which finds the piece in place,
// against the pieces of strings.Split, from either end and out of range.
func TestSplitIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "/", "//", "b", "é", ""}
	for _, sep := range []string{"/", "//", "a/", "é"} {
		for range 300 {
			var s strings.Builder
			for range r.IntN(8) {
				s.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			i := r.IntN(13) - 6
			row := withCol(4, s.String())
			row[0] = int32(i)
			got, err := evalText(t, fmt.Sprintf("SPLIT(S, '%s')[I]", sep), row)
			if err != nil {
				t.Fatal(err)
			}
			pieces := strings.Split(s.String(), sep)
			j := i
			if j < 0 {
				j += len(pieces) + 1
			}
			var want any
			if j >= 1 && j <= len(pieces) {
				want = pieces[j-1]
			}
			if got != want {
				t.Fatalf("SPLIT(%q, %q)[%d] = %#v, want %#v", s.String(), sep, i, got, want)
			}
		}
	}
	for _, c := range []evalCase{
		{text: "SPLIT('a/b/c', '/')[2]", want: "b"},
		{text: "SPLIT('a/b/c', '/')[-1]", want: "c"},
		{text: "SPLIT('a/b/c', '/')[4]", want: nil},
		{text: "SPLIT('a/b/c', '/')[0]", want: nil},
		{text: "SPLIT('abc', '')[2]", want: "b"},
		{text: "SPLIT('abc', '')[-3]", want: "a"},
		{text: "SPLIT(CAST(NULL AS STRING), '/')[1]", want: nil},
		{text: "SPLIT('a/b', CAST(NULL AS STRING))[1]", want: nil},
		{text: "SPLIT('a/b', '/')[CAST(NULL AS INT)]", want: nil},
	} {
		runEvalCases(t, []evalCase{c})
	}
}
