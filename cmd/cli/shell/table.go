package shell

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
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
	widths := naturalWidths(columns, rows)
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

// naturalWidths returns the widths of columns as wide as their widest
// cell or name.
func naturalWidths(columns []string, rows [][]string) []int {
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
	return widths
}

// tableWidth returns the width of a table's lines with columns of widths.
func tableWidth(widths []int) int {
	w := 1
	for _, c := range widths {
		w += c + 3
	}
	return w
}

// pushTable draws a push query's rows as they arrive, in a boxed table that
// grows with its values:
//
//   - Columns start as wide as their names (at least 4).
//   - A row with a value wider than its column widens the column, as far
//     as the terminal allows (wider values then wrap onto more lines).
//   - At a terminal, while the table fits on the screen, the table is
//     redrawn in place at the new widths; once it has scrolled further
//     (or without a terminal), a new border at the new widths is drawn
//     under the rows printed so far and the table goes on below it.
//
// In VerticalOn mode, and in VerticalAuto mode when the first row does not
// fit the terminal, the rows print as vertical blocks instead.
type pushTable struct {
	w          io.Writer
	names      []string
	widths     []int
	mode       Vertical
	termWidth  int  // 0 when unknown
	termHeight int  // 0 when unknown
	redraw     bool // the cursor may move up to redraw the table

	started  bool // the header is printed
	rows     int  // rows received
	vertical *verticalSink
	// The region that a redraw repaints: it starts with the header (top
	// region) or with a border at changed widths.
	region      [][]string
	regionTop   bool
	regionLines int // lines printed since the region started
}

// start prints the header, at a terminal; elsewhere the header waits for
// the first row, to be drawn at the widths it needs.
func (p *pushTable) start() {
	p.widths = make([]int, len(p.names))
	for i, n := range p.names {
		p.widths[i] = max(maxLineWidth(n), 4)
	}
	switch {
	case p.mode == VerticalOn:
		p.vertical = &verticalSink{w: p.w, names: p.names, termWidth: p.termWidth}
	case p.redraw:
		p.header()
	}
}

// header writes the top border, the column names and a border.
func (p *pushTable) header() {
	p.started = true
	p.fit()
	var b strings.Builder
	border(&b, p.widths)
	cells(&b, p.widths, p.names)
	border(&b, p.widths)
	p.region, p.regionTop, p.regionLines = nil, true, strings.Count(b.String(), "\n")
	io.WriteString(p.w, b.String())
}

// erase moves the cursor up over the region and clears the screen below.
func (p *pushTable) erase() {
	var b strings.Builder
	p.eraseTo(&b)
	io.WriteString(p.w, b.String())
}

func (p *pushTable) eraseTo(b *strings.Builder) {
	if p.regionLines > 0 {
		fmt.Fprintf(b, "\r\x1b[%dA", p.regionLines)
	}
	b.WriteString("\x1b[J")
}

// fit narrows the widest columns until the table fits the terminal.
func (p *pushTable) fit() {
	if p.termWidth <= 0 {
		return
	}
	for tableWidth(p.widths) > p.termWidth-1 {
		widest := 0
		for i, w := range p.widths {
			if w > p.widths[widest] {
				widest = i
			}
		}
		if p.widths[widest] <= 4 {
			return
		}
		p.widths[widest]--
	}
}

func (p *pushTable) row(values []string, _ []*sluicev1.Value) {
	p.rows++
	if p.vertical == nil && p.rows == 1 {
		natural := naturalWidths(p.names, [][]string{values})
		switch {
		case p.mode == VerticalAuto && p.termWidth > 0 && tableWidth(natural) > p.termWidth:
			if p.started {
				p.erase() // the header printed at the start
			}
			p.vertical = &verticalSink{w: p.w, names: p.names, termWidth: p.termWidth}
		case !p.started:
			for i := range p.widths {
				p.widths[i] = max(p.widths[i], natural[i])
			}
			p.header()
		}
	}
	if p.vertical != nil {
		p.vertical.row(values, nil)
		return
	}
	old := append([]int(nil), p.widths...)
	for i, c := range values {
		if i < len(p.widths) {
			p.widths[i] = max(p.widths[i], maxLineWidth(c))
		}
	}
	p.fit()
	var b strings.Builder
	if !slices.Equal(old, p.widths) {
		var row strings.Builder
		cells(&row, p.widths, values)
		if p.redraw && p.termHeight > 0 && p.regionLines+strings.Count(row.String(), "\n")+2 < p.termHeight {
			// Move up over the region, clear to the end of the screen
			// and repaint it at the new widths.
			p.eraseTo(&b)
			if p.regionTop {
				border(&b, p.widths)
				cells(&b, p.widths, p.names)
			}
			border(&b, p.widths)
			for _, r := range p.region {
				cells(&b, p.widths, r)
			}
		} else {
			border(&b, p.widths)
			p.region, p.regionTop = nil, false
		}
		p.regionLines = strings.Count(b.String(), "\n")
	}
	n := b.Len()
	cells(&b, p.widths, values)
	p.regionLines += strings.Count(b.String()[n:], "\n")
	if p.redraw && p.regionLines < p.termHeight {
		// Rows are kept only while a redraw can still reach them.
		p.region = append(p.region, values)
	}
	io.WriteString(p.w, b.String())
}

// end writes the bottom border and a closing line such as "Limit Reached".
func (p *pushTable) end(msg string) {
	if p.vertical == nil && !p.started {
		p.header()
	}
	var b strings.Builder
	if p.vertical == nil {
		border(&b, p.widths)
	}
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
