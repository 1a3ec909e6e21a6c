package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// replaceQuery upgrades the query that writes old in place (CREATE OR
// REPLACE ... AS SELECT): the query keeps its id, consumer group (so its
// offsets) and state, and runs the new plan from where the old one
// stopped. Only changes that keep the output topic's key and existing value
// columns, and the layout of the query's state, are allowed; anything else
// is refused with the reason. The caller holds e.ddl.
func (e *Engine) replaceQuery(ctx context.Context, st *ast.CreateAsSelect, old *catalog.Source, maxRecordBytes int) (Result, error) {
	kind := catalog.Stream
	if st.Kind == ast.Table {
		kind = catalog.Table
	}
	if old.Kind != kind {
		return Result{}, userError(st.NamePos, "Cannot upgrade data source: %s is a %s and cannot be replaced by a %s; DROP it first, or CREATE OR REPLACE %s", st.Name, kindWord(old.Kind), kindWord(kind), strings.ToUpper(kindWord(old.Kind)))
	}
	var oq *catalog.Query
	for _, q := range e.cat.Queries() {
		if q.Sink == st.Name && q.Plan != nil && q.Plan.Sink != nil && !strings.HasPrefix(q.ID, "INSERTQUERY") {
			oq = q
		}
	}
	if oq == nil {
		return Result{}, userError(st.NamePos, "Cannot upgrade data source: %s was not created by a CREATE ... AS SELECT query, so there is no query to replace; DROP it and create it again", st.Name)
	}
	if err := planning(ctx); err != nil {
		return Result{}, err
	}
	plan, err := planner.PlanSelect(e.cat, st.Query, planner.QueryOptions{
		QueryID: oq.ID, Sink: st.Name, SinkPos: st.NamePos, SinkProps: st.Props, OffsetReset: oq.Plan.OffsetReset, SinkKind: kind,
		InternalPrefix: e.internalPrefix(),
		Ctx:            ctx,
	})
	if err != nil {
		return Result{}, err
	}
	plan.Sink.SQL = st.SQL()
	if err := e.checkTopic(propPos(st.Props, "KAFKA_TOPIC", st.NamePos), useWrite, plan.Sink.Topic); err != nil {
		return Result{}, err
	}
	plan.Sink.Partitions, plan.Graph.Sink.Partitions = old.Partitions, old.Partitions
	// The plan's physical part lists the sink topic as it is.
	if err := topology.Complete(plan.Graph); err != nil {
		return Result{}, internal("cannot plan query %s: %v", oq.ID, err)
	}
	if reason := upgradeProblem(oq.Plan, plan.Graph, old, plan.Sink); reason != "" {
		return Result{}, userError(st.Pos, "Cannot upgrade query %s of %s: %s. Queries may change filters and add value columns at the end of the projection; for other changes create a new %s and TERMINATE %s.", oq.ID, st.Name, reason, kindWord(kind), oq.ID)
	}
	// Stopping the old version commits the statement.
	if ctx, err = commit(ctx); err != nil {
		return Result{}, err
	}
	e.mu.Lock()
	rq := e.running[oq.ID]
	delete(e.running, oq.ID)
	e.mu.Unlock()
	if rq != nil {
		if err := rq.Stop(); err != nil {
			e.log.Warn("the query being replaced had failed", "query", oq.ID, "err", err)
		}
	}
	q := &catalog.Query{ID: oq.ID, SQL: st.SQL(), Sink: st.Name, State: oq.State, Plan: plan.Graph, Guarantee: oq.Guarantee, MaxRecordBytes: oq.MaxRecordBytes, Compression: oq.Compression}
	if maxRecordBytes > 0 {
		// The session's sluice.max.record.bytes applies to the new version.
		q.MaxRecordBytes = maxRecordBytes
	}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.ReplaceQuery, Query: q, Source: plan.Sink}); err != nil {
		return Result{}, &internalError{err}
	}
	if q.State == catalog.Running {
		if err := e.startPersistent(ctx, q); err != nil {
			return Result{}, internal("query %s was replaced but could not start: %v", q.ID, err)
		}
	}
	return Result{Kind: ResultStatus, Message: "Replaced query with ID " + q.ID, QueryID: q.ID}, nil
}

