package topology

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// Graph is one query's plan.
type Graph struct {
	// QueryID names the query: CSAS_BIG_1 for a persistent query,
	// transient_<SOURCE>_<n> for a push query.
	QueryID string `json:"queryId,omitempty"`
	// Source is the input.
	Source *Source `json:"source"`
	// Steps transform rows in order, each consuming the previous one's
	// output (the first consumes Source.Schema()).
	Steps []Step `json:"steps"`
	// Sink is the output topic of a persistent query; nil for a push query.
	Sink *Sink `json:"sink,omitempty"`
	// Output is the schema of the rows leaving the last step.
	Output []types.Column `json:"output"`
	// KeyColumns is how many leading columns of Output are key columns.
	KeyColumns int `json:"keyColumns"`
	// Limit ends a push or pull query after this many rows: nil when the
	// query has no LIMIT, 0 (or, for a push query, less) when it ends
	// before its first row. Persistent queries have none (a CREATE ... AS
	// SELECT with a LIMIT is refused), and a stored plan without the field
	// has none.
	Limit *int64 `json:"limit,omitempty"`
	// OffsetReset is where the query starts reading when it has no committed
	// offsets: "earliest" or "latest".
	OffsetReset string `json:"offsetReset"`
	// Version is the plan's version (see Version); 0 in plans written
	// before it.
	Version int `json:"version,omitempty"`
	// Physical is the query as it runs, derived by Complete: stages,
	// topics, state stores. Nil in plans before Version 2 and in a join's
	// right input.
	Physical *Physical `json:"physical,omitempty"`
}

// LimitReached reports whether a query that has given n rows has reached
// its LIMIT: never without one; before the first row with a LIMIT of 0 or
// less.
func (g *Graph) LimitReached(n int64) bool {
	return g.Limit != nil && n >= *g.Limit
}

// Pseudo-columns that every source row carries before its key and value
// columns, in this order.
const (
	RowTime      = "ROWTIME"
	RowPartition = "ROWPARTITION"
	RowOffset    = "ROWOFFSET"
	// PseudoColumns is how many pseudo-columns lead a source row.
	PseudoColumns = 3
)

// Source is a stream or table read from a topic.
type Source struct {
	Name string `json:"name"`
	// Kind says whether the source is a stream or a table: a record
	// without a key cannot be one of a table's rows, so it goes to the
	// processing log.
	Kind        SourceKind        `json:"kind,omitempty"`
	Topic       string            `json:"topic"`
	Partitions  int32             `json:"partitions"`
	KeyFormat   string            `json:"keyFormat"`
	ValueFormat string            `json:"valueFormat"`
	ValueProps  map[string]string `json:"valueProps,omitempty"`
	KeyProps    map[string]string `json:"keyProps,omitempty"`
	Key         []types.Column    `json:"key"`
	Value       []types.Column    `json:"value"`
	// Headers are read from record headers, after the value columns
	// (HeaderKeys[i] names the header Headers[i] reads, empty for all of
	// them: a HEADERS column).
	Headers    []types.Column `json:"headers,omitempty"`
	HeaderKeys []string       `json:"headerKeys,omitempty"`
	// Timestamp names the value or key column holding record time; empty
	// means the Kafka record timestamp. TimestampFormat is the Java date
	// pattern of a STRING timestamp column.
	Timestamp       string `json:"timestamp,omitempty"`
	TimestampFormat string `json:"timestampFormat,omitempty"`
	// Window, when set, says the topic's keys are windowed (WINDOW_TYPE
	// and WINDOW_SIZE, or a windowed aggregation's sink): each row carries
	// WINDOWSTART and WINDOWEND after its key columns.
	Window *KeyWindow `json:"window,omitempty"`
	// IsSource marks CREATE SOURCE STREAM/TABLE: read-only.
	IsSource bool `json:"isSource,omitempty"`
	// System marks a source every server declares at start (the
	// processing log): it is not in the command log and cannot be dropped
	// or replaced.
	System bool `json:"system,omitempty"`
	// SQL is the statement that created the source; empty in a plan.
	SQL string `json:"sql,omitempty"`
	// Unused names the value columns the query never reads (see
	// PruneSources): the value decoder leaves them null in the source row,
	// though it still checks that a record holds them as the schema says.
	// Empty means every column is read, as in plans written before it;
	// always empty in the catalog.
	Unused []string `json:"unused,omitempty"`
}

