package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// pullQuery runs a SELECT without EMIT CHANGES: on a table it reads the
// state its persistent query last committed; on a stream it reads the
// topic from its start to the end offsets it has when the query starts.
// Either way the rows come back as one table.
func (e *Engine) pullQuery(ctx context.Context, s *Session, st *ast.Select) (Result, error) {
	rows, err := e.pullRows(ctx, s, st)
	if err != nil {
		return Result{}, err
	}
	return Result{Kind: ResultRows, Stream: rows}, nil
}

// pullRows runs a pull query and returns its rows as a finished stream.
func (e *Engine) pullRows(ctx context.Context, s *Session, st *ast.Select) (*Stream, error) {
	var rows [][]any
	var plan *planner.PullPlan
	limited := false
	_, err := e.pull(ctx, s, st, func(row []any) bool {
		rows = append(rows, append([]any(nil), row...))
		limited = plan.Graph.LimitReached(int64(len(rows)))
		return true
	}, func(p *planner.PullPlan) { plan = p })
	if err != nil {
		return nil, err
	}
	reason := api.EndCompleted
	if limited || plan.Graph.LimitReached(0) {
		reason = api.EndLimit
	}
	out := api.NewRows(pullColumns(plan), rows, reason)
	out.ID, out.Table = e.pullQueryID(), plan.Query != nil
	return out, nil
}

// pullQueryID names a pull query in the API's headers, as ksqlDB names
// them: query_ and a number no other pull query of this server had.
func (e *Engine) pullQueryID() string {
	return fmt.Sprintf("query_%d", e.cfg.Now().UnixMilli()*1000+e.pullSeq.Add(1)%1000)
}

// pullColumns is a pull query's schema. On a table, the columns named as
// the table's key columns (and, for a windowed table, WINDOWSTART and
// WINDOWEND) are its key, as ksqlDB marks them; on a stream there is no
// key.
func pullColumns(plan *planner.PullPlan) []api.Column {
	cols := api.Columns(plan.Graph.Output, 0)
	if plan.Query == nil {
		return cols
	}
	keys := map[string]bool{}
	for _, c := range plan.Source.Key {
		keys[c.Name] = true
	}
	for i, c := range cols {
		switch {
		case keys[c.Name]:
			cols[i].Role = api.RoleKey
		case plan.Source.Window != nil && c.Name == "WINDOWSTART":
			cols[i].Role = api.RoleWindowStart
		case plan.Source.Window != nil && c.Name == "WINDOWEND":
			cols[i].Role = api.RoleWindowEnd
		}
	}
	return cols
}

// pull runs a pull query: add receives its rows (valid during the call)
// up to its LIMIT, after planned received its plan. It returns the output
// columns.
func (e *Engine) pull(ctx context.Context, s *Session, st *ast.Select, add func(row []any) bool, planned func(*planner.PullPlan)) ([]types.Column, error) {
	if err := planning(ctx); err != nil {
		return nil, err
	}
	plan, err := planner.PlanPull(e.cat, st.Query, pullOptions(ctx, s))
	if err != nil {
		return nil, err
	}
	g := plan.Graph
	if planned != nil {
		planned(plan)
	}
	if g.LimitReached(0) {
		// LIMIT 0: no row to read.
		return g.Output, nil
	}
	n := int64(0)
	limited := func(row []any) bool {
		n++
		return add(row) && !g.LimitReached(n)
	}
	if plan.Query == nil {
		err = e.pullStream(ctx, g, limited)
	} else {
		err = e.pullTable(ctx, s, st.SQL(), plan, limited)
	}
	return g.Output, err
}

// explainPull shows what a pull query reads and the steps it runs.
func (e *Engine) explainPull(ctx context.Context, ex *ast.Explain, st *ast.Select) (*api.QueryDescription, error) {
	plan, err := planner.PlanPull(e.cat, st.Query, pullOptions(ctx, nil))
	if err != nil {
		return nil, err
	}
	d := &api.QueryDescription{Statement: ex.Statement.SQL(), Pull: true, Reads: api.PullReads{Source: plan.Source.Name}, Plan: planLines(plan.Graph)}
	if plan.Query != nil {
		d.Reads.Query, d.Reads.Lookup = plan.Query.ID, plan.Lookup.String()
	}
	return d, nil
}

