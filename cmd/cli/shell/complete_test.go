package shell

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
)

// catalogEngine answers the catalog statements the completer sends and
// counts them.
func catalogEngine(t *testing.T, calls *int) *scriptedEngine {
	answer := func(en api.Entity) func(*api.Session) ([]api.Result, error) {
		return func(*api.Session) ([]api.Result, error) {
			*calls++
			return []api.Result{{Kind: api.ResultEntity, Entity: en}}, nil
		}
	}
	describe := func(name string, cols ...string) api.Entity {
		d := &api.SourceDescription{Source: api.SourceInfo{Name: name, Kind: api.SourceStream}}
		for _, c := range cols {
			d.Source.Columns = append(d.Source.Columns, api.SourceColumn{Column: types.Column{Name: c, Type: types.StringType}})
		}
		return d
	}
	queries := &api.QueryList{}
	for _, q := range []struct {
		id  string
		typ api.QueryType
	}{{"CSAS_ORDERS_0", api.Persistent}, {"CTAS_USERS_1", api.Persistent}, {"transient_ORDERS_2", api.Push}} {
		queries.Queries = append(queries.Queries, api.QueryInfo{ID: q.id, Type: q.typ, Status: "RUNNING"})
	}
	return &scriptedEngine{t: t, answers: map[string]func(*api.Session) ([]api.Result, error){
		"SHOW STREAMS;": answer(sourcesOf(api.SourceStream, api.SourceInfo{Name: "ORDERS"}, api.SourceInfo{Name: "ORDER_LINES"})),
		"SHOW TABLES;":  answer(sourcesOf(api.SourceTable, api.SourceInfo{Name: "USERS"})),
		"SHOW FUNCTIONS;": answer(&api.FunctionList{Functions: []api.FunctionInfo{
			{Name: "ABS", Type: "SCALAR"}, {Name: "UCASE", Type: "SCALAR"}}}),
		"DESCRIBE ORDERS;":   answer(describe("ORDERS", "ID", "AMOUNT")),
		"DESCRIBE USERS;":    answer(describe("USERS", "USER_ID", "NAME")),
		"CREATE STREAM x;":   msg("CREATE STREAM x;", "Stream created"),
		"DESCRIBE `my src`;": answer(describe("my src")),
		"SHOW QUERIES;":      answer(queries),
		"SHOW TOPICS;": answer(&api.TopicList{Topics: []api.Topic{
			{Name: "orders", Partitions: 1}, {Name: "order-lines.v1", Partitions: 1}, {Name: "it's", Partitions: 1}}}),
	}}
}

