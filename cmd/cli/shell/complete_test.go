package shell

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// catalogEngine answers the catalog statements the completer sends and
// counts them.
func catalogEngine(t *testing.T, calls *int) *scriptedEngine {
	table := func(cols []string, rows ...[]string) func(*engine.Session) ([]engine.Result, error) {
		return func(*engine.Session) ([]engine.Result, error) {
			*calls++
			return []engine.Result{{Kind: engine.ResultTable, Table: &engine.Table{Columns: cols, Rows: rows}}}, nil
		}
	}
	return &scriptedEngine{t: t, answers: map[string]func(*engine.Session) ([]engine.Result, error){
		"SHOW STREAMS;":      table([]string{"Stream Name"}, []string{"ORDERS"}, []string{"ORDER_LINES"}),
		"SHOW TABLES;":       table([]string{"Table Name"}, []string{"USERS"}),
		"SHOW FUNCTIONS;":    table([]string{"Function Name"}, []string{"ABS"}, []string{"UCASE"}),
		"DESCRIBE ORDERS;":   table([]string{"Field", "Type"}, []string{"ID", "STRING"}, []string{"AMOUNT", "DOUBLE"}),
		"DESCRIBE USERS;":    table([]string{"Field", "Type"}, []string{"USER_ID", "STRING"}, []string{"NAME", "STRING"}),
		"CREATE STREAM x;":   msg("CREATE STREAM x;", "Stream created"),
		"DESCRIBE `my src`;": table([]string{"Field", "Type"}),
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
		// Keywords at the start of a statement.
		{"", "SHOW STREAMS; DESC", []string{" ", "RIBE "}},
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
	got := words("SELECT 'a;b' FROM x; select `my src`.a, f(b) FROM \"q\" -- FROM y\n WHERE")
	want := "SELECT|MY SRC|.|A|,|F|(|B|)|FROM|WHERE"
	if strings.Join(got, "|") != want {
		t.Errorf("words = %q, want %q", strings.Join(got, "|"), want)
	}
}