// upgradeProblem says why the query plan from cannot be replaced by to in
// place, or returns "" when it can.
func upgradeProblem(from, to *topology.Graph, fromSink, toSink *catalog.Source) string {
	switch {
	case from.Source.Name != to.Source.Name:
		return fmt.Sprintf("it reads %s, the new query reads %s; an upgrade must read the same source", from.Source.Name, to.Source.Name)
	case from.Sink.Topic != to.Sink.Topic:
		return fmt.Sprintf("it writes topic %s, the new query writes %s", from.Sink.Topic, to.Sink.Topic)
	case from.Sink.KeyFormat != to.Sink.KeyFormat || from.Sink.ValueFormat != to.Sink.ValueFormat:
		return fmt.Sprintf("the output formats change from %s/%s to %s/%s", from.Sink.KeyFormat, from.Sink.ValueFormat, to.Sink.KeyFormat, to.Sink.ValueFormat)
	}
	if !sameColumns(fromSink.Key, toSink.Key) {
		return fmt.Sprintf("the key changes from (%s) to (%s)", columnList(fromSink.Key), columnList(toSink.Key))
	}
	if len(toSink.Value) < len(fromSink.Value) || !sameColumns(fromSink.Value, toSink.Value[:len(fromSink.Value)]) {
		return fmt.Sprintf("the value columns (%s) would become (%s): existing columns must keep their name, type and place", columnList(fromSink.Value), columnList(toSink.Value))
	}
	a, b := shapeSteps(from), shapeSteps(to)
	if len(a) != len(b) {
		return "it changes how rows are keyed, exploded or aggregated (" + stepKinds(a) + " becomes " + stepKinds(b) + "), which the stored state and output keys depend on"
	}
	for i := range a {
		x, _ := json.Marshal(stripSchema(a[i]))
		y, _ := json.Marshal(stripSchema(b[i]))
		if flatChains(x) != flatChains(y) {
			return fmt.Sprintf("it changes its %s step, which the stored state and output keys depend on", strings.ToUpper(string(a[i].Kind)))
		}
	}
	return ""
}

// shapeSteps are the steps whose change would invalidate a query's state or
// re-key its output: everything but filters and projections.
func shapeSteps(g *topology.Graph) []topology.Step {
	var out []topology.Step
	for _, st := range g.Steps {
		if st.Kind != topology.Filter && st.Kind != topology.Project {
			out = append(out, st)
		}
	}
	return out
}

func stripSchema(st topology.Step) topology.Step {
	st.Schema = nil
	return st
}

func stepKinds(steps []topology.Step) string {
	if len(steps) == 0 {
		return "none"
	}
	parts := make([]string, len(steps))
	for i, st := range steps {
		parts[i] = strings.ToUpper(string(st.Kind))
	}
	return strings.Join(parts, ", ")
}

func sameColumns(a, b []types.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type.String() != b[i].Type.String() {
			return false
		}
	}
	return true
}

func columnList(cols []types.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "`" + c.Name + "` " + c.Type.String()
	}
	return strings.Join(parts, ", ")
}

// chainOps are the operators whose chains the binder makes one node of.
var chainOps = map[string]bool{"AND": true, "OR": true, "ADD": true, "MUL": true, "CONCAT": true}

// flatChains is the JSON b of a step with every left-nested chain of one
// associative operator, ((a + b) + c), merged into one node (a + b + c),
// as the binder builds chains now: a query stored before it did compares
// equal to the same query planned today.
func flatChains(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	// An explicit stack: plans hold deep trees.
	stack := []any{v}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n := n.(type) {
		case map[string]any:
			if op, _ := n["op"].(string); chainOps[op] {
				for {
					args, _ := n["args"].([]any)
					if len(args) == 0 {
						break
					}
					first, ok := args[0].(map[string]any)
					if !ok || first["op"] != op {
						break
					}
					inner, _ := first["args"].([]any)
					n["args"] = append(append([]any{}, inner...), args[1:]...)
				}
			}
			for _, c := range n {
				stack = append(stack, c)
			}
		case []any:
			stack = append(stack, n...)
		}
	}
	out, _ := json.Marshal(v)
	return string(out)
}
