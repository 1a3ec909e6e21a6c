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

func TestUnfinished(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the report, "" for none
	}{
		{"SHOW STREAMS;\n-- done\n", ""},
		{"SHOW STREAMS;\nSHOW\n  TABLES", "Error: line 3:9: the statement has no terminating ';': end it with ';'\nSHOW\n  TABLES\n        ^"},
		{"SHOW STREAMS;\nSELECT a,\n  b, 'x FROM s;\nSHOW TABLES;\n",
			"Error: line 3:6: unterminated string literal: the ' opened here is never closed; close it with ' (write a quote inside a string as '')\n" +
				"SELECT a,\n  b, 'x FROM s;\n     ^"},
		{"SELECT 'it''s FROM s;", "Error: line 1:8: unterminated string literal: the ' opened here is never closed; close it with ' (write a quote inside a string as '')\n" +
			"SELECT 'it''s FROM s;\n       ^"},
		{"SELECT 'ok', `a FROM s;", "Error: line 1:14: unterminated quoted identifier: the ` opened here is never closed; close it with `\n" +
			"SELECT 'ok', `a FROM s;\n             ^"},
		{"SELECT \"é FROM s;", "Error: line 1:8: unterminated quoted identifier: the \" opened here is never closed; close it with \"\n" +
			"SELECT \"é FROM s;\n       ^"},
		{"SHOW STREAMS;\n  /* SHOW TABLES;\n", "Error: line 2:3: unterminated comment: the /* opened here is never closed; close it with */\n" +
			"  /* SHOW TABLES;\n  ^"},
		// Quotes in comments and comment marks in strings do not count.
		{"SELECT '/*', '--' FROM s; -- it's\n/* \"a */ SHOW TABLES;", ""},
		// A string over several lines is fine once closed.
		{"SELECT 'a\nb' FROM s;", ""},
	} {
		var got string
		_, rest := splitStatements(tc.in)
		if e := unfinished("", tc.in, rest); e != nil {
			got = e.Error()
		}
		if got != tc.want {
			t.Errorf("unfinished(%q) =\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
	if e := unterminated("f.sql", "SHOW\n  TABLES"); e != nil {
		t.Errorf("unterminated reports a statement without ';': %v", e)
	}
	if e := unterminated("f.sql", "\n\nSELECT 'x"); e == nil || e.Error() != "Error: f.sql:3:8: "+openMessage('\'')+"\nSELECT 'x\n       ^" {
		t.Errorf("unterminated = %v", e)
	}
}

func TestPromptFor(t *testing.T) {
	for pending, want := range map[string]string{
		"":                    Prompt,
		"SELECT a\n":          ContinuationPrompt,
		"SELECT 'a\n":         "     '> ",
		"SELECT `a\n":         "     `> ",
		"SELECT \"a\n":        "     \"> ",
		"SELECT 'a''\n":       "     '> ",
		"SELECT 'a''b'\n":     ContinuationPrompt,
		"SELECT a /* x\n":     "    /*> ",
		"SELECT a -- it's\n":  ContinuationPrompt,
		"/* a comment\n":      "    /*> ",
		"SELECT 'a', \"b\"\n": ContinuationPrompt,
	} {
		if got := promptFor(pending); got != want {
			t.Errorf("promptFor(%q) = %q, want %q", pending, got, want)
		}
		if len(want) != len(Prompt) {
			t.Errorf("prompt %q is not as wide as %q", want, Prompt)
		}
	}
}

func TestCarried(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SHOW STREAMS;\n", ""},
		{"SHOW STREAMS; SHOW\n", "SHOW\n"},
		{"SHOW STREAMS; /* a\n", "/* a\n"},
		{"/* a\n", "/* a\n"},
		{"/* a */\n", ""},
		{"SELECT 'a;\n", "SELECT 'a;\n"},
	} {
		_, rest := splitStatements(tc.in)
		if got := carried(tc.in, rest); got != tc.want {
			t.Errorf("carried(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
