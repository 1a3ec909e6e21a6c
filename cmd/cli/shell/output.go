package shell

import (
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/render"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// Format is how the shell prints result rows: set with OUTPUT TABULAR|JSON|CSV;
// or \o table|json|csv.
//
//   - Tabular draws boxed tables (or vertical blocks, see Vertical).
//   - JSON writes one JSON object per row and line, keyed by column name;
//     push query values keep their JSON type (numbers, strings, null,
//     arrays, objects).
//   - CSV writes a header line of column names, then one line per row
//     (RFC 4180 quoting; NULL is an empty field).
//
// In JSON and CSV the standard output holds the rows only: messages, titles,
// footers and "Limit Reached" go to the standard error, so that
// `sluice -e "OUTPUT CSV; SELECT ..." > rows.csv` gives a clean file.
type Format int

// The output formats.
const (
	FormatTabular Format = iota
	FormatJSON
	FormatCSV
)

// String returns the format's name as OUTPUT takes it.
func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "JSON"
	case FormatCSV:
		return "CSV"
	}
	return "TABULAR"
}

// ParseFormat parses an output format name: TABULAR (or TABLE), JSON or CSV,
// in any case.
func ParseFormat(s string) (Format, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "TABULAR", "TABLE":
		return FormatTabular, true
	case "JSON":
		return FormatJSON, true
	case "CSV":
		return FormatCSV, true
	}
	return 0, false
}

// Vertical says when tabular results are printed as one block per row
// ("expanded" mode, set with \x) instead of a boxed table:
//
//	-[ RECORD 1 ]--------
//	ID   | o1
//	ITEM | apple
//
// Auto, the default, prints vertically when the table would be wider than
// the terminal: a SHOW or DESCRIBE table at the width of its widest cells,
// a push query at the width its header and first row need (the choice holds
// for the whole query; later wider values wrap). Without a terminal (scripts,
// pipelines) Auto never goes vertical.
type Vertical int

// The vertical modes.
const (
	VerticalAuto Vertical = iota
	VerticalOff
	VerticalOn
)

// String returns the mode's name as \x takes it.
func (v Vertical) String() string {
	switch v {
	case VerticalOff:
		return "off"
	case VerticalOn:
		return "on"
	}
	return "auto"
}

// rowSink receives a push query's rows as they arrive.
type rowSink interface {
	// row prints one row: cells are the values formatted as text, values
	// the values as they came.
	row(cells []string, values []*sluicev1.Value)
	// end closes the output; msg (may be empty) is the closing line, such
	// as "Limit Reached".
	end(msg string)
}

// newRowSink returns the sink that prints a push query's rows in the
// shell's current format.
func (s *Shell) newRowSink(names []string) rowSink {
	switch s.Format {
	case FormatJSON:
		return &jsonSink{w: s.out, info: s.errOut, names: names}
	case FormatCSV:
		c := &csvSink{w: csv.NewWriter(s.out), info: s.errOut}
		c.write(names)
		return c
	}
	p := &pushTable{w: s.out, names: names, mode: s.Vertical, termWidth: s.TermWidth, termHeight: s.TermHeight, redraw: s.TermHeight > 0}
	p.start()
	return p
}

// printTable prints a listing, a description or a pull query's rows in
// the current format: JSON and CSV keep the cells' types and nulls.
func (s *Shell) printTable(t *render.Table) {
	info := s.out
	if s.Format != FormatTabular {
		info = s.errOut
	}
	if t.Title != "" {
		fmt.Fprintln(info, t.Title)
	}
	if len(t.Columns) > 0 {
		cols := t.Columns
		switch s.Format {
		case FormatJSON:
			j := &jsonSink{w: s.out, info: s.errOut, names: cols}
			for _, r := range t.Rows {
				j.row(nil, r)
			}
		case FormatCSV:
			c := &csvSink{w: csv.NewWriter(s.out), info: s.errOut}
			c.write(cols)
			for _, r := range t.Rows {
				c.row(t.Cells(r), r)
			}
		default:
			rows := make([][]string, len(t.Rows))
			for i, r := range t.Rows {
				rows[i] = t.Cells(r)
			}
			widths := naturalWidths(cols, rows)
			vertical := s.Vertical == VerticalOn ||
				(s.Vertical == VerticalAuto && s.TermWidth > 0 && tableWidth(widths) > s.TermWidth)
			if vertical {
				v := &verticalSink{w: s.out, names: cols, termWidth: s.TermWidth}
				for _, r := range rows {
					v.row(r, nil)
				}
				if len(rows) == 0 {
					fmt.Fprintln(s.out, "(no rows)")
				}
			} else {
				renderTable(s.out, cols, rows)
			}
		}
	}
	if t.Footer != "" {
		fmt.Fprintln(info, strings.TrimRight(t.Footer, "\n"))
	}
}

// verticalSink prints one block per row, psql's expanded display.
type verticalSink struct {
	w         io.Writer
	names     []string
	termWidth int
	n         int
}

