package parser

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
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

// frag is a fragment of the text written for TiDB: one piece (leaf), or
// the concatenation of its parts. Wrapping what was written (in brackets,
// in a placeholder call) adds a fragment over it instead of copying its
// pieces, so the pieces of a deeply nested expression are copied once, when
// write flattens the tree.
type frag struct {
	p     piece
	parts []*frag
	leaf  bool
}

func leaf(p piece) *frag { return &frag{p: p, leaf: true} }

// cat concatenates parts; it keeps the slice.
func cat(parts ...*frag) *frag { return &frag{parts: parts} }

// last returns the last piece of f, if it has one.
func (f *frag) last() (piece, bool) {
	if f.leaf {
		return f.p, true
	}
	for i := len(f.parts) - 1; i >= 0; i-- {
		if p, ok := f.parts[i].last(); ok {
			return p, true
		}
	}
	return piece{}, false
}

// seg maps a run of the rewritten text back to the user's text.
type seg struct {
	out, orig int
	n         int // >0: the run is the original text verbatim for n bytes
}

// stmt holds the tokens being rewritten with the index of the bracket
// matching each bracket token, computed once, so that a scan of one nesting
// level jumps over the bracketed groups inside it: every token is scanned at
// its own level only, and rewriting is linear in the statement's length.
type stmt struct {
	ts    []token
	match []int32 // index of the matching bracket of ( ) [ ]; -1 for other tokens
}

// span is the tokens [lo, hi) of a stmt.
type span struct{ lo, hi int }

func (s span) empty() bool { return s.hi <= s.lo }

// after returns the index after the token at i, past the whole group when
// toks[i] opens a bracket.
func (s *stmt) after(i int) int {
	if m := int(s.match[i]); m > i {
		return m + 1
	}
	return i + 1
}

// splitTop splits sp on the operator sep outside brackets.
func (s *stmt) splitTop(sp span, sep string) []span {
	var out []span
	start := sp.lo
	for i := sp.lo; i < sp.hi; i = s.after(i) {
		if s.ts[i].isOp(sep) {
			out = append(out, span{start, i})
			start = i + 1
		}
	}
	return append(out, span{start, sp.hi})
}

// nextTopComma returns the index of the first ',' outside brackets in
// [i, hi), or hi.
func (s *stmt) nextTopComma(i, hi int) int {
	for ; i < hi; i = s.after(i) {
		if s.ts[i].isOp(",") {
			return i
		}
	}
	return hi
}

// operandEnd returns the index where the operand of a comparison starting
// at i ends: the first token outside brackets that binds less tightly, or
// hi.
func (s *stmt) operandEnd(i, hi int) int {
	for j := i; j < hi; j = s.after(j) {
		t := s.ts[j]
		if t.kind == tkOp {
			switch t.text {
			case ")", "]", ",", "=", "<>", "!=", "<", "<=", ">", ">=":
				return j
			}
			continue
		}
		if (t.kind == tkWord || t.kind == tkRaw) && stopWords[t.upper()] {
			return j
		}
	}
	return hi
}

// likeHasEscape reports whether the LIKE at i, in a run ending at hi, has
// an ESCAPE clause.
func (s *stmt) likeHasEscape(i, hi int) bool {
	end := s.operandEnd(i+1, hi)
	return end < hi && s.ts[end].is("ESCAPE")
}

// rewriter turns ksqlDB tokens into text TiDB parses, and remembers how to
// map TiDB's offsets back to tokens and placeholders.
type rewriter struct {
	src string // the whole script
	stmt
	buf   strings.Builder
	segs  []seg
	toks  []written     // the original tokens written, by rewritten offset
	ph    []written     // the placeholder function names written, by rewritten offset
	types []*types.Type // CAST target types
	// escapes are the ESCAPE characters of LIKE, in order; TiDB is given
	// escapeAlphabet[i] in place of escapes[i], since it takes one byte.
	escapes []string
	end     int       // original offset of the end of the statement
	index   *posIndex // positions in the statement, built on first use
	// clauseKw are the original offsets of the query's clause keywords
	// (FROM, WHERE, GROUP BY, HAVING), which errors do not take for
	// reserved words written as names.
	clauseKw []int
}

// written is what the rewriter wrote at a rewritten offset: an original
// token or a placeholder.
type written struct {
	out int
	tok *token
	ph  phKind
}

// find returns the entry of ws (sorted by out) at the rewritten offset out.
func find(ws []written, out int) (written, bool) {
	i := sort.Search(len(ws), func(i int) bool { return ws[i].out >= out })
	if i < len(ws) && ws[i].out == out {
		return ws[i], true
	}
	return written{}, false
}