// pullTable reads the committed state of the table's query and runs the
// pull query's filter and projection over its rows.
//
// In a cluster it reads the partitions this server owns, and gathers the
// others' rows from their owners (see ClusterConfig.Forward), unless the
// query was forwarded here.
func (e *Engine) pullTable(ctx context.Context, s *Session, sql string, plan *planner.PullPlan, add func(row []any) bool) error {
	qg := plan.Query.Plan
	g := plan.Graph
	bounds := scanBounds(plan.Lookup)
	var forward []string
	if e.cluster != nil {
		a, ok := e.assignment()
		if !ok {
			return userError(plan.Pos, "This server has no partitions of %s assigned yet: the servers of the cluster are rebalancing. Run the pull query again in a few seconds.", plan.Source.Name)
		}
		bounds.Partitions = a.Owns
		if s == nil || s.Properties[PullLocalProperty] != "true" {
			forward = slices.DeleteFunc(a.Addresses(), func(addr string) bool { return addr == e.cluster.cfg.Address })
		}
	}
	e.mu.Lock()
	rq := e.running[plan.Query.ID]
	e.mu.Unlock()
	if rq != nil {
		// Answer once the state a restart restores from the changelog is
		// all there.
		if err := rq.WaitRestored(ctx); err != nil {
			_, pct := rq.Restoring()
			return userError(plan.Pos, "The state of %s is still being restored from its changelog (%d %%). Run the pull query again once SHOW QUERIES shows %s RUNNING.", plan.Source.Name, pct, plan.Query.ID)
		}
	}
	parts, err := e.cfg.Kafka.ListOffsets(ctx, qg.Source.Topic)
	if err != nil {
		return internal("cannot list the partitions of %s: %v", qg.Source.Topic, err)
	}
	if len(forward) > 0 && bounds.Keys != nil {
		forward = e.keyOwners(qg, bounds.Keys, int32(len(parts)), forward)
	}
	pipe, err := exec.NewPipeline(g.Steps, g.Source.Schema(), len(g.Source.Key))
	if err != nil {
		return internal("cannot run pull query: %v", err)
	}
	readBack, err := readBackValues(plan)
	if err != nil {
		return internal("cannot read the state of %s: %v", plan.Query.ID, err)
	}
	more := true
	err = exec.ScanTable(ctx, e.store, qg, int32(len(parts)), bounds, func(ctx context.Context, b *exec.Batch) (bool, error) {
		if readBack != nil {
			for i := range b.Len() {
				if err := readBack(b.Row(i)); err != nil {
					return false, err
				}
			}
		}
		err := pipe.Run(ctx, b, func(row []any, _ int64) bool {
			more = add(row)
			return more
		})
		return more, err
	})
	if err != nil {
		return internal("cannot read the state of %s: %v", plan.Query.ID, err)
	}
	return e.gather(ctx, s, sql, plan, forward, func(row []any) bool {
		more = more && add(row)
		return more
	})
}

// readBackValues returns what turns the value columns of a row of the
// table's state into what its value format reads back (see
// format.ReadBack), as ksqlDB keeps a table's rows in its state in that
// format; nil when the format keeps every value.
func readBackValues(plan *planner.PullPlan) (func(row []any) error, error) {
	src := plan.Source
	rb, err := format.ReadBack(src.ValueFormat, src.Value, src.ValueProps)
	if err != nil || rb == nil {
		return nil, err
	}
	at := map[string]int{}
	for i, c := range plan.Graph.Source.Schema() {
		at[c.Name] = i
	}
	idx := make([]int, len(src.Value))
	for i, c := range src.Value {
		j, ok := at[c.Name]
		if !ok {
			return nil, fmt.Errorf("no column %s in the rows of %s", c.Name, src.Name)
		}
		idx[i] = j
	}
	vals := make([]any, len(idx))
	return func(row []any) error {
		for i, j := range idx {
			vals[i] = row[j]
		}
		if err := rb(vals); err != nil {
			return err
		}
		for i, j := range idx {
			row[j] = vals[i]
		}
		return nil
	}, nil
}

