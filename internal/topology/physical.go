package topology

import (
	"fmt"
	"strconv"

	"github.com/sluice-sql/sluice/internal/types"
)

// Version is the version of the plans this code writes. A stored plan of
// an older version is upgraded when it is read (Upgrade):
//
//	0, 1  the logical plan only (written before the physical plan existed)
//	2     Physical, and each step's operator settings (Step.WithOld,
//	      Step.PassAll, JoinSpec.LeftMaterialized ...), filled by Complete
const Version = 2

// Physical is a query as it runs, derived from its steps by Complete: the
// stages it is split into at its repartitions, every topic it owns and
// every state store it keeps. The engine creates and deletes the topics
// from it, exec builds the stages from it, and EXPLAIN draws it.
type Physical struct {
	Stages []Stage `json:"stages"`
	Topics []Topic `json:"topics,omitempty"`
	Stores []Store `json:"stores,omitempty"`
}

// Stage is one part of a query that runs as tasks of its own, one per
// partition of the topic it reads (Kafka Streams' sub-topology): it reads
// Source, runs the steps From up to To (exclusive) of the graph Path
// names, and writes Sink.
type Stage struct {
	// ID numbers the stages from 0, the main graph's first.
	ID int `json:"id"`
	// Path names the graph whose steps the stage runs: empty for the
	// query's graph, [i] for the right input of its step i (a join),
	// [i, j] for the right input of step j of that one, and so on.
	Path []int `json:"path,omitempty"`
	// Source is the topic the stage reads: the query's source topic, a
	// join's right source, or a repartition topic an earlier stage writes.
	Source string `json:"source"`
	From   int    `json:"from"`
	To     int    `json:"to"`
	// Sink is the topic the stage writes: a repartition topic, the query's
	// sink, or empty (a push or pull query's output, or a join's right
	// input, whose rows enter the join).
	Sink string `json:"sink,omitempty"`
	// Joins lists the IDs of the stages of the right inputs whose rows
	// the stage's joins take, which run inside the stage's tasks.
	Joins []int `json:"joins,omitempty"`
	// TableRows says that the rows leaving the stage are a table's
	// changes (a row without a value deletes its key), not a stream's
	// records.
	TableRows bool `json:"tableRows,omitempty"`
}

// TopicRole says what a query uses a topic it owns for.
type TopicRole string

// The topic roles.
const (
	SinkTopic        TopicRole = "sink"
	ChangelogTopic   TopicRole = "changelog"
	RepartitionTopic TopicRole = "repartition"
)

// Topic is a topic a query owns.
type Topic struct {
	Name string    `json:"name"`
	Role TopicRole `json:"role"`
	// Partitions is the partition count the topic is created with.
	Partitions int32 `json:"partitions"`
	// Config is the topic configuration it is created with; empty for a
	// sink, which the statement's own properties create.
	Config map[string]string `json:"config,omitempty"`
}

// StoreRole says what a state store keeps.
type StoreRole string

// The store roles.
const (
	// AggregateStore keeps an Aggregate step's accumulators per group
	// (and window).
	AggregateStore StoreRole = "aggregate"
	// MaterializeStore keeps a table's rows per key (a Materialize step).
	MaterializeStore StoreRole = "materialize"
	// JoinLeftStore and JoinRightStore keep a join side's rows: a stream
	// side's within the window (a table side is a MaterializeStore).
	JoinLeftStore  StoreRole = "join-left"
	JoinRightStore StoreRole = "join-right"
	// OuterJoinStore keeps an outer stream-stream join's unmatched rows
	// until their window closes.
	OuterJoinStore StoreRole = "join-outer"
	// ForeignKeyStore indexes a foreign-key join's left keys by foreign
	// key, and keeps the positions of its right table.
	ForeignKeyStore StoreRole = "join-fk-index"
)

