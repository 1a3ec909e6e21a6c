package planner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/javatime"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// A WHERE clause is bound as ksqlDB reads it:
//
//   - A string compared with ROWTIME, WINDOWSTART or WINDOWEND (with =,
//     <>, <, <=, >, >=, IS [NOT] DISTINCT FROM, or as a bound of BETWEEN)
//     is the time it writes, a datetime that may leave out its end
//     (pseudoTimestamps): WHERE ROWTIME >= '2020-05-26T23' reads as a
//     BIGINT of milliseconds, as ksqlDB rewrites it.
//   - The types of its comparisons are checked as ksqlDB's
//     ExpressionTypeManager checks them (the binder does it), and a
//     mismatch is reported as ksqlDB reports it for a WHERE clause (see
//     whereError): "Error in WHERE expression: Cannot compare ...",
//     then the clause.

// pseudoTimestampColumns are the BIGINT columns of milliseconds that take
// a datetime string in a comparison.
var pseudoTimestampColumns = map[string]bool{
	topology.RowTime: true, topology.WindowStart: true, topology.WindowEnd: true,
}

// pseudoTimestamps returns e with each string literal compared with
// ROWTIME, WINDOWSTART or WINDOWEND replaced by the milliseconds of the
// datetime it writes (see parsePartialDatetime); e itself is left as it
// is. A string that is no such datetime is an error, as in ksqlDB.
func pseudoTimestamps(e ast.Expr) (ast.Expr, error) {
	var failed error
	out := rewriteExpr(e, func(x ast.Expr) ast.Expr {
		if failed != nil {
			return x
		}
		var err error
		switch c := x.(type) {
		case *ast.Binary:
			if c.Op < ast.OpEq || c.Op > ast.OpGe {
				return x
			}
			l, r := c.L, c.R
			if l, r, err = timestampSides(l, r); err != nil {
				failed = err
				return x
			}
			if l != c.L || r != c.R {
				return &ast.Binary{Pos: c.Pos, Op: c.Op, L: l, R: r}
			}
		case *ast.IsDistinct:
			l, r := c.L, c.R
			if l, r, err = timestampSides(l, r); err != nil {
				failed = err
				return x
			}
			if l != c.L || r != c.R {
				return &ast.IsDistinct{Pos: c.Pos, L: l, R: r, Not: c.Not}
			}
		case *ast.Between:
			if !isPseudoTimestamp(c.X) {
				return x
			}
			lo, err1 := timestampLiteral(c.Lo)
			hi, err2 := timestampLiteral(c.Hi)
			if failed = errors.Join(err1, err2); failed != nil {
				return x
			}
			if lo != c.Lo || hi != c.Hi {
				return &ast.Between{Pos: c.Pos, X: c.X, Lo: lo, Hi: hi, Not: c.Not}
			}
		}
		return x
	})
	return out, failed
}

// timestampSides rewrites the string literal of a comparison of l and r
// whose other side is ROWTIME, WINDOWSTART or WINDOWEND, the left side's
// column first, as ksqlDB does.
func timestampSides(l, r ast.Expr) (ast.Expr, ast.Expr, error) {
	var err error
	switch {
	case isPseudoTimestamp(l):
		r, err = timestampLiteral(r)
	case isPseudoTimestamp(r):
		l, err = timestampLiteral(l)
	}
	return l, r, err
}

func isPseudoTimestamp(e ast.Expr) bool {
	c, ok := e.(*ast.ColumnRef)
	return ok && pseudoTimestampColumns[c.Name]
}

// timestampLiteral returns e, or the integer literal of its milliseconds
// when it is a string literal.
func timestampLiteral(e ast.Expr) (ast.Expr, error) {
	lit, ok := e.(*ast.Literal)
	if !ok || lit.Kind != ast.StringLit {
		return e, nil
	}
	ms, err := parsePartialDatetime(lit.Text)
	if err != nil {
		return nil, &Error{Pos: lit.Pos, Msg: err.Error()}
	}
	return &ast.Literal{Pos: lit.Pos, Kind: ast.IntLit, Text: strconv.FormatInt(ms, 10)}, nil
}

// datetimePattern is the datetime ksqlDB reads in a string compared with
// a pseudo timestamp column, and timePattern its time of day.
const (
	datetimePattern = "yyyy-MM-dd'T'HH:mm:ss.SSS"
	timePattern     = "HH:mm:ss.SSS"
)

// failedTimestamp starts ksqlDB's refusal of a string that is no datetime.
const failedTimestamp = "Failed to parse timestamp '"

