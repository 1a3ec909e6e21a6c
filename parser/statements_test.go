package parser

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kr/pretty"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

func dur(d time.Duration) *time.Duration { return &d }

func TestParseStatements(t *testing.T) {
	star := []ast.SelectItem{{Star: true}}
	src := func(n string) *ast.TableRef { return &ast.TableRef{Name: n} }
	tests := []struct {
		in   string
		want ast.Statement
	}{
		{"CREATE STREAM s (id BIGINT KEY, `Name` VARCHAR, v VARCHAR(10), d DECIMAL(10, 2), h BYTES HEADERS, h2 BYTES HEADER('k')) " +
			"WITH (kafka_topic='t', value_format='JSON', partitions=4, wrap_single_value=false, x=-1.5)",
			&ast.CreateSource{Kind: ast.Stream, Name: "S", Columns: []ast.ColumnDef{
				{Name: "ID", Type: types.BigintType, Constraint: ast.KeyColumn},
				{Name: "Name", Type: types.StringType},
				{Name: "V", Type: types.StringType},
				{Name: "D", Type: types.DecimalOf(10, 2)},
				{Name: "H", Type: types.BytesType, Constraint: ast.HeadersColumn},
				{Name: "H2", Type: types.BytesType, Constraint: ast.HeaderColumn, HeaderKey: "k"},
			}, Props: ast.Properties{
				{Name: "KAFKA_TOPIC", Value: strLit("t")},
				{Name: "VALUE_FORMAT", Value: strLit("JSON")},
				{Name: "PARTITIONS", Value: intLit("4")},
				{Name: "WRAP_SINGLE_VALUE", Value: &ast.Literal{Kind: ast.BoolLit, Text: "FALSE"}},
				{Name: "X", Value: &ast.Literal{Kind: ast.DecimalLit, Text: "-1.5"}},
			}}},
		{"create or replace source table if not exists t (k int primary key, b boolean, i integer, d double, s string, " +
			"ts timestamp, dt date, tm time, a ARRAY<INT>, m MAP<STRING, ARRAY<BIGINT>>, st STRUCT<x INT, `Y` STRUCT<z STRING>>, c my_type) with (format='AVRO')",
			&ast.CreateSource{Kind: ast.Table, OrReplace: true, IsSource: true, IfNotExists: true, Name: "T", Columns: []ast.ColumnDef{
				{Name: "K", Type: types.IntType, Constraint: ast.PrimaryKeyColumn},
				{Name: "B", Type: types.BooleanType},
				{Name: "I", Type: types.IntType},
				{Name: "D", Type: types.DoubleType},
				{Name: "S", Type: types.StringType},
				{Name: "TS", Type: types.TimestampType},
				{Name: "DT", Type: types.DateType},
				{Name: "TM", Type: types.TimeType},
				{Name: "A", Type: types.ArrayOf(types.IntType)},
				{Name: "M", Type: types.MapOf(types.StringType, types.ArrayOf(types.BigintType))},
				{Name: "ST", Type: types.StructOf(types.Field{Name: "X", Type: types.IntType},
					types.Field{Name: "Y", Type: types.StructOf(types.Field{Name: "Z", Type: types.StringType})})},
				{Name: "C", Type: &types.Type{Name: "MY_TYPE"}},
			}, Props: ast.Properties{{Name: "FORMAT", Value: strLit("AVRO")}}}},
		{"CREATE STREAM SOURCE WITH (kafka_topic='source')",
			&ast.CreateSource{Kind: ast.Stream, Name: "SOURCE", Props: ast.Properties{{Name: "KAFKA_TOPIC", Value: strLit("source")}}}},
		{"CREATE STREAM out WITH (kafka_topic='o') AS SELECT * FROM s EMIT CHANGES",
			&ast.CreateAsSelect{Kind: ast.Stream, Name: "OUT", Props: ast.Properties{{Name: "KAFKA_TOPIC", Value: strLit("o")}},
				Query: &ast.Query{Items: star, From: src("S"), Emit: ast.EmitChanges}}},
		{"CREATE OR REPLACE TABLE IF NOT EXISTS agg AS SELECT k, COUNT(*) AS cnt FROM s WINDOW TUMBLING (SIZE 1 MINUTE, RETENTION 2 HOURS, GRACE PERIOD 10 SECONDS) " +
			"WHERE v > 0 GROUP BY k HAVING COUNT(*) > 1 EMIT FINAL",
			&ast.CreateAsSelect{Kind: ast.Table, OrReplace: true, IfNotExists: true, Name: "AGG", Query: &ast.Query{
				Items: []ast.SelectItem{{Expr: col("K")}, {Expr: &ast.FuncCall{Name: "COUNT", Star: true}, Alias: "CNT"}},
				From:  src("S"), Where: &ast.Binary{Op: ast.OpGt, L: col("V"), R: intLit("0")},
				Window:  &ast.Window{Type: ast.Tumbling, Size: time.Minute, Retention: dur(2 * time.Hour), Grace: dur(10 * time.Second)},
				GroupBy: []ast.Expr{col("K")},
				Having:  &ast.Binary{Op: ast.OpGt, L: &ast.FuncCall{Name: "COUNT", Star: true}, R: intLit("1")},
				Emit:    ast.EmitFinal}}},
		{"CREATE TABLE t AS SELECT k, COUNT(*) FROM s WINDOW HOPPING (SIZE 30 SECONDS, ADVANCE BY 10 SECONDS) GROUP BY k",
			&ast.CreateAsSelect{Kind: ast.Table, Name: "T", Query: &ast.Query{
				Items: []ast.SelectItem{{Expr: col("K")}, {Expr: &ast.FuncCall{Name: "COUNT", Star: true}}},
				From:  src("S"), Window: &ast.Window{Type: ast.Hopping, Size: 30 * time.Second, Advance: 10 * time.Second},
				GroupBy: []ast.Expr{col("K")}}}},
		{"CREATE TABLE t AS SELECT k FROM s WINDOW SESSION (5 MINUTES) GROUP BY (k, a, b)",
			&ast.CreateAsSelect{Kind: ast.Table, Name: "T", Query: &ast.Query{
				Items: []ast.SelectItem{{Expr: col("K")}}, From: src("S"),
				Window:  &ast.Window{Type: ast.Session, Size: 5 * time.Minute},
				GroupBy: []ast.Expr{col("K"), col("A"), col("B")}}}},
		{"CREATE STREAM j AS SELECT l.*, r.v AS rv FROM lhs l LEFT OUTER JOIN rhs r WITHIN (1 HOUR, 2 HOURS) GRACE PERIOD 5 MINUTES ON l.id = r.id " +
			"FULL JOIN x WITHIN 10 SECONDS ON l.id = x.id JOIN tab ON l.k = tab.k PARTITION BY r.v, 1",
			&ast.CreateAsSelect{Kind: ast.Stream, Name: "J", Query: &ast.Query{
				Items: []ast.SelectItem{{Star: true, StarSource: "L"}, {Expr: qcol("R", "V"), Alias: "RV"}},
				From: &ast.Join{Type: ast.InnerJoin,
					Left: &ast.Join{Type: ast.FullJoin,
						Left: &ast.Join{Type: ast.LeftJoin, Left: &ast.TableRef{Name: "LHS", Alias: "L"}, Right: &ast.TableRef{Name: "RHS", Alias: "R"},
							On:     &ast.Binary{Op: ast.OpEq, L: qcol("L", "ID"), R: qcol("R", "ID")},
							Within: &ast.Within{Before: time.Hour, After: 2 * time.Hour, Grace: dur(5 * time.Minute)}},
						Right:  src("X"),
						On:     &ast.Binary{Op: ast.OpEq, L: qcol("L", "ID"), R: qcol("X", "ID")},
						Within: &ast.Within{Before: 10 * time.Second, After: 10 * time.Second}},
					Right: src("TAB"), On: &ast.Binary{Op: ast.OpEq, L: qcol("L", "K"), R: qcol("TAB", "K")}},
				PartitionBy: []ast.Expr{qcol("R", "V"), intLit("1")}}}},
		{"INSERT INTO out WITH (QUERY_ID='q1') SELECT a AS `x` FROM s",
			&ast.InsertInto{Target: "OUT", Props: ast.Properties{{Name: "QUERY_ID", Value: strLit("q1")}},
				Query: &ast.Query{Items: []ast.SelectItem{{Expr: col("A"), Alias: "x"}}, From: src("S")}}},
		{"INSERT INTO s (k, `v`) VALUES ('a', ARRAY[1])",
			&ast.InsertValues{Target: "S", Columns: []string{"K", "v"}, Values: []ast.Expr{strLit("a"), &ast.ArrayCtor{Elems: []ast.Expr{intLit("1")}}}}},
		{"INSERT INTO s VALUES (1, NULL)",
			&ast.InsertValues{Target: "S", Values: []ast.Expr{intLit("1"), &ast.Literal{Kind: ast.NullLit, Text: "NULL"}}}},
		{"SELECT * FROM s WHERE k = 'a' LIMIT 10",
			&ast.Select{Query: &ast.Query{Items: star, From: src("S"), Where: &ast.Binary{Op: ast.OpEq, L: col("K"), R: strLit("a")}, Limit: i64(10)}}},
		{"SELECT * FROM s LIMIT 0", &ast.Select{Query: &ast.Query{Items: star, From: src("S"), Limit: i64(0)}}},
		{"SELECT * FROM s EMIT CHANGES LIMIT -1", &ast.Select{Query: &ast.Query{Items: star, From: src("S"), Emit: ast.EmitChanges, Limit: i64(-1)}}},
		{"SELECT * FROM s LIMIT - 2147483648", &ast.Select{Query: &ast.Query{Items: star, From: src("S"), Limit: i64(-2147483648)}}},
		{"SELECT * FROM s LIMIT 2147483647", &ast.Select{Query: &ast.Query{Items: star, From: src("S"), Limit: i64(2147483647)}}},
		{"SELECT s.a->b x, v1->*, window FROM s t EMIT CHANGES LIMIT 1",
			&ast.Select{Query: &ast.Query{Items: []ast.SelectItem{
				{Expr: &ast.Dereference{X: qcol("S", "A"), Field: "B"}, Alias: "X"},
				{Expr: col("V1"), StructStar: true},
				{Expr: col("WINDOW")}},
				From: &ast.TableRef{Name: "S", Alias: "T"}, Emit: ast.EmitChanges, Limit: i64(1)}}},
		{"SELECT ROUND(v, -1) AS 1R FROM s", &ast.Select{Query: &ast.Query{Items: []ast.SelectItem{{
			Expr: &ast.FuncCall{Name: "ROUND", Args: []ast.Expr{col("V"), &ast.Unary{Op: ast.OpNeg, X: intLit("1")}}}, Alias: "1R"}}, From: src("S")}}},
		{"SHOW STREAMS", &ast.Show{What: ast.ShowStreams}},
		{"list tables extended", &ast.Show{What: ast.ShowTables, Extended: true}},
		{"SHOW QUERIES", &ast.Show{What: ast.ShowQueries}},
		{"SHOW ALL TOPICS", &ast.Show{What: ast.ShowTopics}},
		{"SHOW FUNCTIONS", &ast.Show{What: ast.ShowFunctions}},
		{"SHOW PROPERTIES", &ast.Show{What: ast.ShowProperties}},
		{"SHOW VARIABLES", &ast.Show{What: ast.ShowVariables}},
		{"SHOW TYPES", &ast.Show{What: ast.ShowTypes}},
		{"DESCRIBE s", &ast.Describe{Name: "S"}},
		{"DESCRIBE EXTENDED `s`", &ast.Describe{Name: "s", Extended: true}},
		{"DESCRIBE s EXTENDED", &ast.Describe{Name: "S", Extended: true}},
		{"DESCRIBE FUNCTION substring", &ast.DescribeFunction{Name: "SUBSTRING"}},
		{"EXPLAIN CSAS_OUT_0", &ast.Explain{QueryID: "CSAS_OUT_0"}},
		{"EXPLAIN SELECT * FROM s", &ast.Explain{Statement: &ast.Select{Query: &ast.Query{Items: star, From: src("S")}}}},
		{"TERMINATE CTAS_T_1", &ast.Terminate{QueryID: "CTAS_T_1"}},
		{"TERMINATE ALL", &ast.Terminate{All: true}},
		{"PAUSE q1", &ast.PauseResume{QueryID: "Q1"}},
		{"RESUME ALL", &ast.PauseResume{Resume: true, All: true}},
		{"DROP STREAM s", &ast.Drop{Kind: ast.Stream, Name: "S"}},
		{"DROP TABLE IF EXISTS t DELETE TOPIC", &ast.Drop{Kind: ast.Table, Name: "T", IfExists: true, DeleteTopic: true}},
		{"SET 'auto.offset.reset'='earliest'", &ast.SetProperty{Name: "auto.offset.reset", Value: "earliest"}},
		{"UNSET 'auto.offset.reset'", &ast.UnsetProperty{Name: "auto.offset.reset"}},
		{"CREATE TYPE IF NOT EXISTS addr AS STRUCT<street STRING, zip INT>",
			&ast.CreateType{Name: "ADDR", IfNotExists: true, Type: types.StructOf(
				types.Field{Name: "STREET", Type: types.StringType}, types.Field{Name: "ZIP", Type: types.IntType})}},
		{"DROP TYPE IF EXISTS addr", &ast.DropType{Name: "ADDR", IfExists: true}},
		{"ALTER STREAM s ADD COLUMN a INT, ADD b ARRAY<STRING>", &ast.AlterSource{Kind: ast.Stream, Name: "S", Columns: []ast.ColumnDef{
			{Name: "A", Type: types.IntType}, {Name: "B", Type: types.ArrayOf(types.StringType)}}}},
		{"PRINT 'my-topic' FROM BEGINNING INTERVAL 2 LIMIT 5", &ast.Print{Topic: "my-topic", FromBeginning: true, Interval: 2, Limit: i64(5)}},
		{"PRINT my-topic.v1", &ast.Print{Topic: "my-topic.v1"}},
		{"DEFINE env = 'prod'", &ast.Define{Name: "env", Value: "prod"}},
		{"UNDEFINE env", &ast.Undefine{Name: "env"}},
		{"RUN SCRIPT '/tmp/a.sql'", &ast.RunScript{Path: "/tmp/a.sql"}},
		{"REPLAY PROCESSING LOG FOR CSAS_OUT_0", &ast.Replay{QueryID: "CSAS_OUT_0"}},
		{"replay processing log for CSAS_OUT_0 where `OFFSET` > 3",
			&ast.Replay{QueryID: "CSAS_OUT_0", Where: &ast.Binary{Op: ast.OpGt, L: col("OFFSET"), R: intLit("3")}}},
	}
	for _, tc := range tests {
		got := stripped(mustParse(t, tc.in))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n%s", tc.in, strings.Join(pretty.Diff(got, tc.want), "\n"))
		}
	}
}