// Store is a state store of a query: a table of the query's namespace in
// the state database, one per partition, restored from its changelog.
type Store struct {
	Name string    `json:"name"`
	Role StoreRole `json:"role"`
	// Stage is the ID of the stage whose tasks keep it.
	Stage int `json:"stage"`
	// Key and Value are the layout of its entries' keys and values.
	Key   []string `json:"key,omitempty"`
	Value []string `json:"value,omitempty"`
	// Window, when set, keys the entries by window too.
	Window *Window `json:"window,omitempty"`
	// Changelog is its changelog topic; empty for a push query's.
	Changelog string `json:"changelog,omitempty"`
}

// ChangelogExtraRetention is how much longer than its window retention a
// windowed changelog keeps records, as Kafka Streams'
// windowstore.changelog.additional.retention.ms default (one day).
const ChangelogExtraRetention = 24 * 60 * 60 * 1000

// Upgrade brings a plan read from the command log to Version: a plan
// without its physical part gets it from Complete. It reports whether it
// changed g.
func Upgrade(g *Graph) (bool, error) {
	if g.Version >= Version && g.Physical != nil {
		return false, nil
	}
	return true, Complete(g)
}

// Complete is the last pass of planning: it sets each step's operator
// settings and derives the physical plan from the steps, and marks g as
// of this Version. It is idempotent.
func Complete(g *Graph) error {
	if err := completable(g, g.QueryID); err != nil {
		return err
	}
	settings(g, g.Sink != nil)
	p := &Physical{}
	c := completer{g: g, p: p, seenTopic: map[string]bool{}, seenStore: map[string]bool{}}
	c.stages(g, nil, g.Sink != nil)
	if g.Sink != nil {
		c.topic(Topic{Name: g.Sink.Topic, Role: SinkTopic, Partitions: g.Sink.Partitions})
	}
	g.Physical = p
	g.Version = Version
	return nil
}

