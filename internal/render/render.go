package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// Table is a result drawn for the shell: Title lines above, Columns and
// Rows of typed cells (nil rows for a result with no table), Footer lines
// below.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]*sluicev1.Value
	Footer  string
	// Null is how a null cell is written as text: "" in listings, "null"
	// in a query's rows.
	Null string
}

// Cell writes a cell as text.
func (t *Table) Cell(v *sluicev1.Value) string {
	if v == nil || v.GetKind() == nil {
		return t.Null
	}
	if _, ok := v.GetKind().(*sluicev1.Value_NullValue); ok {
		return t.Null
	}
	return types.FormatValue(wire.DecodeValue(v))
}

// Cells writes a row's cells as text.
func (t *Table) Cells(row []*sluicev1.Value) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = t.Cell(v)
	}
	return out
}

// Text is the table as the SQL corpus prints it: the title, the column
// names and each row joined by " | ", the footer.
func (t *Table) Text() string {
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	if len(t.Columns) > 0 {
		b.WriteString(strings.Join(t.Columns, " | ") + "\n")
	}
	for _, row := range t.Rows {
		b.WriteString(strings.Join(t.Cells(row), " | ") + "\n")
	}
	if t.Footer != "" {
		b.WriteString(strings.TrimRight(t.Footer, "\n") + "\n")
	}
	return b.String()
}

func str(s string) *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_StringValue{StringValue: s}}
}

func num(i int64) *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_IntValue{IntValue: i}}
}

func boolean(b bool) *sluicev1.Value {
	return &sluicev1.Value{Kind: &sluicev1.Value_BoolValue{BoolValue: b}}
}

func null() *sluicev1.Value { return &sluicev1.Value{Kind: &sluicev1.Value_NullValue{}} }

// orNull is s, or null when s is empty.
func orNull(s string) *sluicev1.Value {
	if s == "" {
		return null()
	}
	return str(s)
}

func strs(ss ...string) []*sluicev1.Value {
	out := make([]*sluicev1.Value, len(ss))
	for i, s := range ss {
		out[i] = str(s)
	}
	return out
}

// Rows draws a query's rows: the header's columns and the rows' values.
func Rows(h *sluicev1.StreamHeader, rows []*sluicev1.Row) *Table {
	t := &Table{Null: "null", Rows: [][]*sluicev1.Value{}}
	for _, c := range h.GetColumns() {
		t.Columns = append(t.Columns, c.GetName())
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, r.GetValues())
	}
	return t
}

// Entity draws a listing or description.
func Entity(e *sluicev1.Entity) *Table {
	if t, ok := connectorEntity(e); ok {
		return t
	}
	switch k := e.GetKind().(type) {
	case *sluicev1.Entity_Sources:
		return sources(k.Sources)
	case *sluicev1.Entity_Source:
		return describe(k.Source)
	case *sluicev1.Entity_Queries:
		return queries(k.Queries)
	case *sluicev1.Entity_Topics:
		t := &Table{Columns: []string{"Kafka Topic", "Partitions", "Partition Replicas"}}
		for _, tp := range k.Topics.GetTopics() {
			t.Rows = append(t.Rows, []*sluicev1.Value{str(tp.GetName()), num(int64(tp.GetPartitions())), num(int64(tp.GetReplicationFactor()))})
		}
		return t
	case *sluicev1.Entity_Properties:
		t := &Table{Columns: []string{"Property", "Scope", "Value"}}
		for _, p := range k.Properties.GetProperties() {
			t.Rows = append(t.Rows, strs(p.GetName(), p.GetScope(), p.GetValue()))
		}
		return t
	case *sluicev1.Entity_Variables:
		t := &Table{Columns: []string{"Variable Name", "Value"}}
		for _, v := range k.Variables.GetVariables() {
			t.Rows = append(t.Rows, strs(v.GetName(), v.GetValue()))
		}
		return t
	case *sluicev1.Entity_Types:
		t := &Table{Columns: []string{"Type Name", "Schema"}}
		for _, n := range k.Types.GetTypes() {
			t.Rows = append(t.Rows, strs(n.GetName(), n.GetType()))
		}
		return t
	case *sluicev1.Entity_Functions:
		t := &Table{Columns: []string{"Function Name", "Type", "Category", "Description"},
			Footer: "For detailed information on a function run: DESCRIBE FUNCTION <Function Name>;"}
		for _, f := range k.Functions.GetFunctions() {
			t.Rows = append(t.Rows, strs(f.GetName(), f.GetType(), f.GetCategory(), f.GetDescription()))
		}
		return t
	case *sluicev1.Entity_Function:
		f := k.Function
		title := "Name        : " + f.GetName() + "\nType        : " + f.GetType() + "\nCategory    : " + f.GetCategory() + "\nOverview    : " + f.GetDescription()
		if vs := f.GetVariations(); len(vs) > 0 {
			title += "\nVariations  : " + strings.Join(vs, "\n              ")
		}
		return &Table{Title: title}
	case *sluicev1.Entity_Plan:
		return plan(k.Plan)
	}
	return &Table{}
}

