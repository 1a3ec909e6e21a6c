package parser

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

// tkRaw marks a token the front made up (ORDER, BY, STRAIGHT_JOIN): it is
// written to TiDB as is and maps back to the original token it replaces.
const tkRaw tokKind = 100

// escapeAlphabet holds the stand-ins written to TiDB for ESCAPE characters.
const escapeAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// phKind is the kind of a placeholder function call written for TiDB in
// place of ksqlDB-only syntax.
type phKind uint8

const (
	phNone       phKind = iota
	phDeref             // x->f       => __deref(x, 'F')
	phSubscript         // x[i]       => __subscript(x, i)
	phArray             // ARRAY[...] => __array(...)
	phMap               // MAP(k := v) => __map(k, v, ...)
	phStruct            // STRUCT(f := v) => __struct('F', v, ...)
	phLambda            // (x, y) => e => __lambda('X', 'Y', e)
	phCast              // CAST(x AS t) => __cast(x, <index into rewriter.types>)
	phStar              // f(*)       => __star('F')
	phDistinct          // f(DISTINCT a) => __distinct('F', a)
	phTypedLit          // TIMESTAMP 's' => __typedlit('TIMESTAMP', 's')
	phVar               // ${v}       => __var('v')
	phDerefStar         // x->*       => __deref_star(x)
	phIsDistinct        // a IS DISTINCT FROM b => a <=> __is_distinct(b)
)

var phNames = [...]string{"", "__deref", "__subscript", "__array", "__map", "__struct", "__lambda", "__cast", "__star", "__distinct", "__typedlit", "__var", "__deref_star", "__is_distinct"}

// piece is one lexeme of the text written for TiDB. tok is the original
// token it stands for; synthetic pieces have tok == nil and map to anchor.
type piece struct {
	text   string
	tok    *token
	anchor int
	ph     phKind
}

// seg maps a run of the rewritten text back to the user's text.
type seg struct {
	out, orig int
	n         int // >0: the run is the original text verbatim for n bytes
}

// rewriter turns ksqlDB tokens into text TiDB parses, and remembers how to
// map TiDB's offsets back to tokens and placeholders.
type rewriter struct {
	src   string // the whole script
	buf   strings.Builder
	segs  []seg
	toks  map[int]token  // rewritten offset -> original token written there
	ph    map[int]phKind // rewritten offset -> placeholder function name
	types []*types.Type  // CAST target types
	// escapes are the ESCAPE characters of LIKE, in order; TiDB is given
	// escapeAlphabet[i] in place of escapes[i], since it takes one byte.
	escapes []string
	end     int // original offset of the end of the statement
}

func newRewriter(src string, end int) *rewriter {
	return &rewriter{src: src, toks: map[int]token{}, ph: map[int]phKind{}, end: end}
}

// write appends pieces to the rewritten text, separated by spaces.
func (r *rewriter) write(ps []piece) {
	for _, p := range ps {
		if r.buf.Len() > 0 {
			r.buf.WriteByte(' ')
		}
		out := r.buf.Len()
		s := seg{out: out, orig: p.anchor}
		if p.tok != nil {
			s.orig = p.tok.off
			if p.tok.kind != tkRaw && p.text == r.src[p.tok.off:p.tok.end] {
				s.n = len(p.text)
			}
			r.toks[out] = *p.tok
		}
		if p.ph != phNone {
			r.ph[out] = p.ph
		}
		r.segs = append(r.segs, s)
		r.buf.WriteString(p.text)
	}
}

// orig maps an offset in the rewritten text to an offset in the user's text.
func (r *rewriter) orig(out int) int {
	i := sort.Search(len(r.segs), func(i int) bool { return r.segs[i].out > out }) - 1
	if i < 0 {
		if len(r.segs) == 0 {
			return r.end
		}
		return r.segs[0].orig
	}
	s := r.segs[i]
	if out >= r.buf.Len() {
		return r.end
	}
	if s.n > 0 && out-s.out < s.n {
		return s.orig + out - s.out
	}
	return s.orig
}

// tokPiece is the piece writing t as is.
func tokPiece(t token) piece { tt := t; return piece{text: t.text, tok: &tt} }

// synth is a synthetic piece anchored at the original offset at.
func synth(text string, at int) piece { return piece{text: text, anchor: at} }

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// identPiece writes a name as a back-quoted identifier with its canonical
// spelling.
func identPiece(t token, name string) piece {
	tt := t
	return piece{text: "`" + strings.ReplaceAll(name, "`", "``") + "`", tok: &tt}
}

