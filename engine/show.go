package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// This file answers the listing and description statements (SHOW,
// DESCRIBE, EXPLAIN) with api entities, which the typed calls of api.go
// give too.

func entity(en api.Entity) Result { return Result{Kind: ResultEntity, Entity: en} }

func (e *Engine) show(ctx context.Context, s *Session, st *ast.Show) (Result, error) {
	switch st.What {
	case ast.ShowStreams, ast.ShowTables:
		kind := api.SourceStream
		if st.What == ast.ShowTables {
			kind = api.SourceTable
		}
		return entity(&api.SourceList{Kind: kind, Extended: st.Extended, Sources: e.Sources(kind)}), nil
	case ast.ShowQueries:
		return entity(&api.QueryList{Extended: st.Extended, Cluster: e.cluster != nil, Queries: e.Queries(ctx)}), nil
	case ast.ShowTopics:
		topics, err := e.listTopics(ctx, st.Extended)
		if err != nil {
			return Result{}, err
		}
		return entity(&api.TopicList{All: st.Extended, Topics: topics}), nil
	case ast.ShowProperties:
		return entity(e.properties(s)), nil
	case ast.ShowVariables:
		l := &api.VariableList{}
		names := make([]string, 0, len(s.Variables))
		for k := range s.Variables {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			l.Variables = append(l.Variables, api.Variable{Name: k, Value: s.Variables[k]})
		}
		return entity(l), nil
	case ast.ShowTypes:
		l := &api.TypeList{}
		for _, n := range e.cat.TypeNames() {
			typ, _ := e.cat.Type(n)
			l.Types = append(l.Types, api.NamedType{Name: n, Type: typ})
		}
		return entity(l), nil
	case ast.ShowFunctions:
		return entity(&api.FunctionList{Functions: functionList()}), nil
	}
	return Result{}, userError(st.Pos, "%s is not supported yet", statementName(st))
}

// properties lists the properties Sluice uses with their effective values
// in session s and where each comes from, then the others s sets (see
// effectiveProperties).
func (e *Engine) properties(s *Session) *api.PropertyList {
	return &api.PropertyList{Properties: e.effectiveProperties(s)}
}

// listTopics lists the Kafka topics; internal ones only with all.
func (e *Engine) listTopics(ctx context.Context, all bool) ([]api.Topic, error) {
	topics, err := e.cfg.Kafka.ListTopics(ctx)
	if err != nil {
		return nil, internal("cannot list topics: %v", err)
	}
	out := make([]api.Topic, 0, len(topics))
	for _, tp := range topics {
		if all || !strings.HasPrefix(tp.Name, "_") {
			out = append(out, api.Topic{Name: tp.Name, Partitions: tp.Partitions, ReplicationFactor: int(tp.ReplicationFactor)})
		}
	}
	return out, nil
}

// queryStatus is a persistent query's status as SHOW QUERIES prints it.
func (e *Engine) queryStatus(id string) string {
	e.mu.Lock()
	rq := e.running[id]
	e.mu.Unlock()
	if q, ok := e.cat.Query(id); ok && q.State == catalog.Paused {
		return "PAUSED"
	}
	if rq == nil {
		return "NOT_RUNNING"
	}
	if err := rq.Err(); err != nil {
		return "ERROR: " + err.Error()
	}
	if restoring, pct := rq.Restoring(); restoring {
		return fmt.Sprintf("RESTORING %d %%", pct)
	}
	return "RUNNING"
}

func (e *Engine) describe(ctx context.Context, st *ast.Describe) (Result, error) {
	d, ok := e.describeSource(ctx, st.Name, st.Extended)
	if !ok {
		return Result{}, userError(st.NamePos, "Could not find STREAM/TABLE '%s' in the Metastore\nSHOW STREAMS and SHOW TABLES list the sources.", st.Name)
	}
	return entity(d), nil
}

