package exec

import (
	"fmt"

	"github.com/sluice-sql/sluice/internal/topology"
)

// internalFormat names the key and value format of repartition topics: a
// lossless encoding of the row's columns that only Sluice reads back (see
// internalCodec).
const internalFormat = "SLUICE_INTERNAL"

// stage is one stage of a running query, as the physical plan describes it
// (topology.Stage): the steps From up to To of the graph Path names, run
// as a graph of its own, and the state stores its tasks keep.
//
//	source ─▶ steps ─▶ Repartition ─▶ repartition topic ─▶ steps ─▶ sink
//	└────────────── stage 0 ─────────────┘ └───────────── stage 1 ───────┘
//
// A stage that ends with a Repartition step writes the repartition topic
// as its sink; the stage after it reads that topic as its source, from
// the beginning. Every stage keeps the query's id, so they share its
// consumer group and state namespace.
type stage struct {
	topology.Stage
	// g is the stage's graph: its source (the query's, a join's right
	// source or a repartition topic), its steps, and its sink (the
	// query's, a repartition topic, or none).
	g *topology.Graph
	// stores are the state stores the stage's tasks keep: its own and
	// those of the right inputs its joins take, which run inside its
	// tasks (in the order of the plan's Stores).
	stores []topology.Store
	// sides are the stages of those right inputs, in the order of g's
	// Join steps; joined says the stage is one of them.
	sides  []*stage
	joined bool
}

// checkPlan refuses a plan without its physical part: the engine upgrades
// stored plans when it reads them (topology.Upgrade).
func checkPlan(g *topology.Graph) error {
	if g.Physical == nil || g.Version < topology.Version {
		return fmt.Errorf("exec: plan of query %s is version %d; it needs topology.Upgrade", g.QueryID, g.Version)
	}
	return nil
}

// planStages builds the stages of g from its physical plan, by ID.
func planStages(g *topology.Graph) ([]*stage, error) {
	if err := checkPlan(g); err != nil {
		return nil, err
	}
	p := g.Physical
	out := make([]*stage, len(p.Stages))
	bad := func(format string, args ...any) error {
		return fmt.Errorf("exec: plan of query %s: "+format, append([]any{g.QueryID}, args...)...)
	}
	for i, ps := range p.Stages {
		if ps.ID != i {
			return nil, bad("stage %d has ID %d", i, ps.ID)
		}
		out[i] = &stage{Stage: ps}
	}
	for _, s := range out {
		for _, j := range s.Joins {
			// A right input's stages follow the stage joining it.
			if j <= s.ID || j >= len(out) || out[j].joined {
				return nil, bad("stage %d joins stage %d", s.ID, j)
			}
			out[j].joined = true
			s.sides = append(s.sides, out[j])
		}
	}
	for _, s := range out {
		base, err := stageBase(g, out, s)
		if err != nil {
			return nil, bad("stage %d: %v", s.ID, err)
		}
		if s.g, err = stageGraph(base, s.Stage); err != nil {
			return nil, bad("stage %d: %v", s.ID, err)
		}
		if n := len(joinSteps(s.g)); n != len(s.sides) {
			return nil, bad("stage %d has %d join steps and joins %d stages", s.ID, n, len(s.sides))
		}
	}
	for _, s := range out {
		keeps := map[int]bool{}
		var mark func(s *stage)
		mark = func(s *stage) {
			keeps[s.ID] = true
			for _, side := range s.sides {
				mark(side)
			}
		}
		mark(s)
		for _, st := range p.Stores {
			if keeps[st.Stage] {
				s.stores = append(s.stores, st)
			}
		}
	}
	for _, st := range p.Stores {
		if st.Stage < 0 || st.Stage >= len(out) {
			return nil, bad("store %s is kept by stage %d", st.Name, st.Stage)
		}
	}
	return out, nil
}