// tokAt returns the original token written at the rewritten offset out.
func (r *rewriter) tokAt(out int) (token, bool) {
	w, ok := find(r.toks, out)
	if !ok {
		return token{}, false
	}
	return *w.tok, true
}

// phAt returns the placeholder written at the rewritten offset out, or
// phNone.
func (r *rewriter) phAt(out int) phKind {
	w, _ := find(r.ph, out)
	return w.ph
}

func newRewriter(src string, end int) *rewriter {
	return &rewriter{src: src, end: end}
}

// rewrite rewrites the tokens of a statement (or an expression list) and
// writes the result as the text for TiDB.
func (r *rewriter) rewrite(ts []token) error {
	match, err := bracketTable(r.src, ts)
	if err != nil {
		return err
	}
	r.stmt = stmt{ts: ts, match: match}
	f, err := r.expr(0, len(ts), false)
	if err != nil {
		return err
	}
	r.write(f)
	return nil
}

// pos returns the position of the user's offset off.
func (r *rewriter) pos(off int) ast.Pos {
	if r.index == nil {
		lo := r.end
		if len(r.ts) > 0 {
			lo = r.ts[0].off
		}
		r.index = newPosIndex(r.src, lo, r.end)
	}
	return r.index.pos(off)
}

// write appends the pieces of f to the rewritten text, separated by
// spaces. It walks the tree twice without recursing, first to size what it
// writes.
func (r *rewriter) write(f *frag) {
	leaves, toks, phs, size := 0, 0, 0, 0
	walkFrag(f, func(p *piece) {
		leaves++
		size += len(p.text) + 1
		if p.tok != nil {
			toks++
		}
		if p.ph != phNone {
			phs++
		}
	})
	r.segs = make([]seg, 0, leaves)
	r.toks = make([]written, 0, toks)
	r.ph = make([]written, 0, phs)
	r.buf.Grow(size)
	walkFrag(f, func(p *piece) {
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
			r.toks = append(r.toks, written{out: out, tok: p.tok})
		}
		if p.ph != phNone {
			r.ph = append(r.ph, written{out: out, ph: p.ph})
		}
		r.segs = append(r.segs, s)
		r.buf.WriteString(p.text)
	})
}

