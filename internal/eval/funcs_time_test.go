package eval_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/bind"
)

func TestTimeFuncs(t *testing.T) {
	ts := types.TimestampValue(1526075913000) // 2018-05-11T21:58:33Z
	runEvalCases(t, []evalCase{
		{"UNIX_DATE(DT)", nil, int32(10), false},
		{"UNIX_DATE(DT)", nullFullRow(), nil, false},
		{"UNIX_TIMESTAMP(TS)", nil, int64(86400100), false},
		{"UNIX_TIMESTAMP(TS)", nullFullRow(), nil, false},
		{"FROM_UNIXTIME(B)", nil, types.TimestampValue(10), false},
		{"FROM_UNIXTIME(I)", nil, types.TimestampValue(7), false},
		{"FROM_UNIXTIME(1589234313000)", nil, types.TimestampValue(1589234313000), false},
		{"FROM_UNIXTIME(B)", nullFullRow(), nil, false},
		{"FROM_DAYS(I)", nil, types.DateValue(7), false},

		{"DATETOSTRING(17662, 'yyyy-MM-dd')", nil, "2018-05-11", false},
		{"DATETOSTRING(18993, 'dd-MMM-yyyy')", nil, "01-Jan-2022", false},
		{"DATETOSTRING(-1, 'dd-MM-yyyy''Sophia''')", nil, "31-12-1969Sophia", false},
		{"DATETOSTRING(I, S)", nullFullRow(), nil, false},
		{"DATETOSTRING(1, 'yyyy HH')", nil, nil, true},
		{"DATETOSTRING(1, 'bb')", nil, nil, true},
		{"STRINGTODATE('2018-05-11Lit', 'yyyy-MM-dd''Lit''')", nil, int32(17662), false},
		{"STRINGTODATE('01-Jan-2022', 'dd-MMM-yyyy')", nil, int32(18993), false},
		{"STRINGTODATE('x', 'yyyy')", nil, nil, true},
		{"STRINGTODATE(S, 'yyyy')", nullFullRow(), nil, false},

		{"FORMAT_DATE(DT, 'yyyy-MM-dd')", nil, "1970-01-11", false},
		{"FORMAT_DATE(DT, 'dd/MM/yyyy')", nil, "11/01/1970", false},
		{"FORMAT_DATE(DT, 'HH')", nil, nil, true},
		{"FORMAT_DATE(DT, S)", nullFullRow(), nil, false},
		{"PARSE_DATE('01-JAN-2022', 'dd-MMM-yyyy')", nil, types.DateValue(18993), false},
		{"PARSE_DATE('JAN-2022', 'MMM-yyyy')", nil, types.DateValue(18993), false},
		{"PARSE_DATE('2003-12-24-01-01', 'yyyy-MM-dd')", nil, types.DateValue(12410), false},
		{"PARSE_DATE('2004', 'yyyy-MM-dd')", nil, nil, true},
		{"PARSE_DATE('2020-01-01 10', 'yyyy-MM-dd HH')", nil, nil, true},
		{"PARSE_DATE(S, 'yyyy')", nullFullRow(), nil, false},

		{"FORMAT_TIME(TM, 'HH:mm:ss.SSS')", nil, "01:02:03.004", false},
		{"FORMAT_TIME(TM, 'h:mm a')", nil, "1:02 AM", false},
		{"FORMAT_TIME(TM, 'yyyy')", nil, nil, true},
		{"PARSE_TIME('12:34:56.789', 'HH:mm:ss.SSS')", nil, types.TimeValue(45296789), false},
		{"PARSE_TIME('12:34', 'HH:mm')", nil, types.TimeValue(45240000), false},
		{"PARSE_TIME('2020 12', 'yyyy HH')", nil, nil, true},
		{"PARSE_TIME(S, 'HH')", nullFullRow(), nil, false},

		{"TIMESTAMPTOSTRING(1526075913000, 'yyyy-MM-dd HH:mm:ss zzz', 'America/Los_Angeles')", nil, "2018-05-11 14:58:33 PDT", false},
		{"TIMESTAMPTOSTRING(1526075913000, 'yyyy-MM-dd HH:mm:ss zzz', 'Europe/London')", nil, "2018-05-11 22:58:33 BST", false},
		{"TIMESTAMPTOSTRING(1526075913000, 'yyyy-MM-dd HH:mm:ss')", nil, "2018-05-11 21:58:33", false},
		{"TIMESTAMPTOSTRING(B, 'yyyy', 'Mars/Olympus')", nil, nil, true},
		{"TIMESTAMPTOSTRING(B, 'yyyy', S)", withCol(1, nil), nil, false},
		{"STRINGTOTIMESTAMP('2018-05-11T21:58:33Z', 'yyyy-MM-dd''T''HH:mm:ssX')", nil, int64(1526075913000), false},
		{"STRINGTOTIMESTAMP('2019-08-27T13:31:09.2+0000', 'yyyy-MM-dd''T''HH:mm:ss.SX')", nil, int64(1566912669200), false},
		{"STRINGTOTIMESTAMP('2018-05-11 14:58:33', 'yyyy-MM-dd HH:mm:ss', 'America/Los_Angeles')", nil, int64(1526075913000), false},
		{"STRINGTOTIMESTAMP('not a timestamp', 'yyyy-MM-dd''T''HH:mm:ssX')", nil, nil, true},

		{"FORMAT_TIMESTAMP(TS, 'yyyy-MM-dd''T''HH:mm:ss.SSS')", nil, "1970-01-02T00:00:00.100", false},
		{"FORMAT_TIMESTAMP(FROM_UNIXTIME(1526075913000), 'yyyy-MM-dd HH:mm:ss zzz', 'America/Los_Angeles')", nil, "2018-05-11 14:58:33 PDT", false},
		{"FORMAT_TIMESTAMP(TS, 'yyyy', 'nowhere')", nil, nil, true},
		{"FORMAT_TIMESTAMP(TS, S)", nullFullRow(), nil, false},
		{"PARSE_TIMESTAMP('2018-05-11T21:58:33', 'yyyy-MM-dd''T''HH:mm:ss')", nil, ts, false},
		{"PARSE_TIMESTAMP('2018-05-11T21:58:33 PST', 'yyyy-MM-dd''T''HH:mm:ss zzz')", nil, types.TimestampValue(1526101113000), false},
		{"PARSE_TIMESTAMP('2018-05-11 23:58:33', 'yyyy-MM-dd HH:mm:ss', '+02:00')", nil, ts, false},
		{"PARSE_TIMESTAMP('x', 'yyyy')", nil, nil, true},
		{"PARSE_TIMESTAMP(S, 'yyyy')", nullFullRow(), nil, false},

		{"CONVERT_TZ(FROM_UNIXTIME(1526075913000), 'UTC', 'America/Los_Angeles')", nil, types.TimestampValue(1526075913000 - 7*3600000), false},
		{"CONVERT_TZ(TS, 'UTC', 'Asia/Kolkata')", nil, types.TimestampValue(86400100 + 19800000), false},
		{"CONVERT_TZ(TS, 'UTC', 'bad zone')", nil, nil, true},
		{"CONVERT_TZ(TS, 'UTC', S)", withCol(4, nil), nil, false},

		{"DATEADD(DAYS, 10, DT)", nil, types.DateValue(20), false},
		{"DATEADD(DAY, -15, DT)", nil, types.DateValue(-5), false},
		{"DATEADD(HOURS, 49, DT)", nil, types.DateValue(12), false},
		{"DATEADD(HOURS, -49, DT)", nil, types.DateValue(8), false},
		{"DATEADD(MILLISECONDS, I, DT)", nil, types.DateValue(10), false},
		{"DATEADD(MILLISECONDS, I, DT)", withCol(0, nil), nil, false},
		{"DATESUB(DAYS, 3, DT)", nil, types.DateValue(7), false},
		{"TIMEADD(MILLISECONDS, 10, PARSE_TIME('23:59:59.995', 'HH:mm:ss.SSS'))", nil, types.TimeValue(5), false},
		{"TIMEADD(MILLISECONDS, -5, PARSE_TIME('00:00:00.002', 'HH:mm:ss.SSS'))", nil, types.TimeValue(86399997), false},
		{"TIMEADD(DAYS, 3, TM)", nil, types.TimeValue(3723004), false},
		{"TIMESUB(HOURS, 2, TM)", nil, types.TimeValue(3723004 - 7200000 + 86400000), false},
		{"TIMESTAMPADD(MILLISECONDS, 10, TS)", nil, types.TimestampValue(86400110), false},
		{"TIMESTAMPADD(SECONDS, -1, TS)", nil, types.TimestampValue(86399100), false},
		{"TIMESTAMPSUB(MINUTES, 1, TS)", nil, types.TimestampValue(86340100), false},
		{"TIMESTAMPSUB(MILLISECONDS, I, TS)", withCol(7, nil), nil, false},
		{"TRANSFORM(ARRAY[TS], x => TIMESTAMPADD(milliseconds, 5, x))", nil, []any{types.TimestampValue(86400105)}, false},
	})
}