func TestComplete(t *testing.T) {
	calls := 0
	sh, _, _ := newTestShell(t, catalogEngine(t, &calls))
	names := &catalogNames{sh: sh}
	sh.OnDDL = names.invalidate
	pending := ""
	c := &completer{names: names, pending: func() string { return pending }}
	complete := func(line string) []string {
		got, _ := c.Do([]rune(line), len([]rune(line)))
		out := make([]string, len(got))
		for i, g := range got {
			out[i] = string(g)
		}
		return out
	}
	for _, tc := range []struct {
		pending, line string
		want          []string
	}{
		// Sources after FROM, JOIN, DESCRIBE, DROP STREAM; in lower case
		// when typed so.
		{"", "SELECT * FROM ORD", []string{"ERS ", "ER_LINES "}},
		{"", "select * from ord", []string{"ers ", "er_lines "}},
		{"", "SELECT * FROM orders o JOIN U", []string{"SERS "}},
		{"", "DESCRIBE u", []string{"sers "}},
		{"", "DROP STREAM ORDERS_", nil},
		// Columns of the sources the statement names, also when typed on
		// an earlier line, and through an alias.
		{"", "SELECT * FROM orders WHERE AM", []string{"OUNT "}},
		{"SELECT *\nFROM orders\n", "WHERE am", []string{"ount "}},
		{"", "SELECT orders.", []string{"AMOUNT ", "ID "}},
		// Functions get their parenthesis.
		{"", "SELECT UC", []string{"ASE("}},
		// At the start of a statement: the words a statement starts with.
		{"", "SHOW STREAMS; DESC", []string{"RIBE "}},
		{"", "", []string{"ALTER ", "CREATE ", "DEFINE ", "DESCRIBE ", "DROP ", "EXPLAIN ", "INSERT ", "LIST ",
			"PAUSE ", "PRINT ", "REPLAY ", "RESUME ", "RUN ", "SELECT ", "SET ", "SHOW ", "TERMINATE ", "UNDEFINE ", "UNSET "}},
		{"", "SELECT ';' FROM orders; S", []string{"ELECT ", "ET ", "HOW "}},
		{"", "sh", []string{"ow "}},
		// After SHOW, CREATE, CREATE OR: the words that can follow, in
		// the case of the statement's first word.
		{"", "SHOW ", []string{"ALL ", "CONNECTORS ", "FUNCTIONS ", "PROPERTIES ", "QUERIES ", "SINK ", "SOURCE ", "STREAMS ", "TABLES ", "TOPICS ", "TYPES ", "VARIABLES "}},
		{"", "show t", []string{"ables ", "opics ", "ypes "}},
		{"", "LIST STREAMS ", []string{"EXTENDED "}},
		{"", "CREATE ", []string{"OR ", "SINK ", "SOURCE ", "STREAM ", "TABLE ", "TYPE "}},
		{"", "create or ", []string{"replace "}},
		{"", "CREATE STREAM IF NOT EXISTS ", nil},
		// Query ids after TERMINATE, PAUSE, RESUME, EXPLAIN; a transient
		// id is back-quoted, as it is not upper case.
		{"", "TERMINATE ", []string{"ALL ", "CSAS_ORDERS_0 ", "CTAS_USERS_1 ", "`transient_ORDERS_2` "}},
		{"", "terminate c", []string{"sas_orders_0 ", "tas_users_1 "}},
		{"", "PAUSE CT", []string{"AS_USERS_1 "}},
		{"", "EXPLAIN ", []string{"CREATE ", "CSAS_ORDERS_0 ", "CTAS_USERS_1 ", "INSERT ", "SELECT ", "`transient_ORDERS_2` "}},
		{"", "EXPLAIN SELECT * FROM U", []string{"SERS "}},
		{"", "TERMINATE `tr", []string{"ansient_ORDERS_2` "}},
		// Sources only where a source goes; streams or tables alone after
		// DROP STREAM and DROP TABLE.
		{"", "DROP STREAM ", []string{"IF ", "ORDERS ", "ORDER_LINES "}},
		{"", "DROP TABLE ", []string{"IF ", "USERS "}},
		{"", "DROP TABLE IF EXISTS ", []string{"USERS "}},
		{"", "DROP STREAM U", nil},
		{"", "INSERT INTO ", []string{"ORDERS ", "ORDER_LINES ", "USERS "}},
		{"", "DESCRIBE ", []string{"CONNECTOR ", "EXTENDED ", "FUNCTION ", "ORDERS ", "ORDER_LINES ", "USERS "}},
		{"", "DESCRIBE EXTENDED O", []string{"RDERS ", "RDER_LINES "}},
		{"", "DESCRIBE FUNCTION ", []string{"ABS ", "UCASE "}},
		{"", "SELECT * FROM `ORD", []string{"ERS` ", "ER_LINES` "}},
		// Properties after SET and UNSET, quoted.
		{"", "SET ", []string{"'auto.offset.reset' ", "'compression.type' ", "'ksql.functions.collect_list.limit' ",
			"'ksql.functions.collect_set.limit' ", "'ksql.persistence.default.format.key' ",
			"'ksql.persistence.default.format.value' ",
			"'ksql.query.pull.limit.clause.enabled' ", "'ksql.query.pull.range.scan.enabled' ",
			"'ksql.query.pull.stream.enabled' ", "'ksql.query.pull.table.scan.enabled' ", "'ksql.query.push.v2.enabled' ",
			"'processing.guarantee' ", "'sluice.max.record.bytes' "}},
		{"", "SET 'auto", []string{".offset.reset' "}},
		{"", "unset 'p", []string{"rocessing.guarantee' "}},
		{"", "SET 'auto.offset.reset' ", nil},
		{"", "SET 'auto.offset.reset' = 'e", nil},
		// Topics after PRINT, quoted only when they must be.
		{"", "PRINT ", []string{"'it''s' ", "order-lines.v1 ", "orders "}},
		{"", "PRINT order-", []string{"lines.v1 "}},
		{"", "PRINT 'it", []string{"''s' "}},
		{"", "PRINT orders ", []string{"FROM ", "INTERVAL ", "LIMIT "}},
		{"", "PRINT orders FROM ", []string{"BEGINNING "}},
		// Nothing inside a comment or a string.
		{"", "SELECT * -- FROM ORD", nil},
		{"", "SELECT * /* FROM ORD", nil},
		{"", "SELECT 'ORD", nil},
		{"SELECT 'a\n", "b FROM ORD", nil},
		{"", "SELECT * /* c */ FROM ORD", []string{"ERS ", "ER_LINES "}},
		// Expression keywords, but not the words that start statements.
		{"", "SELECT * FROM orders WH", []string{"EN ", "ERE "}},
		{"", "SELECT * FROM orders WHERE amount > 1 EMIT ", []string{"CHANGES ", "FINAL "}},
		{"", "SELECT * FROM orders SH", nil},
	} {
		pending = tc.pending
		if got := complete(tc.line); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("complete(%q after %q) = %q, want %q", tc.line, tc.pending, got, tc.want)
		}
	}
	// The cursor in the middle of the line sees the sources after it.
	line := []rune("SELECT o.AM FROM orders o")
	if got, n := c.Do(line, len("SELECT o.AM")); len(got) != 1 || string(got[0]) != "OUNT " || n != 2 {
		t.Errorf("completion before FROM = %q, %d", got, n)
	}
	line = []rune("SELECT u.NA FROM orders o JOIN users AS u")
	if got, _ := c.Do(line, len("SELECT u.NA")); len(got) != 1 || string(got[0]) != "ME " {
		t.Errorf("completion through an AS alias = %q", got)
	}

	// The catalog is fetched once, and again after a DDL statement.
	before := calls
	complete("SELECT * FROM O")
	if calls != before {
		t.Errorf("%d catalog calls for a cached completion", calls-before)
	}
	if err := sh.Run(context.Background(), "", "CREATE STREAM x;"); err != nil {
		t.Fatal(err)
	}
	complete("SELECT * FROM O")
	if calls != before+3 {
		t.Errorf("%d catalog calls after CREATE, want 3 (streams, tables, functions)", calls-before)
	}
}