// walkFrag calls fn for the pieces of f in order, with a stack as deep as
// the tree rather than the goroutine's.
func walkFrag(f *frag, fn func(*piece)) {
	type at struct {
		f *frag
		i int
	}
	stack := []at{{f, 0}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.f.leaf {
			fn(&top.f.p)
			stack = stack[:len(stack)-1]
			continue
		}
		if top.i == len(top.f.parts) {
			stack = stack[:len(stack)-1]
			continue
		}
		top.i++
		stack = append(stack, at{top.f.parts[top.i-1], 0})
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

// tokPiece is the piece writing t as is; t must stay put (it points into
// the statement's tokens).
func tokPiece(t *token) piece { return piece{text: t.text, tok: t} }

// synth is a synthetic piece anchored at the original offset at.
func synth(text string, at int) piece { return piece{text: text, anchor: at} }

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// identPiece writes a name as a back-quoted identifier with its canonical
// spelling.
func identPiece(t *token, name string) piece {
	return piece{text: "`" + strings.ReplaceAll(name, "`", "``") + "`", tok: t}
}

// call builds a placeholder call kind(args...) anchored at at.
func call(kind phKind, at int, args ...*frag) *frag {
	parts := make([]*frag, 0, 2*len(args)+2)
	parts = append(parts, leaf(piece{text: "`" + phNames[kind] + "`", anchor: at, ph: kind}), leaf(synth("(", at)))
	for i, a := range args {
		if i > 0 {
			parts = append(parts, leaf(synth(",", at)))
		}
		parts = append(parts, a)
	}
	return cat(append(parts, leaf(synth(")", at)))...)
}

// matchClose returns the index of the bracket closing toks[i], scanning
// toks once.
func matchClose(src string, toks []token, i int) (int, error) {
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
				return 0, errAt(src, t.off, "unexpected '"+t.text+"'; check that brackets are balanced")
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
	return 0, errAt(src, toks[i].off, "'"+toks[i].text+"' is never closed; add "+want)
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

// isOperand reports whether a unit just written can take a postfix
// subscript or dereference.
func isOperand(u *frag) bool {
	last, ok := u.last()
	if !ok {
		return false
	}
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
func followsOperand(u *frag) bool {
	if isOperand(u) {
		return true
	}
	last, ok := u.last()
	if !ok || last.tok == nil {
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

// expr rewrites the tokens [lo, hi) (an expression, a list of them, or a
// whole query) into a fragment for TiDB. stopFree says that the run holds no
// ',' and no lambdaStop word outside brackets (it is a lambda body), so a
// lambda in it runs to hi.
func (r *rewriter) expr(lo, hi int, stopFree bool) (*frag, error) {
	// Each unit takes at least one token or group of this level: sized
	// so, units does not grow (append's growth of a long slice would make
	// the bytes allocated grow faster than the text).
	steps := 0
	for i := lo; i < hi; i = r.after(i) {
		steps++
	}
	units := make([]*frag, 0, steps)
	push := func(u *frag) { units = append(units, u) }
	pop := func() *frag { u := units[len(units)-1]; units = units[:len(units)-1]; return u }
	prevOperand := func() bool { return len(units) > 0 && isOperand(units[len(units)-1]) }

	toks := r.ts
	for i := lo; i < hi; {
		t, tp := toks[i], &toks[i]
		var next token
		if i+1 < hi {
			next = toks[i+1]
		}
		switch {
		case t.kind == tkNumber:
			// TiDB rejects doubles out of its range and reads "1. x" as
			// "1.x"; the literal is rebuilt from the token, so TiDB only
			// needs a number in its place.
			p := tokPiece(tp)
			if dec, dbl := numberKind(t.text); dbl {
				p.text = "0e0"
			} else if dec {
				p.text = "0.0"
			}
			push(leaf(p))
			i++

		case t.kind == tkString && len(units) > 0 && followsOperand(units[len(units)-1]):
			return nil, errAt(r.src, t.off, "mismatched input "+t.describe()+"; expected an operator, ',' or AS alias before it (an alias is a name; quote it with back-quotes, not single quotes)")

		case t.kind == tkRaw:
			push(leaf(tokPiece(tp)))
			i++

		case t.isOp("("):
			j := int(r.match[i])
			if j+1 < hi && toks[j+1].isOp("=>") {
				var params []token
				for _, p := range r.splitTop(span{i + 1, j}, ",") {
					if p.hi-p.lo != 1 || !toks[p.lo].isName() {
						return nil, errAt(r.src, t.off, "lambda parameters must be names, e.g. (x, y) => x + y")
					}
					params = append(params, toks[p.lo])
				}
				u, k, err := r.lambda(t.off, params, j+2, hi, stopFree)
				if err != nil {
					return nil, err
				}
				push(u)
				i = k
				continue
			}
			inner, err := r.expr(i+1, j, false)
			if err != nil {
				return nil, err
			}
			push(cat(leaf(tokPiece(tp)), inner, leaf(tokPiece(&toks[j]))))
			i = j + 1

		case t.isOp("["):
			j := int(r.match[i])
			inner, err := r.expr(i+1, j, false)
			if err != nil {
				return nil, err
			}
			if len(units) > 0 && i > lo && toks[i-1].is("ARRAY") {
				pop()
				push(call(phArray, toks[i-1].off, inner))
			} else if prevOperand() {
				if j == i+1 {
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
			push(call(phDeref, t.off, pop(), leaf(synth(sqlString(next.val), next.off))))
			i += 2

		case t.isOp(".") && prevOperand() && (next.isName() || next.isOp("*")):
			u := pop()
			name := tokPiece(&toks[i+1])
			if !next.isOp("*") {
				name = identPiece(&toks[i+1], next.val)
			}
			push(cat(u, leaf(tokPiece(tp)), leaf(name)))
			i += 2

		case t.isOp("||"):
			push(leaf(piece{text: "|", tok: tp}))
			i++

		case t.isOp(":="):
			return nil, errAt(r.src, t.off, "':=' is only allowed inside MAP(key := value) or STRUCT(name := value)")

		case t.isOp("=>"):
			return nil, errAt(r.src, t.off, "unexpected '=>'; a lambda needs its parameters first, e.g. x => x + 1")

		case t.kind == tkVar:
			push(call(phVar, t.off, leaf(synth(sqlString(t.val), t.off))))
			i++

		case t.isName() && next.isOp("=>"):
			u, k, err := r.lambda(t.off, []token{t}, i+2, hi, stopFree)
			if err != nil {
				return nil, err
			}
			push(u)
			i = k

		case t.kind == tkWord && (t.is("TIMESTAMP") || t.is("DATE") || t.is("TIME")) && next.kind == tkString:
			push(call(phTypedLit, t.off, leaf(synth(sqlString(t.upper()), t.off)), leaf(tokPiece(&toks[i+1]))))
			i += 2

		case t.isName() && next.isOp("(") && !(t.kind == tkWord && isKeyword(t.upper())):
			j := int(r.match[i+1])
			u, err := r.funcCall(tp, i+2, j, &toks[j])
			if err != nil {
				return nil, err
			}
			push(u)
			i = j + 1

		case t.is("IS") && (next.is("DISTINCT") || next.is("NOT") && i+2 < hi && toks[i+2].is("DISTINCT")):
			// a IS NOT DISTINCT FROM b => a <=> b
			// a IS DISTINCT FROM b     => a <=> __is_distinct(b)
			k := i + 2
			if next.is("NOT") {
				k++
			}
			if k >= hi || !toks[k].is("FROM") {
				return nil, errAt(r.src, toks[k-1].end, "expected FROM after IS [NOT] DISTINCT, e.g. a IS DISTINCT FROM b")
			}
			end := r.operandEnd(k+1, hi)
			if end == k+1 {
				return nil, errAt(r.src, toks[k].end, "expected an expression after IS [NOT] DISTINCT FROM")
			}
			rhs, err := r.expr(k+1, end, false)
			if err != nil {
				return nil, err
			}
			push(leaf(synth("<=>", t.off)))
			if next.is("NOT") {
				push(cat(leaf(synth("(", t.off)), rhs, leaf(synth(")", t.off))))
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
			push(cat(leaf(tokPiece(tp)), leaf(piece{text: "'" + escapeAlphabet[len(r.escapes):len(r.escapes)+1] + "'", tok: &toks[i+1]})))
			r.escapes = append(r.escapes, next.val)
			i += 2

		case t.is("LIKE"):
			if r.likeHasEscape(i, hi) {
				push(leaf(piece{text: "ILIKE", tok: tp}))
			} else {
				push(leaf(tokPiece(tp)))
			}
			i++

		case t.kind == tkWord && isKeyword(t.upper()):
			push(leaf(tokPiece(tp)))
			i++

		case t.isName():
			push(leaf(identPiece(tp, t.val)))
			i++

		default:
			push(leaf(tokPiece(tp)))
			i++
		}
	}
	return cat(units...), nil
}

// lambda rewrites a lambda whose body starts at k and runs to the next ','
// outside brackets (or lambdaStop word) before hi; stopFree says there is
// none, so the body runs to hi. It returns the unit and the index after the
// body.
func (r *rewriter) lambda(at int, params []token, k, hi int, stopFree bool) (*frag, int, error) {
	end := hi
	if !stopFree {
		end = r.nextTopComma(k, hi)
		for j := k; j < end; j = r.after(j) {
			if t := r.ts[j]; (t.kind == tkWord || t.kind == tkRaw) && lambdaStop[t.upper()] {
				end = j
				break
			}
		}
	}
	if end == k {
		return nil, 0, errAt(r.src, r.ts[k-1].end, "expected a lambda body after '=>', e.g. x => x + 1")
	}
	body, err := r.expr(k, end, true)
	if err != nil {
		return nil, 0, err
	}
	args := make([]*frag, 0, len(params)+1)
	for _, p := range params {
		args = append(args, leaf(synth(sqlString(p.val), p.off)))
	}
	args = append(args, body)
	return call(phLambda, at, args...), end, nil
}

// funcCall rewrites name(inner) where inner is the tokens [lo, hi) and
// closeTok is the ')'.
func (r *rewriter) funcCall(name *token, lo, hi int, closeTok *token) (*frag, error) {
	fn := strings.ToUpper(name.val)
	quoted := name.kind == tkQIdent
	inner := span{lo, hi}
	switch {
	case !quoted && fn == "CAST":
		return r.cast(name, lo, hi, closeTok)
	case !quoted && fn == "MAP":
		var args []*frag
		if !inner.empty() {
			for _, a := range r.splitTop(inner, ",") {
				kv := r.splitTop(a, ":=")
				if len(kv) != 2 || kv[0].empty() || kv[1].empty() {
					at := closeTok.off
					if !a.empty() {
						at = r.ts[a.lo].off
					}
					return nil, errAt(r.src, at, "expected 'key := value' in MAP(...), e.g. MAP('a' := 1, 'b' := 2)")
				}
				k, err := r.expr(kv[0].lo, kv[0].hi, false)
				if err != nil {
					return nil, err
				}
				v, err := r.expr(kv[1].lo, kv[1].hi, false)
				if err != nil {
					return nil, err
				}
				args = append(args, k, v)
			}
		}
		return call(phMap, name.off, args...), nil
	case !quoted && fn == "STRUCT":
		var args []*frag
		if !inner.empty() {
			for _, a := range r.splitTop(inner, ",") {
				kv := r.splitTop(a, ":=")
				if len(kv) != 2 || kv[0].hi-kv[0].lo != 1 || !r.ts[kv[0].lo].isName() || kv[1].empty() {
					at := closeTok.off
					if !a.empty() {
						at = r.ts[a.lo].off
					}
					return nil, errAt(r.src, at, "expected 'name := value' in STRUCT(...), e.g. STRUCT(A := 1, B := 'x')")
				}
				v, err := r.expr(kv[1].lo, kv[1].hi, false)
				if err != nil {
					return nil, err
				}
				f := r.ts[kv[0].lo]
				args = append(args, leaf(synth(sqlString(f.val), f.off)), v)
			}
		}
		return call(phStruct, name.off, args...), nil
	}
	nameArg := leaf(synth(sqlString(fn), name.off))
	if hi-lo == 1 && r.ts[lo].isOp("*") {
		return call(phStar, name.off, nameArg), nil
	}
	if !inner.empty() && r.ts[lo].is("DISTINCT") {
		if hi-lo == 1 {
			return nil, errAt(r.src, closeTok.off, "expected an argument after DISTINCT, e.g. COUNT(DISTINCT col)")
		}
		rest, err := r.expr(lo+1, hi, false)
		if err != nil {
			return nil, err
		}
		return call(phDistinct, name.off, nameArg, rest), nil
	}
	args, err := r.expr(lo, hi, false)
	if err != nil {
		return nil, err
	}
	return cat(leaf(identPiece(name, fn)), leaf(synth("(", name.end)), args, leaf(tokPiece(closeTok))), nil
}

// cast rewrites CAST(x AS type), x AS type being the tokens [lo, hi); the
// type is parsed here and kept aside.
func (r *rewriter) cast(name *token, lo, hi int, closeTok *token) (*frag, error) {
	as := -1
	for i := lo; i < hi; i = r.after(i) {
		if r.ts[i].is("AS") {
			as = i
		}
	}
	if as <= lo {
		return nil, errAt(r.src, closeTok.off, "expected CAST(expression AS type), e.g. CAST(x AS BIGINT)")
	}
	if k := r.nextTopComma(lo, as); k < as {
		return nil, errAt(r.src, r.ts[k].off, "mismatched input ','; expected AS and a type after the CAST expression, e.g. CAST(x AS BIGINT)")
	}
	x, err := r.expr(lo, as, false)
	if err != nil {
		return nil, err
	}
	tt := append(append([]token{}, r.ts[as+1:hi]...), token{kind: tkEOF, off: closeTok.off, end: closeTok.off})
	c := &cursor{src: r.src, toks: tt}
	typ, err := c.parseType("AS")
	if err != nil {
		return nil, err
	}
	if !c.atEOF() {
		return nil, c.errAt(c.peek(), "unexpected "+c.peek().describe()+" after the CAST type; close the CAST with ')'")
	}
	r.types = append(r.types, typ)
	return call(phCast, name.off, x, leaf(synth(strconv.Itoa(len(r.types)-1), r.ts[as].off))), nil
}

// bracketTable returns the index of the bracket matching each bracket token
// of toks (-1 for other tokens), or the first unbalanced bracket as an
// error.
func bracketTable(src string, toks []token) ([]int32, error) {
	match := make([]int32, len(toks))
	var stack []int32
	for i, t := range toks {
		match[i] = -1
		if t.kind != tkOp {
			continue
		}
		switch t.text {
		case "(", "[":
			stack = append(stack, int32(i))
		case ")", "]":
			open := "("
			if t.text == "]" {
				open = "["
			}
			if len(stack) == 0 || toks[stack[len(stack)-1]].text != open {
				return nil, errAt(src, t.off, "unexpected '"+t.text+"'; check that brackets are balanced")
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			match[o], match[i] = int32(i), o
		}
	}
	if len(stack) > 0 {
		o := toks[stack[len(stack)-1]]
		want := ")"
		if o.text == "[" {
			want = "]"
		}
		return nil, errAt(src, o.off, "'"+o.text+"' is never closed; add '"+want+"'")
	}
	return match, nil
}

// checkBrackets reports the first unbalanced bracket in toks.
func checkBrackets(src string, toks []token) error {
	_, err := bracketTable(src, toks)
	return err
}