func TestTimeFuncsNow(t *testing.T) {
	saved := eval.Clock
	defer func() { eval.Clock = saved }()
	eval.Clock = func() time.Time { return time.UnixMilli(1589234313000) }
	runEvalCases(t, []evalCase{
		{"UNIX_TIMESTAMP()", nil, int64(1589234313000), false},
		{"UNIX_DATE()", nil, int32(18393), false},
	})
}

func TestTimeFuncTypes(t *testing.T) {
	for text, want := range map[string]string{
		"UNIX_DATE()": "INTEGER", "UNIX_TIMESTAMP()": "BIGINT", "FROM_UNIXTIME(B)": "TIMESTAMP",
		"DATETOSTRING(I, S)": "STRING", "STRINGTODATE(S, S)": "INTEGER",
		"TIMESTAMPTOSTRING(B, S)": "STRING", "STRINGTOTIMESTAMP(S, S, S)": "BIGINT",
		"FORMAT_DATE(DT, S)": "STRING", "PARSE_DATE(S, S)": "DATE", "PARSE_TIME(S, S)": "TIME",
		"PARSE_TIMESTAMP(S, S)": "TIMESTAMP", "CONVERT_TZ(TS, S, S)": "TIMESTAMP",
		"DATEADD(DAYS, I, DT)": "DATE", "TIMESUB(SECONDS, 1, TM)": "TIME", "TIMESTAMPADD(HOUR, NULL, TS)": "TIMESTAMP",
	} {
		if got := bindText(t, text).Type.String(); got != want {
			t.Errorf("type of %s = %s, want %s", text, got, want)
		}
	}
}

