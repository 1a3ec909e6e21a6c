package qtt

import "testing"

func TestMatchWrapped(t *testing.T) {
	for _, tc := range []struct {
		want, msg string
		line0     int
		ok        bool
	}{
		// ksqlDB counts lines over the case's statements; the error's
		// line is the statement's own.
		{"Line: 3, Col: 70: JOIN ON column 'T.IID' cannot be resolved.", "line 1:70: JOIN ON column 'T.IID' cannot be resolved.", 2, true},
		{"Line: 3, Col: 70: JOIN ON column 'T.IID' cannot be resolved.", "line 1:71: JOIN ON column 'T.IID' cannot be resolved.", 2, false},
		{"Line: 3, Col: 70: JOIN ON column 'T.IID' cannot be resolved.", "line 1:70: JOIN ON column 'T.IID' cannot be resolved.", 1, false},
		{"Line: 3, Col: 70: JOIN ON column 'T.IID' cannot be resolved.", "JOIN ON column 'T.IID' cannot be resolved.", 2, false},
		{"Exception while preparing statement: Line: 3, Col: 84: Column 'ID' is ambiguous.", "line 1:84: Column 'ID' is ambiguous. Could be A.ID or B.ID.", 2, true},
		{"Failed to prepare statement: 'UNKNOWN' is not a valid stream/table name or alias.", "line 1:84: 'UNKNOWN' is not a valid stream/table name or alias.", 2, true},
		{"Failed to prepare statement: 'UNKNOWN' is not a valid stream/table name or alias.", "line 1:84: something else", 2, false},
		// Without wrapping, the plain containment check decides.
		{"plain message", "line 1:1: plain message", 0, false},
	} {
		if got := matchWrapped(tc.want, tc.msg, tc.line0); got != tc.ok {
			t.Errorf("matchWrapped(%q, %q, %d) = %v, want %v", tc.want, tc.msg, tc.line0, got, tc.ok)
		}
	}
}