var datetimeFormat = sync.OnceValues(func() (*javatime.Format, error) { return javatime.Parse(datetimePattern) })

// parsePartialDatetime reads text as ksqlDB's PartialStringToTimestampParser
// does: a date (yyyy, yyyy-MM or yyyy-MM-dd, the missing parts the first
// month and day), or a date, 'T' and a time of day that may stop after any
// of its parts (2020-02-23T23, 2020-02-23T23:45, ...: the rest is zero),
// then an offset (+hhmm, -hh:mm, ...) or Z; without one the time is UTC.
// 24:00 is midnight at the end of the day. It returns milliseconds since
// the epoch.
func parsePartialDatetime(text string) (int64, error) {
	var date, clock, zone string
	if i := strings.IndexByte(text, 'T'); i >= 0 {
		date = text[:i]
		rest := text[i+1:]
		// The offset starts at the first sign after the 'T'.
		if j := strings.IndexByte(rest, '+'); j >= 0 {
			zone = rest[j:]
		} else if j := strings.IndexByte(rest, '-'); j >= 0 {
			zone = rest[j:]
		}
		clock = completeTime(strings.TrimSuffix(rest[:len(rest)-len(zone)], "Z"))
	} else {
		date = completeDate(text)
		clock = completeTime("")
	}
	fail := func(err error) (int64, error) {
		return 0, fmt.Errorf(failedTimestamp+"%s': %v\nRequired format is: \"%s\", with an optional numeric 4-digit timezone, for example: '2020-05-26T23:59:58.000' or with tz: '2020-05-26T23:59:58.000+0200'. A trailing 'Z' instead of tz indicates the zero UTC offset. Partials are also supported, for example \"2020-05-26\"", text, err, datetimePattern)
	}
	loc := time.UTC
	if strings.TrimSpace(zone) != "" {
		l, err := javatime.LoadZone(zone)
		if err != nil {
			return fail(fmt.Errorf("Failed to parse timezone '%s': %v", zone, err))
		}
		loc = l
	}
	f, err := datetimeFormat()
	if err != nil {
		return fail(err)
	}
	// java.time reads 24:00 as the midnight that ends the day.
	endOfDay := clock == "24:00:00.000"
	if endOfDay {
		clock = "00:00:00.000"
	}
	t, err := f.ParseTimestamp(date+"T"+clock, loc)
	if err != nil {
		return fail(err)
	}
	if endOfDay {
		t = t.AddDate(0, 0, 1)
	}
	return t.UnixMilli(), nil
}

// completeDate adds the first month and day to a year, and the first day
// to a year and month.
func completeDate(date string) string {
	parts := strings.Split(date, "-")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		// As Java's String.split, trailing empty parts do not count.
		parts = parts[:len(parts)-1]
	}
	switch len(parts) {
	case 1:
		return date + "-01-01"
	case 2:
		return date + "-01"
	}
	return date
}

// completeTime fills a time of day cut short with the rest of timePattern,
// its letters as zeros.
func completeTime(clock string) string {
	if len(clock) >= len(timePattern) {
		return clock
	}
	rest := []byte(timePattern[len(clock):])
	for i, c := range rest {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			rest[i] = '0'
		}
	}
	return clock + string(rest)
}

// whereError is ksqlDB's report of the error pe of the WHERE clause where,
// when ksqlDB reports it in its own words: a comparison whose operands'
// types do not compare, as the binder words it, is "Error in WHERE
// expression: <pe>", then the clause as ksqlDB prints it on a line
// "Statement: ..."; a string that is no datetime, compared with a pseudo
// timestamp column, is pe. It is nil for any other error.
func whereError(pe *Error, where ast.Expr) *Error {
	switch {
	case strings.HasPrefix(pe.Msg, failedTimestamp):
		return pe
	case strings.HasPrefix(pe.Msg, "Cannot compare "), strings.HasPrefix(pe.Msg, "Comparison with NULL not supported: "):
		return &Error{Pos: pe.Pos, Msg: "Error in WHERE expression: " + pe.Msg + "\nStatement: " + ksqlText(where)}
	}
	return nil
}