// call builds a placeholder call kind(args...) anchored at at.
func call(kind phKind, at int, args ...[]piece) []piece {
	ps := []piece{{text: "`" + phNames[kind] + "`", anchor: at, ph: kind}, synth("(", at)}
	for i, a := range args {
		if i > 0 {
			ps = append(ps, synth(",", at))
		}
		ps = append(ps, a...)
	}
	return append(ps, synth(")", at))
}

// matchClose returns the index of the bracket closing toks[i].
func (r *rewriter) matchClose(toks []token, i int) (int, error) {
	var stack []string
	for j := i; j < len(toks); j++ {
		t := toks[j]
		if t.kind != tkOp {
			continue
		}
		switch t.text {
		case "(":
			stack = append(stack, ")")
		case "[":
			stack = append(stack, "]")
		case ")", "]":
			if len(stack) == 0 || stack[len(stack)-1] != t.text {
				return 0, errAt(r.src, t.off, "unexpected '"+t.text+"'; check that brackets are balanced")
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j, nil
			}
		}
	}
	want := "')'"
	if toks[i].text == "[" {
		want = "']'"
	}
	return 0, errAt(r.src, toks[i].off, "'"+toks[i].text+"' is never closed; add "+want)
}

// splitTop splits toks on the operator sep at nesting depth 0.
func splitTop(toks []token, sep string) [][]token {
	var out [][]token
	depth, start := 0, 0
	for i, t := range toks {
		if t.kind != tkOp {
			continue
		}
		switch t.text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case sep:
			if depth == 0 {
				out = append(out, toks[start:i])
				start = i + 1
			}
		}
	}
	return append(out, toks[start:])
}

// nextTopComma returns the index of the first ',' at depth 0 in toks from i,
// or len(toks).
func nextTopComma(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tkOp {
			continue
		}
		switch t.text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case ",":
			if depth == 0 {
				return i
			}
		}
	}
	return len(toks)
}

// operandEnd returns the index where the operand of a comparison starting
// at toks[i] ends: the first token at depth 0 that binds less tightly.
func operandEnd(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		t := toks[j]
		if t.kind == tkOp {
			switch t.text {
			case "(", "[":
				depth++
			case ")", "]":
				depth--
				if depth < 0 {
					return j
				}
			case ",", "=", "<>", "!=", "<", "<=", ">", ">=":
				if depth == 0 {
					return j
				}
			}
			continue
		}
		if depth == 0 && (t.kind == tkWord || t.kind == tkRaw) && stopWords[t.upper()] {
			return j
		}
	}
	return len(toks)
}

// lambdaStop end a lambda body written outside a function call.
var lambdaStop = map[string]bool{
	"FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true, "ON": true,
	"JOIN": true, "LEFT": true, "RIGHT": true, "FULL": true, "INNER": true, "STRAIGHT_JOIN": true, "AS": true,
}

// stopWords end an operand of a comparison.
var stopWords = map[string]bool{
	"AND": true, "OR": true, "THEN": true, "WHEN": true, "ELSE": true, "END": true, "LIKE": true,
	"IS": true, "NOT": true, "BETWEEN": true, "IN": true, "AS": true, "FROM": true, "WHERE": true,
	"GROUP": true, "HAVING": true, "ON": true, "JOIN": true, "ORDER": true, "ESCAPE": true,
	"LEFT": true, "RIGHT": true, "FULL": true, "INNER": true, "STRAIGHT_JOIN": true,
}

// likeHasEscape reports whether the LIKE at toks[i] has an ESCAPE clause.
func likeHasEscape(toks []token, i int) bool {
	end := operandEnd(toks, i+1)
	return end < len(toks) && toks[end].is("ESCAPE")
}

// isOperand reports whether a unit just written can take a postfix
// subscript or dereference.
func isOperand(u []piece) bool {
	if len(u) == 0 {
		return false
	}
	last := u[len(u)-1]
	if last.ph != phNone || last.text == ")" || last.text == "]" {
		return true
	}
	if last.tok == nil {
		return false
	}
	switch last.tok.kind {
	case tkQIdent:
		return true
	case tkWord:
		return !isKeyword(last.tok.upper())
	}
	return false
}

// followsOperand reports whether the unit u ends an operand: a string may
// not come right after it (TiDB would read it as an alias).
func followsOperand(u []piece) bool {
	if isOperand(u) {
		return true
	}
	last := u[len(u)-1]
	if last.tok == nil {
		return false
	}
	switch last.tok.kind {
	case tkNumber, tkString, tkBytes:
		return true
	case tkWord:
		switch last.tok.upper() {
		case "NULL", "TRUE", "FALSE", "END":
			return true
		}
	}
	return false
}

