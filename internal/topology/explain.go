package topology

import (
	"fmt"
	"sort"
	"strings"
)

// Description is the processing topology EXPLAIN shows under the
// execution plan: the query's physical plan as stages of operators, the
// state stores each operator keeps and the topics the query owns, in the
// manner of Kafka Streams' TopologyDescription (whose sub-topologies are
// our stages). Describe builds it from a plan; String draws it.
type Description struct {
	// Unknown says that the plan has no physical part to describe (a plan
	// stored before it existed and not upgraded): String says so.
	Unknown bool
	Stages  []StageDescription
	// Topics are the topics the query owns, in the physical plan's order.
	Topics []Topic
}

// StageDescription is one stage (sub-topology).
type StageDescription struct {
	ID int
	// Right is set for a stage of a join's right input: JoinStage is the
	// stage whose join takes its rows, and Inside says that the stage runs
	// in that stage's tasks (its last one, whose rows enter the join).
	Right     bool
	JoinStage int
	Inside    bool
	// Source is the topic the stage reads; SourceRole is the name of the
	// stream or table it holds ("stream CLICKS"), or "repartition".
	Source           string
	SourceRole       string
	SourcePartitions int32
	// Nodes are the stage's operators, in the order rows pass them.
	Nodes []NodeDescription
	// Sink is the topic the stage writes, SinkRole its TopicRole; with no
	// Sink, Output says where the rows go.
	Sink           string
	SinkRole       TopicRole
	SinkPartitions int32
	Output         string
	// TableRows says the rows leaving the stage are a table's changes.
	TableRows bool
	// Joins are the IDs of the right-input stages run inside this one.
	Joins []int
}

// NodeDescription is one operator of a stage: its kind as the execution
// plan names it (FILTER, AGGREGATE ...), its settings ("Key: A"), and the
// state stores it keeps.
type NodeDescription struct {
	Operator string
	Details  []string
	Stores   []Store
}

// Topology draws g's processing topology as EXPLAIN shows it.
func (g *Graph) Topology() string { return g.Describe().String() }

// Describe returns g's processing topology, read from g.Physical.
func (g *Graph) Describe() *Description {
	p := g.Physical
	if p == nil || len(p.Stages) == 0 {
		return &Description{Unknown: true}
	}
	stores := map[string]Store{}
	for _, s := range p.Stores {
		stores[s.Name] = s
	}
	topics := map[string]Topic{}
	for _, t := range p.Topics {
		topics[t.Name] = t
	}
	d := &Description{Topics: append([]Topic(nil), p.Topics...)}
	used := map[string]bool{}
	for _, s := range p.Stages {
		sg := g.StagePath(s.Path)
		if sg == nil {
			continue
		}
		sd := StageDescription{ID: s.ID, JoinStage: -1, Source: s.Source, Sink: s.Sink, TableRows: s.TableRows,
			Joins: append([]int(nil), s.Joins...)}
		if s.Source == sg.Source.Topic {
			sd.SourceRole = strings.ToLower(string(kindOf(sg.Source))) + " " + sg.Source.Name
			sd.SourcePartitions = sg.Source.Partitions
		} else {
			sd.SourceRole = string(topics[s.Source].Role)
			sd.SourcePartitions = topics[s.Source].Partitions
		}
		if len(s.Path) > 0 {
			sd.Right = true
			sd.JoinStage = stageOf(p, s.Path[:len(s.Path)-1], s.Path[len(s.Path)-1])
			if sd.JoinStage >= 0 {
				for _, id := range p.Stages[sd.JoinStage].Joins {
					sd.Inside = sd.Inside || id == s.ID
				}
			}
		}
		if s.Sink != "" {
			t := topics[s.Sink]
			sd.SinkRole, sd.SinkPartitions = t.Role, t.Partitions
		} else if sd.Right {
			sd.Output = fmt.Sprintf("the JOIN of sub-topology %d", sd.JoinStage)
		} else {
			sd.Output = "the query's result"
		}
		from, to := s.From, s.To
		if to < from || to > len(sg.Steps) {
			to = len(sg.Steps)
		}
		for i := from; i < to; i++ {
			right := -1
			for _, id := range s.Joins {
				if r := p.Stages[id].Path; len(r) == len(s.Path)+1 && samePath(r[:len(s.Path)], s.Path) && r[len(s.Path)] == i {
					right = id
				}
			}
			n := describeStep(sg, i, stores, right)
			for _, st := range n.Stores {
				used[st.Name] = true
			}
			sd.Nodes = append(sd.Nodes, n)
		}
		d.Stages = append(d.Stages, sd)
	}
	// A store no operator names is still shown, on its stage.
	for _, s := range p.Stores {
		if used[s.Name] {
			continue
		}
		for i := range d.Stages {
			if d.Stages[i].ID == s.Stage {
				d.Stages[i].Nodes = append(d.Stages[i].Nodes, NodeDescription{Operator: "STATE", Stores: []Store{s}})
			}
		}
	}
	return d
}

