package shell

import (
	"strings"
	"testing"
)

func TestRenderTable(t *testing.T) {
	var b strings.Builder
	renderTable(&b, []string{"Stream Name", "Kafka Topic", "Format"}, [][]string{
		{"PAGEVIEWS", "pageviews", "JSON"},
		{"USERS_ÉTÉ", "users", "AVRO\nKAFKA"},
	})
	const want = `+-------------+-------------+--------+
| Stream Name | Kafka Topic | Format |
+-------------+-------------+--------+
| PAGEVIEWS   | pageviews   | JSON   |
| USERS_ÉTÉ   | users       | AVRO   |
|             |             | KAFKA  |
+-------------+-------------+--------+
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRenderEmptyTable(t *testing.T) {
	var b strings.Builder
	renderTable(&b, []string{"Variable Name", "Value"}, nil)
	const want = `+---------------+-------+
| Variable Name | Value |
+---------------+-------+
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPushTableByType(t *testing.T) {
	var b strings.Builder
	names := []string{"ID", "NAME", "A_LONG_COLUMN_NAME_HERE_X"}
	p := newPushTable(&b, names, []string{"INTEGER", "STRING", "BOOLEAN"}, 0)
	p.header(names)
	p.row([]string{"1", "alice", "true"})
	p.row([]string{"2", "a name longer than its twenty-four column", "null"})
	p.end("Limit Reached")
	const want = `+-------------+--------------------------+---------------------------+
| ID          | NAME                     | A_LONG_COLUMN_NAME_HERE_X |
+-------------+--------------------------+---------------------------+
| 1           | alice                    | true                      |
| 2           | a name longer than its t | null                      |
|             | wenty-four column        |                           |
+-------------+--------------------------+---------------------------+
Limit Reached
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPushTableTerminalWidth(t *testing.T) {
	var b strings.Builder
	names := []string{"K", "V"}
	p := newPushTable(&b, names, []string{"STRING", "BIGINT"}, 31)
	p.header(names)
	p.row([]string{"k1", "10"})
	p.end("Query terminated")
	const want = `+--------------+--------------+
| K            | V            |
+--------------+--------------+
| k1           | 10           |
+--------------+--------------+
Query terminated
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
