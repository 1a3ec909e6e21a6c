package engine

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// pushBuffer is how many rows a push query holds for a slow reader before
// its tasks wait.
const pushBuffer = 1024

func (e *Engine) selectQuery(ctx context.Context, s *Session, st *ast.Select) (Result, error) {
	if st.Query.Emit != ast.EmitChanges {
		return e.pullQuery(ctx, s, st)
	}
	release, err := e.reservePush()
	if err != nil {
		return Result{}, err
	}
	started := false
	defer func() {
		if !started {
			release()
		}
	}()
	if err := planning(ctx); err != nil {
		return Result{}, err
	}
	plan, err := planner.PlanSelect(e.cat, st.Query, planner.QueryOptions{OffsetReset: offsetReset(s), AggregateLimits: aggregateLimits(s), Defaults: defaults(s), Ctx: ctx})
	if err != nil {
		return Result{}, err
	}
	if writer, ok := e.scalableWriter(s, st.Query); ok {
		res, ok, err := e.scalablePush(plan, writer, release)
		if err != nil {
			return Result{}, err
		}
		if ok {
			started = true
			return res, nil
		}
	}
	g := plan.Graph
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return Result{}, internal("the server is shutting down")
	}
	e.pushSeq++
	id := fmt.Sprintf("transient_%s_%d", g.Source.Name, e.pushSeq)
	e.mu.Unlock()
	g.QueryID = id
	if g.LimitReached(0) {
		// LIMIT 0 (or less, as ksqlDB takes it): the query ends at once,
		// its limit reached, and reads nothing.
		started = true
		var once sync.Once
		closeFn := func() { once.Do(release) }
		next := func(context.Context) ([]any, error) { return nil, io.EOF }
		end := func() api.EndReason { return api.EndLimit }
		return Result{Kind: ResultRows, Stream: api.NewStream(id, api.Columns(g.Output, g.KeyColumns), next, closeFn, end), QueryID: id}, nil
	}

	rows := make(chan api.Row, pushBuffer)
	stop := make(chan struct{})
	var mu sync.Mutex
	var sent int64
	// send hands a row to the reader; a tombstone (a delete of a table's
	// key) keeps only the columns plan.Tombstone names, as ksqlDB's.
	send := func(ctx context.Context, row []any, tombstone bool) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if g.LimitReached(sent) {
			return false, nil
		}
		cp := append([]any(nil), row...)
		if tombstone {
			for i := range cp {
				if i >= len(plan.Tombstone) || !plan.Tombstone[i] {
					cp[i] = nil
				}
			}
		}
		select {
		case rows <- api.Row{Values: cp, Tombstone: tombstone}:
		case <-stop:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
		sent++
		return !g.LimitReached(sent), nil
	}
	out := func(ctx context.Context, row []any) (bool, error) { return send(ctx, row, false) }
	deps := exec.Deps{Kafka: e.cfg.Kafka, Registry: e.cfg.Registry, ProcessingLog: e.processing, MaxRecordBytes: e.cfg.MaxRecordBytes, Logger: e.log.With("query", id), Now: e.cfg.Now}
	// A push query whose rows are a table's streams its deletes too.
	deps.Deletes = func(ctx context.Context, row []any) (bool, error) { return send(ctx, row, true) }
	if g.Physical == nil {
		if err := topology.Complete(g); err != nil {
			return Result{}, internal("cannot plan push query: %v", err)
		}
	}
	if shareable(g) {
		// Live-tail queries on one source share one read of its topic.
		deps.Kafka = e.shared.clientFor(g.Source.Topic)
	}
	if len(g.Physical.Stores) > 0 {
		// A push query's state lives only as long as its stream, under a
		// name no other run uses, and has no changelog.
		deps.State = e.store
		deps.StateNamespace = fmt.Sprintf("%s_%d", id, time.Now().UnixNano())
	}
	// Repartition topics of a push query live as long as its stream: they
	// are named here, one per run, and the plan completed again so that
	// its physical part lists them.
	var repartitions []string
	dropTopics := func() { e.dropTopics(context.WithoutCancel(ctx), "push query", repartitions) }
	if named := namePushRepartitions(g, e.internalPrefix()+id, time.Now().UnixNano()); named > 0 {
		if err := topology.Complete(g); err != nil {
			return Result{}, internal("cannot plan the repartition topics of a push query: %v", err)
		}
	}
	for _, t := range g.Physical.Topics {
		if t.Role != topology.RepartitionTopic {
			continue
		}
		if err := e.createTopic(ctx, kafka.TopicSpec{Name: t.Name, Partitions: t.Partitions, Configs: t.Config}); err != nil {
			dropTopics()
			return Result{}, internal("cannot create the repartition topic %s of a push query: %v", t.Name, err)
		}
		repartitions = append(repartitions, t.Name)
	}
	q, err := exec.Start(ctx, g, deps, out)
	if err != nil {
		if deps.StateNamespace != "" {
			_ = e.store.DropQuery(deps.StateNamespace)
		}
		dropTopics()
		return Result{}, internal("cannot start push query: %v", err)
	}
	e.mu.Lock()
	e.transient[id] = q
	if deps.StateNamespace != "" {
		e.pushState[id] = deps.StateNamespace
	}
	if len(repartitions) > 0 {
		e.pushTopics[id] = repartitions
	}
	e.mu.Unlock()
	var once sync.Once
	var closed atomic.Bool
	closeFn := func() {
		once.Do(func() {
			closed.Store(true)
			close(stop)
			_ = q.Stop()
			e.mu.Lock()
			delete(e.transient, id)
			_, owned := e.pushState[id]
			delete(e.pushState, id)
			_, ownsTopics := e.pushTopics[id]
			delete(e.pushTopics, id)
			e.mu.Unlock()
			if owned {
				if err := e.store.DropQuery(deps.StateNamespace); err != nil {
					e.log.Warn("cannot delete the state of a push query", "query", id, "err", err)
				}
			}
			if ownsTopics {
				dropTopics()
			}
			release()
		})
	}
	next := func(ctx context.Context) (api.Row, error) {
		select {
		case r := <-rows:
			return r, nil
		default:
		}
		select {
		case r := <-rows:
			return r, nil
		case <-q.Done():
			// Rows sent before the query ended are still delivered.
			select {
			case r := <-rows:
				return r, nil
			default:
			}
			if err := q.Err(); err != nil {
				return api.Row{}, err
			}
			return api.Row{}, io.EOF
		case <-ctx.Done():
			return api.Row{}, ctx.Err()
		}
	}
	end := func() api.EndReason {
		switch {
		case closed.Load():
			return api.EndClosed
		case q.Err() != nil:
			return api.EndError
		case g.Limit != nil:
			return api.EndLimit
		}
		return api.EndCompleted
	}
	started = true
	return Result{Kind: ResultRows, Stream: api.NewRowStream(id, api.Columns(g.Output, g.KeyColumns), next, closeFn, end), QueryID: id}, nil
}

// namePushRepartitions names the topics of push query g's Repartition
// steps, which its plan leaves unnamed (a push query's run owns them):
// prefix, the run's stamp and "-repartition", numbered after the first (a
// join may repartition both sides). It finds them as the physical plan
// splits g: a stage that ends with a Repartition step writes its topic.
// It returns how many it named.
func namePushRepartitions(g *topology.Graph, prefix string, stamp int64) int {
	n := 0
	for _, s := range g.Physical.Stages {
		sg := g.StagePath(s.Path)
		if sg == nil || s.To < 1 || s.To > len(sg.Steps) {
			continue
		}
		st := &sg.Steps[s.To-1]
		if st.Kind != topology.Repartition || st.Topic != "" {
			continue
		}
		st.Topic = fmt.Sprintf("%s_%d-repartition", prefix, stamp)
		if n > 0 {
			st.Topic = fmt.Sprintf("%s_%d-repartition-%d", prefix, stamp, n)
		}
		n++
	}
	return n
}
