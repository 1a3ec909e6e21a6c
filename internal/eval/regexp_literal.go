package eval

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// requiredLiteral returns the longest literal text that every match of
// the (Go syntax) pattern contains, "" when it finds none: a text
// without it cannot match, which strings.Contains tells far faster than
// the regexp engine's unanchored search. Case-folded literals and
// alternatives give nothing (they are not one literal).
func requiredLiteral(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	return mustContain(re.Simplify())
}

func mustContain(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		lit, _ := literalOf(re)
		return lit
	case syntax.OpCapture, syntax.OpPlus:
		return mustContain(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return mustContain(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literals (captured or not) are one text; any part's
		// own required literal counts too.
		best := ""
		var run strings.Builder
		end := func() {
			if run.Len() > len(best) {
				best = run.String()
			}
			run.Reset()
		}
		for _, sub := range re.Sub {
			if lit, ok := literalOf(sub); ok {
				run.WriteString(lit)
				continue
			}
			end()
			if lit := mustContain(sub); len(lit) > len(best) {
				best = lit
			}
		}
		end()
		return best
	}
	return ""
}

// literalOf returns the text re matches when it is one literal (maybe
// captured), case-sensitive and without U+FFFD (which an invalid byte of
// the text matches though its encoding is not there).
func literalOf(re *syntax.Regexp) (string, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpLiteral || re.Flags&syntax.FoldCase != 0 {
		return "", false
	}
	for _, r := range re.Rune {
		if r == utf8.RuneError {
			return "", false
		}
	}
	return string(re.Rune), true
}

// literalStart speeds up an unanchored search for a pattern of which
// every match holds lit no further than before bytes from its start: no
// match starts before the first lit of the text less before, so the
// search starts there. The engine then sees a text that begins there;
// mid is the pattern with its beginning-of-text assertions made never to
// match, which is what they do past the text's start.
type literalStart struct {
	lit    string
	before int
	mid    *regexp.Regexp
}

// newLiteralStart analyses a (Go syntax) pattern; nil when no literal
// sits at a bounded distance from the start of a match, or when the
// pattern looks at the text before a match's start (\b, \B, (?m)^),
// which a search starting later would not see.
func newLiteralStart(pattern string) *literalStart {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	if looksBehind(re) {
		return nil
	}
	lit, before, ok := boundedLiteral(re)
	if !ok || lit == "" {
		return nil
	}
	mid, err := regexp.Compile(withoutBeginText(re).String())
	if err != nil || mid.NumSubexp() != re.MaxCap() {
		return nil
	}
	return &literalStart{lit: lit, before: before, mid: mid}
}

// find is re.FindStringSubmatchIndex(s) for the pattern ls was made of.
func (ls *literalStart) find(re *regexp.Regexp, s string) []int {
	i := strings.Index(s, ls.lit)
	if i < 0 {
		return nil
	}
	from := i - ls.before
	if from <= 0 {
		return re.FindStringSubmatchIndex(s)
	}
	m := ls.mid.FindStringSubmatchIndex(s[from:])
	for j := range m {
		if m[j] >= 0 {
			m[j] += from
		}
	}
	return m
}

// boundedLiteral finds the longest literal of re's top-level sequence
// that follows at most before bytes of text from a match's start.
func boundedLiteral(re *syntax.Regexp) (lit string, before int, ok bool) {
	switch re.Op {
	case syntax.OpCapture:
		return boundedLiteral(re.Sub[0])
	case syntax.OpLiteral:
		lit, ok := literalOf(re)
		return lit, 0, ok
	case syntax.OpConcat:
		width := 0
		for i := 0; i < len(re.Sub); i++ {
			sub := re.Sub[i]
			if l, isLit := literalOf(sub); isLit {
				// A run of adjacent literals is one.
				start := width
				var run strings.Builder
				run.WriteString(l)
				for i+1 < len(re.Sub) {
					next, isLit := literalOf(re.Sub[i+1])
					if !isLit {
						break
					}
					run.WriteString(next)
					i++
				}
				if run.Len() > len(lit) {
					lit, before, ok = run.String(), start, true
				}
				width += run.Len()
				continue
			}
			if l, b, found := boundedLiteral(sub); found && len(l) > len(lit) {
				lit, before, ok = l, width+b, true
			}
			w, bounded := maxWidth(sub)
			if !bounded {
				break
			}
			width += w
		}
		return lit, before, ok
	}
	return "", 0, false
}

// maxWidth is the most bytes of text re matches, bounded false when
// there is no most.
func maxWidth(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpNoMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return utf8.UTFMax * len(re.Rune), true
		}
		return len(string(re.Rune)), true
	case syntax.OpCharClass:
		w := 1
		for i := 1; i < len(re.Rune); i += 2 {
			if n := utf8.RuneLen(re.Rune[i]); n > w {
				w = n
			}
		}
		return w, true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax, true
	case syntax.OpCapture, syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return 0, false
		}
		w, ok := maxWidth(re.Sub[0])
		return w * re.Max, ok
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			w, ok := maxWidth(sub)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				total += w
			} else {
				total = max(total, w)
			}
		}
		return total, true
	}
	return 0, false
}

// looksBehind reports whether re holds an assertion about the text
// before its position other than the beginning of the text.
func looksBehind(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if looksBehind(sub) {
			return true
		}
	}
	return false
}

// withoutBeginText is a copy of re in which every beginning-of-text
// assertion never matches.
func withoutBeginText(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpBeginText {
		return &syntax.Regexp{Op: syntax.OpNoMatch}
	}
	cp := *re
	cp.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, sub := range re.Sub {
		cp.Sub[i] = withoutBeginText(sub)
	}
	return &cp
}
