package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// Scalable push queries (ksqlDB's push queries v2): with
// ksql.query.push.v2.enabled, a push query that qualifies (see
// scalableWriter) is served from the rows the persistent query writing
// its source produces, through that query's tap, instead of a consumer
// of its own over the source's topic. Its WHERE and projection run over
// the tapped rows, laid out as the source's rows, in the reader's
// goroutine; the persistent query only copies each row it writes into
// the buffer of every subscriber.

// propPushV2 is ksqlDB's switch of scalable push queries, a server
// setting (Config.PushV2Enabled) a session or a request overrides.
const propPushV2 = "ksql.query.push.v2.enabled"

// ScalablePushBuffer is how many tapped rows a scalable push query holds
// for a slow reader (ksqlDB's ProcessingQueue holds 1000). A subscriber
// whose buffer is full when the persistent query writes a row is ended
// with ErrScalablePushBehind: the persistent query never waits for it.
const ScalablePushBuffer = 1000

// scalablePushPrefix starts the ids of scalable push queries, as ksqlDB's.
const scalablePushPrefix = "SCALABLE_PUSH_QUERY_"

// ErrScalablePushBehind ends a scalable push query whose reader fell
// ScalablePushBuffer rows behind the persistent query it reads.
var ErrScalablePushBehind = errors.New("Dropped rows")

// pushV2Enabled reports whether session s runs scalable push queries:
// its ksql.query.push.v2.enabled, else the server's.
func (e *Engine) pushV2Enabled(s *Session) bool {
	if v, ok := prop(s, propPushV2); ok {
		return strings.EqualFold(strings.TrimSpace(v), "true")
	}
	return e.cfg.PushV2Enabled
}

// scalableWriter returns the persistent query a scalable push query q of
// session s reads, or false when q does not qualify, as ksqlDB's
// ScalablePushUtil.isScalablePushQuery decides: the property is on, q
// reads one source (no join) without GROUP BY, WINDOW, HAVING or
// PARTITION BY, emits changes, starts at latest (auto.offset.reset,
// latest by default), refers to neither ROWPARTITION nor ROWOFFSET, and
// exactly one persistent query writes the source. A cluster's servers
// each hold the rows of their own partitions only, so a server of a
// cluster runs none. A query that does not qualify runs as a regular push
// query, as in ksqlDB.
func (e *Engine) scalableWriter(s *Session, q *ast.Query) (string, bool) {
	if !e.pushV2Enabled(s) || e.cluster != nil {
		return "", false
	}
	ref, ok := q.From.(*ast.TableRef)
	if !ok || len(q.GroupBy) > 0 || q.Window != nil || q.Having != nil || len(q.PartitionBy) > 0 || q.Emit != ast.EmitChanges {
		return "", false
	}
	if offsetReset(s) != "latest" || usesRowPosition(q) {
		return "", false
	}
	src, ok := e.cat.Source(ref.Name)
	if !ok {
		return "", false
	}
	writers := e.cat.Writers(src.Name)
	if len(writers) != 1 {
		return "", false
	}
	return writers[0], true
}

// usesRowPosition reports whether q's select list or WHERE refers to
// ROWPARTITION or ROWOFFSET, which the rows a persistent query writes do
// not have yet.
func usesRowPosition(q *ast.Query) bool {
	found := false
	check := func(x ast.Expr) bool {
		if c, ok := x.(*ast.ColumnRef); ok && (strings.EqualFold(c.Name, topology.RowPartition) || strings.EqualFold(c.Name, topology.RowOffset)) {
			found = true
		}
		return !found
	}
	for _, it := range q.Items {
		ast.Walk(it.Expr, check)
	}
	ast.Walk(q.Where, check)
	return found
}

// tapRunnable reports whether the plan of a qualifying query runs over
// tapped rows: one stage of stateless steps.
func tapRunnable(g *topology.Graph) bool {
	if g.Physical == nil || len(g.Physical.Stages) != 1 || len(g.Physical.Stores) > 0 || len(g.Physical.Topics) > 0 {
		return false
	}
	for _, st := range g.Steps {
		switch st.Kind {
		case topology.Filter, topology.Project, topology.FlatMap:
		default:
			return false
		}
	}
	return true
}

