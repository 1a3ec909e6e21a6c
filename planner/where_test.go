package planner_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// planWhere plans sql, a push query or a CREATE STREAM AS SELECT, and
// returns its filter's predicate or its error.
func planWhere(t *testing.T, cat *catalog.Catalog, sql string) string {
	t.Helper()
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	var q *ast.Query
	opts := planner.QueryOptions{OffsetReset: "earliest"}
	switch st := stmts[0].(type) {
	case *ast.Select:
		q = st.Query
	case *ast.CreateAsSelect:
		q = st.Query
		opts.QueryID, opts.Sink, opts.SinkPos, opts.InternalPrefix = "CSAS_T_1", st.Name, st.NamePos, "_sluice-test-"
	}
	p, err := planner.PlanSelect(cat, q, opts)
	if err != nil {
		return "error: " + err.Error()
	}
	for _, st := range p.Graph.Steps {
		if st.Predicate != nil {
			return st.Predicate.String()
		}
	}
	return "no filter"
}

// TestWhereTypes checks that a WHERE clause compares values as ksqlDB's
// type check allows, in push and persistent queries as in pull queries,
// and reads the datetimes compared with pseudo timestamp columns.
func TestWhereTypes(t *testing.T) {
	cat := pullSettingsCatalog(t)
	for _, c := range []struct{ sql, want string }{
		{"SELECT * FROM nums WHERE id = '10' EMIT CHANGES;",
			"error: line 1:26: Error in WHERE expression: Cannot compare ID (INTEGER) to '10' (STRING) with EQUAL.\nStatement: (ID = '10')"},
		{"CREATE STREAM s AS SELECT * FROM clicks WHERE page = 1 OR user_id = 'a';",
			"error: line 1:47: Error in WHERE expression: Cannot compare PAGE (STRING) to 1 (INTEGER) with EQUAL.\nStatement: ((PAGE = 1) OR (USER_ID = 'a'))"},
		{"SELECT * FROM nums WHERE v <> NULL EMIT CHANGES;",
			"error: line 1:26: Error in WHERE expression: Comparison with NULL not supported: DOUBLE <> NULL\nUse 'IS NULL' or 'IS NOT NULL' instead.\nStatement: (V <> null)"},
		{"SELECT * FROM clicks c JOIN per_user u ON c.user_id = u.user_id WHERE u.n > 'x' EMIT CHANGES;",
			"error: line 1:71: Error in WHERE expression: Cannot compare U.N (BIGINT) to 'x' (STRING) with GREATER_THAN.\nStatement: (U.N > 'x')"},
		// Numbers compare with numbers; IN reads strings as the type of
		// its value.
		{"SELECT * FROM nums WHERE id = 10.5 AND v > 1 EMIT CHANGES;", "((ID = 10.5) AND (V > 1))"},
		{"SELECT * FROM nums WHERE id IN ('10', 8) EMIT CHANGES;", "(ID IN (10, 8))"},
		// Datetimes compared with ROWTIME, in every query.
		{"SELECT * FROM nums WHERE ROWTIME >= '2020-02-23T23' EMIT CHANGES;", "(ROWTIME >= 1582498800000)"},
		{"CREATE STREAM s AS SELECT * FROM nums WHERE ROWTIME BETWEEN '2020' AND '2021';", "(ROWTIME BETWEEN 1577836800000 AND 1609459200000)"},
		{"SELECT * FROM nums WHERE ROWTIME > 'now' EMIT CHANGES;",
			"error: line 1:36: Failed to parse timestamp 'now': "},
	} {
		got := planWhere(t, cat, c.sql)
		if strings.HasSuffix(c.want, ": ") && strings.HasPrefix(got, c.want) {
			continue
		}
		if got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.sql, got, c.want)
		}
	}
}

// TestPullKeyValues checks that a pull query converts the values it looks
// keys up by as ksqlDB does, and refuses those that do not convert.
func TestPullKeyValues(t *testing.T) {
	cat := pullSettingsCatalog(t)
	on := planner.PullOptions{}
	for _, c := range []struct{ sql, want string }{
		{"SELECT * FROM per_id WHERE id IN ('10', 8);", "error: line 1:28: '10' can not be converted to the type of the key column: ID INTEGER KEY"},
		{"SELECT * FROM per_id WHERE id IN (10, NULL);", "error: line 1:28: Primary key columns can not be NULL: (ID = null)"},
		{"SELECT * FROM per_id WHERE id = CAST(NULL AS INT);", "error: line 1:28: Primary key columns can not be NULL: (ID = CAST(null AS INTEGER))"},
		{"SELECT * FROM per_id WHERE id = 2.0;", "error: line 1:28: '2.0' can not be converted to the type of the key column: ID INTEGER KEY"},
		{"SELECT * FROM per_id WHERE id = 1.5E0;", "error: line 1:28: '1.5' can not be converted to the type of the key column: ID INTEGER KEY"},
		{"SELECT * FROM per_id WHERE id > 2147483648;", "error: line 1:28: '2147483648' can not be converted to the type of the key column: ID INTEGER KEY"},
		{"SELECT * FROM per_id WHERE id = CAST(3 AS BIGINT);", "error: line 1:28: Expected type INTEGER for field ID but got BIGINT(3)"},
		{"SELECT * FROM per_pair WHERE a = 1 AND b IN ('x', 2);", "error: line 1:40: '2' can not be converted to the type of the key column: B STRING KEY"},
		// A value that converts; a condition that makes a table scan.
		{"SELECT * FROM per_id WHERE id IN (CAST(10 AS INTEGER), 10 - 2);", "keys (10) (8)"},
		{"SELECT * FROM per_pair WHERE a = 1 AND b IN ('x', 'y');", "keys (1, x) (1, y)"},
		{"SELECT * FROM per_pair WHERE a = 1.5;", "table scan"},
		{"SELECT * FROM per_id WHERE id = 1.5 OR top > 1;", "table scan"},
		{"SELECT * FROM per_id WHERE id = 1.5 AND id <> 2;", "table scan"},
		{"SELECT * FROM per_id WHERE id = 1.5 AND top IS NULL;", "table scan"},
	} {
		if got := pullWith(t, cat, c.sql, on); got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.sql, got, c.want)
		}
	}
}