// expr rewrites a run of tokens (an expression, a list of them, or a whole
// query) into pieces for TiDB.
func (r *rewriter) expr(toks []token) ([]piece, error) {
	var units [][]piece
	push := func(u []piece) { units = append(units, u) }
	pop := func() []piece { u := units[len(units)-1]; units = units[:len(units)-1]; return u }
	prevOperand := func() bool { return len(units) > 0 && isOperand(units[len(units)-1]) }

	for i := 0; i < len(toks); {
		t := toks[i]
		var next token
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case t.kind == tkNumber:
			// TiDB rejects doubles out of its range and reads "1. x" as
			// "1.x"; the literal is rebuilt from the token, so TiDB only
			// needs a number in its place.
			p := tokPiece(t)
			if dec, dbl := numberKind(t.text); dbl {
				p.text = "0e0"
			} else if dec {
				p.text = "0.0"
			}
			push([]piece{p})
			i++

		case t.kind == tkString && len(units) > 0 && followsOperand(units[len(units)-1]):
			return nil, errAt(r.src, t.off, "mismatched input "+t.describe()+"; expected an operator, ',' or AS alias before it (an alias is a name; quote it with back-quotes, not single quotes)")

		case t.kind == tkRaw:
			push([]piece{tokPiece(t)})
			i++

		case t.isOp("("):
			j, err := r.matchClose(toks, i)
			if err != nil {
				return nil, err
			}
			if j+1 < len(toks) && toks[j+1].isOp("=>") {
				var params []token
				for _, p := range splitTop(toks[i+1:j], ",") {
					if len(p) != 1 || !p[0].isName() {
						return nil, errAt(r.src, t.off, "lambda parameters must be names, e.g. (x, y) => x + y")
					}
					params = append(params, p[0])
				}
				u, k, err := r.lambda(toks, t.off, params, j+2)
				if err != nil {
					return nil, err
				}
				push(u)
				i = k
				continue
			}
			inner, err := r.expr(toks[i+1 : j])
			if err != nil {
				return nil, err
			}
			u := append([]piece{tokPiece(t)}, inner...)
			push(append(u, tokPiece(toks[j])))
			i = j + 1

		case t.isOp("["):
			j, err := r.matchClose(toks, i)
			if err != nil {
				return nil, err
			}
			inner, err := r.expr(toks[i+1 : j])
			if err != nil {
				return nil, err
			}
			if len(units) > 0 && i > 0 && toks[i-1].is("ARRAY") {
				pop()
				push(call(phArray, toks[i-1].off, inner))
			} else if prevOperand() {
				if len(inner) == 0 {
					return nil, errAt(r.src, toks[j].off, "empty subscript; write an index, e.g. arr[1] or map['key']")
				}
				push(call(phSubscript, t.off, pop(), inner))
			} else {
				return nil, errAt(r.src, t.off, "unexpected '['; subscript an array or map column, e.g. col[1], or build an array with ARRAY[1, 2]")
			}
			i = j + 1

		case t.isOp("->"):
			if !prevOperand() {
				return nil, errAt(r.src, t.off, "'->' must follow a struct value, e.g. col->field")
			}
			if next.isOp("*") {
				push(call(phDerefStar, t.off, pop()))
				i += 2
				continue
			}
			if !next.isName() || next.kind == tkWord && isKeyword(next.upper()) {
				return nil, errAt(r.src, t.end, "expected a field name after '->', e.g. col->field")
			}
			push(call(phDeref, t.off, pop(), []piece{synth(sqlString(next.val), next.off)}))
			i += 2

		case t.isOp(".") && prevOperand() && (next.isName() || next.isOp("*")):
			u := pop()
			u = append(u, tokPiece(t))
			if next.isOp("*") {
				u = append(u, tokPiece(next))
			} else {
				u = append(u, identPiece(next, next.val))
			}
			push(u)
			i += 2

		case t.isOp("||"):
			tt := t
			push([]piece{{text: "|", tok: &tt}})
			i++

		case t.isOp(":="):
			return nil, errAt(r.src, t.off, "':=' is only allowed inside MAP(key := value) or STRUCT(name := value)")

		case t.isOp("=>"):
			return nil, errAt(r.src, t.off, "unexpected '=>'; a lambda needs its parameters first, e.g. x => x + 1")

		case t.kind == tkVar:
			push(call(phVar, t.off, []piece{synth(sqlString(t.val), t.off)}))
			i++

		case t.isName() && next.isOp("=>"):
			u, k, err := r.lambda(toks, t.off, []token{t}, i+2)
			if err != nil {
				return nil, err
			}
			push(u)
			i = k

		case t.kind == tkWord && (t.is("TIMESTAMP") || t.is("DATE") || t.is("TIME")) && next.kind == tkString:
			push(call(phTypedLit, t.off, []piece{synth(sqlString(t.upper()), t.off)}, []piece{tokPiece(next)}))
			i += 2

		case t.isName() && next.isOp("(") && !(t.kind == tkWord && isKeyword(t.upper())):
			j, err := r.matchClose(toks, i+1)
			if err != nil {
				return nil, err
			}
			u, err := r.funcCall(t, toks[i+2:j], toks[j])
			if err != nil {
				return nil, err
			}
			push(u)
			i = j + 1

		case t.is("IS") && (next.is("DISTINCT") || next.is("NOT") && i+2 < len(toks) && toks[i+2].is("DISTINCT")):
			// a IS NOT DISTINCT FROM b => a <=> b
			// a IS DISTINCT FROM b     => a <=> __is_distinct(b)
			k := i + 2
			if next.is("NOT") {
				k++
			}
			if k >= len(toks) || !toks[k].is("FROM") {
				return nil, errAt(r.src, toks[k-1].end, "expected FROM after IS [NOT] DISTINCT, e.g. a IS DISTINCT FROM b")
			}
			end := operandEnd(toks, k+1)
			if end == k+1 {
				return nil, errAt(r.src, toks[k].end, "expected an expression after IS [NOT] DISTINCT FROM")
			}
			rhs, err := r.expr(toks[k+1 : end])
			if err != nil {
				return nil, err
			}
			push([]piece{synth("<=>", t.off)})
			if next.is("NOT") {
				push(append(append([]piece{synth("(", t.off)}, rhs...), synth(")", t.off)))
			} else {
				push(call(phIsDistinct, t.off, rhs))
			}
			i = end

		case t.is("ESCAPE") && next.kind == tkString:
			if utf8.RuneCountInString(next.val) != 1 {
				return nil, errAt(r.src, next.off, "expected one character in quotes after ESCAPE, e.g. ESCAPE '!'")
			}
			if len(r.escapes) == len(escapeAlphabet) {
				return nil, errAt(r.src, t.off, "too many ESCAPE clauses in one statement; expected at most "+strconv.Itoa(len(escapeAlphabet)))
			}
			nt := next
			push([]piece{tokPiece(t), {text: "'" + escapeAlphabet[len(r.escapes):len(r.escapes)+1] + "'", tok: &nt}})
			r.escapes = append(r.escapes, next.val)
			i += 2

		case t.is("LIKE"):
			if likeHasEscape(toks, i) {
				tt := t
				push([]piece{{text: "ILIKE", tok: &tt}})
			} else {
				push([]piece{tokPiece(t)})
			}
			i++

		case t.kind == tkWord && isKeyword(t.upper()):
			push([]piece{tokPiece(t)})
			i++

		case t.isName():
			push([]piece{identPiece(t, t.val)})
			i++

		default:
			push([]piece{tokPiece(t)})
			i++
		}
	}
	var out []piece
	for _, u := range units {
		out = append(out, u...)
	}
	return out, nil
}

