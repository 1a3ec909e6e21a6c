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

func TestPushTableGrows(t *testing.T) {
	var b strings.Builder
	p := &pushTable{w: &b, names: []string{"ID", "NAME"}, mode: VerticalOff}
	p.start()
	p.row([]string{"1", "al"}, nil)
	p.row([]string{"2", "alice"}, nil)
	p.row([]string{"3", "bo"}, nil)
	p.end("Limit Reached")
	// Without a terminal a wider value draws a border at the new widths.
	const want = `+------+------+
| ID   | NAME |
+------+------+
| 1    | al   |
+------+-------+
| 2    | alice |
| 3    | bo    |
+------+-------+
Limit Reached
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPushTableRedraw(t *testing.T) {
	var b strings.Builder
	p := &pushTable{w: &b, names: []string{"ID", "NAME"}, mode: VerticalAuto, termWidth: 40, termHeight: 20, redraw: true}
	p.start()
	p.row([]string{"1", "al"}, nil)
	p.row([]string{"2", "alice"}, nil)
	p.end("")
	// At a terminal the table fitting on screen is repainted in place:
	// up 4 lines (header and first row), clear, draw again.
	const want = "+------+------+\n| ID   | NAME |\n+------+------+\n| 1    | al   |\n" +
		"\r\x1b[4A\x1b[J+------+-------+\n| ID   | NAME  |\n+------+-------+\n| 1    | al    |\n| 2    | alice |\n+------+-------+\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestPushTableFitsTerminal(t *testing.T) {
	var b strings.Builder
	p := &pushTable{w: &b, names: []string{"K", "V"}, mode: VerticalOff, termWidth: 20}
	p.start()
	p.row([]string{"k1", "a value too long for the terminal"}, nil)
	p.end("Query terminated")
	const want = `+------+----------+
| K    | V        |
+------+----------+
| k1   | a value  |
|      | too long |
|      |  for the |
|      |  termina |
|      | l        |
+------+----------+
Query terminated
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPushTableVerticalAuto(t *testing.T) {
	var b strings.Builder
	p := &pushTable{w: &b, names: []string{"ID", "DESCRIPTION"}, mode: VerticalAuto, termWidth: 24}
	p.start()
	p.row([]string{"1", "longer than the terminal"}, nil)
	p.row([]string{"2", "short"}, nil)
	p.end("Limit Reached")
	const want = `-[ RECORD 1 ]+-----------
ID          | 1
DESCRIPTION | longer tha
            | n the term
            | inal
-[ RECORD 2 ]+------
ID          | 2
DESCRIPTION | short
Limit Reached
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
