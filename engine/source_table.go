package engine

import (
	"context"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// createSourceTable declares a CREATE SOURCE TABLE and starts the query
// that materializes it in the state store, as ksqlDB does, so that pull
// queries can read it: CST_<NAME>_<N>, reading the topic from the start.
// Its rows are read back with exec.MaterializedTables.
func (e *Engine) createSourceTable(ctx context.Context, st *ast.CreateSource, src *catalog.Source) error {
	if _, ok := e.cat.Source(src.Name); ok {
		return userError(st.NamePos, "cannot replace source table %s: it is materialized by a query; DROP it first", src.Name)
	}
	id := e.cat.NextQueryID("CST", src.Name)
	g, err := planner.PlanMaterialization(src, id, e.internalPrefix())
	if err != nil {
		return internal("cannot plan the query that materializes source table %s: %v", src.Name, err)
	}
	q := &catalog.Query{ID: id, SQL: st.SQL(), Sink: src.Name, State: catalog.Running, Plan: g}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.CreateQuery, Query: q, Source: src}); err != nil {
		return &internalError{err}
	}
	if err := e.startPersistent(ctx, q); err != nil {
		return internal("source table %s was created but the query %s that materializes it could not start: %v", src.Name, id, err)
	}
	return nil
}

// materializations returns the ids of the queries that materialize source
// name (a CREATE SOURCE TABLE): dropping the source terminates them.
func (e *Engine) materializations(name string) []string {
	var out []string
	for _, q := range e.cat.Queries() {
		if q.Sink == name && q.Plan != nil && exec.IsMaterialization(q.Plan) {
			out = append(out, q.ID)
		}
	}
	return out
}

// terminateQuery stops the persistent query id, removes it from the
// catalog and deletes its state, changelog topics and consumer group.
func (e *Engine) terminateQuery(ctx context.Context, id string) error {
	e.mu.Lock()
	rq := e.running[id]
	delete(e.running, id)
	e.mu.Unlock()
	if rq != nil {
		_ = rq.Stop()
	}
	cq, _ := e.cat.Query(id)
	e.taps.end(id, terminatedWriter(id, cq))
	if err := e.write(ctx, &catalog.Command{Kind: catalog.TerminateQuery, QueryID: id}); err != nil {
		return &internalError{err}
	}
	e.dropState(ctx, id, cq)
	if cq != nil && e.guaranteeOf(cq) == ExactlyOnceV2 {
		e.dropTopics(ctx, "terminated exactly-once query", []string{e.positionsTopic(id)})
	}
	if err := e.cfg.Kafka.DeleteGroup(ctx, e.groupOf(id)); err != nil {
		e.log.Warn("cannot delete the consumer group of a terminated query", "query", id, "err", err)
	}
	return nil
}
