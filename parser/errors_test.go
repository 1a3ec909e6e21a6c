package parser

import (
	"errors"
	"strings"
	"testing"
)

func TestErrors(t *testing.T) {
	tests := []struct {
		in        string
		line, col int
		msg       string // substring
	}{
		{"CREAT STREAM s", 1, 1, "unknown statement 'CREAT'; expected CREATE, INSERT"},
		{"SHOW STREAMS;\nCREAT STREAM s", 2, 1, "unknown statement 'CREAT'"},
		{"CREATE STREAM s (id) WITH (kafka_topic='t')", 1, 20, "expected a column type after 'id', e.g. VARCHAR, BIGINT"},
		{"CREATE STREAM s (id INT PRIMARY KEY)", 1, 25, "KEY, not PRIMARY KEY"},
		{"CREATE TABLE t (id INT KEY)", 1, 24, "PRIMARY KEY, not KEY"},
		{"CREATE STREAM s (a DECIMAL)", 1, 27, "DECIMAL needs a precision and a scale"},
		{"CREATE STREAM s (a MAP<STRING INT>)", 1, 31, "expected ','"},
		{"CREATE STREAM s (a INT, a INT)", 1, 25, "duplicate column A"},
		{"CREATE STREAM s WITH (kafka_topic=)", 1, 35, "expected a value for KAFKA_TOPIC"},
		{"CREATE STREAM s WITH (kafka_topic='a' value_format='b')", 1, 39, "expected ',' or ')'"},
		{"CREATE STREAM s (a INT) AS SELECT * FROM t", 1, 25, "takes no column list"},
		{"SELECT * FROM s WHERE a = = 3", 1, 27, "mismatched input '='"},
		{"SELECT a,\n  b c d FROM s", 2, 7, "mismatched input 'd'"},
		{"SELECT a FROM s WHERE", 1, 17, "expected an expression after WHERE"},
		{"SELECT a + FROM s", 1, 12, "mismatched input 'FROM'"},
		{"SELECT a FROM s GROUP BY a WHERE b", 1, 28, "WHERE must come before GROUP"},
		{"SELECT a FROM s EMIT SOMETIMES", 1, 22, "expected CHANGES or FINAL"},
		{"SELECT a FROM s LIMIT x", 1, 23, "Syntax Error\nexpected the LIMIT (a whole number) but found 'x'"},
		{"SELECT a FROM s LIMIT", 1, 22, "Syntax Error\nexpected the LIMIT (a whole number) but found end of input"},
		{"SELECT a FROM s LIMIT 2.5", 1, 23, "Failed to prepare statement: Value must be integer for command: LIMIT\nLIMIT takes"},
		{"SELECT a FROM s LIMIT -1e1", 1, 23, "Failed to prepare statement: Value must be integer for command: LIMIT"},
		{"SELECT a FROM s LIMIT 2147483648", 1, 23, "Failed to prepare statement: Value must be integer for command: LIMIT"},
		{"SELECT a FROM s LIMIT 1 2", 1, 25, "unexpected '2' after LIMIT"},
		{"SELECT * FROM S1 ORDER BY MYKEY DESC", 1, 24, "Syntax Error\nmismatched input 'BY'; expected an operator, ',' or the next clause after 'ORDER'"},
		{"SELECT a s", 1, 11, "expected FROM"},
		{"SELECT f(a FROM s", 1, 9, "'(' is never closed"},
		{"SELECT a[1 FROM s", 1, 9, "'[' is never closed"},
		{"SELECT a-> FROM s", 1, 11, "expected a field name after '->'"},
		{"SELECT MAP(1, 2) FROM s", 1, 12, "expected 'key := value'"},
		{"SELECT a := 1 FROM s", 1, 10, "':=' is only allowed"},
		{"SELECT CAST(a BIGINT) FROM s", 1, 21, "expected CAST(expression AS type)"},
		{"SELECT CAST(a AS ) FROM s", 1, 18, "expected a type after AS"},
		{"SELECT a FROM s WINDOW TUMBLING (SIZE 1 FORTNIGHT) GROUP BY a", 1, 41, "expected a time unit"},
		{"SELECT a FROM s WINDOW HOPPING (SIZE 1 SECOND) GROUP BY a", 1, 24, "needs ADVANCE BY"},
		{"SELECT a FROM s JOIN t WITHIN ON s.a = t.a", 1, 30, "expected WITHIN"},
		{"SELECT a FROM s WITHIN 1 SECOND", 1, 17, "WITHIN belongs to a JOIN"},
		{"SELECT a FROM s JOIN t", 1, 22, "JOIN needs an ON condition"},
		{"SELECT a FROM s WHERE a IN (SELECT b FROM t)", 1, 23, "subqueries are not supported"},
		{"SELECT DISTINCT a FROM s", 1, 1, "SELECT DISTINCT is not supported"},
		{"SELECT 'abc FROM s", 1, 8, "unterminated string"},
		{"SELECT a FROM s /* x", 1, 17, "unterminated comment"},
		{"SELECT a ? b FROM s", 1, 10, "unexpected character '?'"},
		{"INSERT INTO s (a, b) VALUES (1)", 1, 22, "Failed to prepare statement: Expected number columns and values to match: 2, 1\nGive one value per column"},
		{"INSERT INTO s (a, b) VALUES ()", 1, 30, "Failed to prepare statement: Expected some values for INSERT INTO statement."},
		{"INSERT INTO s VALUES (1 2)", 1, 25, "mismatched input '2'"},
		{"INSERT INTO s VALUES (a b)", 1, 23, "expected ',' between expressions"},
		{"DROP STREAM", 1, 12, "expected the name of the STREAM to drop"},
		{"DROP VIEW v", 1, 6, "expected STREAM or TABLE"},
		{"SHOW STREAM", 1, 6, "expected what to SHOW"},
		{"SET 'a' 'b'", 1, 9, "expected '='"},
		{"SHOW STREAMS extra", 1, 14, "end the statement with ';'"},
		{"", 1, 1, "no statement found"},
		{"SELECT a FROM s WHERE a IS DISTINCT b", 1, 36, "expected FROM after IS [NOT] DISTINCT"},
		{"SELECT 9223372036854775808 FROM s", 1, 8, "Invalid numeric literal: 9223372036854775808; expected"},
		{"SELECT -9223372036854775809 FROM s", 1, 9, "Invalid numeric literal: -9223372036854775809; expected"},
		{"SELECT -1.8E308 FROM s", 1, 9, "Number overflows DOUBLE: -1.8E308; expected"},
		{"SELECT a FROM s WHERE a IN ( )", 1, 30, "mismatched input ')'; expected an expression after '('"},
		{"SELECT COUNT(*) FROM s GROUP BY a AND b", 1, 35, "mismatched input 'AND'; expected ','"},
		{"SELECT * FROM s PARTITION BY a = 1", 1, 32, "mismatched input '='; expected ','"},
		{"SELECT COUNT(*) FROM s GROUP BY a, (b, c)", 1, 38, "missing ')' at ','"},
		{"SELECT COUNT(*) FROM s GROUP BY a, (, b)", 1, 37, "missing ')' at ','"},
		{"SELECT COUNT(*) FROM s GROUP BY a, (b) + (c, d)", 1, 42, "a list of values is not allowed here"},
		{"SELECT * FROM s PARTITION BY ()", 1, 31, "PARTITION BY requires at least one expression"},
		{"CREATE STREAM s (k STRING (KEY))", 1, 28, "expected a type parameter"},
		{"CREATE STREAM s (k VARCHAR(STRING) (KEY))", 1, 36, "expected ',' or ')' after column K"},
		{"CREATE STREAM s (k NULL)", 1, 20, "expected a type after 'k', e.g. VARCHAR, BIGINT, but found NULL"},
		{"SELECT CAST(a AS ARRAY<NULL>) FROM s", 1, 24, "found NULL"},
		{"CREATE TABLE t (k INT PRIMARY KEY) WITH (window_type='hopping', window_size='3 fortnights')", 1, 77, "Unknown time unit: 'FORTNIGHTS'"},
		{"CREATE TABLE t (k INT PRIMARY KEY) WITH (window_type='session', window_size='3 seconds')", 1, 65, "'WINDOW_SIZE' should not be set for SESSION windows"},
		{"SELECT a FROM s WINDOW TUMBLING (SIZE 9223372036854775807 DAYS) GROUP BY a", 1, 59, "SIZE is too long"},
		{"SELECT a LIKE 'x' ESCAPE 'ab' FROM s", 1, 26, "expected one character in quotes after ESCAPE"},
		{"SELECT 00.''FROM A", 1, 11, "mismatched input ''''; expected an operator, ',' or AS alias"},
		{"SELECT a 'x' FROM s", 1, 10, "mismatched input ''x''; expected an operator"},
		{"SELECT 0 FROM A JOIN A ON CAST(0,1 AS A)", 1, 33, "mismatched input ','; expected AS and a type"},
		{"SELECT x => 1 FROM s", 1, 8, "a lambda is only allowed as a function argument"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.in)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want a *parser.Error", tc.in, err)
			continue
		}
		if pe.Line != tc.line || pe.Col != tc.col || !strings.Contains(pe.Msg+"\n"+pe.Hint, tc.msg) {
			t.Errorf("%q:\n got  %v\n want line %d:%d: ...%s...", tc.in, err, tc.line, tc.col, tc.msg)
		}
		if pe.Syntax != (pe.Msg == "Syntax Error") {
			t.Errorf("%q: Syntax is %v for %q", tc.in, pe.Syntax, pe.Msg)
		}
		if !strings.HasPrefix(err.Error(), "line ") {
			t.Errorf("%q: error %q lacks the line prefix", tc.in, err)
		}
	}
}

func TestErrorStatementText(t *testing.T) {
	_, err := Parse("SHOW STREAMS;\n  SELECT a + FROM s ; SHOW TABLES")
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	if pe.Statement != "SELECT a + FROM s" || pe.Line != 2 || pe.Col != 14 {
		t.Errorf("got %+v", pe)
	}
}