// SourceKind says whether a source is a stream or a table.
type SourceKind string

// The source kinds; an empty kind is a stream.
const (
	Stream SourceKind = "STREAM"
	Table  SourceKind = "TABLE"
)

// IsTable reports whether the source is a table.
func (s *Source) IsTable() bool { return s.Kind == Table }

// UnmarshalJSON reads a source, also as plans before Kind wrote it: with
// "table": true for a table.
func (s *Source) UnmarshalJSON(b []byte) error {
	type plain Source
	var v struct {
		plain
		Table bool `json:"table"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Source(v.plain)
	if s.Kind == "" && v.Table {
		s.Kind = Table
	}
	return nil
}

// Columns returns key, value, then header columns.
func (s *Source) Columns() []types.Column {
	out := make([]types.Column, 0, len(s.Key)+len(s.Value)+len(s.Headers))
	return append(append(append(out, s.Key...), s.Value...), s.Headers...)
}

// PlanNode returns the plan node that reads s: a copy without what only
// the catalog keeps (the statement's text, and the System and IsSource
// marks, which the catalog's rules read).
func (s *Source) PlanNode() *Source {
	n := *s
	n.SQL, n.System, n.IsSource, n.Unused = "", false, false, nil
	return &n
}

// Schema is the row layout a source emits: the pseudo-columns, then key
// columns (and the window bounds of a windowed source), value and header
// columns.
func (s *Source) Schema() []types.Column {
	out := make([]types.Column, 0, PseudoColumns+len(s.Key)+2+len(s.Value)+len(s.Headers))
	out = append(out,
		types.Column{Name: RowTime, Type: types.BigintType},
		types.Column{Name: RowPartition, Type: types.IntType},
		types.Column{Name: RowOffset, Type: types.BigintType},
	)
	out = append(out, s.Key...)
	if s.Window != nil {
		out = append(out, WindowColumns()...)
	}
	out = append(out, s.Value...)
	return append(out, s.Headers...)
}

// StepKind names an operator.
type StepKind string

// The step kinds.
const (
	Filter  StepKind = "filter"
	Project StepKind = "project"
	// Rekey computes new key columns (PARTITION BY); it runs as a Project
	// whose Exprs compute the whole new row.
	Rekey StepKind = "rekey"
	// FlatMap runs table functions (EXPLODE): Exprs are their ARRAY
	// arguments; each input row becomes one row per element of the
	// longest, the input columns followed by one element of each (null
	// where an array is shorter).
	// TableFuncs names the function of each of Exprs (EXPLODE or
	// CUBE_EXPLODE); a plan without it explodes every argument.
	FlatMap StepKind = "flatmap"
	// Aggregate groups rows by GroupBy and folds them with Aggs, keeping
	// one accumulator state per group in the state table StateTable
	// (changelog topic Changelog). Each input row emits its group's new
	// row: the pseudo-columns, Keys key columns (the GroupBy values), then
	// one column per aggregate.
	Aggregate StepKind = "aggregate"
	// Materialize keeps the rows of a table in the state table StateTable
	// (changelog topic Changelog), one per key: Keys key columns, after the
	// pseudo-columns when Schema starts with them, else leading. An input
	// row upserts its key and a null value deletes it; each goes on as a
	// change that carries the key's old row, which is what aggregating a
	// table needs to retract it. The last step of a graph with a Sink
	// only keeps the rows the sink writes, for pull queries: it passes
	// every row on as it comes.
	Materialize StepKind = "materialize"
	// Repartition moves rows to the task that owns their key: it writes
	// its input rows (laid out as Schema: the pseudo-columns, Keys key
	// columns, then the value columns) to the internal topic Topic, keyed
	// by the key columns and spread over Partitions partitions by Kafka's
	// murmur2 partitioner, and the steps after it read them back from
	// there. It splits the query into two stages, each with its own tasks,
	// committing under the query's consumer group.
	Repartition StepKind = "repartition"
)

// AggCall is one aggregate of an Aggregate step.
type AggCall struct {
	// Func is the aggregate's name (COUNT, SUM, ...).
	Func string `json:"func"`
	// Args are the per-row arguments, bound over the step's input.
	Args []*expr.Expr `json:"args,omitempty"`
	// Params are the literal trailing arguments (TOPK's k), in order.
	Params []*expr.Expr `json:"params,omitempty"`
	// Star marks COUNT(*).
	Star bool `json:"star,omitempty"`
	// Limit is the configured most values COLLECT_LIST or COLLECT_SET
	// keeps (ksql.functions.collect_list.limit and
	// ksql.functions.collect_set.limit); 0 means the default.
	Limit int64 `json:"limit,omitempty"`
}

// Step is one operator.
type Step struct {
	Kind StepKind `json:"kind"`
	// Predicate is a Filter's condition; rows where it is not true are
	// dropped.
	Predicate *expr.Expr `json:"predicate,omitempty"`
	// Exprs are a Project's output expressions, one per column of Schema.
	Exprs []*expr.Expr `json:"exprs,omitempty"`
	// TableFuncs are a FlatMap's table functions, one per of Exprs.
	TableFuncs []string `json:"tableFuncs,omitempty"`
	// Schema is the step's output row layout.
	Schema []types.Column `json:"schema"`
	// Keys is how many key columns a Rekey step computes (they follow the
	// pseudo-columns in Schema), or a Materialize step keys its rows by.
	Keys int `json:"keys,omitempty"`
	// Retract makes a Filter over a table pass the rows it rejects on as
	// deletes of their key, so that a key whose new row no longer matches
	// leaves the result.
	Retract bool `json:"retract,omitempty"`
	// GroupBy, Aggs, StateTable and Changelog describe an Aggregate.
	GroupBy    []*expr.Expr `json:"groupBy,omitempty"`
	Aggs       []AggCall    `json:"aggs,omitempty"`
	StateTable string       `json:"stateTable,omitempty"`
	Changelog  string       `json:"changelog,omitempty"`
	// Window makes an Aggregate windowed: the state is kept per group and
	// window, and the output rows carry WINDOWSTART and WINDOWEND right
	// after the Keys key columns.
	Window *Window `json:"window,omitempty"`
	// Topic and Partitions describe a Repartition's internal topic.
	Topic      string `json:"topic,omitempty"`
	Partitions int32  `json:"partitions,omitempty"`
	// PlaceBy, when set, places a Repartition's rows where a Kafka
	// producer would put their key written in this key format (and
	// PlaceProps): in partition murmur2(key bytes) mod Partitions. A
	// join's rekeyed side uses the other side's key format, so that each
	// row meets the partner rows of its key in the same task. Unset, rows
	// are spread by their internal encoding.
	PlaceBy    string            `json:"placeBy,omitempty"`
	PlaceProps map[string]string `json:"placeProps,omitempty"`
	// Table makes a Repartition carry a table's changes: a row that
	// deletes its key goes on as a tombstone of the new key.
	Table bool `json:"table,omitempty"`
	// NullKeysLogged marks the Repartition before a GROUP BY's Aggregate: a row
	// with a null key column has no group, and goes to the processing log
	// as ksqlDB logs it.
	NullKeysLogged bool `json:"nullKeysLogged,omitempty"`
	// Regroup makes a Repartition carry a table's changes to the GROUP BY
	// after it as change records (see RegroupSchema), and makes the
	// Aggregate that reads them take each record's old row out of its
	// group and its new row into it.
	Regroup bool `json:"regroup,omitempty"`
	// Join describes a Join step.
	Join *JoinSpec `json:"join,omitempty"`

	// Operator settings, set by Complete from the steps around.
	//
	// WithOld makes an Aggregate emit each group's previous row with its
	// new one (Batch.Old), for the HAVING filter after it, and a Rekey
	// compute each change's old row too, for the regrouping Repartition
	// after it.
	WithOld bool `json:"withOld,omitempty"`
	// PassAll makes a Materialize, the last step before a sink, pass
	// every row on as it comes; the rows it keeps serve pull queries.
	PassAll bool `json:"passAll,omitempty"`
}

// WindowType is the kind of a window.
type WindowType string

// The window types.
const (
	Tumbling WindowType = "TUMBLING"
	Hopping  WindowType = "HOPPING"
	Session  WindowType = "SESSION"
)

// The window bound columns of windowed rows.
const (
	WindowStart = "WINDOWSTART"
	WindowEnd   = "WINDOWEND"
)

// WindowColumns returns the WINDOWSTART and WINDOWEND columns.
func WindowColumns() []types.Column {
	return []types.Column{{Name: WindowStart, Type: types.BigintType}, {Name: WindowEnd, Type: types.BigintType}}
}

// DefaultGrace is the grace period of a window that names none, as
// ksqlDB has it: 24 hours. An EMIT FINAL window without one closes at its
// end.
const DefaultGrace = 24 * 60 * 60 * 1000

// Window describes the windows of a windowed aggregation; times are in
// milliseconds.
type Window struct {
	Type WindowType `json:"type"`
	// Size is a time window's length, or a session window's inactivity
	// gap.
	Size int64 `json:"size"`
	// Advance is a hopping window's hop; a tumbling window advances by
	// its size.
	Advance int64 `json:"advance,omitempty"`
	// Grace is how long after its end a window still takes late records.
	Grace int64 `json:"grace"`
	// Retention is how long state keeps a window: by default its size
	// (or gap) plus its grace period.
	Retention int64 `json:"retention"`
	// Final is EMIT FINAL: one row per window once it closes, instead of
	// a row per update.
	Final bool `json:"final,omitempty"`
}

// KeyWindow says that a topic's keys are windowed, and how: a time window
// key is the key's bytes and the window start, a session window key the
// key's bytes, the window end and the window start (8-byte big-endian
// milliseconds each), as Kafka Streams writes them.
type KeyWindow struct {
	Type WindowType `json:"type"`
	// Size is the length of time windows; 0 for session windows.
	Size int64 `json:"size,omitempty"`
}

// String describes w as EXPLAIN and DESCRIBE show it.
func (w *KeyWindow) String() string {
	if w.Type == Session {
		return string(w.Type)
	}
	return fmt.Sprintf("%s (SIZE %d ms)", w.Type, w.Size)
}

// String describes w as EXPLAIN shows it.
func (w *Window) String() string {
	var b strings.Builder
	b.WriteString(string(w.Type))
	if w.Type == Session {
		fmt.Fprintf(&b, " (GAP %d ms", w.Size)
	} else {
		fmt.Fprintf(&b, " (SIZE %d ms", w.Size)
	}
	if w.Type == Hopping {
		fmt.Fprintf(&b, ", ADVANCE BY %d ms", w.Advance)
	}
	fmt.Fprintf(&b, ", GRACE PERIOD %d ms, RETENTION %d ms)", w.Grace, w.Retention)
	if w.Final {
		b.WriteString(" EMIT FINAL")
	}
	return b.String()
}

// Sink is a topic a persistent query writes.
type Sink struct {
	// Timestamp names the output column that gives each record its time;
	// empty keeps the input record's time. TimestampFormat is the Java
	// date pattern of a STRING timestamp column.
	Timestamp       string            `json:"timestamp,omitempty"`
	TimestampFormat string            `json:"timestampFormat,omitempty"`
	Name            string            `json:"name"`
	Topic           string            `json:"topic"`
	Partitions      int32             `json:"partitions"`
	KeyFormat       string            `json:"keyFormat"`
	ValueFormat     string            `json:"valueFormat"`
	ValueProps      map[string]string `json:"valueProps,omitempty"`
	KeyProps        map[string]string `json:"keyProps,omitempty"`
	// Window, when set, makes the keys windowed: each row carries its
	// WINDOWSTART and WINDOWEND in the two columns after Graph.Output.
	Window *KeyWindow `json:"window,omitempty"`
	// PlaceBy and PlaceProps place the records of a repartition topic: see
	// Step.PlaceBy.
	PlaceBy    string            `json:"placeBy,omitempty"`
	PlaceProps map[string]string `json:"placeProps,omitempty"`
}

// String draws the graph as EXPLAIN shows it, sink first.
func (g *Graph) String() string {
	var b strings.Builder
	for _, l := range g.Plan() {
		b.WriteString(strings.Repeat("  ", l.Depth))
		b.WriteString(" > [ ")
		b.WriteString(l.Operator)
		b.WriteString(" ]")
		for _, d := range l.Details {
			b.WriteString(" | ")
			b.WriteString(d)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// PlanLine is one operator of an execution plan, drawn at Depth below the
// output: Operator is its kind (SINK, FILTER, PROJECT ...), Details its
// parts ("Name: X", "Predicate: ...").
type PlanLine struct {
	Depth    int
	Operator string
	Details  []string
}

// Plan is the execution plan EXPLAIN shows: the output first, then each
// step down to the source, a join's right input below the join.
func (g *Graph) Plan() []PlanLine {
	var out []PlanLine
	depth := 0
	line := func(op string, details ...string) {
		out = append(out, PlanLine{Depth: depth, Operator: op, Details: details})
		depth++
	}
	if g.Sink != nil {
		d := []string{"Name: " + g.Sink.Name, "Topic: " + g.Sink.Topic, fmt.Sprintf("Partitions: %d", g.Sink.Partitions),
			"Key format: " + g.Sink.KeyFormat, "Value format: " + g.Sink.ValueFormat, "Schema: " + schemaString(g.Output, g.KeyColumns)}
		if g.Sink.Window != nil {
			d = append(d, "Windowed key: "+g.Sink.Window.String())
		}
		line("SINK", d...)
	} else if n := len(g.Steps); n > 0 && g.Steps[n-1].Kind == Materialize {
		line("MATERIALIZED", "Schema: "+schemaString(g.Output, g.KeyColumns))
	} else {
		d := []string{"Schema: " + schemaString(g.Output, g.KeyColumns)}
		if g.Limit != nil {
			d = append(d, fmt.Sprintf("Limit: %d", *g.Limit))
		}
		line("OUTPUT", d...)
	}
	g.drawInput(line, func() int { return depth }, func(d int) { depth = d })
	return out
}

// drawInput draws g's steps, last first, and its source: a Join step
// draws its right input below it, then the left input goes on.
func (g *Graph) drawInput(line func(string, ...string), depth func() int, setDepth func(int)) {
	for i := len(g.Steps) - 1; i >= 0; i-- {
		st := g.Steps[i]
		switch st.Kind {
		case Join:
			line("JOIN", joinDetails(&st)...)
			if j := st.Join; j != nil && j.Right != nil {
				d := depth()
				out := j.Right.Output
				if len(out) >= PseudoColumns {
					out = out[PseudoColumns:]
				}
				line("RIGHT INPUT", "Schema: "+schemaString(out, j.Right.KeyColumns))
				j.Right.drawInput(line, depth, setDepth)
				setDepth(d)
			}
		case Filter:
			if st.Retract {
				line("FILTER", fmt.Sprintf("Predicate: %s", st.Predicate), "Rejected rows delete their key")
			} else {
				line("FILTER", fmt.Sprintf("Predicate: %s", st.Predicate))
			}
		case Project:
			parts := make([]string, len(st.Exprs))
			for j, e := range st.Exprs {
				parts[j] = e.String() + " AS " + st.Schema[j].Name
			}
			line("PROJECT", strings.Join(parts, ", "))
		case Aggregate:
			keys := make([]string, len(st.GroupBy))
			for j, e := range st.GroupBy {
				keys[j] = e.String()
			}
			aggs := make([]string, len(st.Aggs))
			for j, a := range st.Aggs {
				args := make([]string, 0, len(a.Args)+len(a.Params))
				if a.Star {
					args = append(args, "*")
				}
				for _, e := range a.Args {
					args = append(args, e.String())
				}
				for _, e := range a.Params {
					args = append(args, e.String())
				}
				aggs[j] = a.Func + "(" + strings.Join(args, ", ") + ")"
			}
			d := []string{"Group by: " + strings.Join(keys, ", ")}
			if st.Window != nil {
				d = append(d, "Window: "+st.Window.String())
			}
			line("AGGREGATE", append(d, "Aggregates: "+strings.Join(aggs, ", "), "State: "+st.StateTable, "Changelog: "+st.Changelog)...)
		case Materialize:
			line("MATERIALIZE", "State: "+st.StateTable, "Changelog: "+st.Changelog)
		case FlatMap:
			parts := make([]string, len(st.Exprs))
			for j, e := range st.Exprs {
				parts[j] = "EXPLODE(" + e.String() + ")"
			}
			line("FLAT MAP", strings.Join(parts, ", "))
		case Repartition:
			keys := make([]string, 0, st.Keys)
			for j := PseudoColumns; j < PseudoColumns+st.Keys; j++ {
				keys = append(keys, st.Schema[j].Name)
			}
			topic := st.Topic
			if topic == "" {
				topic = "(one per run)"
			}
			d := []string{"Topic: " + topic, fmt.Sprintf("Partitions: %d", st.Partitions), "Key: " + strings.Join(keys, ", ")}
			if st.PlaceBy != "" {
				d = append(d, "Placed as: "+st.PlaceBy+" keys")
			}
			if st.Table {
				d = append(d, "Table changes")
			}
			if st.Regroup {
				d = append(d, "Change records")
			}
			line("REPARTITION", d...)
		case Rekey:
			parts := []string{}
			for j := PseudoColumns; j < PseudoColumns+st.Keys; j++ {
				parts = append(parts, st.Schema[j].Name+" KEY = "+st.Exprs[j].String())
			}
			if len(parts) == 0 {
				parts = append(parts, "no key (null)")
			}
			line("PARTITION BY", strings.Join(parts, ", "))
		default:
			line(strings.ToUpper(string(st.Kind)))
		}
	}
	s := g.Source
	ts := "ROWTIME"
	if s.Timestamp != "" {
		ts = s.Timestamp
	}
	d := []string{"Name: " + s.Name, "Topic: " + s.Topic, fmt.Sprintf("Partitions: %d", s.Partitions), "Key format: " + s.KeyFormat, "Value format: " + s.ValueFormat}
	if s.Window != nil {
		d = append(d, "Windowed key: "+s.Window.String())
	}
	line("SOURCE", append(d, "Timestamp: "+ts, "Start: "+g.OffsetReset)...)
}

// joinDetails describes a Join step as EXPLAIN shows it.
func joinDetails(st *Step) []string {
	j := st.Join
	if j == nil {
		return nil
	}
	kind := func(table bool) string {
		if table {
			return "TABLE"
		}
		return "STREAM"
	}
	exprs := func(es []*expr.Expr) string {
		parts := make([]string, len(es))
		for i, e := range es {
			parts[i] = e.String()
		}
		return strings.Join(parts, ", ")
	}
	keys := make([]string, 0, st.Keys)
	for i := PseudoColumns; i < PseudoColumns+st.Keys && i < len(st.Schema); i++ {
		keys = append(keys, st.Schema[i].Name)
	}
	d := []string{fmt.Sprintf("%s %s-%s", j.Type, kind(j.LeftTable), kind(j.RightTable))}
	if j.ForeignKey != nil {
		d = append(d, fmt.Sprintf("Foreign key: %s", j.ForeignKey))
	} else {
		d = append(d, fmt.Sprintf("On: %s = %s", exprs(j.LeftKey), exprs(j.RightKey)))
	}
	d = append(d, "Key: "+strings.Join(keys, ", "))
	if w := j.Within; w != nil {
		grace := "default"
		if w.Grace >= 0 {
			grace = fmt.Sprintf("%d ms", w.Grace)
		}
		d = append(d, fmt.Sprintf("Within: %d ms before, %d ms after, grace %s", w.Before, w.After, grace))
	}
	return append(d, "Left state: "+j.LeftState, "Left changelog: "+j.LeftChangelog, "Right state: "+j.RightState, "Right changelog: "+j.RightChangelog)
}

func schemaString(cols []types.Column, keys int) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + " " + c.Type.String()
		if i < keys {
			parts[i] += " KEY"
		}
	}
	return strings.Join(parts, ", ")
}
