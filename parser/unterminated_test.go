package parser

import "testing"

// TestUnterminatedMessages checks that a quote or comment left open is
// reported at its opening quote, with how to close it.
func TestUnterminatedMessages(t *testing.T) {
	for _, tc := range []struct {
		in  string
		err string
	}{
		{"SELECT 'abc FROM s;", "line 1:8: unterminated string literal: the ' opened here is never closed; close it with ' (write a quote inside a string as '')"},
		{"SHOW STREAMS;\nSELECT a,\n  'it''s FROM s;\nSHOW TABLES;", "line 3:3: unterminated string literal: the ' opened here is never closed; close it with ' (write a quote inside a string as '')"},
		{"SELECT `abc FROM s;", "line 1:8: unterminated quoted identifier: the ` opened here is never closed; close it with `"},
		{"SELECT \"abc FROM s;", "line 1:8: unterminated quoted identifier: the \" opened here is never closed; close it with \""},
		{"SELECT X'0A FROM s;", "line 1:9: unterminated bytes literal: the ' opened here is never closed; close it with '"},
		{"SELECT a /* FROM s;", "line 1:10: unterminated comment: the /* opened here is never closed; close it with */"},
	} {
		_, err := Parse(tc.in)
		if err == nil || err.Error() != tc.err {
			t.Errorf("Parse(%q) = %v, want %s", tc.in, err, tc.err)
		}
		if _, err := NewScript(tc.in); err == nil || err.Error() != tc.err {
			t.Errorf("NewScript(%q) = %v, want %s", tc.in, err, tc.err)
		}
	}
	if _, err := Parse("SELECT 'a\nb' FROM s;"); err != nil {
		t.Errorf("a string over two lines: %v", err)
	}
}