// keyOwners narrows the servers to forward a key lookup to (addrs) to
// the owners of the keys' partitions, when the table's placement of keys
// is known (see exec.KeyPartitioner); else it returns addrs.
func (e *Engine) keyOwners(qg *topology.Graph, keys [][]any, n int32, addrs []string) []string {
	place, ok := exec.KeyPartitioner(qg)
	a, assigned := e.assignment()
	if !ok || !assigned {
		return addrs
	}
	need := map[string]bool{}
	for _, k := range keys {
		p, err := place(k, n)
		if err != nil {
			return addrs
		}
		need[a.Owner(p)] = true
	}
	return slices.DeleteFunc(addrs, func(addr string) bool { return !need[addr] })
}

// gather runs a pull query on each server at addrs, which answer from
// their own partitions, and hands their rows to add until it returns
// false.
func (e *Engine) gather(ctx context.Context, s *Session, sql string, plan *planner.PullPlan, addrs []string, add func(row []any) bool) error {
	if len(addrs) == 0 {
		return nil
	}
	fwd := e.cluster.cfg.Forward
	if fwd == nil {
		return userError(plan.Pos, "Partitions of %s are owned by other servers (%s) and this server cannot forward pull queries to them. Run the pull query against each server, or start the servers with their gRPC API.", plan.Source.Name, strings.Join(addrs, ", "))
	}
	fs := NewSession()
	if s != nil {
		maps.Copy(fs.Properties, s.Properties)
		maps.Copy(fs.Variables, s.Variables)
	}
	fs.Properties[PullLocalProperty] = "true"
	for _, addr := range addrs {
		res, err := fwd(ctx, addr, fs, sql)
		if err != nil {
			return internal("cannot read the partitions of %s that %s owns: %v", plan.Source.Name, addr, err)
		}
		for _, row := range res.Rows {
			if !add(row) {
				return nil
			}
		}
	}
	return nil
}

// scanBounds turns what the planner found in WHERE into what the state
// reader checks.
func scanBounds(l planner.Lookup) exec.Bounds {
	b := exec.Bounds{Keys: l.Keys}
	if r := l.Range; r != nil {
		b.Key = func(k []any) bool { return len(k) == 1 && r.Contains(k[0]) }
	}
	if ws, we := l.WindowStart, l.WindowEnd; ws != nil || we != nil {
		b.Window = func(start, end int64) bool { return ws.Contains(start) && we.Contains(end) }
	}
	return b
}

// pullStream runs g as a push query over the topic from its start to its
// end offsets now, then ends.
func (e *Engine) pullStream(ctx context.Context, g *topology.Graph, add func(row []any) bool) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return internal("the server is shutting down")
	}
	e.pushSeq++
	g.QueryID = fmt.Sprintf("transient_%s_%d", g.Source.Name, e.pushSeq)
	e.mu.Unlock()
	var mu sync.Mutex
	out := func(_ context.Context, row []any) (bool, error) {
		// Tasks of several partitions call it at once.
		mu.Lock()
		defer mu.Unlock()
		return add(row), nil
	}
	bounds, err := e.cfg.Kafka.ListOffsets(ctx, g.Source.Topic)
	if err != nil {
		return internal("cannot list the offsets of %s: %v", g.Source.Topic, err)
	}
	ends := make([]int64, len(bounds))
	for p, b := range bounds {
		ends[p] = b.End
	}
	deps := exec.Deps{Kafka: e.cfg.Kafka, Registry: e.cfg.Registry, ProcessingLog: e.processing, MaxRecordBytes: e.cfg.MaxRecordBytes, Logger: e.log.With("query", g.QueryID), Now: e.cfg.Now, EndOffsets: ends}
	q, err := exec.Start(ctx, g, deps, out)
	if err != nil {
		return internal("cannot start pull query: %v", err)
	}
	select {
	case <-q.Done():
	case <-ctx.Done():
		_ = q.Stop()
		return ctx.Err()
	}
	if err := q.Err(); err != nil {
		return internal("pull query failed: %v", err)
	}
	return nil
}