func TestTimeFuncBindErrors(t *testing.T) {
	for text, want := range map[string]string{
		"DATEADD(DT, 5, DT)":             "Function 'dateadd' does not accept parameters (DATE, INTEGER, DATE).",
		"TIMEADD(TM, 5, TM)":             "Function 'timeadd' does not accept parameters (TIME, INTEGER, TIME).",
		"TIMESTAMPADD(TS, 5, TS)":        "Function 'timestampadd' does not accept parameters (TIMESTAMP, INTEGER, TIMESTAMP).",
		"TIMESTAMPSUB(DAYS, B, TS)":      "(STRING, BIGINT, TIMESTAMP)",
		"DATEADD(T.DAYS, 1, DT)":         "DAYS",
		"FORMAT_DATE(TS, 'yyyy')":        "Function 'format_date' does not accept parameters (TIMESTAMP, STRING)",
		"UNIX_TIMESTAMP(B)":              "unix_timestamp(TIMESTAMP)",
		"PARSE_TIMESTAMP(S)":             "parse_timestamp",
		"TIMESTAMPTOSTRING(B, S, S, S)":  "timestamptostring",
		"CONVERT_TZ(TS, 'UTC', 1)":       "convert_tz",
		"FORMAT_TIMESTAMP(TS, S, S, S)":  "format_timestamp",
		"DATEADD(FORTNIGHTS, 1, DT)":     "FORTNIGHTS",
		"TIMESTAMPADD(DAYS, 1, 'x', TS)": "timestampadd",
	} {
		a, err := parser.ParseExpr(text)
		if err != nil {
			t.Fatalf("ParseExpr(%q): %v", text, err)
		}
		_, err = bind.Bind(a, fullScope)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Bind(%s) error = %v, want one containing %q", text, err, want)
		}
	}
}

func TestTimeFuncDescriptions(t *testing.T) {
	for _, n := range []string{
		"UNIX_DATE", "UNIX_TIMESTAMP", "FROM_UNIXTIME", "FROM_DAYS", "DATETOSTRING", "STRINGTODATE",
		"TIMESTAMPTOSTRING", "STRINGTOTIMESTAMP", "FORMAT_DATE", "PARSE_DATE", "FORMAT_TIME", "PARSE_TIME",
		"FORMAT_TIMESTAMP", "PARSE_TIMESTAMP", "CONVERT_TZ", "DATEADD", "DATESUB", "TIMEADD", "TIMESUB",
		"TIMESTAMPADD", "TIMESTAMPSUB",
	} {
		f, ok := eval.LookupFunc(n)
		if !ok || f.Description == "" || strings.Contains(f.Description, "\n") {
			t.Errorf("%s: registered %v, description %q", n, ok, f.Description)
		}
	}
}