// lambda rewrites a lambda whose body starts at toks[k] and runs to the next
// ',' at depth 0. It returns the unit and the index after the body.
func (r *rewriter) lambda(toks []token, at int, params []token, k int) ([]piece, int, error) {
	end := nextTopComma(toks, k)
	depth := 0
	for j := k; j < end; j++ {
		t := toks[j]
		if t.isOp("(") || t.isOp("[") {
			depth++
		} else if t.isOp(")") || t.isOp("]") {
			depth--
		} else if depth == 0 && (t.kind == tkWord || t.kind == tkRaw) && lambdaStop[t.upper()] {
			end = j
			break
		}
	}
	if end == k {
		return nil, 0, errAt(r.src, toks[k-1].end, "expected a lambda body after '=>', e.g. x => x + 1")
	}
	body, err := r.expr(toks[k:end])
	if err != nil {
		return nil, 0, err
	}
	var args [][]piece
	for _, p := range params {
		args = append(args, []piece{synth(sqlString(p.val), p.off)})
	}
	args = append(args, body)
	return call(phLambda, at, args...), end, nil
}

// funcCall rewrites name(inner) where closeTok is the ')'.
func (r *rewriter) funcCall(name token, inner []token, closeTok token) ([]piece, error) {
	fn := strings.ToUpper(name.val)
	quoted := name.kind == tkQIdent
	switch {
	case !quoted && fn == "CAST":
		return r.cast(name, inner, closeTok)
	case !quoted && fn == "MAP":
		var args [][]piece
		if len(inner) > 0 {
			for _, a := range splitTop(inner, ",") {
				kv := splitTop(a, ":=")
				if len(kv) != 2 || len(kv[0]) == 0 || len(kv[1]) == 0 {
					at := closeTok.off
					if len(a) > 0 {
						at = a[0].off
					}
					return nil, errAt(r.src, at, "expected 'key := value' in MAP(...), e.g. MAP('a' := 1, 'b' := 2)")
				}
				k, err := r.expr(kv[0])
				if err != nil {
					return nil, err
				}
				v, err := r.expr(kv[1])
				if err != nil {
					return nil, err
				}
				args = append(args, k, v)
			}
		}
		return call(phMap, name.off, args...), nil
	case !quoted && fn == "STRUCT":
		var args [][]piece
		if len(inner) > 0 {
			for _, a := range splitTop(inner, ",") {
				kv := splitTop(a, ":=")
				if len(kv) != 2 || len(kv[0]) != 1 || !kv[0][0].isName() || len(kv[1]) == 0 {
					at := closeTok.off
					if len(a) > 0 {
						at = a[0].off
					}
					return nil, errAt(r.src, at, "expected 'name := value' in STRUCT(...), e.g. STRUCT(A := 1, B := 'x')")
				}
				v, err := r.expr(kv[1])
				if err != nil {
					return nil, err
				}
				args = append(args, []piece{synth(sqlString(kv[0][0].val), kv[0][0].off)}, v)
			}
		}
		return call(phStruct, name.off, args...), nil
	}
	nameArg := []piece{synth(sqlString(fn), name.off)}
	if len(inner) == 1 && inner[0].isOp("*") {
		return call(phStar, name.off, nameArg), nil
	}
	if len(inner) > 0 && inner[0].is("DISTINCT") {
		if len(inner) == 1 {
			return nil, errAt(r.src, closeTok.off, "expected an argument after DISTINCT, e.g. COUNT(DISTINCT col)")
		}
		rest, err := r.expr(inner[1:])
		if err != nil {
			return nil, err
		}
		return call(phDistinct, name.off, nameArg, rest), nil
	}
	args, err := r.expr(inner)
	if err != nil {
		return nil, err
	}
	ps := []piece{identPiece(name, fn), synth("(", name.end)}
	ps = append(ps, args...)
	return append(ps, tokPiece(closeTok)), nil
}

