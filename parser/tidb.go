package parser

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	tparser "github.com/pingcap/tidb/pkg/parser"
	tast "github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	// The test driver supplies TiDB's literal values (ValueExpr).
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// tidbPool holds TiDB parsers; a parser is not safe for concurrent use.
var tidbPool = sync.Pool{New: func() any {
	p := tparser.New()
	p.SetSQLMode(mysql.ModeANSIQuotes | mysql.ModeNoBackslashEscapes)
	return p
}}

var totalLenRE = regexp.MustCompile(`\(total length (\d+)\)\s*$`)

// parseSelect hands the rewritten text to TiDB and returns the one SELECT it
// holds. Errors are mapped back to the user's text. The TiDB parser reuses
// its tree on the next parse, so the caller must call release once it has
// converted the tree, and not touch the tree after.
func (r *rewriter) parseSelect() (sel *tast.SelectStmt, release func(), err error) {
	text := r.buf.String()
	stmts, release, err := tidbParse(text)
	defer func() {
		if err != nil {
			release()
		}
	}()
	if pe, ok := err.(*tidbPanic); ok {
		return nil, release, errAt(r.src, r.orig(0), "the query could not be parsed ("+pe.msg+"); expected a valid SELECT")
	}
	if err != nil {
		return nil, release, r.mapError(text, err.Error())
	}
	if len(stmts) != 1 {
		return nil, release, errAt(r.src, r.orig(0), "expected one query")
	}
	sel, ok := stmts[0].(*tast.SelectStmt)
	if !ok {
		return nil, release, errAt(r.src, r.orig(0), "expected a SELECT query")
	}
	return sel, release, nil
}

// tidbPanic is a panic of the TiDB parser, recovered.
type tidbPanic struct{ msg string }

func (p *tidbPanic) Error() string { return p.msg }

// tidbParse runs the TiDB parser on text. The returned trees belong to the
// parser until release returns it to the pool. A panic inside the parser
// comes back as a *tidbPanic error; that parser is not reused.
func tidbParse(text string) (stmts []tast.StmtNode, release func(), err error) {
	p := tidbPool.Get().(*tparser.Parser)
	release = func() { tidbPool.Put(p) }
	defer func() {
		if v := recover(); v != nil {
			stmts, release, err = nil, func() {}, &tidbPanic{msg: fmt.Sprint(v)}
		}
	}()
	stmts, _, err = p.ParseSQL(text)
	return stmts, release, err
}

// mapError turns a TiDB syntax error into an *Error at the user's token.
func (r *rewriter) mapError(text, msg string) *Error {
	i := strings.Index(msg, `near "`)
	if i < 0 {
		m := msg
		if j := strings.Index(m, "]"); j >= 0 && strings.HasPrefix(m, "[") {
			m = m[j+1:]
		}
		return errAt(r.src, r.orig(0), "invalid query: "+m)
	}
	rest := msg[i+len(`near "`):]
	off := -1
	if m := totalLenRE.FindStringSubmatch(rest); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			off = len(text) - n
		}
	}
	if off < 0 {
		for k := strings.LastIndexByte(rest, '"'); k >= 0; k = strings.LastIndexByte(rest[:k], '"') {
			if strings.HasSuffix(text, rest[:k]) {
				off = len(text) - k
				break
			}
		}
	}
	if off < 0 {
		off = len(text)
	}
	o := r.orig(off)
	if off >= len(text) || o >= r.end {
		return errAt(r.src, r.end, "unexpected end of statement; expected an operand or ')': the statement is incomplete")
	}
	toks, _ := lex(r.src[o:r.end])
	desc := "'" + strings.TrimSpace(r.src[o:r.end]) + "'"
	var t token
	if len(toks) > 0 && toks[0].kind != tkEOF {
		desc = toks[0].describe()
		if !slices.Contains(r.clauseKw, o) {
			t = toks[0] // may be a reserved word meant as a name
		}
	}
	prev, ok := tokenBefore(r.src, o)
	if !ok {
		return errAt(r.src, o, "mismatched input "+desc+"; expected an expression"+reservedHint(t, token{}))
	}
	if wantsOperand(prev) {
		return errAt(r.src, o, "mismatched input "+desc+"; expected an expression after "+prev.describe()+reservedHint(t, prev))
	}
	// A token after a complete operand that nothing can take: ksqlDB's
	// grammar finds no alternative there.
	return syntaxErrAt(r.src, o, "mismatched input "+desc+"; expected an operator, ',' or the next clause after "+prev.describe()+" (a missing comma or operator?)")
}

// tokenBefore returns the token of src that ends last before offset off.
func tokenBefore(src string, off int) (token, bool) {
	toks, err := lex(src[:off])
	if err != nil || len(toks) < 2 {
		return token{}, false
	}
	return toks[len(toks)-2], true
}

// wantsOperand reports whether an expression must follow t: t is an
// operator, an opening bracket, a comma, or a keyword other than a literal
// or END.
func wantsOperand(t token) bool {
	switch t.kind {
	case tkOp:
		return t.text != ")" && t.text != "]"
	case tkWord:
		u := t.upper()
		if u == "NULL" || u == "TRUE" || u == "FALSE" || u == "END" {
			return false
		}
		return isKeyword(u) || clauseKeywords[u] != 0
	}
	return false
}