func sources(l *sluicev1.SourceList) *Table {
	title := "Stream Name"
	if l.GetKind() == sluicev1.SourceKind_SOURCE_KIND_TABLE {
		title = "Table Name"
	}
	t := &Table{Columns: []string{title, "Kafka Topic", "Key Format", "Value Format", "Windowed"}}
	if l.GetExtended() {
		t.Columns = append(t.Columns, "Partitions", "Timestamp", "Columns", "Written By", "Read By")
	}
	for _, src := range l.GetSources() {
		row := []*sluicev1.Value{str(src.GetName()), str(src.GetTopic()), str(src.GetKeyFormat()), str(src.GetValueFormat()), boolean(src.GetWindowed())}
		if l.GetExtended() {
			var cols []string
			for _, c := range src.GetColumns() {
				switch c.GetRole() {
				case sluicev1.ColumnRole_COLUMN_ROLE_KEY:
					cols = append(cols, c.GetName()+" "+c.GetType()+" KEY")
				case sluicev1.ColumnRole_COLUMN_ROLE_HEADER:
				default:
					cols = append(cols, c.GetName()+" "+c.GetType())
				}
			}
			ts := src.GetTimestamp()
			if ts == "" {
				ts = "ROWTIME"
			}
			row = append(row, num(int64(src.GetPartitions())), str(ts), str(strings.Join(cols, ", ")),
				str(strings.Join(src.GetWriters(), ", ")), str(strings.Join(src.GetReaders(), ", ")))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// statsColumns are the columns SHOW QUERIES EXTENDED adds to ksqlDB's.
var statsColumns = []string{"Records In", "Records Out", "Filtered", "Errors", "Late", "Nulls Dropped", "Lag", "Lag Seconds", "Restored"}

// stats are a query's figures for statsColumns: zero counts and no lag
// for a query that does not run here.
func stats(q *sluicev1.QueryDescription) []*sluicev1.Value {
	row := []*sluicev1.Value{num(q.GetRecordsIn()), num(q.GetRecordsOut()), num(q.GetFiltered()), num(q.GetErrors()), num(q.GetLate()), num(q.GetNullsDropped())}
	if !q.GetRunning() {
		return append(row, null(), null(), null())
	}
	if q.GetLagMeasured() {
		secs := &sluicev1.Value{Kind: &sluicev1.Value_DecimalValue{DecimalValue: strconv.FormatFloat(q.GetLagSeconds(), 'f', 1, 64)}}
		row = append(row, num(q.GetLagRecords()), secs)
	} else {
		row = append(row, null(), null())
	}
	return append(row, str(strconv.Itoa(int(q.GetRestorePercent()))+" %"))
}

func queries(l *sluicev1.QueryList) *Table {
	t := &Table{Columns: []string{"Query ID", "Query Type", "Status", "Sink Name", "Sink Kafka Topic", "Query String"},
		Footer: "For detailed information on a Query run: EXPLAIN <Query ID>;"}
	if l.GetExtended() {
		t.Columns = append(append(t.Columns, "Processing Guarantee"), statsColumns...)
		if l.GetCluster() {
			t.Columns = append(t.Columns, "Partitions")
		}
	}
	for _, q := range l.GetQueries() {
		typ := "PERSISTENT"
		if q.GetType() == sluicev1.QueryType_QUERY_TYPE_PUSH {
			typ = "PUSH"
		}
		row := []*sluicev1.Value{str(q.GetId()), str(typ), str(q.GetStatus()), orNull(q.GetSink()), orNull(q.GetSinkTopic()), orNull(q.GetSql())}
		if l.GetExtended() {
			row = append(append(row, str(q.GetGuarantee())), stats(q)...)
			if l.GetCluster() {
				row = append(row, str(q.GetPartitions()))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func describe(d *sluicev1.SourceDetail) *Table {
	src := d.GetSource()
	table := src.GetKind() == sluicev1.SourceKind_SOURCE_KIND_TABLE
	t := &Table{Columns: []string{"Field", "Type"}, Title: "Name                 : " + src.GetName()}
	var values, headers [][]*sluicev1.Value
	for _, c := range src.GetColumns() {
		switch c.GetRole() {
		case sluicev1.ColumnRole_COLUMN_ROLE_KEY:
			suffix := "(key)"
			if table {
				suffix = "(primary key)"
			}
			t.Rows = append(t.Rows, strs(c.GetName(), c.GetType()+"  "+suffix))
		case sluicev1.ColumnRole_COLUMN_ROLE_HEADER:
			suffix := "(headers)"
			if k := c.GetHeader(); k != "" {
				suffix = "(header('" + k + "'))"
			}
			headers = append(headers, strs(c.GetName(), c.GetType()+"  "+suffix))
		default:
			values = append(values, strs(c.GetName(), c.GetType()))
		}
	}
	t.Rows = append(append(t.Rows, values...), headers...)
	if !d.GetExtended() {
		t.Footer = fmt.Sprintf("For runtime statistics and query details run: DESCRIBE %s EXTENDED;", src.GetName())
		return t
	}
	kind, word := "STREAM", "stream"
	if table {
		kind, word = "TABLE", "table"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Type                 : %s\n", kind)
	ts := src.GetTimestamp()
	if ts == "" {
		ts = "Not set - using <ROWTIME>"
	}
	fmt.Fprintf(&b, "Timestamp field      : %s\n", ts)
	fmt.Fprintf(&b, "Key format           : %s\n", src.GetKeyFormat())
	if src.GetWindow() != "" {
		fmt.Fprintf(&b, "Windowed key         : %s\n", src.GetWindow())
	}
	fmt.Fprintf(&b, "Value format         : %s\n", src.GetValueFormat())
	fmt.Fprintf(&b, "Kafka topic          : %s (partitions: %d)\n", src.GetTopic(), src.GetPartitions())
	if d.GetCluster() != "" {
		fmt.Fprintf(&b, "Cluster              : %s\n", d.GetCluster())
	}
	fmt.Fprintf(&b, "Statement            : %s\n", src.GetSql())
	if ws := src.GetWriters(); len(ws) > 0 {
		fmt.Fprintf(&b, "Queries that write into this %s: %s\n", word, strings.Join(ws, ", "))
		for _, q := range d.GetWriters() {
			fmt.Fprintf(&b, "Processing guarantee : %s (%s)\n", q.GetGuarantee(), q.GetId())
		}
	}
	if rs := src.GetReaders(); len(rs) > 0 {
		fmt.Fprintf(&b, "Queries that read from this %s: %s\n", word, strings.Join(rs, ", "))
	}
	header := false
	printed := map[string]bool{}
	for _, q := range append(append([]*sluicev1.QueryDescription(nil), d.GetWriters()...), d.GetReaders()...) {
		// A query both writing and reading the source (a CREATE SOURCE
		// TABLE's) has one line.
		if !q.GetRunning() || printed[q.GetId()] {
			continue
		}
		printed[q.GetId()] = true
		if !header {
			b.WriteString("Local runtime statistics\n------------------------\n")
			header = true
		}
		b.WriteString(RuntimeStats(q) + "\n")
	}
	t.Footer = b.String()
	return t
}

// RuntimeStats is a query's line of DESCRIBE EXTENDED's "Local runtime
// statistics", with ksqlDB's names where it has them (total-messages,
// failed-messages, last-message).
func RuntimeStats(q *sluicev1.QueryDescription) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: total-messages: %d  messages-out: %d  filtered-messages: %d  failed-messages: %d  late-messages: %d  dropped-null-messages: %d",
		q.GetId(), q.GetRecordsIn(), q.GetRecordsOut(), q.GetFiltered(), q.GetErrors(), q.GetLate(), q.GetNullsDropped())
	if q.GetLagMeasured() {
		fmt.Fprintf(&b, "  lag: %d  lag-seconds: %.1f", q.GetLagRecords(), q.GetLagSeconds())
	}
	if q.GetRestoring() {
		fmt.Fprintf(&b, "  restored: %d %%", q.GetRestorePercent())
	}
	if ms := q.GetLastRecordMillis(); ms != 0 {
		fmt.Fprintf(&b, "  last-message: %s", time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	return b.String()
}

// PlanText draws a plan's lines, one operator a line.
func PlanText(lines []*sluicev1.PlanLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.Repeat("  ", int(l.GetDepth())))
		b.WriteString(" > [ " + l.GetOperator() + " ]")
		for _, d := range l.GetDetails() {
			b.WriteString(" | " + d)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Description is the "Name : value" lines EXPLAIN prints above a plan.
func Description(p *sluicev1.QueryPlan) string {
	if q := p.GetQuery(); q != nil {
		return fmt.Sprintf("ID                   : %s\nQuery Type           : PERSISTENT\nSQL                  : %s\nStatus               : %s", q.GetId(), q.GetSql(), q.GetStatus())
	}
	if !p.GetPull() {
		return "Query String         : " + p.GetStatement()
	}
	r := p.GetReads()
	reads := "Reads                : " + r.GetSource() + " from its start to its end when the query starts"
	if r.GetQuery() != "" {
		reads = "Reads                : " + r.GetSource() + ", the state " + r.GetQuery() + " last committed: " + r.GetLookup()
	}
	return "Query String         : " + p.GetStatement() + "\nQuery Type           : PULL\n" + reads
}

// TopologyText draws a query's processing topology, one stage after
// another, then the topics it owns; empty when there is none (a pull
// query's).
func TopologyText(t *sluicev1.Topology) string {
	if t == nil {
		return ""
	}
	d := &topology.Description{Unknown: t.GetUnknown()}
	for _, s := range t.GetStages() {
		ds := topology.StageDescription{ID: int(s.GetId()), Right: s.GetRight(), JoinStage: int(s.GetJoinStage()), Inside: s.GetInside(),
			Source: s.GetSource(), SourceRole: s.GetSourceRole(), SourcePartitions: s.GetSourcePartitions(),
			Sink: s.GetSink(), SinkRole: topology.TopicRole(s.GetSinkRole()), SinkPartitions: s.GetSinkPartitions(),
			Output: s.GetOutput(), TableRows: s.GetTableRows()}
		for _, j := range s.GetJoins() {
			ds.Joins = append(ds.Joins, int(j))
		}
		for _, n := range s.GetNodes() {
			dn := topology.NodeDescription{Operator: n.GetOperator(), Details: n.GetDetails()}
			for _, st := range n.GetStores() {
				ts := topology.Store{Name: st.GetName(), Role: topology.StoreRole(st.GetRole()), Key: st.GetKey(), Value: st.GetValue(),
					Changelog: st.GetChangelog()}
				if st.GetWindowed() {
					ts.Window = &topology.Window{}
				}
				dn.Stores = append(dn.Stores, ts)
			}
			ds.Nodes = append(ds.Nodes, dn)
		}
		d.Stages = append(d.Stages, ds)
	}
	for _, tp := range t.GetTopics() {
		d.Topics = append(d.Topics, topology.Topic{Name: tp.GetName(), Role: topology.TopicRole(tp.GetRole()), Partitions: tp.GetPartitions(),
			Config: tp.GetConfig()})
	}
	return d.String()
}

// PlanFooter is what EXPLAIN prints below a plan's description: the
// execution plan, then the processing topology under its heading.
func PlanFooter(p *sluicev1.QueryPlan) string {
	out := "Execution plan\n" + PlanText(p.GetLines())
	if t := p.GetTopology(); t != nil {
		out += "Processing topology\n" + TopologyText(t)
	}
	return out
}

func plan(p *sluicev1.QueryPlan) *Table {
	t := &Table{Title: Description(p), Footer: PlanFooter(p)}
	if q := p.GetQuery(); q != nil {
		t.Columns = []string{"Field", "Type"}
		for i, c := range q.GetColumns() {
			typ := c.GetType()
			if int32(i) < q.GetKeyColumns() {
				typ += "  (key)"
			}
			t.Rows = append(t.Rows, strs(c.GetName(), typ))
		}
	}
	return t
}