func (v *verticalSink) row(cells []string, _ []*sluicev1.Value) {
	v.n++
	nameW := 0
	for _, n := range v.names {
		nameW = max(nameW, utf8.RuneCountInString(n))
	}
	valW := 0
	for _, c := range cells {
		valW = max(valW, maxLineWidth(c))
	}
	if v.termWidth > 0 {
		valW = min(valW, max(v.termWidth-nameW-4, 10))
	}
	var b strings.Builder
	title := fmt.Sprintf("-[ RECORD %d ]", v.n)
	b.WriteString(title)
	b.WriteString(strings.Repeat("-", max(nameW+1-utf8.RuneCountInString(title), 0)))
	b.WriteString("+")
	b.WriteString(strings.Repeat("-", max(valW+1, 1)))
	b.WriteByte('\n')
	for i, n := range v.names {
		var c string
		if i < len(cells) {
			c = cells[i]
		}
		for j, line := range wrap(c, max(valW, 1)) {
			label := ""
			if j == 0 {
				label = n
			}
			b.WriteString(label)
			b.WriteString(strings.Repeat(" ", nameW-utf8.RuneCountInString(label)))
			b.WriteString(" | ")
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	io.WriteString(v.w, b.String())
}

func (v *verticalSink) end(msg string) {
	if msg != "" {
		fmt.Fprintln(v.w, msg)
	}
}

// jsonSink writes one JSON object per row.
type jsonSink struct {
	w, info io.Writer
	names   []string
}

func (j *jsonSink) row(cells []string, values []*sluicev1.Value) {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range j.names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(n))
		b.WriteByte(':')
		switch {
		case i < len(values):
			writeJSON(&b, values[i])
		case i < len(cells):
			writeJSONString(&b, cells[i])
		default:
			b.WriteString("null")
		}
	}
	b.WriteString("}\n")
	io.WriteString(j.w, b.String())
}

func (j *jsonSink) end(msg string) {
	if msg != "" {
		fmt.Fprintln(j.info, msg)
	}
}

// writeJSON writes v as JSON: numbers and booleans as themselves, decimals as
// numbers, bytes in base64, dates, times and timestamps as the strings
// ksqlDB prints, maps as objects keyed by the formatted key.
func writeJSON(b *strings.Builder, v *sluicev1.Value) {
	switch k := v.GetKind().(type) {
	case nil, *sluicev1.Value_NullValue:
		b.WriteString("null")
	case *sluicev1.Value_BoolValue:
		b.WriteString(strconv.FormatBool(k.BoolValue))
	case *sluicev1.Value_IntValue:
		b.WriteString(strconv.FormatInt(k.IntValue, 10))
	case *sluicev1.Value_DoubleValue:
		f := types.FormatDouble(k.DoubleValue)
		if _, err := strconv.ParseFloat(f, 64); err != nil || strings.ContainsAny(f, "IN") {
			writeJSONString(b, f) // NaN and the infinities have no JSON number
		} else {
			b.WriteString(f)
		}
	case *sluicev1.Value_DecimalValue:
		b.WriteString(k.DecimalValue)
	case *sluicev1.Value_StringValue:
		writeJSONString(b, k.StringValue)
	case *sluicev1.Value_BytesValue:
		writeJSONString(b, base64.StdEncoding.EncodeToString(k.BytesValue))
	case *sluicev1.Value_ArrayValue:
		b.WriteByte('[')
		for i, e := range k.ArrayValue.GetElements() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case *sluicev1.Value_MapValue:
		b.WriteByte('{')
		for i, e := range k.MapValue.GetEntries() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, types.FormatValue(wire.DecodeValue(e.GetKey())))
			b.WriteByte(':')
			writeJSON(b, e.GetValue())
		}
		b.WriteByte('}')
	case *sluicev1.Value_StructValue:
		b.WriteByte('{')
		for i, f := range k.StructValue.GetFields() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, f.GetName())
			b.WriteByte(':')
			writeJSON(b, f.GetValue())
		}
		b.WriteByte('}')
	default: // dates, times, timestamps
		writeJSONString(b, types.FormatValue(wire.DecodeValue(v)))
	}
}

// writeJSONString writes s as a JSON string.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// csvSink writes rows as CSV, flushing each so that a pipeline sees them as
// they arrive.
type csvSink struct {
	w    *csv.Writer
	info io.Writer
}

func (c *csvSink) write(fields []string) {
	_ = c.w.Write(fields)
	c.w.Flush()
}

func (c *csvSink) row(cells []string, values []*sluicev1.Value) {
	out := make([]string, len(cells))
	for i, cell := range cells {
		if i < len(values) {
			if _, null := values[i].GetKind().(*sluicev1.Value_NullValue); null || values[i].GetKind() == nil {
				continue
			}
		}
		out[i] = cell
	}
	c.write(out)
}

func (c *csvSink) end(msg string) {
	if msg != "" {
		fmt.Fprintln(c.info, msg)
	}
}
