package qtt

import "strings"

// SkipReasons lists the reasons a run may be skipped, in the order they
// are checked and printed. None remain: every run of the corpus runs,
// the schema-registry formats included.
var SkipReasons []string

// SkipReason returns why r may not run yet, or "" when it must run.
func SkipReason(Run) string { return "" }

// stripLiterals blanks out string literals ('...'), quoted identifiers
// (`...` and "...") and comments, so that keywords are found only in code.
func stripLiterals(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '`' || c == '"':
			j := i + 1
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			b.WriteString(" ")
			i = j
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			i += j + 3
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
