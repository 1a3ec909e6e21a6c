package shell

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Tables are drawn as ksqlDB draws them, with one space of padding:
//
//	+------+-------+
//	| ID   | NAME  |
//	+------+-------+
//	| 1    | alice |
//	+------+-------+
//
// A cell longer than its column wraps onto more lines; a cell holding line
// breaks takes one line per line.

// renderTable writes a boxed table whose columns are as wide as their
// widest cell.
func renderTable(w io.Writer, columns []string, rows [][]string) {
	widths := make([]int, len(columns))
	for i, c := range columns {
		widths[i] = maxLineWidth(c)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], maxLineWidth(c))
			}
		}
	}
	var b strings.Builder
	border(&b, widths)
	cells(&b, widths, columns)
	border(&b, widths)
	for _, r := range rows {
		cells(&b, widths, r)
	}
	if len(rows) > 0 {
		border(&b, widths)
	}
	io.WriteString(w, b.String())
}

// pushTable draws a push query's rows as they arrive, in columns of fixed
// width chosen when the query starts.
type pushTable struct {
	w      io.Writer
	widths []int
}

// Default column widths by SQL type, used when the terminal width is
// unknown: wide enough for most values of the type.
var typeWidths = map[string]int{
	"BOOLEAN":   7,
	"INTEGER":   11,
	"BIGINT":    20,
	"DOUBLE":    22,
	"STRING":    24,
	"TIMESTAMP": 23,
	"DATE":      10,
	"TIME":      12,
}

const defaultColumnWidth = 24

// newPushTable sizes the columns of a push query's table. With a terminal
// width termWidth > 0 the columns share it equally (as ksqlDB does), each
// at least as wide as its name; otherwise each column gets a width for its
// type.
func newPushTable(w io.Writer, names, types []string, termWidth int) *pushTable {
	widths := make([]int, len(names))
	share := 0
	if termWidth > 0 && len(names) > 0 {
		share = (termWidth-1)/len(names) - 3
	}
	for i, n := range names {
		width := share
		if share <= 0 {
			width = defaultColumnWidth
			if i < len(types) {
				if tw, ok := typeWidths[types[i]]; ok {
					width = tw
				}
			}
		}
		widths[i] = max(width, utf8.RuneCountInString(n), 4)
	}
	return &pushTable{w: w, widths: widths}
}

// header writes the top border, the column names and a border.
func (p *pushTable) header(names []string) {
	var b strings.Builder
	border(&b, p.widths)
	cells(&b, p.widths, names)
	border(&b, p.widths)
	io.WriteString(p.w, b.String())
}

// row writes one row.
func (p *pushTable) row(values []string) {
	var b strings.Builder
	cells(&b, p.widths, values)
	io.WriteString(p.w, b.String())
}

// end writes the bottom border and a closing line such as "Limit Reached".
func (p *pushTable) end(msg string) {
	var b strings.Builder
	border(&b, p.widths)
	if msg != "" {
		b.WriteString(msg)
		b.WriteByte('\n')
	}
	io.WriteString(p.w, b.String())
}

func border(b *strings.Builder, widths []int) {
	b.WriteByte('+')
	for _, w := range widths {
		b.WriteString(strings.Repeat("-", w+2))
		b.WriteByte('+')
	}
	b.WriteByte('\n')
}

// cells writes one table row, over as many lines as its tallest cell needs.
func cells(b *strings.Builder, widths []int, row []string) {
	lines := make([][]string, len(widths))
	height := 1
	for i, w := range widths {
		var c string
		if i < len(row) {
			c = row[i]
		}
		lines[i] = wrap(c, w)
		height = max(height, len(lines[i]))
	}
	for l := range height {
		b.WriteByte('|')
		for i, w := range widths {
			var s string
			if l < len(lines[i]) {
				s = lines[i][l]
			}
			b.WriteByte(' ')
			b.WriteString(s)
			b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(s)+1))
			b.WriteByte('|')
		}
		b.WriteByte('\n')
	}
}

// wrap cuts s into lines at its line breaks and every width runes.
func wrap(s string, width int) []string {
	s = strings.NewReplacer("\r\n", "\n", "\r", "", "\t", " ").Replace(s)
	var out []string
	for _, line := range strings.Split(s, "\n") {
		rs := []rune(line)
		for len(rs) > width {
			out = append(out, string(rs[:width]))
			rs = rs[width:]
		}
		out = append(out, string(rs))
	}
	return out
}

func maxLineWidth(s string) int {
	m := 0
	for _, line := range strings.Split(s, "\n") {
		m = max(m, utf8.RuneCountInString(strings.ReplaceAll(line, "\t", " ")))
	}
	return m
}
