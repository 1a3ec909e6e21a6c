package parser

import (
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/parser/ast"
)

// cursor walks the tokens of one statement. toks always ends with a tkEOF
// token placed at the end of the statement.
type cursor struct {
	src  string // the whole script
	toks []token
	i    int
	// typeDepth is how many ARRAY, MAP and STRUCT types enclose the one
	// parseType is reading.
	typeDepth int
}

func (c *cursor) peek() token { return c.toks[c.i] }
func (c *cursor) peekAt(n int) token {
	if c.i+n < len(c.toks) {
		return c.toks[c.i+n]
	}
	return c.toks[len(c.toks)-1]
}

func (c *cursor) next() token {
	t := c.toks[c.i]
	if t.kind != tkEOF {
		c.i++
	}
	return t
}

func (c *cursor) atEOF() bool { return c.peek().kind == tkEOF }

// accept consumes the word w if it is next.
func (c *cursor) accept(w string) bool {
	if c.peek().is(w) {
		c.i++
		return true
	}
	return false
}

// acceptOp consumes the operator op if it is next.
func (c *cursor) acceptOp(op string) bool {
	if c.peek().isOp(op) {
		c.i++
		return true
	}
	return false
}

// pos returns the position of token t.
func (c *cursor) pos(t token) ast.Pos { return posAt(c.src, t.off) }

// errAt builds an error at token t.
func (c *cursor) errAt(t token, msg string) *Error { return errAt(c.src, t.off, msg) }

// syntaxErrAt is ksqlDB's "Syntax Error" at t, with hint.
func (c *cursor) syntaxErrAt(t token, hint string) *Error { return syntaxErrAt(c.src, t.off, hint) }

// expect consumes the word w or fails with a message saying what to write.
func (c *cursor) expect(w, hint string) error {
	if c.accept(w) {
		return nil
	}
	t := c.peek()
	return c.errAt(t, "expected "+w+" but found "+t.describe()+hint)
}

// expectOp consumes the operator op or fails.
func (c *cursor) expectOp(op, what string) error {
	if c.acceptOp(op) {
		return nil
	}
	t := c.peek()
	return c.errAt(t, "expected '"+op+"' "+what+" but found "+t.describe())
}

// name consumes an identifier and returns its canonical form.
func (c *cursor) name(what string) (string, token, error) {
	t := c.peek()
	if !t.isName() {
		return "", t, c.errAt(t, "expected "+what+" but found "+t.describe())
	}
	if t.kind == tkWord && ast.IsReserved(t.val) {
		return "", t, c.errAt(t, reservedNameError(t))
	}
	c.i++
	return t.val, t, nil
}

// end fails unless the statement is over.
func (c *cursor) end(what string) error {
	if t := c.peek(); t.kind != tkEOF {
		return c.errAt(t, "unexpected "+t.describe()+" after "+what+"; end the statement with ';'")
	}
	return nil
}

// integer consumes an optionally signed integer.
func (c *cursor) integer(what string) (int64, error) {
	t := c.peek()
	neg := false
	if t.isOp("-") && c.peekAt(1).kind == tkNumber {
		neg = true
		c.i++
		t = c.peek()
	}
	if t.kind != tkNumber || strings.ContainsAny(t.text, ".eE") {
		return 0, c.errAt(t, "expected "+what+" (a whole number) but found "+t.describe())
	}
	c.i++
	n, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil {
		return 0, c.errAt(t, "number "+t.text+" is out of range for "+what)
	}
	if neg {
		n = -n
	}
	return n, nil
}

// stringLit consumes a 'string' and returns its value.
func (c *cursor) stringLit(what string) (string, error) {
	t := c.peek()
	if t.kind != tkString {
		return "", c.errAt(t, "expected "+what+" as a quoted string, e.g. 'value', but found "+t.describe())
	}
	c.i++
	return t.val, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
