package shell

import (
	"reflect"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		in    string
		stmts []statement
		rest  string
	}{
		{"", nil, ""},
		{"  -- just a comment\n /* and another */ ;; \n", nil, ""},
		{"SHOW STREAMS;", []statement{{"SHOW STREAMS;", 1, 1}}, ""},
		{"SHOW STREAMS; SHOW TABLES;\n", []statement{{"SHOW STREAMS;", 1, 1}, {"SHOW TABLES;", 1, 15}}, ""},
		{"-- c\nCREATE STREAM s (a STRING)\n  WITH (kafka_topic='a;b');\nSELECT",
			[]statement{{"CREATE STREAM s (a STRING)\n  WITH (kafka_topic='a;b');", 2, 1}}, "SELECT"},
		{"SELECT 'it''s;' AS x, \"a;b\", `c;d` -- ; in a comment\n FROM t /* ; */;",
			[]statement{{"SELECT 'it''s;' AS x, \"a;b\", `c;d` -- ; in a comment\n FROM t /* ; */;", 1, 1}}, ""},
		{"SELECT 'open;", nil, "SELECT 'open;"},
		{"SHOW STREAMS;\n  \\x on\nSHOW\n\\o csv", []statement{{"SHOW STREAMS;", 1, 1}, {"\\x on", 2, 3}}, "SHOW\n\\o csv"},
		{"\\o json", []statement{{"\\o json", 1, 1}}, ""},
		{"\tDEFINE x = 'é';  SHOW VARIABLES;", []statement{{"DEFINE x = 'é';", 1, 2}, {"SHOW VARIABLES;", 1, 19}}, ""},
	} {
		stmts, rest := splitStatements(tc.in)
		if !reflect.DeepEqual(stmts, tc.stmts) || rest != tc.rest {
			t.Errorf("splitStatements(%q) =\n %+v, %q\nwant\n %+v, %q", tc.in, stmts, rest, tc.stmts, tc.rest)
		}
	}
}
