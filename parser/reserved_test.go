package parser

import (
	"errors"
	"testing"
)

// TestReservedWordHint checks that a reserved word written where a name
// goes gets the hint to back-quote it, and that the words in their place
// do not.
func TestReservedWordHint(t *testing.T) {
	hint := func(w, what string) string {
		return "; " + w + " is a reserved word: to use it as " + what + ", quote it with backquotes: `" + w + "`"
	}
	for _, tc := range []struct {
		in        string
		line, col int
		msg       string // the whole message
	}{
		{"SELECT from FROM s", 1, 8, "expected a select list before FROM, e.g. SELECT * FROM s" + hint("FROM", "a column name")},
		{"SELECT select FROM s", 1, 8, "mismatched input 'select'; expected an expression after 'SELECT'" + hint("SELECT", "a column name")},
		{"SELECT a, from FROM s", 1, 11, "mismatched input 'from'; expected an expression after ','" + hint("FROM", "a column name")},
		{"SELECT a AS from FROM s", 1, 13, "mismatched input 'from'; expected an expression after 'AS'" + hint("FROM", "a column name")},
		{"SELECT id,\n  group FROM s", 2, 3, "mismatched input 'group'; expected an expression after ','" + hint("GROUP", "a column name")},
		{"SELECT * FROM s WHERE a = 1 AND select = 2", 1, 33, "mismatched input 'select'; expected an expression after 'AND'" + hint("SELECT", "a column name")},
		{"SELECT * FROM s WHERE where = 1", 1, 23, "duplicate WHERE clause; a query has at most one" + hint("WHERE", "a column name")},
		{"SELECT a, limit FROM s", 1, 11, "expected FROM before LIMIT; write SELECT ... FROM source" + hint("LIMIT", "a column name")},
		{"SELECT COUNT(*) FROM s GROUP BY from", 1, 33, "mismatched input 'from'; expected an expression after 'BY'" + hint("FROM", "a column name")},
		{"SELECT * FROM from", 1, 15, "mismatched input 'from'; expected an expression after 'FROM'" + hint("FROM", "a stream or table name")},
		{"SELECT * FROM s JOIN on ON s.a = on.a", 1, 22, "mismatched input 'on'; expected an expression after 'JOIN'" + hint("ON", "a stream or table name")},
		{"CREATE STREAM t AS SELECT a, from FROM s", 1, 30, "mismatched input 'from'; expected an expression after ','" + hint("FROM", "a column name")},
		{"INSERT INTO t SELECT f(from) FROM s", 1, 24, "mismatched input 'from'; expected an expression after '('" + hint("FROM", "a column name")},
		// A keyword in its place, after an incomplete expression, is not
		// taken for a name.
		{"SELECT a + FROM s", 1, 12, "mismatched input 'FROM'; expected an expression after '+'"},
		{"SELECT a FROM FROM s", 1, 15, "mismatched input 'FROM'; expected an expression after 'FROM'"},
		{"SELECT a, not FROM s", 1, 15, "mismatched input 'FROM'; expected an expression after 'not'"},
		{"SELECT * FROM s WHERE", 1, 17, "expected an expression after WHERE"},
		{"SELECT * FROM s WHERE a = null", 0, 0, ""},
	} {
		_, err := Parse(tc.in)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.in, err)
			}
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want a *parser.Error", tc.in, err)
			continue
		}
		if pe.Line != tc.line || pe.Col != tc.col || pe.Msg != tc.msg {
			t.Errorf("%q:\n got  %v\n want line %d:%d: %s", tc.in, err, tc.line, tc.col, tc.msg)
		}
	}
	// Quoted, the words are names.
	for _, in := range []string{"SELECT `FROM`, `SELECT` AS `WHERE` FROM `FROM` WHERE `GROUP` = 1"} {
		if _, err := Parse(in); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
}
