package parser

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kr/pretty"

	"github.com/sluice-sql/sluice/parser/ast"
)

func TestParseConnectorStatements(t *testing.T) {
	tests := []struct {
		in   string
		want ast.Statement
	}{
		{"CREATE SOURCE CONNECTOR `pg-orders` WITH ('connector.class'='io.debezium.connector.postgresql.PostgresConnector', " +
			"\"database.port\"=5432, 'snapshot.lock'=false, tasks_max=1)",
			&ast.CreateConnector{Kind: ast.SourceConnector, Name: "pg-orders", Props: []ast.ConnectorProperty{
				{Name: "connector.class", Value: "io.debezium.connector.postgresql.PostgresConnector"},
				{Name: "database.port", Value: "5432"},
				{Name: "snapshot.lock", Value: "false"},
				{Name: "TASKS_MAX", Value: "1"},
			}}},
		{"create sink connector if not exists counts with ('connector.class'='JdbcSinkConnector')",
			&ast.CreateConnector{Kind: ast.SinkConnector, IfNotExists: true, Name: "COUNTS",
				Props: []ast.ConnectorProperty{{Name: "connector.class", Value: "JdbcSinkConnector"}}}},
		{"DROP CONNECTOR c", &ast.DropConnector{Name: "C"}},
		{"drop connector if exists `c`", &ast.DropConnector{Name: "c", IfExists: true}},
		{"DESCRIBE CONNECTOR `my-conn`", &ast.DescribeConnector{Name: "my-conn"}},
		{"SHOW CONNECTORS", &ast.ShowConnectors{Scope: ast.AllConnectors}},
		{"list source connectors", &ast.ShowConnectors{Scope: ast.SourceConnectors}},
		{"SHOW SINK CONNECTORS", &ast.ShowConnectors{Scope: ast.SinkConnectors}},
		// A stream may still be named SOURCE (not reserved), or
		// `CONNECTOR` back-quoted (reserved, as in ksqlDB).
		{"DESCRIBE `CONNECTOR`", &ast.Describe{Name: "CONNECTOR"}},
		{"CREATE STREAM SOURCE WITH (kafka_topic='source')",
			&ast.CreateSource{Kind: ast.Stream, Name: "SOURCE", Props: ast.Properties{{Name: "KAFKA_TOPIC", Value: strLit("source")}}}},
	}
	for _, tc := range tests {
		st := mustParse(t, tc.in)
		got := stripped(st)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n%s", tc.in, strings.Join(pretty.Diff(got, tc.want), "\n"))
		}
		// Format reads back to the same statement.
		again := stripped(mustParse(t, ast.Format(st)))
		if !reflect.DeepEqual(again, tc.want) {
			t.Errorf("Format(%s) = %s reads back as %# v", tc.in, ast.Format(st), pretty.Formatter(again))
		}
	}
}

func TestConnectorStatementTextHidesSecrets(t *testing.T) {
	sql := "CREATE SOURCE CONNECTOR c WITH (\n  'connector.class'='PostgresConnector',\n  'database.password'='s3cr''et',\n" +
		"  'connection.url'='jdbc:postgresql://h/db?user=u&password=p4ss',\n  'topic.prefix'='pg')"
	st := mustParse(t, sql).(*ast.CreateConnector)
	want := "CREATE SOURCE CONNECTOR c WITH (\n  'connector.class'='PostgresConnector',\n  'database.password'='[hidden]',\n" +
		"  'connection.url'='jdbc:postgresql://h/db?user=u&password=[hidden]',\n  'topic.prefix'='pg')"
	if st.SQL() != want {
		t.Errorf("text:\n%s\nwant:\n%s", st.SQL(), want)
	}
	if st.Props[1].Value != "s3cr'et" || st.Props[2].Value != "jdbc:postgresql://h/db?user=u&password=p4ss" {
		t.Errorf("the properties lost their values: %+v", st.Props)
	}
	// In a script, the text is the statement's own, masked, whatever came before it.
	sts, err := Parse("SHOW STREAMS;\n" + sql + ";\nSHOW TABLES")
	if err != nil {
		t.Fatal(err)
	}
	if sts[1].SQL() != want {
		t.Errorf("in a script:\n%s", sts[1].SQL())
	}
	// Nothing secret: the text as written.
	plain := "CREATE SINK CONNECTOR c WITH ('connector.class'='X', 'topics'='t')"
	if got := mustParse(t, plain).SQL(); got != plain {
		t.Errorf("text %q, want %q", got, plain)
	}
}

func TestConnectorStatementErrors(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE OR REPLACE SOURCE CONNECTOR c WITH ('a'='b')":         "CREATE OR REPLACE SOURCE CONNECTOR is not supported",
		"CREATE SOURCE CONNECTOR c":                                   "expected WITH",
		"CREATE SINK CONNECTOR c WITH ('a'='b', 'a'='c')":             "duplicate property a",
		"CREATE SINK CONNECTOR c WITH ('a'='b') extra":                "unexpected",
		"CREATE SINK CONNECTOR c WITH (1='b')":                        "expected a connector property name",
		"CREATE SINK CONNECTOR c WITH ('a'=b)":                        "expected a value for a",
		"DROP CONNECTOR":                                              "expected the name of the connector to drop",
		"DROP CONNECTOR c d":                                          "unexpected",
		"SHOW SOURCE CONNECTORS EXTENDED":                             "unexpected",
		"SHOW SINKS":                                                  "CONNECTORS",
		"CREATE SINK CONNECTOR IF NOT c WITH ('connector.class'='x')": "expected EXISTS",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want one saying %q", in, err, want)
		}
	}
}

func TestSyntaxErrorHidesSecrets(t *testing.T) {
	bad := "CREATE SOURCE CONNECTOR c WITH ('database.password'='s3cret' 'x'='y')"
	_, err := Parse("SHOW STREAMS;\n" + bad)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(pe.Statement, "s3cret") || !strings.Contains(pe.Statement, "'database.password'='[hidden]'") {
		t.Errorf("Parse's error shows %q", pe.Statement)
	}
	sc, err := NewScript(bad)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.Next(func(string) (string, bool) { return "", false })
	if !errors.As(err, &pe) || strings.Contains(pe.Statement, "s3cret") {
		t.Errorf("Script's error: %v (statement %q)", err, pe.Statement)
	}
}
