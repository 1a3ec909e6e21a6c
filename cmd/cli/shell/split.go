package shell

import "strings"

// statement is one statement cut out of a script, with its position.
type statement struct {
	// Text runs from the statement's first token to its ';', both included.
	Text string
	// Line and Col locate Text's first character in the script (1-based).
	Line, Col int
}

// splitStatements cuts text into statements ended by ';' (and shell
// commands starting with a backslash, ended by the end of their line), skipping the
// blanks and comments between them and ';' inside quotes ('...', "...",
// `...`) and comments (-- and /* */). rest is the unfinished text after the
// last ';', empty when it holds only blanks and comments.
func splitStatements(text string) (stmts []statement, rest string) {
	var (
		line, col = 1, 1
		start     = -1 // byte offset of the current statement's first token
		sLine     int
		sCol      int
	)
	advance := func(s string) {
		for _, r := range s {
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
	}
	i := 0
	for i < len(text) {
		c := text[i]
		// Comments do not start a statement.
		if c == '-' && strings.HasPrefix(text[i:], "--") {
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			advance(text[i : i+end])
			i += end
			continue
		}
		if c == '/' && strings.HasPrefix(text[i:], "/*") {
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				end = len(text) - i
			} else {
				end += 4
			}
			advance(text[i : i+end])
			i += end
			continue
		}
		if start < 0 {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' {
				advance(text[i : i+1])
				i++
				continue
			}
			if c == '\\' {
				// A shell command (\x, \o) runs to the end of its line.
				end := strings.IndexByte(text[i:], '\n')
				if end < 0 {
					end = len(text) - i
				}
				stmts = append(stmts, statement{Text: strings.TrimSpace(text[i : i+end]), Line: line, Col: col})
				advance(text[i : i+end])
				i += end
				continue
			}
			start, sLine, sCol = i, line, col
		}
		switch c {
		case '\'', '"', '`':
			end := closingQuote(text, i)
			advance(text[i:end])
			i = end
			continue
		case ';':
			stmts = append(stmts, statement{Text: text[start : i+1], Line: sLine, Col: sCol})
			start = -1
		}
		advance(text[i : i+1])
		i++
	}
	if start >= 0 {
		rest = text[start:]
	}
	return stmts, rest
}

// closingQuote returns the offset just after the quoted section that starts
// at text[i], or len(text) when it is unfinished. A doubled quote
// character stands for itself.
func closingQuote(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		if text[j] != q {
			continue
		}
		if j+1 < len(text) && text[j+1] == q {
			j++
			continue
		}
		return j + 1
	}
	return len(text)
}
