package shell

import (
	"fmt"
	"strings"
)

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
	stmts, rest, _ = split(text)
	return stmts, rest
}

// open is a quoted section or a comment that text leaves open.
type open struct {
	// Off is the byte offset of its opening quote, or of the "/*" of a
	// comment; -1 when nothing is left open.
	Off int
	// Quote is the opening quote (', " or `), or '*' for a comment.
	Quote byte
}

// split is splitStatements, and says what the text leaves open at its end.
func split(text string) (stmts []statement, rest string, left open) {
	var (
		line, col = 1, 1
		start     = -1 // byte offset of the current statement's first token
		sLine     int
		sCol      int
	)
	left.Off = -1
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
				left = open{Off: i, Quote: '*'}
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
			end, ok := quoteEnd(text, i)
			if !ok {
				left = open{Off: i, Quote: c}
			}
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
	return stmts, rest, left
}

// quoteEnd returns the offset just after the quoted section that starts at
// text[i] and whether its closing quote is there; an unfinished section
// runs to len(text).
func quoteEnd(text string, i int) (end int, closed bool) {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		if text[j] != q {
			continue
		}
		if j+1 < len(text) && text[j+1] == q {
			j++
			continue
		}
		return j + 1, true
	}
	return len(text), false
}

// openMessage says what is left open, opened by quote (or '*' for a
// comment), and how to close it.
func openMessage(quote byte) string {
	switch quote {
	case '\'':
		return "unterminated string literal: the ' opened here is never closed; close it with ' (write a quote inside a string as '')"
	case '*':
		return "unterminated comment: the /* opened here is never closed; close it with */"
	}
	q := string(quote)
	return "unterminated quoted identifier: the " + q + " opened here is never closed; close it with " + q
}

// unterminated returns the error for a string, quoted identifier or
// comment that text (a script, from source) leaves open, pointing at its
// opening quote; nil when there is none.
func unterminated(source, text string) *Error {
	_, rest, left := split(text)
	if left.Off < 0 {
		return nil
	}
	line, col := endOf(text[:left.Off])
	// Show the statement up to the end of the line of the quote: the rest
	// of the script is inside the quotes.
	from := len(text) - len(rest)
	if rest == "" {
		from = strings.LastIndexByte(text[:left.Off], '\n') + 1 // a comment between statements
	}
	to := len(text)
	if nl := strings.IndexByte(text[left.Off:], '\n'); nl >= 0 {
		to = left.Off + nl
	}
	sl, sc := endOf(text[from:left.Off])
	return &Error{Source: source, Line: line, Col: col, Statement: strings.TrimRight(text[from:to], " \t\r"),
		StmtLine: sl, StmtCol: sc, Message: openMessage(left.Quote)}
}

// unfinished returns the error for the unfinished text at the end of text
// (a script, from source), whose unfinished statement splitStatements
// returned as rest: a string, quoted identifier or comment left open (see
// unterminated), else a statement without its ';'. It returns nil when
// text ends with a complete statement, blanks or comments.
func unfinished(source, text, rest string) *Error {
	if e := unterminated(source, text); e != nil {
		return e
	}
	if rest == "" {
		return nil
	}
	// Point just past the statement's last character, where ';' is
	// missing.
	body := strings.TrimRight(rest, " \t\r\n")
	line, col := endOf(text[:len(text)-len(rest)+len(body)])
	sl, sc := endOf(body)
	return &Error{Source: source, Line: line, Col: col, Statement: body, StmtLine: sl, StmtCol: sc,
		Message: "the statement has no terminating ';': end it with ';'"}
}

// promptFor returns the prompt for the next line after the typed lines
// pending of an unfinished statement: Prompt when there are none, and a
// continuation prompt that shows the quote (or "/*") left open, if any,
// as in "     '> ".
func promptFor(pending string) string {
	if pending == "" {
		return Prompt
	}
	_, _, left := split(pending)
	if left.Off < 0 {
		return ContinuationPrompt
	}
	mark := string(left.Quote)
	if left.Quote == '*' {
		mark = "/*"
	}
	return fmt.Sprintf("%*s> ", len(ContinuationPrompt)-2, mark)
}

// carried returns what of text, typed at the terminal, waits for more
// lines: rest, the unfinished statement splitStatements returned, or else
// a comment left open after the statements.
func carried(text, rest string) string {
	if rest != "" {
		return rest
	}
	if _, _, left := split(text); left.Off >= 0 {
		return text[left.Off:]
	}
	return ""
}