func TestWords(t *testing.T) {
	got := words("SELECT 'a;b' FROM x; select `my src`.a, f(b), 'it''s' FROM \"q\" -- FROM y\n /* FROM z */ WHERE")
	want := "SELECT|MY SRC|.|A|,|F|(|B|)|,|'|FROM|Q|WHERE"
	if strings.Join(got, "|") != want {
		t.Errorf("words = %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestContextAt(t *testing.T) {
	for _, tc := range []struct {
		before string
		kind   compKind
		words  string
	}{
		{"", compNone, strings.Join(statementStarts, " ")},
		{"SHOW", compNone, "ALL CONNECTORS FUNCTIONS PROPERTIES QUERIES SINK SOURCE STREAMS TABLES TOPICS TYPES VARIABLES"},
		{"LIST SOURCE", compNone, "CONNECTORS"},
		{"SHOW CONNECTORS", compNone, ""},
		{"CREATE SINK", compNone, "CONNECTOR"},
		{"CREATE SINK CONNECTOR", compNone, "IF"},
		{"CREATE SOURCE CONNECTOR IF", compNone, "NOT"},
		{"CREATE SOURCE CONNECTOR IF NOT EXISTS", compNone, ""},
		{"CREATE SOURCE CONNECTOR c", compNone, "WITH"},
		{"CREATE SOURCE CONNECTOR c WITH (", compNone, ""},
		{"DROP CONNECTOR", compConnectors, "IF"},
		{"DROP CONNECTOR IF", compNone, "EXISTS"},
		{"DROP CONNECTOR IF EXISTS", compConnectors, ""},
		{"DESCRIBE CONNECTOR", compConnectors, ""},
		{"SHOW ALL", compNone, "TOPICS"},
		{"SHOW ALL TOPICS", compNone, "EXTENDED"},
		{"SHOW QUERIES EXTENDED", compNone, ""},
		{"CREATE", compNone, "OR SINK SOURCE STREAM TABLE TYPE"},
		{"CREATE OR", compNone, "REPLACE"},
		{"CREATE OR REPLACE", compNone, "STREAM TABLE TYPE"},
		{"CREATE SOURCE", compNone, "CONNECTOR STREAM TABLE"},
		{"CREATE OR REPLACE SOURCE", compNone, "STREAM TABLE"},
		{"CREATE TABLE", compNone, "IF"},
		{"CREATE TABLE IF", compNone, "NOT"},
		{"CREATE TABLE IF NOT", compNone, "EXISTS"},
		{"CREATE TABLE IF NOT EXISTS", compNone, ""},
		{"CREATE STREAM s", compNone, "AS WITH"},
		{"CREATE STREAM s AS SELECT * FROM", compSources, ""},
		{"CREATE STREAM s ( id", compExpr, ""},
		{"CREATE TYPE", compNone, ""},
		{"CREATE TYPE t", compNone, "AS"},
		{"DROP", compNone, "CONNECTOR STREAM TABLE TYPE"},
		{"DROP STREAM", compStreams, "IF"},
		{"DROP TABLE", compTables, "IF"},
		{"DROP TABLE IF", compNone, "EXISTS"},
		{"DROP TABLE IF EXISTS", compTables, ""},
		{"DROP STREAM s", compNone, "DELETE"},
		{"DROP STREAM s DELETE", compNone, "TOPIC"},
		{"ALTER", compNone, "STREAM TABLE"},
		{"ALTER TABLE", compTables, ""},
		{"ALTER STREAM s", compNone, "ADD"},
		{"ALTER STREAM s ADD", compNone, "COLUMN"},
		{"INSERT", compNone, "INTO"},
		{"INSERT INTO", compSources, ""},
		{"INSERT INTO s", compNone, "SELECT VALUES"},
		{"INSERT INTO s (", compExpr, ""},
		{"INSERT INTO s SELECT * FROM", compSources, ""},
		{"DESCRIBE", compSources, "CONNECTOR EXTENDED FUNCTION"},
		{"DESCRIBE EXTENDED", compSources, ""},
		{"DESCRIBE FUNCTION", compFunctions, ""},
		{"DESCRIBE s", compNone, "EXTENDED"},
		{"EXPLAIN", compQueries, "CREATE INSERT SELECT"},
		{"EXPLAIN q", compNone, ""},
		{"EXPLAIN SELECT * FROM", compSources, ""},
		{"TERMINATE", compQueries, "ALL"},
		{"PAUSE", compQueries, "ALL"},
		{"RESUME", compQueries, "ALL"},
		{"TERMINATE q", compNone, ""},
		{"REPLAY", compNone, "PROCESSING"},
		{"REPLAY PROCESSING LOG", compNone, "FOR"},
		{"REPLAY PROCESSING LOG FOR", compQueries, ""},
		{"REPLAY PROCESSING LOG FOR q", compNone, "WHERE"},
		{"SET", compSetProps, ""},
		{"SET 'auto.offset.reset'", compNone, ""},
		{"UNSET", compUnsetProps, ""},
		{"UNDEFINE", compVariables, ""},
		{"DEFINE", compNone, ""},
		{"RUN", compNone, "SCRIPT"},
		{"PRINT", compTopics, ""},
		{"PRINT t", compNone, "FROM INTERVAL LIMIT"},
		{"PRINT t FROM", compNone, "BEGINNING"},
		{"PRINT t FROM BEGINNING", compNone, "INTERVAL LIMIT"},
		{"PRINT t LIMIT", compNone, ""},
		{"SELECT", compExpr, ""},
		{"SELECT * FROM", compSources, ""},
		{"SELECT * FROM s JOIN", compSources, ""},
		{"SELECT * FROM s WHERE a IS NOT DISTINCT FROM", compExpr, ""},
		{"SELECT * FROM s EMIT", compNone, "CHANGES FINAL"},
		{"SELECT * FROM s GROUP", compNone, "BY"},
	} {
		got := contextAt(words(tc.before))
		if got.kind != tc.kind || strings.Join(got.words, " ") != tc.words {
			t.Errorf("contextAt(%q) = %d %q, want %d %q", tc.before, got.kind, strings.Join(got.words, " "), tc.kind, tc.words)
		}
	}
}

func TestCompleteSessionNames(t *testing.T) {
	calls := 0
	sh, _, _ := newTestShell(t, catalogEngine(t, &calls))
	sh.Variables = map[string]string{"TOPIC": "t", "ENV": "dev"}
	sh.Properties = map[string]string{"auto.offset.reset": "earliest"}
	c := &completer{names: &catalogNames{sh: sh}}
	for line, want := range map[string]string{
		"UNDEFINE ":  "ENV |TOPIC ",
		"UNSET ":     "'auto.offset.reset' ",
		"UNDEFINE T": "OPIC ",
	} {
		got, _ := c.Do([]rune(line), len([]rune(line)))
		var parts []string
		for _, g := range got {
			parts = append(parts, string(g))
		}
		if strings.Join(parts, "|") != want {
			t.Errorf("complete(%q) = %q, want %q", line, strings.Join(parts, "|"), want)
		}
	}
}
