package parser

import "github.com/sluice-sql/sluice/parser/ast"

// nestKind is what opened a level of nesting, for checkNesting.
type nestKind uint8

const (
	nestBracket nestKind = iota // ( or [, closed by its bracket
	nestCase                    // CASE, closed by END
	nestPrefix                  // NOT, unary - or +, closed where its operand ends
	nestLambda                  // the body after =>, closed by ',', a bracket or a clause
)

// nestFrame is one open level.
type nestFrame struct {
	kind  nestKind
	depth int // the depth outside it
	post  int // bracket: the postfix chain of the operand before it, taken up again after it
}

// checkNesting refuses a statement nested deeper than ast.MaxNesting, in one
// pass over its tokens and before anything that grows with the depth. A
// level is a bracket (parentheses, a call, ARRAY[...], MAP(...),
// STRUCT(...), a subscript), a CASE ... END, each operator of a run of
// prefix operators (NOT NOT ..., - - ...), a lambda body (=>), and each link
// of a postfix chain (a->b->c, a[1][2]). The error is at the token that
// opens the first level past the limit. Deep trees made of binary operators
// (a - b - c - ...) are flat here; the converter counts them.
func checkNesting(src string, toks []token) error {
	var stack []nestFrame
	depth := 0
	post := 0        // links of the postfix chain of the current operand
	operand := false // the last token ends an operand
	tooDeep := func(t token, d int) error {
		if d > ast.MaxNesting {
			return errAt(src, t.off, ast.NestingMessage())
		}
		return nil
	}
	open := func(t token, kind nestKind, restore int) error {
		stack = append(stack, nestFrame{kind: kind, depth: depth, post: restore})
		depth++
		operand, post = false, 0
		return tooDeep(t, depth)
	}
	// closeSoft closes the prefix operators (and, with lambdas, the lambda
	// bodies) open inside the innermost bracket or CASE: their operand
	// ended.
	closeSoft := func(lambdas bool) {
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			if f.kind != nestPrefix && !(lambdas && f.kind == nestLambda) {
				return
			}
			stack = stack[:len(stack)-1]
			depth = f.depth
		}
	}
	// closeTo closes everything open inside the innermost frame of kind,
	// and that frame, but nothing past a bracket; it reports whether it
	// found one.
	closeTo := func(kind nestKind) bool {
		for j := len(stack) - 1; j >= 0; j-- {
			if stack[j].kind == kind {
				f := stack[j]
				stack = stack[:j]
				depth, post = f.depth, f.post
				return true
			}
			if stack[j].kind == nestBracket {
				return false
			}
		}
		return false
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tkEOF:
		case t.isOp("(") || t.isOp("["):
			restore := 0
			if t.text == "[" && operand && !(i > 0 && toks[i-1].is("ARRAY")) {
				post++ // a subscript: the operand before it goes one level down
				if err := tooDeep(t, depth+post); err != nil {
					return err
				}
				restore = post
			}
			if err := open(t, nestBracket, restore); err != nil {
				return err
			}
		case t.isOp(")") || t.isOp("]"):
			// An unbalanced bracket is left to the bracket check.
			closeTo(nestBracket)
			operand = true
		case t.isOp("->"):
			if operand {
				post++
				if err := tooDeep(t, depth+post); err != nil {
					return err
				}
			}
			if i+1 < len(toks) && (toks[i+1].isName() || toks[i+1].isOp("*")) {
				i++ // the field name continues the operand
			}
			operand = true
		case t.isOp(".") && operand && i+1 < len(toks) && (toks[i+1].isName() || toks[i+1].isOp("*")):
			i++ // source.column continues the operand
		case t.isOp("=>"):
			if err := open(t, nestLambda, 0); err != nil {
				return err
			}
		case t.isOp(","):
			closeSoft(true)
			operand, post = false, 0
		case (t.isOp("-") || t.isOp("+")) && !operand, t.is("NOT") && !operand:
			if err := open(t, nestPrefix, 0); err != nil {
				return err
			}
		case t.isOp("*") && !operand:
			operand, post = true, 0 // SELECT *, COUNT(*)
		case t.kind == tkOp:
			// An infix operator: the operand of the prefix operators before
			// it ended.
			if operand {
				closeSoft(false)
			}
			operand, post = false, 0
		case t.is("CASE"):
			if err := open(t, nestCase, 0); err != nil {
				return err
			}
		case t.is("END"):
			closeTo(nestCase)
			operand, post = true, 0
		case t.kind == tkWord && (lambdaStop[t.upper()] || clauseKeywords[t.upper()] != 0):
			closeSoft(true)
			operand, post = false, 0
		case t.kind == tkWord && isKeyword(t.upper()) && !t.is("NULL") && !t.is("TRUE") && !t.is("FALSE"):
			closeSoft(false)
			operand, post = false, 0
		default:
			// A name or a literal starts an operand; right after another one
			// it is an alias, and the operand before it ended.
			if operand {
				closeSoft(false)
			}
			operand, post = true, 0
		}
	}
	return nil
}
