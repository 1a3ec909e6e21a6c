package eval

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRequiredLiteral(t *testing.T) {
	for _, c := range []struct{ pattern, want string }{
		{`(&|^)channel_id=([^&]*)`, "channel_id="},
		{`abc`, "abc"},
		{`a(bc)+d`, "bc"},
		{`x{2,}yz`, "yz"},
		{`(?:abc)?def`, "def"},
		{`a*bcd*`, "bc"},
		{`foo|bar`, ""},
		{`(?i)channel`, ""},
		{`[a-z]+`, ""},
		{`^$`, ""},
		{`a.b.cde`, "cde"},
		{`\d+-\d+`, "-"},
		{`(a)(b)c`, "abc"},
		{`é+llo`, "llo"},
		{`\x{FFFD}x`, ""},
		{`(\x{FFFD})xy`, "xy"},
		{`(`, ""},
	} {
		if got := requiredLiteral(c.pattern); got != c.want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
}

// TestRequiredLiteralSound checks on random patterns and texts that a
// text without the required literal never matches.
func TestRequiredLiteralSound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	atoms := []string{"a", "b", "ab", "ba", "(a|b)", "[ab]", ".", "^", "$", "\\b", "(ab)+", "a?", "b*", "(?:ba){1,2}", "(?i)a", "\\x{FFFD}"}
	alphabet := []string{"a", "b", "A", "\xff", "�", " "}
	for range 20000 {
		var p strings.Builder
		for range 1 + r.IntN(5) {
			p.WriteString(atoms[r.IntN(len(atoms))])
		}
		re, err := regexp.Compile(p.String())
		if err != nil {
			continue
		}
		need := requiredLiteral(p.String())
		var s strings.Builder
		for range r.IntN(8) {
			s.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		if need != "" && !strings.Contains(s.String(), need) && re.MatchString(s.String()) {
			t.Fatalf("pattern %q matches %q, which lacks its required literal %q", p.String(), s.String(), need)
		}
	}
}

func TestLiteralStart(t *testing.T) {
	ls := newLiteralStart(`(&|^)channel_id=([^&]*)`)
	if ls == nil || ls.lit != "channel_id=" || ls.before != 1 {
		t.Fatalf("literalStart = %+v", ls)
	}
	for _, p := range []string{`\bchannel`, `(?m)^x`, `a*lit`, `foo|bar`} {
		if ls := newLiteralStart(p); ls != nil {
			t.Errorf("newLiteralStart(%q) = %+v, want nil", p, ls)
		}
	}
}

// TestLiteralStartSame checks on random patterns and texts that the
// search from the literal finds what the whole search finds.
func TestLiteralStartSame(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	atoms := []string{"a", "b", "ab", "ba", "(a|b)", "[ab]", ".", "^", "$", "(ab)+", "a?", "b*?", "(?:ba){1,2}", "(?i)a", "(a|)", "é", "\\x{FFFD}", "(?s:.)", "c{0,2}", "(x|yz)?"}
	alphabet := []string{"a", "b", "ab", "x", "yz", "c", "\xff", "é", "É", "\n"}
	tried := 0
	for range 50000 {
		var p strings.Builder
		for range 1 + r.IntN(6) {
			p.WriteString(atoms[r.IntN(len(atoms))])
		}
		re, err := regexp.Compile(p.String())
		if err != nil {
			continue
		}
		ls := newLiteralStart(p.String())
		if ls == nil {
			continue
		}
		tried++
		var s strings.Builder
		for range r.IntN(12) {
			s.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		want := re.FindStringSubmatchIndex(s.String())
		if got := ls.find(re, s.String()); !slices.Equal(got, want) {
			t.Fatalf("pattern %q on %q: %v, want %v (literal %q, before %d, mid %s)", p.String(), s.String(), got, want, ls.lit, ls.before, ls.mid)
		}
	}
	if tried < 1000 {
		t.Fatalf("only %d patterns had a literal start", tried)
	}
}