// describeSource describes the source name; extended adds its queries'
// figures and the cluster's ownership.
func (e *Engine) describeSource(ctx context.Context, name string, extended bool) (*api.SourceDescription, bool) {
	src, ok := e.cat.Source(name)
	if !ok {
		return nil, false
	}
	d := &api.SourceDescription{Source: e.sourceInfo(src), Extended: extended}
	for _, id := range d.Source.Writers {
		if q, ok := e.cat.Query(id); ok {
			d.Writers = append(d.Writers, e.persistentInfo(ctx, q, extended))
		}
	}
	for _, id := range d.Source.Readers {
		if q, ok := e.cat.Query(id); ok {
			d.Readers = append(d.Readers, e.persistentInfo(ctx, q, extended))
		}
	}
	if extended {
		d.Cluster = e.ownership()
	}
	return d, true
}

func (e *Engine) sourceInfo(src *catalog.Source) api.SourceInfo {
	si := api.SourceInfo{
		Name: src.Name, Kind: api.SourceKind(src.Kind), Topic: src.Topic, Partitions: src.Partitions,
		KeyFormat: src.KeyFormat, ValueFormat: src.ValueFormat,
		Timestamp: src.Timestamp, SQL: src.SQL, ReadOnly: src.IsSource,
		Writers: e.cat.Writers(src.Name), Readers: e.cat.Readers(src.Name),
	}
	if src.Window != nil {
		si.Window = src.Window.String()
		si.WindowType = windowType(src.Window)
	}
	for _, c := range src.Key {
		si.Columns = append(si.Columns, api.SourceColumn{Column: c, Role: api.RoleKey})
	}
	for _, c := range src.Value {
		si.Columns = append(si.Columns, api.SourceColumn{Column: c, Role: api.RoleValue})
	}
	for i, c := range src.Headers {
		si.Columns = append(si.Columns, api.SourceColumn{Column: c, Role: api.RoleHeader, Header: src.HeaderKeys[i]})
	}
	return si
}

// windowType is a windowed key's kind as ksqlDB names it: TUMBLING,
// HOPPING or SESSION.
func windowType(w *topology.KeyWindow) string {
	return strings.ToUpper(strings.Fields(w.String() + " ")[0])
}

// persistentInfo describes q; with stats, its figures and lag too (which
// asks Kafka for end offsets).
func (e *Engine) persistentInfo(ctx context.Context, q *catalog.Query, stats bool) api.QueryInfo {
	qi := api.QueryInfo{ID: q.ID, Type: api.Persistent, Status: e.queryStatus(q.ID), Sink: q.Sink, SQL: q.SQL,
		Sources: q.Sources(), Columns: q.Plan.Output, KeyColumns: q.Plan.KeyColumns, Guarantee: e.guaranteeOf(q)}
	qi.State, _, _ = strings.Cut(qi.Status, ":")
	qi.State, _, _ = strings.Cut(qi.State, " ")
	if q.Plan.Sink != nil {
		qi.SinkTopic = q.Plan.Sink.Topic
	}
	if e.cluster != nil {
		qi.Partitions = e.ownership()
	}
	e.mu.Lock()
	rq := e.running[q.ID]
	e.mu.Unlock()
	if rq != nil {
		qi.Running = true
		qi.Stats = queryStats(ctx, rq, stats)
	}
	return qi
}

func (e *Engine) pushInfo(ctx context.Context, id string) (api.QueryInfo, bool) {
	e.mu.Lock()
	tq := e.transient[id]
	e.mu.Unlock()
	if tq == nil {
		return api.QueryInfo{}, false
	}
	g := tq.Graph()
	qi := api.QueryInfo{ID: id, Type: api.Push, Status: "RUNNING", State: "RUNNING", Sources: []string{g.Source.Name},
		Columns: g.Output, KeyColumns: g.KeyColumns, Guarantee: AtLeastOnce, Running: true, Stats: queryStats(ctx, tq, true)}
	if e.cluster != nil {
		qi.Partitions = "this server"
	}
	return qi, true
}

// queryStats are q's figures; with lag, its lag too.
func queryStats(ctx context.Context, q *exec.Query, lag bool) api.Stats {
	s := q.Stats()
	out := api.Stats{RecordsIn: s.RecordsIn, RecordsOut: s.RecordsOut, Filtered: s.Filtered, Errors: s.Errors, Late: s.Late,
		NullsDropped: s.NullsDropped, Restoring: s.Restoring, RestorePercent: s.RestorePercent, LastRecord: s.LastRecord}
	if lag {
		if l, err := q.Lag(ctx); err == nil {
			out.LagMeasured, out.LagRecords, out.LagSeconds = true, l.Records, l.Seconds
		}
	}
	return out
}