// scalablePush starts plan, which scalableWriter qualified, as a scalable
// push query over the tap of persistent query writer; ok is false when
// its plan cannot run over tapped rows, and the caller runs it as a
// regular push query. release gives back its push query place.
func (e *Engine) scalablePush(plan *planner.QueryPlan, writer string, release func()) (Result, bool, error) {
	g := plan.Graph
	if g.Physical == nil {
		if err := topology.Complete(g); err != nil {
			return Result{}, false, nil
		}
	}
	if !tapRunnable(g) {
		return Result{}, false, nil
	}
	src := g.Source
	nWin := 0
	if src.Window != nil {
		nWin = 2
	}
	pipe, err := exec.NewPipeline(g.Steps, src.Schema(), len(src.Key))
	if err != nil {
		return Result{}, false, nil
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return Result{}, false, internal("the server is shutting down")
	}
	e.spqSeq++
	id := fmt.Sprintf("%s%d", scalablePushPrefix, e.spqSeq)
	e.mu.Unlock()
	g.QueryID = id
	cols := api.Columns(g.Output, g.KeyColumns)
	if g.LimitReached(0) {
		var once sync.Once
		next := func(context.Context) ([]any, error) { return nil, io.EOF }
		end := func() api.EndReason { return api.EndLimit }
		return Result{Kind: ResultRows, Stream: api.NewStream(id, cols, next, func() { once.Do(release) }, end), QueryID: id}, true, nil
	}
	sub := e.taps.subscribe(writer, id)
	e.mu.Lock()
	e.scalable[id] = sub
	e.mu.Unlock()

	width := topology.PseudoColumns + len(src.Key) + nWin + len(src.Value) + len(src.Headers)
	isTable := src.Kind == topology.Table
	var (
		pending  []api.Row
		sent     int64
		closed   atomic.Bool
		failed   atomic.Bool
		limitHit atomic.Bool
		once     sync.Once
		b        exec.Batch
	)
	// source lays a tapped row out as the source's rows: pseudo-columns
	// (ROWTIME; no partition or offset yet), key, window bounds, value.
	source := func(tr exec.TapRow) ([]any, bool) {
		nKey, nVal := len(src.Key), len(src.Value)
		if len(tr.Values) != nKey+nVal+nWin {
			return nil, false
		}
		row := make([]any, width)
		row[0] = tr.Time
		copy(row[topology.PseudoColumns:], tr.Values[:nKey])
		if nWin > 0 {
			copy(row[topology.PseudoColumns+nKey:], tr.Values[nKey+nVal:])
		}
		copy(row[topology.PseudoColumns+nKey+nWin:], tr.Values[nKey:nKey+nVal])
		return row, true
	}
	// run passes one tapped row through the query's steps into pending.
	run := func(ctx context.Context, tr exec.TapRow) error {
		row, ok := source(tr)
		if !ok {
			return internal("the rows of %s do not have the layout of %s", writer, src.Name)
		}
		kind := exec.Insert
		if tr.Delete {
			if !isTable {
				// A stream's record without a value has no row to show.
				return nil
			}
			kind = exec.NullValue
		}
		b.Reset()
		b.Append(row, tr.Time, kind)
		return pipe.RunChanges(ctx, &b, func(out []any, _ int64, del bool) bool {
			if g.LimitReached(sent + int64(len(pending))) {
				return false
			}
			cp := append([]any(nil), out...)
			if del {
				for i := range cp {
					if i >= len(plan.Tombstone) || !plan.Tombstone[i] {
						cp[i] = nil
					}
				}
			}
			pending = append(pending, api.Row{Values: cp, Tombstone: del})
			return true
		})
	}
	closeFn := func() {
		once.Do(func() {
			closed.Store(true)
			e.taps.unsubscribe(sub)
			e.mu.Lock()
			delete(e.scalable, id)
			e.mu.Unlock()
			release()
		})
	}
	next := func(ctx context.Context) (api.Row, error) {
		for {
			if len(pending) > 0 {
				r := pending[0]
				pending = pending[1:]
				sent++
				return r, nil
			}
			if g.LimitReached(sent) {
				limitHit.Store(true)
				return api.Row{}, io.EOF
			}
			select {
			case <-sub.done:
				if sub.err != nil {
					failed.Store(true)
					return api.Row{}, sub.err
				}
				return api.Row{}, io.EOF
			default:
			}
			select {
			case tr := <-sub.rows:
				if err := run(ctx, tr); err != nil {
					failed.Store(true)
					return api.Row{}, err
				}
			case <-sub.done:
			case <-ctx.Done():
				return api.Row{}, ctx.Err()
			}
		}
	}
	end := func() api.EndReason {
		switch {
		case closed.Load():
			return api.EndClosed
		case failed.Load():
			return api.EndError
		case limitHit.Load():
			return api.EndLimit
		}
		return api.EndCompleted
	}
	return Result{Kind: ResultRows, Stream: api.NewRowStream(id, cols, next, closeFn, end), QueryID: id}, true, nil
}

