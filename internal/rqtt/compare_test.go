package rqtt

import (
	"strings"
	"testing"
)

// mustDecode reads JSON with json.Number numbers, as the runner does.
func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := decode([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func entries(t *testing.T, s string) []any {
	t.Helper()
	l, ok := mustDecode(t, s).([]any)
	if !ok {
		t.Fatalf("%s is not a list", s)
	}
	return l
}

func TestCompareQuery(t *testing.T) {
	const header = `{"header":{"schema":"` + "`ID` STRING KEY, `V` INT" + `"}}`
	const actualHeader = `{"header":{"queryId":"q1","schema":"` + "`ID` STRING KEY, `V` INT" + `"}}`
	cases := []struct {
		name         string
		want, got    string
		verifyOrder  bool
		differs      string // "" when they must match; else a text of the difference
		differsWhere string
	}{
		{
			name:         "header schema lacks KEY",
			want:         `[` + header + `]`,
			got:          `[{"header":{"queryId":"q1","schema":"` + "`ID` STRING, `V` INT" + `"}}]`,
			differs:      "value differs",
			differsWhere: "query[0]->header->schema",
		},
		{
			name:         "1 against 1.0",
			want:         `[` + header + `,{"row":{"columns":["a",1]}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a",1.0]}}]`,
			differs:      "rows differ",
			differsWhere: "query rows",
		},
		{
			name:         "1 against 1.0 in order",
			want:         `[` + header + `,{"row":{"columns":["a",1]}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a",1.0]}}]`,
			verifyOrder:  true,
			differs:      "value differs",
			differsWhere: "query[1]->row->columns",
		},
		{
			name:         "one extra row",
			want:         `[` + header + `,{"row":{"columns":["a",1]}},{"finalMessage":"Limit Reached"}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a",1]}},{"row":{"columns":["b",2]}},{"finalMessage":"Limit Reached"}]`,
			differs:      "expected 3 entries, got 4 (1 row more than expected)",
			differsWhere: "query",
		},
		{
			name:         "one missing row",
			want:         `[` + header + `,{"row":{"columns":["a",1]}},{"row":{"columns":["b",2]}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a",1]}}]`,
			differs:      "expected 3 entries, got 2 (1 row fewer than expected)",
			differsWhere: "query",
		},
		{
			name:         "a final message where none is expected",
			want:         `[` + header + `,{"row":{"columns":["a",1]}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a",1]}},{"finalMessage":"Query Completed"}]`,
			differs:      "finalMessage where none expected",
			differsWhere: "query",
		},
		{
			name:         "a row for another",
			want:         `[` + header + `,{"row":{"columns":["a",1]}},{"row":{"columns":["b",2]}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a",1]}},{"row":{"columns":["b",3]}}]`,
			differs:      `expected also ["b",2], got also ["b",3]`,
			differsWhere: "query rows",
		},
		{
			name:         "starts_with prefix differs",
			want:         `[{"header":{"queryId|starts_with":"transient_","schema":"` + "`ID` STRING KEY, `V` INT" + `"}}]`,
			got:          `[` + actualHeader + `]`,
			differs:      "prefix differs",
			differsWhere: "query[0]->header->queryId",
		},
		{
			name: "starts_with prefix matches",
			want: `[{"header":{"queryId|starts_with":"q","schema":"` + "`ID` STRING KEY, `V` INT" + `"}}]`,
			got:  `[` + actualHeader + `]`,
		},
		{
			name: "equal multisets in another order",
			want: `[` + header + `,{"row":{"columns":["a",1]}},{"row":{"columns":["b",2.5]}},{"row":{"columns":["a",1]}}]`,
			got:  `[` + actualHeader + `,{"row":{"columns":["b",2.50]}},{"row":{"columns":["a",1]}},{"row":{"columns":["a",1]}}]`,
		},
		{
			name:         "another order with verifyOrder",
			want:         `[` + header + `,{"row":{"columns":["a",1]}},{"row":{"columns":["b",2]}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["b",2]}},{"row":{"columns":["a",1]}}]`,
			verifyOrder:  true,
			differs:      "value differs",
			differsWhere: "query[1]->row->columns",
		},
		{
			name:         "multisets of different counts",
			want:         `[` + header + `,{"row":{"columns":["a",1]}},{"row":{"columns":["a",1]}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a",1]}},{"row":{"columns":["b",2]}}]`,
			differs:      "rows differ",
			differsWhere: "query rows",
		},
		{
			name: "partial maps with extra actual fields",
			want: `[` + header + `,{"row":{"columns":["a",1]}},{"finalMessage":"Limit Reached"}]`,
			got:  `[` + actualHeader + `,{"row":{"columns":["a",1],"tombstone":false}},{"finalMessage":"Limit Reached","extra":1}]`,
		},
		{
			name:         "a field the expected entry names is missing",
			want:         `[` + header + `,{"row":{"columns":["a",null],"tombstone":true}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a",null]}}]`,
			differs:      "missing field",
			differsWhere: "query[1]->row->tombstone",
		},
		{
			name:         "an integer against a string",
			want:         `[` + header + `,{"row":{"columns":["a",1]}}]`,
			got:          `[` + actualHeader + `,{"row":{"columns":["a","1"]}}]`,
			verifyOrder:  true,
			differs:      "value differs",
			differsWhere: "query[1]->row->columns",
		},
		{
			name:        "exponent and fraction are the same kind",
			want:        `[` + header + `,{"row":{"columns":["a",1.5E2]}}]`,
			got:         `[` + actualHeader + `,{"row":{"columns":["a",150.0]}}]`,
			verifyOrder: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := CompareQuery(entries(t, tc.want), entries(t, tc.got), tc.verifyOrder)
			switch {
			case tc.differs == "" && d != nil:
				t.Fatalf("reported a difference: %v", d)
			case tc.differs != "" && d == nil:
				t.Fatal("reported no difference")
			case tc.differs != "":
				if !strings.Contains(d.Error(), tc.differs) || !strings.HasSuffix(d.Path, tc.differsWhere) {
					t.Errorf("difference %q at %q, want %q at ...%q", d.Error(), d.Path, tc.differs, tc.differsWhere)
				}
			}
		})
	}
}

func TestEqualNumbers(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"1", "1", true},
		{"1", "1.0", false},
		{"1.0", "1", false},
		{"1.5", "1.50", true},
		{"1e2", "100.0", true},
		{"1e2", "100", false},
		{"10", "1e1", false},
		{"12345678901234567890", "12345678901234567890", true},
		{"12345678901234567890", "12345678901234567891", false},
		{"-0.0", "0.0", true},
	}
	for _, tc := range cases {
		if got := Equal(mustDecode(t, tc.a), mustDecode(t, tc.b)); got != tc.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := canonical(mustDecode(t, tc.a)) == canonical(mustDecode(t, tc.b)); got != tc.want {
			t.Errorf("canonical(%s) == canonical(%s) is %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCompareResponses(t *testing.T) {
	exp := func(kind, payload string) Expected { return Expected{Kind: kind, Payload: mustDecode(t, payload)} }
	stmts := []string{"CREATE STREAM S (ID STRING KEY, V INT) WITH (kafka_topic='t', value_format='JSON');", "SELECT * FROM S EMIT CHANGES LIMIT 1;"}
	admin := Response{Kind: "admin", Entity: mustDecode(t, `{"@type":"currentStatus","statementText":"`+
		`CREATE STREAM S (ID STRING KEY, V INT) WITH (kafka_topic='t', value_format='JSON');","commandStatus":{"status":"SUCCESS","message":"Stream created"},"warnings":[]}`)}
	query := Response{Kind: "query", Entries: entries(t, `[{"header":{"queryId":"transient_S_1","schema":"`+"`ID` STRING KEY, `V` INT"+`"}},{"row":{"columns":["a",1]}},{"finalMessage":"Limit Reached"}]`)}
	want := []Expected{
		exp("admin", `{"@type":"currentStatus","statementText":"{STATEMENT}","commandStatus":{"status":"SUCCESS"}}`),
		exp("query", `[{"header":{"schema":"`+"`ID` STRING KEY, `V` INT"+`"}},{"row":{"columns":["a",1]}},{"finalMessage":"Limit Reached"}]`),
	}
	if d := CompareResponses(want, []Response{admin, query}, stmts, false); d != nil {
		t.Errorf("matching responses differ: %v", d)
	}
	if d := CompareResponses(want, []Response{admin}, stmts, false); d == nil || d.What != "not enough responses" {
		t.Errorf("one response of two: %v", d)
	}
	if d := CompareResponses(want, []Response{query, admin}, stmts, false); d == nil || d.What != "kind differs" {
		t.Errorf("responses swapped: %v", d)
	}
	wrong := []Expected{exp("admin", `{"@type":"currentStatus","commandStatus":{"status":"FAILURE"}}`)}
	if d := CompareResponses(wrong, []Response{admin}, stmts, false); d == nil || d.Path != "responses[0]->admin->commandStatus->status" {
		t.Errorf("nested admin field: %v", d)
	}
}

func TestMatchError(t *testing.T) {
	const last = "INSERT INTO TEST (K, ID) VALUES ('10');"
	stmtErr := mustDecode(t, `{"@type":"statement_error","error_code":40001,"message":"Failed to prepare statement: Expected number columns and values to match: 2, 1","statementText":"INSERT INTO TEST (K, ID) VALUES ('10');","entities":[]}`)
	generic := mustDecode(t, `{"@type":"generic_error","error_code":40000,"message":"Foreign-key table-table joins are not supported on windowed tables."}`)
	const stmtType = "io.confluent.ksql.rest.entity.KsqlStatementErrorMessage"
	const errType = "io.confluent.ksql.rest.entity.KsqlErrorMessage"
	cases := []struct {
		name   string
		want   ExpectedError
		status int
		body   any
		last   string
		where  string // "" when it must match
	}{
		{"statement error", ExpectedError{Type: stmtType, Message: "Expected number columns", Status: 400}, 400, stmtErr, last, ""},
		{"a statement error is an error message", ExpectedError{Type: errType, Status: 400}, 400, stmtErr, last, ""},
		{"generic error for a statement error", ExpectedError{Type: stmtType}, 400, generic, last, "expectedError->type"},
		{"generic error", ExpectedError{Type: errType, Message: "not supported on windowed tables"}, 400, generic, last, ""},
		{"status", ExpectedError{Status: 400}, 500, stmtErr, last, "expectedError->status"},
		{"message", ExpectedError{Message: "match: 3, 1"}, 400, stmtErr, last, "expectedError->message"},
		{"another statement", ExpectedError{Type: stmtType}, 400, stmtErr, "SELECT * FROM TEST;", "expectedError->statementText"},
		{"unknown type", ExpectedError{Type: "io.confluent.ksql.rest.entity.Other"}, 400, stmtErr, last, "expectedError->type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := MatchError(&tc.want, tc.status, tc.body, tc.last)
			switch {
			case tc.where == "" && d != nil:
				t.Errorf("reported a difference: %v", d)
			case tc.where != "" && (d == nil || d.Path != tc.where):
				t.Errorf("difference %v, want one at %s", d, tc.where)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"7.2.0", "7.4.0", -1}, {"7.4", "7.4.0", 0}, {"7.10.0", "7.4.0", 1}, {"7.4.0-SNAPSHOT", "7.4.0", 0}, {"8.0.0", "7.4.0", 1},
	} {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
