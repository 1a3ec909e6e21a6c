package parser

import (
	"regexp"
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
// holds. Errors are mapped back to the user's text.
func (r *rewriter) parseSelect() (*tast.SelectStmt, error) {
	text := r.buf.String()
	p := tidbPool.Get().(*tparser.Parser)
	stmts, _, err := p.ParseSQL(text)
	tidbPool.Put(p)
	if err != nil {
		return nil, r.mapError(text, err.Error())
	}
	if len(stmts) != 1 {
		return nil, errAt(r.src, r.orig(0), "expected one query")
	}
	sel, ok := stmts[0].(*tast.SelectStmt)
	if !ok {
		return nil, errAt(r.src, r.orig(0), "expected a SELECT query")
	}
	return sel, nil
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
		return errAt(r.src, r.end, "unexpected end of statement; the statement is incomplete, check for a missing operand or ')'")
	}
	toks, _ := lex(r.src[o:r.end])
	desc := "'" + strings.TrimSpace(r.src[o:r.end]) + "'"
	if len(toks) > 0 && toks[0].kind != tkEOF {
		desc = toks[0].describe()
		if toks[0].kind == tkWord && !isKeyword(toks[0].upper()) && clauseKeywords[toks[0].upper()] == 0 {
			return errAt(r.src, o, "mismatched input "+desc+"; check the syntax just before it (a missing comma or operator?)")
		}
	}
	return errAt(r.src, o, "mismatched input "+desc+"; check the syntax at and just before it")
}
