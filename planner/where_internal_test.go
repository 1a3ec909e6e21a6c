package planner

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
)

// TestParsePartialDatetime checks ksqlDB's reading of a datetime compared
// with ROWTIME, WINDOWSTART or WINDOWEND.
func TestParsePartialDatetime(t *testing.T) {
	for _, c := range []struct {
		text string
		want int64
	}{
		{"2017", 1483228800000},                          // 2017-01-01T00:00:00.000Z
		{"2020-02", 1580515200000},                       // 2020-02-01
		{"2020-01-02", 1577923200000},                    // 2020-01-02
		{"2020-01-02T", 1577923200000},                   // the time left out
		{"2020-01-02TZ", 1577923200000},                  // and Z for UTC
		{"2020-12-02T13", 1606914000000},                 // 13:00
		{"2020-12-02T13Z", 1606914000000},                //
		{"2020-12-02T13:59", 1606917540000},              // 13:59:00
		{"2020-12-02T13:59:58", 1606917598000},           //
		{"2020-12-02T13:59:58.123Z", 1606917598123},      //
		{"2017-11-13T23:59:58.999+0100", 1510613998999},  // an offset
		{"2017-11-13T23:59:58.999-0100", 1510621198999},  //
		{"2020-02-23T22:45:12.000-01:00", 1582501512000}, //
		{"2020-02-24T24", 1582588800000},                 // the end of the day: 2020-02-25T00:00
		{"2020-02-30", 1582934400000},                    // a day past the month's end is its last
		{"1969-12-31T23:59:59.999", -1},                  // before the epoch
	} {
		got, err := parsePartialDatetime(c.text)
		if err != nil || got != c.want {
			t.Errorf("%s: got %d, %v; want %d", c.text, got, err, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"2017-1-1", "Failed to parse timestamp '2017-1-1': "},
		{"2017-01-01T00:00:00.000+foo", "Failed to parse timestamp '2017-01-01T00:00:00.000+foo': Failed to parse timezone '+foo'"},
		{"2020-02-24T24:30", "Failed to parse timestamp '2020-02-24T24:30': "},
		{"2020-02-23T23:45:12.1234", "Failed to parse timestamp '2020-02-23T23:45:12.1234': "},
		{"soon", "Required format is: \"yyyy-MM-dd'T'HH:mm:ss.SSS\", with an optional numeric 4-digit timezone"},
	} {
		_, err := parsePartialDatetime(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one containing %q", c.text, err, c.want)
		}
	}
}

func whereOf(t *testing.T, sql string) ast.Expr {
	t.Helper()
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	return stmts[0].(*ast.Select).Query.Where
}

// TestPseudoTimestamps checks which strings of a WHERE clause are read as
// datetimes, and that the clause itself is left as it is.
func TestPseudoTimestamps(t *testing.T) {
	for _, c := range []struct{ where, want string }{
		{"ROWTIME >= '2020-02-23'", "(ROWTIME >= 1582416000000)"},
		{"'2020-02-23' < WINDOWSTART AND WINDOWEND <> '1970'", "((1582416000000 < WINDOWSTART) AND (WINDOWEND <> 0))"},
		{"w.ROWTIME IS NOT DISTINCT FROM '1970-01-01T00:00:01'", "(W.ROWTIME IS NOT DISTINCT FROM 1000)"},
		{"ROWTIME BETWEEN '1970' AND '1970-01-01T00:00:00.002'", "(ROWTIME BETWEEN 0 AND 2)"},
		{"NOT (ROWTIME = '1970-01-01T00:00:00.005') OR UCASE(s) = 'x'", "((NOT (ROWTIME = 5)) OR (UCASE(S) = 'x'))"},
		// Only a string literal compared with the column itself.
		{"ROWTIME + 1 > '2020' AND ms > '2020' AND ROWTIME IN ('2020')", "((((ROWTIME + 1) > '2020') AND (MS > '2020')) AND (ROWTIME IN ('2020')))"},
	} {
		where := whereOf(t, "SELECT * FROM s WHERE "+c.where+";")
		before := ast.FormatExpr(where)
		out, err := pseudoTimestamps(where)
		if err != nil {
			t.Errorf("%s: %v", c.where, err)
			continue
		}
		got := ast.FormatExpr(out)
		if got != c.want {
			t.Errorf("%s: got %s, want %s", c.where, got, c.want)
		}
		if after := ast.FormatExpr(where); after != before {
			t.Errorf("%s: the clause changed to %s", c.where, after)
		}
	}
	if _, err := pseudoTimestamps(whereOf(t, "SELECT * FROM s WHERE ROWTIME > 'yesterday';")); err == nil ||
		!strings.HasPrefix(err.Error(), "line 1:33: Failed to parse timestamp 'yesterday': ") {
		t.Errorf("a string that is no datetime: got %v", err)
	}
}

// TestKsqlText checks the printing of a clause in ksqlDB's messages.
func TestKsqlText(t *testing.T) {
	for _, c := range []struct{ where, want string }{
		{"id = NULL", "(ID = null)"},
		{"b = TRUE OR b = false", "((B = true) OR (B = false))"},
		{"s = 'NULL' AND `null` = 1 AND NULLIF(a, b) IS NULL", "(((S = 'NULL') AND (`null` = 1)) AND (NULLIF(A, B) IS NULL))"},
		{"s IS NOT NULL AND s IS DISTINCT FROM NULL", "((S IS NOT NULL) AND (S IS DISTINCT FROM null))"},
		{"s = 'it''s NULL'", "(S = 'it''s NULL')"},
	} {
		if got := ksqlText(whereOf(t, "SELECT * FROM s WHERE "+c.where+";")); got != c.want {
			t.Errorf("%s: got %s, want %s", c.where, got, c.want)
		}
	}
}
