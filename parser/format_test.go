package parser

import (
	"testing"

	"github.com/sluice-sql/sluice/parser/ast"
)

// TestFormatRoundTrip prints statements that stress quoting, precedence and
// the ksqlDB-only syntax, and parses the result again.
func TestFormatRoundTrip(t *testing.T) {
	for _, sql := range []string{
		"SELECT `a`, `select`, `A``B`, \"x y\", `ß`, `é`, `Ǆ`, `1A`, `_a` FROM `from` AS `where` EMIT CHANGES",
		"SELECT a->`b c`->d, a[1][`k`], ARRAY[1, 2][1], MAP('a' := 1)['a'], STRUCT(`x` := 1)->`x`, (1)->a, f(a)->*, s.* FROM s",
		"SELECT - 1, -(-1), - -1, NOT NOT a, +a, a - -1, a || b || 'c''d', X'0aFF', TIMESTAMP 'x', DATE 'y', TIME 'z' FROM s",
		"SELECT a IS NULL, a IS NOT NULL IS NULL, a IS DISTINCT FROM b + 1, a IS NOT DISTINCT FROM b, a NOT IN (1, 2), a BETWEEN 1 AND 2 AND b, a NOT LIKE 'x%' ESCAPE '!' FROM s",
		"SELECT CASE WHEN a = 1 THEN 'x' WHEN a IS NULL THEN NULL ELSE 'y' END, CASE a WHEN 1 THEN 2 END, CAST(a AS STRUCT<`x y` ARRAY<MAP<STRING, DECIMAL(10, 2)>>, Q `my type`>) FROM s",
		"SELECT TRANSFORM(a, x => x + 1), REDUCE(m, 0, (s, k, v) => CASE WHEN k = 'a' THEN s + v ELSE s END), FILTER(a, `x` => `x` > 1), COUNT(*), COUNT(DISTINCT a), `cast`(a), `Map`(b) FROM s",
		"SELECT a FROM s LEFT JOIN t WITHIN (1 HOUR, 90 SECONDS) GRACE PERIOD 1500 MILLISECONDS ON s.a = t.a FULL OUTER JOIN u WITHIN 2 DAYS ON t.b = u.b RIGHT JOIN v ON v.x = u.x EMIT CHANGES LIMIT 10",
		"CREATE TABLE t AS SELECT a, COUNT(*) FROM s WINDOW w HOPPING (SIZE 1 MINUTE, ADVANCE BY 10 SECONDS, RETENTION 0 DAYS, GRACE PERIOD 0 SECONDS) WHERE a > 1 GROUP BY (a AND b), a + 1 HAVING COUNT(*) > 1 EMIT FINAL",
		"CREATE STREAM s2 AS SELECT * FROM s PARTITION BY (a = 1), b->c",
		"SELECT * FROM s WHERE a = ${v} AND b IN ('x')",
		"CREATE OR REPLACE SOURCE STREAM IF NOT EXISTS `s t` (`k` VARCHAR(10) KEY, `KEY` STRUCT< >, h ARRAY<BYTES> HEADERS, h2 BYTES HEADER('k''x'), d `Type`) WITH (kafka_topic='t', `partitions`=-4, x=1.5e3, y=TRUE)",
		"CREATE TABLE t (k INT PRIMARY KEY) WITH (window_type='Hopping', window_size='2 SECONDS')",
		"INSERT INTO `t` (`a`, b) VALUES (1, 'x''y')",
		"INSERT INTO t WITH (QUERY_ID='q') SELECT * FROM s",
		"EXPLAIN SELECT * FROM s", "EXPLAIN `q-1`", "EXPLAIN EXPLAIN q", "TERMINATE ALL", "TERMINATE `ALL`", "PAUSE q1", "RESUME ALL",
		"DROP STREAM IF EXISTS `IF` DELETE TOPIC", "DROP TABLE t", "DROP TYPE IF EXISTS ty", "CREATE TYPE IF NOT EXISTS ty AS STRUCT<a INT>",
		"SHOW TABLES EXTENDED", "LIST TOPICS", "DESCRIBE EXTENDED s", "DESCRIBE `EXTENDED`", "DESCRIBE FUNCTION `f`",
		"SET 'a.b' = 'it''s'", "UNSET 'a'", "DEFINE myVar = 'v'", "UNDEFINE myVar",
		"PRINT 'my-topic' FROM BEGINNING INTERVAL 2 LIMIT 3", "PRINT my.topic-1", "RUN SCRIPT '/x.sql'",
		"ALTER STREAM s ADD COLUMN a INT, ADD b `T`",
		"SELECT 00., .5, 1.e3, 1. AS x FROM a WHERE b = 2. AND c IN (1., 2.) GROUP BY 1., 2",
	} {
		checkRoundTrip(t, sql, mustParse(t, sql))
	}
}

func TestFormatText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"select a, `b`, `from` from s where a = 1 and b = 2 or c", "SELECT A, `b`, `from` FROM S WHERE (((A = 1) AND (B = 2)) OR C)"},
		{"create stream s (id bigint key, s struct<a int>) with (kafka_topic='t')", "CREATE STREAM S (ID BIGINT KEY, S STRUCT<A INTEGER>) WITH (KAFKA_TOPIC='t')"},
		{"select * from s window tumbling (size 90 seconds) emit changes", "SELECT * FROM S WINDOW TUMBLING (SIZE 90 SECONDS) EMIT CHANGES"},
	}
	for _, tc := range tests {
		if got := ast.Format(mustParse(t, tc.in)); got != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.in, got, tc.want)
		}
	}
}