// stageBase returns the graph whose steps s runs, as a graph of the query:
// g itself, or the right input of a join step, with g's query id and, for
// the offset reset it names none of, that of the stage running the join
// step.
func stageBase(g *topology.Graph, stages []*stage, s *stage) (*topology.Graph, error) {
	if len(s.Path) == 0 {
		return g, nil
	}
	n := len(s.Path) - 1
	at := s.Path[n]
	for _, o := range stages[:s.ID] {
		if !pathEqual(o.Path, s.Path[:n]) || at < o.From || at >= o.To {
			continue
		}
		st := o.g.Steps[at-o.From]
		if st.Kind != topology.Join || st.Join == nil || st.Join.Right == nil {
			return nil, fmt.Errorf("step %d of stage %d is not a join", at, o.ID)
		}
		r := *st.Join.Right
		r.QueryID = g.QueryID
		if r.OffsetReset == "" {
			r.OffsetReset = o.g.OffsetReset
		}
		r.Sink = nil
		return &r, nil
	}
	return nil, fmt.Errorf("no stage runs step %d of the graph at %v", at, s.Path[:n])
}

func pathEqual(a, b []int) bool {
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

// stageGraph returns the graph of stage s of base (the graph its Path
// names): steps From up to To; the source is base's, or, after a
// Repartition step, the repartition topic it writes; the sink is the
// repartition topic of the Repartition step it ends with, or base's. A
// repartition topic is the one its step names, which the stages on
// either side of it agree on.
func stageGraph(base *topology.Graph, s topology.Stage) (*topology.Graph, error) {
	if s.From < 0 || s.To < s.From || s.To > len(base.Steps) {
		return nil, fmt.Errorf("steps %d to %d of %d", s.From, s.To, len(base.Steps))
	}
	g := &topology.Graph{QueryID: base.QueryID, Source: base.Source, Steps: base.Steps[s.From:s.To], OffsetReset: base.OffsetReset}
	if s.From > 0 {
		// The topic is the Repartition step's: the owner of a push query
		// names it after planning.
		rep := base.Steps[s.From-1]
		if rep.Kind != topology.Repartition {
			return nil, fmt.Errorf("starts after step %d, a %s step, not a repartition", s.From-1, rep.Kind)
		}
		g.Source = &topology.Source{
			Name: base.Source.Name, Topic: rep.Topic, Partitions: rep.Partitions,
			KeyFormat: internalFormat, ValueFormat: internalFormat,
			Key: rep.Schema[topology.PseudoColumns : topology.PseudoColumns+rep.Keys], Value: rep.Schema[topology.PseudoColumns+rep.Keys:],
		}
		// The topic holds only this query's rows: read all of them.
		g.OffsetReset = "earliest"
	}
	if n := len(g.Steps); n > 0 && g.Steps[n-1].Kind == topology.Repartition {
		rep := g.Steps[n-1]
		g.Sink = &topology.Sink{
			Name: rep.Topic, Topic: rep.Topic, Partitions: rep.Partitions,
			KeyFormat: internalFormat, ValueFormat: internalFormat,
			PlaceBy: rep.PlaceBy, PlaceProps: rep.PlaceProps,
		}
		g.Output, g.KeyColumns = rep.Schema[topology.PseudoColumns:], rep.Keys
		return g, nil
	}
	g.Sink, g.Output, g.KeyColumns, g.Limit = base.Sink, base.Output, base.KeyColumns, base.Limit
	return g, nil
}

// runStages returns the stages of g that run tasks of their own (all but
// the right inputs the joining stage's tasks run): the stages of the
// joins' right inputs first, then the query's own, whose last writes the
// query's output.
func runStages(stages []*stage) []*stage {
	var right, main []*stage
	for _, s := range stages {
		switch {
		case s.joined:
		case len(s.Path) > 0:
			right = append(right, s)
		default:
			main = append(main, s)
		}
	}
	return append(right, main...)
}

// mainStages returns the stages of the query's own graph, in order.
func mainStages(stages []*stage) []*stage {
	var out []*stage
	for _, s := range stages {
		if len(s.Path) == 0 {
			out = append(out, s)
		}
	}
	return out
}