func (e *Engine) explain(ctx context.Context, s *Session, st *ast.Explain) (Result, error) {
	d, err := e.explanation(ctx, s, st)
	if err != nil {
		return Result{}, err
	}
	return entity(d), nil
}

func (e *Engine) explanation(ctx context.Context, s *Session, st *ast.Explain) (*api.QueryDescription, error) {
	if st.Statement != nil {
		if err := planning(ctx); err != nil {
			return nil, err
		}
		var q *ast.Query
		opts := planner.QueryOptions{OffsetReset: offsetReset(s), AggregateLimits: aggregateLimits(s), Ctx: ctx}
		switch inner := st.Statement.(type) {
		case *ast.Select:
			if inner.Query.Emit != ast.EmitChanges {
				return e.explainPull(ctx, st, inner)
			}
			q = inner.Query
		case *ast.CreateAsSelect:
			q = inner.Query
			opts.Sink, opts.SinkPos, opts.SinkProps = inner.Name, inner.NamePos, inner.Props
			opts.InternalPrefix = e.internalPrefix()
			prefix, kind := "CSAS", catalog.Stream
			if inner.Kind == ast.Table {
				prefix, kind = "CTAS", catalog.Table
			}
			opts.QueryID, opts.SinkKind = e.cat.NextQueryID(prefix, inner.Name), kind
		default:
			return nil, userError(st.Statement.Position(), "EXPLAIN takes a query id, a SELECT or a CREATE ... AS SELECT")
		}
		plan, err := planner.PlanSelect(e.cat, q, opts)
		if err != nil {
			return nil, err
		}
		return &api.QueryDescription{Statement: st.Statement.SQL(), Plan: planLines(plan.Graph), Topology: topologyOf(plan.Graph)}, nil
	}
	id, ok := e.findQuery(st.QueryID)
	q, _ := e.cat.Query(id)
	if !ok {
		return nil, userError(st.Pos, "Query with id:%s does not exist, use SHOW QUERIES to view the full set of queries.", st.QueryID)
	}
	qi := e.persistentInfo(ctx, q, true)
	return &api.QueryDescription{Query: &qi, Plan: planLines(q.Plan), Topology: topologyOf(q.Plan)}, nil
}

// topologyOf is g's processing topology as a value.
func topologyOf(g *topology.Graph) *api.Topology {
	d := g.Describe()
	out := &api.Topology{Unknown: d.Unknown}
	for _, s := range d.Stages {
		as := api.TopologyStage{ID: s.ID, Right: s.Right, JoinStage: s.JoinStage, Inside: s.Inside,
			Source: s.Source, SourceRole: s.SourceRole, SourcePartitions: s.SourcePartitions,
			Sink: s.Sink, SinkRole: string(s.SinkRole), SinkPartitions: s.SinkPartitions, Output: s.Output,
			TableRows: s.TableRows, Joins: s.Joins}
		for _, n := range s.Nodes {
			an := api.TopologyNode{Operator: n.Operator, Details: n.Details}
			for _, st := range n.Stores {
				an.Stores = append(an.Stores, api.TopologyStore{Name: st.Name, Role: string(st.Role), Key: st.Key, Value: st.Value,
					Windowed: st.Window != nil, Changelog: st.Changelog})
			}
			as.Nodes = append(as.Nodes, an)
		}
		out.Stages = append(out.Stages, as)
	}
	for _, t := range d.Topics {
		out.Topics = append(out.Topics, api.TopologyTopic{Name: t.Name, Role: string(t.Role), Partitions: t.Partitions, Config: t.Config})
	}
	return out
}

// planLines is g's execution plan as a value.
func planLines(g *topology.Graph) []api.PlanLine {
	lines := g.Plan()
	out := make([]api.PlanLine, len(lines))
	for i, l := range lines {
		out[i] = api.PlanLine(l)
	}
	return out
}
