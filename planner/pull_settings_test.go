package planner_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// pullSettingsCatalog has tables keyed by a STRING (PER_USER), an INT
// (PER_ID), an INT and a STRING (PER_PAIR), and a windowed one keyed by a
// STRING (PER_MINUTE), each materialized, and the stream CLICKS.
func pullSettingsCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat := catalog.New()
	stmts, err := parser.Parse(`
CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM nums (id INT KEY, v DOUBLE) WITH (KAFKA_TOPIC='nums', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM pairs (a INT KEY, b VARCHAR KEY, v DOUBLE) WITH (KAFKA_TOPIC='pairs', FORMAT='JSON', PARTITIONS=1);
CREATE TABLE per_user AS SELECT user_id, COUNT(*) AS n, LATEST_BY_OFFSET(page) AS page FROM clicks GROUP BY user_id;
CREATE TABLE per_id AS SELECT id, MAX(v) AS top FROM nums GROUP BY id;
CREATE TABLE per_pair AS SELECT a, b, COUNT(*) AS n FROM pairs GROUP BY a, b;
CREATE TABLE per_minute AS SELECT user_id, COUNT(*) AS n FROM clicks WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY user_id;
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.CreateSource:
			spec, err := planner.PlanCreateSource(cat, st, planner.Defaults{})
			if err != nil {
				t.Fatal(err)
			}
			if err := cat.Apply(&catalog.Command{Kind: catalog.CreateSource, Source: spec.Source}); err != nil {
				t.Fatal(err)
			}
		default:
			if out := materialize(t, cat, st); out != "" {
				t.Fatal(out)
			}
		}
	}
	return cat
}

// pullWith plans the pull query sql with opts: the lookup of a query on a
// table, "stream" for one on a stream, or the error's first line.
func pullWith(t *testing.T, cat *catalog.Catalog, sql string, opts planner.PullOptions) string {
	t.Helper()
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	opts.Materialized = stateful
	p, err := planner.PlanPull(cat, stmts[0].(*ast.Select).Query, opts)
	if err != nil {
		return "error: " + strings.SplitN(err.Error(), "\n", 2)[0]
	}
	if p.Query == nil {
		return "stream"
	}
	return p.Lookup.String()
}

const (
	help      = "  See https://cnfl.io/queries for more info."
	needsScan = "Query requires table scan to be enabled. Table scans can be enabled by setting ksql.query.pull.table.scan.enabled=true"
)

func TestPullSettings(t *testing.T) {
	cat := pullSettingsCatalog(t)
	on := planner.PullOptions{}
	noScan := planner.PullOptions{TableScansDisabled: true}
	noScanNoRange := planner.PullOptions{TableScansDisabled: true, RangeScansDisabled: true}
	noRange := planner.PullOptions{RangeScansDisabled: true}
	noLimit := planner.PullOptions{LimitDisabled: true}
	noStream := planner.PullOptions{StreamsDisabled: true}
	for _, c := range []struct {
		name string
		opts planner.PullOptions
		sql  string
		want string
	}{
		// By default every pull query runs, reading as little as its WHERE
		// clause allows.
		{"default: scan", on, "SELECT * FROM per_user WHERE n > 1;", "table scan"},
		{"default: no WHERE", on, "SELECT * FROM per_user;", "table scan"},
		{"default: int range", on, "SELECT * FROM per_id WHERE id >= 12;", "key range [12, +inf)"},
		{"default: string range", on, "SELECT * FROM per_user WHERE user_id < 'm';", "key range (-inf, m)"},
		{"default: key twice", on, "SELECT * FROM per_user WHERE user_id = 'a' AND user_id IN ('a', 'b');", "keys (a)"},
		{"default: LIMIT", on, "SELECT * FROM clicks LIMIT 2;", "stream"},
		{"no range scans: a range is a scan", noRange, "SELECT * FROM per_user WHERE user_id < 'm';", "table scan"},

		// Without table scans, a pull query on a table names its keys.
		{"key lookup", noScan, "SELECT * FROM per_user WHERE user_id = 'a';", "keys (a)"},
		{"IN and a value filter", noScan, "SELECT * FROM per_user WHERE user_id IN ('a', 'b') AND n > 1;", "keys (a) (b)"},
		{"ORs of keys", noScan, "SELECT * FROM per_user WHERE user_id = 'a' OR user_id = 'b';", "keys (a) (b)"},
		{"ORs of keys and a filter", noScan, "SELECT * FROM per_user WHERE (user_id = 'a' OR user_id = 'b') AND n > 1;", "keys (a) (b)"},
		{"every key column", noScan, "SELECT * FROM per_pair WHERE a = 1 AND b = 'x';", "keys (1, x)"},
		{"resolvable key", noScan, "SELECT * FROM per_id WHERE id = 10 + 1;", "keys (11)"},
		{"windowed key lookup", noScan, "SELECT * FROM per_minute WHERE user_id = 'a' AND WINDOWSTART > 1000;", "keys (a); WINDOWSTART (1000, +inf)"},
		{"string range", noScan, "SELECT * FROM per_user WHERE user_id < 'm';", "key range (-inf, m)"},
		{"string range and a filter", noScan, "SELECT * FROM per_user WHERE user_id >= 'm' AND n > 1;", "key range [m, +inf)"},
		{"stream", noScan, "SELECT * FROM clicks WHERE page = 'x';", "stream"},

		// ... or is refused with ksqlDB's messages.
		{"missing WHERE", noScan, "SELECT * FROM per_user;",
			"error: line 1:1: Missing WHERE clause." + help},
		{"no key", noScan, "SELECT * FROM per_user WHERE n > 1;",
			"error: line 1:30: WHERE clause missing key column for disjunct: (N > 1)." + help},
		{"no key in one disjunct", noScan, "SELECT * FROM per_user WHERE user_id = 'a' OR n > 1;",
			"error: line 1:30: WHERE clause missing key column for disjunct: (N > 1)." + help},
		{"no key in a distributed disjunct", noScan, "SELECT * FROM per_user WHERE (user_id = 'a' OR n > 1) AND page = 'p';",
			"error: line 1:30: WHERE clause missing key column for disjunct: ((N > 1) AND (PAGE = 'p'))." + help},
		{"window bounds only", noScan, "SELECT * FROM per_minute WHERE WINDOWSTART >= 12000;",
			"error: line 1:32: WHERE clause missing key column for disjunct: (WINDOWSTART >= 12000)." + help},
		{"LIKE is no key", noScan, "SELECT * FROM per_user WHERE user_id LIKE 'a%';",
			"error: line 1:30: WHERE clause missing key column for disjunct: (USER_ID LIKE 'a%')." + help},
		{"not equal", noScan, "SELECT * FROM per_user WHERE user_id <> 'a';",
			"error: line 1:30: Bound on key columns '[`USER_ID` STRING KEY]' must currently be '='." + help},
		{"distinct", noScan, "SELECT * FROM per_user WHERE user_id IS DISTINCT FROM 'a';",
			"error: line 1:30: Bound on key columns '[`USER_ID` STRING KEY]' must currently be '='." + help},
		{"range twice", noScan, "SELECT * FROM per_user WHERE user_id >= 'a' AND user_id <= 'c';",
			"error: line 1:30: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate." + help},
		{"BETWEEN", noScan, "SELECT * FROM per_user WHERE user_id BETWEEN 'a' AND 'c';",
			"error: line 1:30: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate." + help},
		{"key and IN", noScan, "SELECT * FROM per_id WHERE id = 10 AND id IN (1, 2, 3, 10);",
			"error: line 1:28: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate." + help},
		{"two columns", noScan, "SELECT * FROM per_id WHERE id = top;",
			"error: line 1:28: A comparison must be between a key column and a resolvable expression." + help},
		{"IN with a column", noScan, "SELECT * FROM per_id WHERE id IN (2, top + 1, 3);",
			"error: line 1:28: A comparison must be between a key column and a resolvable expression." + help},
		{"no column", noScan, "SELECT * FROM per_id WHERE id + 10 = 20;",
			"error: line 1:28: A comparison must directly reference a key column." + help},
		{"IS NULL", noScan, "SELECT * FROM per_user WHERE user_id = 'a' AND page IS NULL;",
			"error: line 1:30: Unsupported expression in WHERE clause: (PAGE IS NULL)." + help},
		{"NOT", noScan, "SELECT * FROM per_user WHERE NOT (user_id = 'a');",
			"error: line 1:30: Unsupported expression in WHERE clause: (NOT (USER_ID = 'a'))." + help},
		{"window bound not equal", noScan, "SELECT * FROM per_minute WHERE user_id = 'a' AND WINDOWEND <> 5;",
			"error: line 1:32: Unsupported WINDOWEND bounds: NOT_EQUAL." + help},
		{"part of a multi-column key", noScan, "SELECT * FROM per_pair WHERE a = 1;",
			"error: line 1:30: Multi-column sources must specify every key in the WHERE clause. Specified: [`A`] Expected: [`A` INTEGER KEY, `B` STRING KEY]." + help},
		{"part of a multi-column key in a disjunct", noScan, "SELECT * FROM per_pair WHERE a <= 1 OR b >= 'x';",
			"error: line 1:30: Multi-column sources must specify every key in the WHERE clause. Specified: [`A`] Expected: [`A` INTEGER KEY, `B` STRING KEY]." + help},
		{"ranges on a multi-column key", noScan, "SELECT * FROM per_pair WHERE a <= 1 AND b >= 'x';",
			"error: line 1:30: " + needsScan},
		{"int range", noScan, "SELECT * FROM per_id WHERE id >= 12;",
			"error: line 1:28: " + needsScan},
		{"ORed ranges", noScan, "SELECT * FROM per_user WHERE user_id <= 'a' OR user_id >= 'm';",
			"error: line 1:30: " + needsScan},
		{"a key or a range", noScan, "SELECT * FROM per_user WHERE user_id = 'a' OR user_id >= 'm';",
			"error: line 1:30: " + needsScan},
		{"windowed range", noScan, "SELECT * FROM per_minute WHERE user_id <= 'a';",
			"error: line 1:32: " + needsScan},
		{"range without range scans", noScanNoRange, "SELECT * FROM per_user WHERE user_id < 'm';",
			"error: line 1:30: " + needsScan},
		{"keys without range scans", noScanNoRange, "SELECT * FROM per_pair WHERE a = 1 AND b = 'x';", "keys (1, x)"},

		// LIMIT, on streams and tables, and pull queries on streams.
		{"LIMIT on a stream", noLimit, "SELECT * FROM clicks LIMIT 2;",
			"error: line 1:1: LIMIT clause in pull queries is currently disabled. You can enable them by setting ksql.query.pull.limit.clause.enabled=true. See https://cnfl.io/queries for more info."},
		{"LIMIT on a table", noLimit, "SELECT * FROM per_user WHERE user_id = 'a' LIMIT 1;",
			"error: line 1:1: LIMIT clause in pull queries is currently disabled. You can enable them by setting ksql.query.pull.limit.clause.enabled=true. See https://cnfl.io/queries for more info."},
		{"no LIMIT", noLimit, "SELECT * FROM clicks;", "stream"},
		{"stream", noStream, "SELECT * FROM clicks WHERE page = 'x';",
			"error: line 1:15: Pull queries on streams are disabled. To create a push query on the stream, add EMIT CHANGES to the end. To enable pull queries on streams, set the ksql.query.pull.stream.enabled config to 'true'."},
		{"table without stream pulls", noStream, "SELECT * FROM per_user;", "table scan"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := pullWith(t, cat, c.sql, c.opts); got != c.want {
				t.Errorf("%s\n got: %s\nwant: %s", c.sql, got, c.want)
			}
		})
	}
}

// TestPullSettingsHelp checks what follows ksqlDB's first line: its help
// on WHERE clauses, with the window bounds' on a windowed table, and
// Sluice's reason a query needs a table scan.
func TestPullSettingsHelp(t *testing.T) {
	cat := pullSettingsCatalog(t)
	noScan := planner.PullOptions{TableScansDisabled: true, Materialized: stateful}
	plan := func(sql string, opts planner.PullOptions) string {
		stmts, err := parser.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		_, err = planner.PlanPull(cat, stmts[0].(*ast.Select).Query, opts)
		if err == nil {
			t.Fatalf("%s: planned", sql)
		}
		return err.Error()
	}
	got := plan("SELECT * FROM per_user WHERE n > 1;", noScan)
	for _, want := range []string{
		"\nAdd EMIT CHANGES if you intended to issue a push query.\nPull queries require a WHERE clause that:\n - includes a key equality expression",
		"range scans need to be enabled by setting ksql.query.pull.range.scan.enabled=true\nIf more flexible queries are needed, table scans can be enabled by setting ksql.query.pull.table.scan.enabled=true.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if got := plan("SELECT * FROM per_minute WHERE n > 1;", noScan); !strings.Contains(got, "\n - (optionally) limits the time bounds of the windowed table.\n\t Bounds on [`WINDOWSTART`, `WINDOWEND`] are supported") {
		t.Errorf("no window bounds help in:\n%s", got)
	}
	for sql, why := range map[string]string{
		"SELECT * FROM per_id WHERE id >= 12;":                            "A range of keys is read by a range scan only on a STRING or BYTES key; ID is INTEGER.",
		"SELECT * FROM per_minute WHERE user_id <= 'a';":                  "A range of keys of a windowed table is read by a table scan.",
		"SELECT * FROM per_user WHERE user_id <= 'a' OR user_id >= 'm';":  "A range of keys is read by a table scan unless it is the whole WHERE clause",
		"SELECT * FROM per_pair WHERE a <= 1 AND b >= 'x';":               "Every column of the table's key must be compared with = or IN",
		"SELECT * FROM per_user WHERE user_id < 'm' AND n > 1 AND n < 5;": "",
	} {
		opts := noScan
		if why == "" {
			opts.RangeScansDisabled = true
			why = "Range scans are disabled: ksql.query.pull.range.scan.enabled is false."
		}
		if got := plan(sql, opts); !strings.Contains(got, needsScan+"\n"+why) {
			t.Errorf("%s: want the reason %q, got:\n%s", sql, why, got)
		}
	}
}

// TestPullSettingsManyORs refuses a WHERE clause whose ANDs of ORs make
// too many OR-ed conditions to check, rather than building them all.
func TestPullSettingsManyORs(t *testing.T) {
	cat := pullSettingsCatalog(t)
	var terms []string
	for range 20 {
		terms = append(terms, "(user_id = 'a' OR user_id = 'b')")
	}
	got := pullWith(t, cat, "SELECT * FROM per_user WHERE "+strings.Join(terms, " AND ")+";", planner.PullOptions{TableScansDisabled: true})
	if want := "error: line 1:30: " + needsScan; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