// completable reports what in plan g (of query id, or a join's right
// input within it) Complete cannot derive a physical plan from: a graph
// without a source, or a step whose schema lacks the columns its kind
// needs. Such a plan was not written by a planner.
func completable(g *Graph, id string) error {
	if g.Source == nil {
		return fmt.Errorf("topology: plan %s has a graph without a source", id)
	}
	for i, st := range g.Steps {
		switch st.Kind {
		case Aggregate:
			if st.Keys < 0 || len(st.Schema) < PseudoColumns+st.Keys {
				return fmt.Errorf("topology: plan %s: aggregate step %d has %d columns, fewer than its pseudo-columns and %d keys", id, i, len(st.Schema), st.Keys)
			}
		case Join:
			if st.Join == nil {
				continue
			}
			if i > 0 && len(g.Steps[i-1].Schema) < PseudoColumns {
				return fmt.Errorf("topology: plan %s: join step %d follows a step without pseudo-columns", id, i)
			}
			if st.Join.Right != nil {
				if err := completable(st.Join.Right, id); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// settings sets the operator settings of g's steps, and of its joins'
// right inputs.
func settings(g *Graph, sink bool) {
	for i := range g.Steps {
		st := &g.Steps[i]
		last := i == len(g.Steps)-1
		switch st.Kind {
		case Aggregate:
			// A HAVING filter needs each group's previous row.
			st.WithOld = !last && g.Steps[i+1].Kind == Filter
		case Rekey:
			// A regrouping Repartition needs each change's old row
			// rekeyed too.
			st.WithOld = !last && g.Steps[i+1].Kind == Repartition && g.Steps[i+1].Regroup
		case Materialize:
			// The last step of a graph with a sink keeps the sink's rows
			// for pull queries and passes every row on.
			st.PassAll = last && sink
		case Join:
			j := st.Join
			if j == nil {
				continue
			}
			j.LeftMaterialized = i > 0 && g.Steps[i-1].Kind == Materialize && g.Steps[i-1].StateTable == j.LeftState
			if j.Right != nil {
				rs := j.Right.Steps
				j.RightMaterialized = len(rs) > 0 && rs[len(rs)-1].Kind == Materialize && rs[len(rs)-1].StateTable == j.RightState
				// A right input's rows enter the join, never a sink.
				settings(j.Right, false)
			}
			switch {
			case j.ForeignKey != nil:
				j.ExtraState, j.ExtraChangelog = extraNames(j, "-fk-index")
			case !j.LeftTable && !j.RightTable && j.Type != InnerJoin && j.Within != nil && j.Within.Grace >= 0:
				// Only an outer join with a grace period holds unmatched
				// rows back.
				j.ExtraState, j.ExtraChangelog = extraNames(j, "-outer")
			}
		}
	}
}

// extraNames names a join's third state table and its changelog: those
// the plan gives, else LeftState and LeftChangelog with suffix appended,
// as plans before ExtraState had them.
func extraNames(j *JoinSpec, suffix string) (string, string) {
	state, log := j.ExtraState, j.ExtraChangelog
	if state == "" {
		state = j.LeftState + suffix
	}
	if log == "" && j.LeftChangelog != "" {
		log = j.LeftChangelog + suffix
	}
	return state, log
}

type completer struct {
	g         *Graph
	p         *Physical
	seenTopic map[string]bool
	seenStore map[string]bool
}

func (c *completer) topic(t Topic) {
	if t.Name == "" || c.seenTopic[t.Name] {
		return
	}
	c.seenTopic[t.Name] = true
	c.p.Topics = append(c.p.Topics, t)
}

func (c *completer) store(s Store) {
	if s.Name == "" || c.seenStore[s.Name] {
		return
	}
	c.seenStore[s.Name] = true
	c.p.Stores = append(c.p.Stores, s)
	if s.Changelog != "" {
		cfg := map[string]string{"cleanup.policy": "compact"}
		if s.Window != nil {
			cfg = map[string]string{
				"cleanup.policy": "compact,delete",
				"retention.ms":   strconv.FormatInt(s.Window.Retention+ChangelogExtraRetention, 10),
			}
		}
		// A task of the stage keeping the store owns one partition of
		// its changelog: the stages of a query run as many tasks as the
		// query's source has partitions.
		c.topic(Topic{Name: s.Changelog, Role: ChangelogTopic, Partitions: c.g.Source.Partitions, Config: cfg})
	}
}

// stages splits graph g (the query's, or a join's right input at path) at
// its Repartition steps into stages, appends them, and returns the ID of
// the last one. sink says whether g's last stage writes g.Sink.
func (c *completer) stages(g *Graph, path []int, sink bool) int {
	source := g.Source.Topic
	table := g.Source.IsTable()
	from := 0
	newStage := func(to int, out string) *Stage {
		c.p.Stages = append(c.p.Stages, Stage{
			ID: len(c.p.Stages), Path: append([]int(nil), path...),
			Source: source, From: from, To: to, Sink: out,
		})
		return &c.p.Stages[len(c.p.Stages)-1]
	}
	cur := -1
	for i := range g.Steps {
		if cur < 0 {
			cur = newStage(-1, "").ID
		}
		st := &g.Steps[i]
		switch st.Kind {
		case Aggregate:
			table = true
			c.store(Store{Name: st.StateTable, Role: AggregateStore, Stage: cur,
				Key: names(st.Schema[PseudoColumns : PseudoColumns+st.Keys]), Value: aggNames(st),
				Window: st.Window, Changelog: st.Changelog})
		case Materialize:
			table = true
			c.store(Store{Name: st.StateTable, Role: MaterializeStore, Stage: cur,
				Key: names(keyCols(st.Schema, st.Keys)), Value: names(valueCols(st.Schema, st.Keys)),
				Changelog: st.Changelog})
		case Join:
			j := st.Join
			if j == nil {
				continue
			}
			if j.LeftTable {
				table = true
			}
			if j.Right != nil {
				right := c.stages(j.Right, append(append([]int(nil), path...), i), false)
				c.p.Stages[cur].Joins = append(c.p.Stages[cur].Joins, right)
			}
			in := g.Source.Schema()
			if i > 0 {
				in = g.Steps[i-1].Schema
			}
			if !j.LeftMaterialized && j.LeftState != "" {
				c.store(Store{Name: j.LeftState, Role: JoinLeftStore, Stage: cur, Value: names(in[PseudoColumns:]), Changelog: j.LeftChangelog})
			}
			if !j.RightMaterialized && j.RightState != "" && j.Right != nil {
				c.store(Store{Name: j.RightState, Role: JoinRightStore, Stage: cur, Value: names(withoutPseudo(j.Right.Output)), Changelog: j.RightChangelog})
			}
			switch {
			case j.ForeignKey != nil:
				c.store(Store{Name: j.ExtraState, Role: ForeignKeyStore, Stage: cur, Changelog: j.ExtraChangelog})
			case j.ExtraState != "":
				c.store(Store{Name: j.ExtraState, Role: OuterJoinStore, Stage: cur, Changelog: j.ExtraChangelog})
			}
		case Repartition:
			if st.Table {
				table = true
			}
			s := &c.p.Stages[cur]
			s.To, s.Sink, s.TableRows = i+1, st.Topic, table
			partitions := st.Partitions
			if partitions == 0 {
				partitions = c.g.Source.Partitions
			}
			c.topic(Topic{Name: st.Topic, Role: RepartitionTopic, Partitions: partitions, Config: map[string]string{"cleanup.policy": "delete"}})
			// The next stage reads what this one wrote, as a stream of
			// rows: the Aggregate after a regrouping repartition reads its
			// change records (see RegroupSchema).
			source, from, cur, table = st.Topic, i+1, -1, false
		}
	}
	if cur < 0 {
		cur = newStage(-1, "").ID
	}
	s := &c.p.Stages[cur]
	s.To, s.TableRows = len(g.Steps), table
	if sink && g.Sink != nil {
		s.Sink = g.Sink.Topic
	}
	return cur
}

// StagePath returns the graph path names within g, nil when it names none.
func (g *Graph) StagePath(path []int) *Graph {
	for _, i := range path {
		if i < 0 || i >= len(g.Steps) || g.Steps[i].Join == nil || g.Steps[i].Join.Right == nil {
			return nil
		}
		g = g.Steps[i].Join.Right
	}
	return g
}

func names(cols []types.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// withoutPseudo returns a row layout without its leading pseudo-columns,
// when it has them: what a join store's values are named by, on either
// side.
func withoutPseudo(cols []types.Column) []types.Column {
	if len(cols) >= PseudoColumns && cols[0].Name == RowTime {
		return cols[PseudoColumns:]
	}
	return cols
}

// keyCols and valueCols split a Materialize step's rows: keys key
// columns, after the pseudo-columns when the schema starts with them.
func keyCols(schema []types.Column, keys int) []types.Column {
	at := 0
	if len(schema) >= PseudoColumns && schema[0].Name == RowTime {
		at = PseudoColumns
	}
	if at+keys > len(schema) {
		return nil
	}
	return schema[at : at+keys]
}

func valueCols(schema []types.Column, keys int) []types.Column {
	at := 0
	if len(schema) >= PseudoColumns && schema[0].Name == RowTime {
		at = PseudoColumns
	}
	if at+keys > len(schema) {
		return nil
	}
	return schema[at+keys:]
}

// aggNames names an Aggregate's accumulators: one per call, as the
// output column it gives.
func aggNames(st *Step) []string {
	cols := st.Schema[PseudoColumns+st.Keys:]
	if st.Window != nil && len(cols) >= 2 {
		cols = cols[2:]
	}
	out := make([]string, 0, len(st.Aggs))
	for i, a := range st.Aggs {
		name := a.Func
		if i < len(cols) {
			name = cols[i].Name + " " + a.Func
		}
		out = append(out, name)
	}
	return out
}