func kindOf(s *Source) SourceKind {
	if s.IsTable() {
		return Table
	}
	return Stream
}

// stageOf returns the ID of the stage running step i of the graph at
// path, -1 if none does.
func stageOf(p *Physical, path []int, i int) int {
	for _, s := range p.Stages {
		if samePath(s.Path, path) && s.From <= i && i < s.To {
			return s.ID
		}
	}
	return -1
}

func samePath(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// describeStep describes step i of g as an operator of its stage; right
// is the ID of the stage whose rows a Join step takes, -1 if none.
func describeStep(g *Graph, i int, stores map[string]Store, right int) NodeDescription {
	st := &g.Steps[i]
	n := NodeDescription{Operator: strings.ToUpper(string(st.Kind))}
	keep := func(name string) {
		if s, ok := stores[name]; ok && name != "" {
			n.Stores = append(n.Stores, s)
		}
	}
	key := func(cols []string) {
		if len(cols) > 0 {
			n.Details = append(n.Details, "Key: "+strings.Join(cols, ", "))
		}
	}
	switch st.Kind {
	case Filter:
		n.Details = append(n.Details, fmt.Sprintf("Predicate: %s", st.Predicate))
		if st.Retract {
			n.Details = append(n.Details, "Rejected rows delete their key")
		}
	case Project:
		cols := st.Schema
		if len(cols) >= PseudoColumns && cols[0].Name == RowTime {
			cols = cols[PseudoColumns:]
		}
		n.Details = append(n.Details, "Columns: "+strings.Join(names(cols), ", "))
	case Rekey:
		n.Operator = "PARTITION BY"
		var parts []string
		for j := PseudoColumns; j < PseudoColumns+st.Keys && j < len(st.Schema) && j < len(st.Exprs); j++ {
			parts = append(parts, st.Schema[j].Name+" = "+st.Exprs[j].String())
		}
		if len(parts) == 0 {
			parts = []string{"none (null)"}
		}
		n.Details = append(n.Details, "Key: "+strings.Join(parts, ", "))
		if st.WithOld {
			n.Details = append(n.Details, "Rekeys each change's old row too")
		}
	case FlatMap:
		n.Operator = "FLAT MAP"
		parts := make([]string, len(st.Exprs))
		for j, e := range st.Exprs {
			parts[j] = "EXPLODE(" + e.String() + ")"
		}
		n.Details = append(n.Details, strings.Join(parts, ", "))
	case Aggregate:
		if PseudoColumns+st.Keys <= len(st.Schema) {
			key(names(st.Schema[PseudoColumns : PseudoColumns+st.Keys]))
		}
		if st.Window != nil {
			n.Details = append(n.Details, "Window: "+st.Window.String())
		}
		// The aggregates are the store's values.
		if st.Regroup {
			n.Details = append(n.Details, "Retracts old rows, adds new ones")
		}
		if st.WithOld {
			n.Details = append(n.Details, "Emits each group's previous row too")
		}
		keep(st.StateTable)
	case Materialize:
		key(names(keyCols(st.Schema, st.Keys)))
		if st.PassAll {
			n.Details = append(n.Details, "Passes every row on")
		}
		keep(st.StateTable)
	case Repartition:
		if PseudoColumns+st.Keys <= len(st.Schema) {
			key(names(st.Schema[PseudoColumns : PseudoColumns+st.Keys]))
		}
		if st.PlaceBy != "" {
			n.Details = append(n.Details, "Placed as: "+st.PlaceBy+" keys")
		}
		if st.Table {
			n.Details = append(n.Details, "Table changes")
		}
		if st.Regroup {
			n.Details = append(n.Details, "Change records: old row out of its group, new row into its group")
		}
	case Join:
		j := st.Join
		if j == nil {
			break
		}
		d := joinDetails(st)
		// The type, ON (or foreign key), key and WITHIN: the state
		// tables are the stores below.
		for _, s := range d {
			if strings.HasPrefix(s, "Left ") || strings.HasPrefix(s, "Right ") {
				continue
			}
			n.Details = append(n.Details, s)
		}
		if right >= 0 {
			n.Details = append(n.Details, fmt.Sprintf("Right input: sub-topology %d", right))
		}
		if j.LeftMaterialized {
			n.Details = append(n.Details, "Left rows: store "+j.LeftState)
		}
		if j.RightMaterialized {
			n.Details = append(n.Details, "Right rows: store "+j.RightState)
		}
		if !j.LeftMaterialized {
			keep(j.LeftState)
		}
		if !j.RightMaterialized {
			keep(j.RightState)
		}
		keep(j.ExtraState)
	}
	return n
}

// String draws the topology, one stage after another, then the topics.
func (d *Description) String() string {
	var b strings.Builder
	if d.Unknown {
		b.WriteString("(unknown: the plan has no physical plan)\n")
		return b.String()
	}
	for _, s := range d.Stages {
		fmt.Fprintf(&b, "Sub-topology: %d", s.ID)
		if s.Right {
			if s.Inside {
				fmt.Fprintf(&b, " (right input of the JOIN of sub-topology %d, runs in its tasks)", s.JoinStage)
			} else {
				fmt.Fprintf(&b, " (part of the right input of the JOIN of sub-topology %d)", s.JoinStage)
			}
		}
		b.WriteByte('\n')
		fmt.Fprintf(&b, "  Source: %s (%s, partitions: %d)\n", s.Source, s.SourceRole, s.SourcePartitions)
		for _, n := range s.Nodes {
			b.WriteString("  > " + n.Operator)
			for _, x := range n.Details {
				b.WriteString(" | " + x)
			}
			b.WriteByte('\n')
			for _, st := range n.Stores {
				b.WriteString("      Store: " + storeString(st) + "\n")
			}
		}
		switch {
		case s.Sink != "":
			fmt.Fprintf(&b, "  Sink: %s (%s, partitions: %d", s.Sink, s.SinkRole, s.SinkPartitions)
			if s.TableRows {
				b.WriteString(", table changes")
			}
			b.WriteString(")\n")
		default:
			fmt.Fprintf(&b, "  Output: %s\n", s.Output)
		}
	}
	if len(d.Topics) > 0 {
		b.WriteString("Topics:\n")
		for _, t := range d.Topics {
			fmt.Fprintf(&b, "  %s (%s, partitions: %d)", t.Name, t.Role, t.Partitions)
			keys := make([]string, 0, len(t.Config))
			for k := range t.Config {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, " %s=%s", k, t.Config[k])
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// storeString describes a store on one line: its name and role, its
// key and value layout, whether it is windowed, and its changelog.
func storeString(s Store) string {
	parts := []string{string(s.Role)}
	if len(s.Key) > 0 {
		parts = append(parts, "key: "+strings.Join(s.Key, ", "))
	}
	if len(s.Value) > 0 {
		parts = append(parts, "value: "+strings.Join(s.Value, ", "))
	}
	if s.Window != nil {
		parts = append(parts, "windowed")
	}
	if s.Changelog != "" {
		parts = append(parts, "changelog: "+s.Changelog)
	} else {
		parts = append(parts, "no changelog")
	}
	return s.Name + " (" + strings.Join(parts, "; ") + ")"
}