// ksqlText prints e as ksqlDB prints an expression in its messages:
// canonical SQL (ast.FormatExpr) with the literals NULL, TRUE and FALSE in
// lower case.
func ksqlText(e ast.Expr) string {
	s := ast.FormatExpr(e)
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'' || c == '`':
			// A string or a quoted identifier, its quotes doubled inside.
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
			j = min(j+1, len(s))
			b.WriteString(s[i:j])
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			switch w := s[i:j]; {
			case w == "TRUE" || w == "FALSE",
				w == "NULL" && !strings.HasSuffix(b.String(), " IS ") && !strings.HasSuffix(b.String(), " IS NOT "):
				// A literal, not IS [NOT] NULL.
				b.WriteString(strings.ToLower(w))
			default:
				b.WriteString(w)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '@' || c == '$'
}

// rewriteExpr returns e with each node x replaced by fn(x), children
// first. Nodes whose children fn leaves alone are kept; the others are
// copied, so that e is never changed.
func rewriteExpr(e ast.Expr, fn func(ast.Expr) ast.Expr) ast.Expr {
	if e == nil {
		return nil
	}
	one := func(x ast.Expr, changed *bool) ast.Expr {
		y := rewriteExpr(x, fn)
		if y != x {
			*changed = true
		}
		return y
	}
	all := func(xs []ast.Expr, changed *bool) []ast.Expr {
		var out []ast.Expr
		for i, x := range xs {
			y := rewriteExpr(x, fn)
			if y != x && out == nil {
				out = append(make([]ast.Expr, 0, len(xs)), xs[:i]...)
			}
			if out != nil {
				out = append(out, y)
			}
		}
		if out == nil {
			return xs
		}
		*changed = true
		return out
	}
	changed := false
	switch x := e.(type) {
	case *ast.Binary:
		c := *x
		c.L, c.R = one(x.L, &changed), one(x.R, &changed)
		if changed {
			e = &c
		}
	case *ast.Nary:
		c := *x
		if c.Args = all(x.Args, &changed); changed {
			e = &c
		}
	case *ast.Unary:
		c := *x
		if c.X = one(x.X, &changed); changed {
			e = &c
		}
	case *ast.IsNull:
		c := *x
		if c.X = one(x.X, &changed); changed {
			e = &c
		}
	case *ast.IsDistinct:
		c := *x
		c.L, c.R = one(x.L, &changed), one(x.R, &changed)
		if changed {
			e = &c
		}
	case *ast.In:
		c := *x
		c.X, c.List = one(x.X, &changed), all(x.List, &changed)
		if changed {
			e = &c
		}
	case *ast.Between:
		c := *x
		c.X, c.Lo, c.Hi = one(x.X, &changed), one(x.Lo, &changed), one(x.Hi, &changed)
		if changed {
			e = &c
		}
	case *ast.Like:
		c := *x
		c.X, c.Pattern, c.Escape = one(x.X, &changed), one(x.Pattern, &changed), one(x.Escape, &changed)
		if changed {
			e = &c
		}
	case *ast.Case:
		c := *x
		c.Operand = one(x.Operand, &changed)
		whens := make([]ast.When, len(x.Whens))
		for i, w := range x.Whens {
			whens[i] = ast.When{Cond: one(w.Cond, &changed), Result: one(w.Result, &changed)}
		}
		c.Whens = whens
		c.Else = one(x.Else, &changed)
		if changed {
			e = &c
		}
	case *ast.Cast:
		c := *x
		if c.X = one(x.X, &changed); changed {
			e = &c
		}
	case *ast.FuncCall:
		c := *x
		if c.Args = all(x.Args, &changed); changed {
			e = &c
		}
	case *ast.Dereference:
		c := *x
		if c.X = one(x.X, &changed); changed {
			e = &c
		}
	case *ast.Subscript:
		c := *x
		c.X, c.Index = one(x.X, &changed), one(x.Index, &changed)
		if changed {
			e = &c
		}
	case *ast.ArrayCtor:
		c := *x
		if c.Elems = all(x.Elems, &changed); changed {
			e = &c
		}
	case *ast.MapCtor:
		c := *x
		c.Keys, c.Values = all(x.Keys, &changed), all(x.Values, &changed)
		if changed {
			e = &c
		}
	case *ast.StructCtor:
		c := *x
		if c.Values = all(x.Values, &changed); changed {
			e = &c
		}
	case *ast.Lambda:
		c := *x
		if c.Body = one(x.Body, &changed); changed {
			e = &c
		}
	}
	return fn(e)
}

// bindClause binds e, an expression of clause, in scope sc; a WHERE
// clause after pseudoTimestamps.
func bindClause(cat *catalog.Catalog, clause string, e ast.Expr, sc bind.Scope) (*expr.Expr, error) {
	if clause == "WHERE" {
		var err error
		if e, err = pseudoTimestamps(e); err != nil {
			return nil, err
		}
	}
	return bindExpr(cat, e, sc)
}