// cast rewrites CAST(x AS type); the type is parsed here and kept aside.
func (r *rewriter) cast(name token, inner []token, closeTok token) ([]piece, error) {
	as := -1
	depth := 0
	for i, t := range inner {
		switch {
		case t.isOp("(") || t.isOp("["):
			depth++
		case t.isOp(")") || t.isOp("]"):
			depth--
		case depth == 0 && t.is("AS"):
			as = i
		}
	}
	if as <= 0 {
		return nil, errAt(r.src, closeTok.off, "expected CAST(expression AS type), e.g. CAST(x AS BIGINT)")
	}
	if k := nextTopComma(inner[:as], 0); k < as {
		return nil, errAt(r.src, inner[k].off, "mismatched input ','; expected AS and a type after the CAST expression, e.g. CAST(x AS BIGINT)")
	}
	x, err := r.expr(inner[:as])
	if err != nil {
		return nil, err
	}
	tt := append(append([]token{}, inner[as+1:]...), token{kind: tkEOF, off: closeTok.off, end: closeTok.off})
	c := &cursor{src: r.src, toks: tt}
	typ, err := c.parseType("AS")
	if err != nil {
		return nil, err
	}
	if !c.atEOF() {
		return nil, c.errAt(c.peek(), "unexpected "+c.peek().describe()+" after the CAST type; close the CAST with ')'")
	}
	r.types = append(r.types, typ)
	return call(phCast, name.off, x, []piece{synth(strconv.Itoa(len(r.types)-1), inner[as].off)}), nil
}

// checkBrackets reports the first unbalanced bracket in toks.
func checkBrackets(src string, toks []token) error {
	type open struct {
		t    token
		want string
	}
	var stack []open
	for _, t := range toks {
		if t.kind != tkOp {
			continue
		}
		switch t.text {
		case "(":
			stack = append(stack, open{t, ")"})
		case "[":
			stack = append(stack, open{t, "]"})
		case ")", "]":
			if len(stack) == 0 || stack[len(stack)-1].want != t.text {
				return errAt(src, t.off, "unexpected '"+t.text+"'; check that brackets are balanced")
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		o := stack[len(stack)-1]
		return errAt(src, o.t.off, "'"+o.t.text+"' is never closed; add '"+o.want+"'")
	}
	return nil
}
