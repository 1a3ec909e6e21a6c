package parser

import (
	"errors"

	"github.com/sluice-sql/sluice/parser/ast"
)

// Parse parses a script of one or more statements separated by ';' (the last
// ';' is optional) into Sluice's AST. Errors are *Error values whose position
// is in text.
func Parse(text string) ([]ast.Statement, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	var out []ast.Statement
	start := 0
	for i, t := range toks {
		if !t.isOp(";") && t.kind != tkEOF {
			continue
		}
		if i > start {
			st, err := parseOne(text, toks[start:i], t.off)
			if err != nil {
				var pe *Error
				if errors.As(err, &pe) && pe.Statement == "" {
					pe.Statement = maskText(toks[start:i], text[toks[start].off:toks[i-1].end], toks[start].off)
				}
				return nil, err
			}
			out = append(out, st)
		}
		start = i + 1
	}
	if len(out) == 0 {
		return nil, errAt(text, len(text), "no statement found; write a statement such as SHOW STREAMS;")
	}
	return out, nil
}

// ParseOne parses text that must hold exactly one statement.
func ParseOne(text string) (ast.Statement, error) {
	sts, err := Parse(text)
	if err != nil {
		return nil, err
	}
	if len(sts) != 1 {
		p := sts[1].Position()
		return nil, &Error{Line: p.Line, Col: p.Col, Msg: "expected one statement but found more; send them one at a time"}
	}
	return sts[0], nil
}

// parseOne parses the statement made of toks (no ';'); endOff is where the
// statement ends (its ';' or the end of text).
func parseOne(src string, toks []token, endOff int) (ast.Statement, error) {
	if err := checkNesting(src, toks); err != nil {
		return nil, err
	}
	body := make([]token, len(toks)+1)
	copy(body, toks)
	body[len(toks)] = token{kind: tkEOF, off: toks[len(toks)-1].end, end: toks[len(toks)-1].end}
	c := &cursor{src: src, toks: body}
	return c.statement()
}

// source returns the ast.Source of the statement from the cursor's current
// token to its end.
func (c *cursor) source() ast.Source {
	first := c.peek()
	last := c.toks[len(c.toks)-2]
	if len(c.toks) < 2 {
		last = first
	}
	return ast.Source{Pos: c.pos(first), Text: c.src[first.off:last.end]}
}

// statement parses one statement from the cursor's position to its end.
func (c *cursor) statement() (ast.Statement, error) {
	src := c.source()
	t := c.peek()
	if t.kind != tkWord {
		return nil, c.errAt(t, "expected a statement but found "+t.describe()+"; start with "+statementKeywords)
	}
	switch t.upper() {
	case "CREATE":
		return c.create(src)
	case "INSERT":
		return c.insert(src)
	case "SELECT":
		q, err := c.query()
		if err != nil {
			return nil, err
		}
		return &ast.Select{Source: src, Query: q}, nil
	case "SHOW", "LIST":
		return c.show(src)
	case "DESCRIBE":
		return c.describe(src)
	case "EXPLAIN":
		return c.explain(src)
	case "TERMINATE":
		return c.terminate(src)
	case "PAUSE", "RESUME":
		return c.pauseResume(src)
	case "REPLAY":
		return c.replay(src)
	case "DROP":
		return c.drop(src)
	case "ALTER":
		return c.alter(src)
	case "SET":
		return c.set(src)
	case "UNSET":
		return c.unset(src)
	case "DEFINE":
		return c.define(src)
	case "UNDEFINE":
		return c.undefine(src)
	case "PRINT":
		return c.print(src)
	case "RUN":
		return c.runScript(src)
	case "ASSERT":
		return c.assert(src)
	}
	return nil, c.errAt(t, "unknown statement "+t.describe()+"; expected "+statementKeywords)
}