func TestScriptSourcesAndPositions(t *testing.T) {
	script := "-- setup\nCREATE STREAM s (id INT KEY) WITH (kafka_topic='s');\n/* q */ SELECT id,\n  name FROM s EMIT CHANGES\n;SHOW TABLES"
	sts, err := Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 3 {
		t.Fatalf("got %d statements", len(sts))
	}
	wantText := []string{
		"CREATE STREAM s (id INT KEY) WITH (kafka_topic='s')",
		"SELECT id,\n  name FROM s EMIT CHANGES",
		"SHOW TABLES",
	}
	wantPos := []ast.Pos{{Line: 2, Col: 1, Offset: 9}, {Line: 3, Col: 9, Offset: 70}, {Line: 5, Col: 2, Offset: 109}}
	for i, st := range sts {
		if st.SQL() != wantText[i] {
			t.Errorf("statement %d text %q, want %q", i, st.SQL(), wantText[i])
		}
		if st.Position() != wantPos[i] {
			t.Errorf("statement %d at %+v, want %+v", i, st.Position(), wantPos[i])
		}
	}
	cs := sts[0].(*ast.CreateSource)
	if cs.NamePos.Line != 2 || cs.NamePos.Col != 15 || cs.Columns[0].Pos.Col != 18 || cs.Props[0].Pos.Col != 36 {
		t.Errorf("positions: name %+v col %+v prop %+v", cs.NamePos, cs.Columns[0].Pos, cs.Props[0].Pos)
	}
	q := sts[1].(*ast.Select).Query
	if p := q.Items[1].Expr.Position(); p.Line != 4 || p.Col != 3 {
		t.Errorf("name at %+v", p)
	}
	if p := q.From.Position(); p.Line != 4 || p.Col != 13 {
		t.Errorf("from at %+v", p)
	}
}