// taps holds the row tap of every persistent query that scalable push
// queries read, by query id.
type taps struct {
	mu  sync.Mutex
	all map[string]*rowTap
}

// tap returns the tap of persistent query id, made on first use; the
// query's tasks write it (exec.Deps.Tap) across its restarts.
func (t *taps) tap(id string) *rowTap {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.all == nil {
		t.all = map[string]*rowTap{}
	}
	rt := t.all[id]
	if rt == nil {
		rt = &rowTap{query: id, subs: map[*tapSub]bool{}}
		t.all[id] = rt
	}
	return rt
}

// subscribe adds scalable push query id to the readers of persistent
// query writer.
func (t *taps) subscribe(writer, id string) *tapSub {
	rt := t.tap(writer)
	sub := &tapSub{id: id, tap: rt, rows: make(chan exec.TapRow, ScalablePushBuffer), done: make(chan struct{})}
	rt.mu.Lock()
	rt.subs[sub] = true
	rt.n.Store(int32(len(rt.subs)))
	rt.mu.Unlock()
	return sub
}

// unsubscribe removes sub from its tap's readers.
func (t *taps) unsubscribe(sub *tapSub) {
	sub.tap.drop(sub, nil)
}

// end ends every reader of persistent query id with err (nil: their
// streams end as completed) and forgets its tap.
func (t *taps) end(id string, err error) {
	t.mu.Lock()
	rt := t.all[id]
	delete(t.all, id)
	t.mu.Unlock()
	if rt != nil {
		rt.endAll(err)
	}
}

// endAll ends the readers of every tap (the engine closes).
func (t *taps) endAll() {
	t.mu.Lock()
	all := t.all
	t.all = nil
	t.mu.Unlock()
	for _, rt := range all {
		rt.endAll(nil)
	}
}

// rowTap is the exec.Tap of one persistent query: it copies each row the
// query writes into the buffer of each subscriber.
type rowTap struct {
	query string
	n     atomic.Int32 // len(subs), for Active
	mu    sync.Mutex
	subs  map[*tapSub]bool
}

// tapSub is one scalable push query's subscription: rows is its buffer;
// done is closed, err set first, when the tap ends it.
type tapSub struct {
	id   string
	tap  *rowTap
	rows chan exec.TapRow
	done chan struct{}
	err  error
	once sync.Once
}

// Active implements exec.Tap.
func (rt *rowTap) Active() bool { return rt.n.Load() > 0 }

// Rows implements exec.Tap: a subscriber without room for a row is ended
// with ErrScalablePushBehind.
func (rt *rowTap) Rows(_ context.Context, rows []exec.TapRow) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for sub := range rt.subs {
		for _, r := range rows {
			select {
			case sub.rows <- r:
				continue
			default:
			}
			rt.dropLocked(sub, fmt.Errorf("%w: scalable push query %s fell %d rows behind %s, more than it holds (ScalablePushBuffer); read its rows faster, or run it as a regular push query (%s=false)",
				ErrScalablePushBehind, sub.id, ScalablePushBuffer, rt.query, propPushV2))
			break
		}
	}
}

func (rt *rowTap) drop(sub *tapSub, err error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.dropLocked(sub, err)
}

func (rt *rowTap) dropLocked(sub *tapSub, err error) {
	delete(rt.subs, sub)
	rt.n.Store(int32(len(rt.subs)))
	sub.once.Do(func() {
		sub.err = err
		close(sub.done)
	})
}

func (rt *rowTap) endAll(err error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for sub := range rt.subs {
		rt.dropLocked(sub, err)
	}
}

// terminatedWriter is the error that ends the scalable push queries of
// persistent query id when it is terminated.
func terminatedWriter(id string, q *catalog.Query) error {
	name := id
	if q != nil && q.Sink != "" {
		name = fmt.Sprintf("%s, which writes %s,", id, q.Sink)
	}
	return fmt.Errorf("the persistent query %s was terminated: this scalable push query has no rows to read any more", name)
}
