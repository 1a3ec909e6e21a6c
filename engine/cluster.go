package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
)

// ClusterConfig makes an engine one server of a cluster: the servers
// sharing a ServiceID split the partitions of every persistent query
// between them.
//
//	server A ─┐                         ┌─ slots 0, 2: partitions 0, 2 (and 4, 6, ...)
//	          ├─ group <prefix>cluster ─┤  of every topic of every query
//	server B ─┘   (leader plans)        └─ slots 1, 3: partitions 1, 3, ...
//
// Each server joins the Kafka consumer group "<internal prefix>cluster";
// the group's leader assigns slots so that partition p of every topic
// (source, repartition, join sides, changelogs) belongs to one server, and
// sends every server the whole slot-to-address map. A server runs the
// tasks of its partitions only; when the plan changes it stops its queries
// (committing), and starts them again on its new partitions, whose state
// it restores from their changelogs. The command log is tailed: a
// statement run on one server creates or ends the query on all.
type ClusterConfig struct {
	// Address is this server's advertised address (host:port of its gRPC
	// API), where the others forward the pull queries it owns.
	Address string
	// InstanceID, when set, makes the group membership static: a server
	// restarting with the same id within SessionTimeout takes its
	// partitions back without moving any.
	InstanceID string
	// SessionTimeout is how long the group waits for a silent server
	// before moving its partitions; 6s when zero.
	SessionTimeout time.Duration
	// Forward runs a pull query on the server at address, answering from
	// that server's partitions only (see PullLocalProperty). When nil, a
	// pull query that needs another server's partitions fails, saying so.
	Forward func(ctx context.Context, address string, s *Session, sql string) (PullResult, error)
}

// PullLocalProperty is the session property a server sets on a pull query
// it forwards: the receiver answers from its own partitions and forwards
// nothing, so a query never loops.
const PullLocalProperty = "sluice.internal.pull.local"

// cluster is an engine's membership state.
type cluster struct {
	cfg    ClusterConfig
	member kafka.Member
	slots  atomic.Int32 // the most partitions an input of a query has

	mu      sync.Mutex
	assign  *kafka.Assignment // nil while unassigned
	pending *kafka.Assignment // received, not yet applied
	applied *kafka.Assignment // assign, once its queries started
	wake    chan struct{}

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// clusterGroup is the consumer group the servers of a cluster join.
func (e *Engine) clusterGroup() string { return e.internalPrefix() + "cluster" }

// joinCluster joins the cluster group and starts tailing the command log
// from offset next. Queries start when the first assignment arrives.
func (e *Engine) joinCluster(ctx context.Context, next int64) error {
	m, ok := e.cfg.Kafka.(kafka.Membership)
	if !ok {
		return fmt.Errorf("engine: this Kafka client cannot run a cluster of servers: %w", kafka.ErrNotSupported)
	}
	c := e.cluster
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stop = cancel
	member, err := m.Join(ctx, kafka.MemberOptions{
		Group:          e.clusterGroup(),
		Topic:          e.commands,
		Address:        c.cfg.Address,
		InstanceID:     c.cfg.InstanceID,
		SessionTimeout: c.cfg.SessionTimeout,
		Slots:          c.slots.Load,
		OnRevoke:       e.revoke,
		OnAssign: func(a kafka.Assignment) {
			c.mu.Lock()
			c.pending = &a
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		cancel()
		return fmt.Errorf("engine: join the cluster group %s: %w", e.clusterGroup(), err)
	}
	c.member = member
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		e.applyAssignments(runCtx)
	}()
	go func() {
		defer c.wg.Done()
		e.tailCommands(runCtx, next)
	}()
	e.log.Info("joined the cluster", "group", e.clusterGroup(), "address", c.cfg.Address)
	return nil
}

// leaveCluster stops the tail and leaves the group.
func (e *Engine) leaveCluster() {
	c := e.cluster
	if c == nil || c.member == nil {
		return
	}
	c.stop()
	c.member.Close()
	c.wg.Wait()
}

// revoke stops every persistent query before the server rejoins the
// group: a partition is never processed by two servers at once.
func (e *Engine) revoke() {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	c := e.cluster
	c.mu.Lock()
	had := c.assign != nil
	c.assign, c.pending, c.applied = nil, nil, nil
	c.mu.Unlock()
	if had {
		e.log.Info("cluster rebalance: stopping the queries until the new assignment")
	}
	e.stopAll()
}

// stopAll stops every running persistent query, committing what they
// processed. The caller holds e.ddl.
func (e *Engine) stopAll() {
	e.mu.Lock()
	qs := make([]*exec.Query, 0, len(e.running))
	for id, q := range e.running {
		qs = append(qs, q)
		delete(e.running, id)
	}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = q.Stop()
		}()
	}
	wg.Wait()
}

// applyAssignments starts the queries on the partitions of each new
// assignment. A query that cannot start (Kafka not answering) is tried
// again every startRetry.
func (e *Engine) applyAssignments(ctx context.Context) {
	c := e.cluster
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-retry:
		}
		retry = nil
		e.ddl.Lock()
		c.mu.Lock()
		a := c.pending
		c.pending = nil
		if a != nil {
			c.assign = a
		}
		assigned := c.assign != nil
		c.mu.Unlock()
		if assigned && !e.isClosed() {
			if a != nil {
				e.log.Info("cluster assignment", "generation", a.Generation, "slots", len(a.Owners), "mine", fmt.Sprint(a.Mine))
				e.stopAll()
			}
			if !e.startMissing(ctx) {
				retry = time.After(startRetry)
			}
			c.mu.Lock()
			if a != nil && c.assign == a {
				c.applied = a
			}
			c.mu.Unlock()
		}
		e.ddl.Unlock()
		e.notify()
	}
}

// startRetry is how long a server waits before it tries again to start
// the queries that failed to start on its partitions.
const startRetry = 5 * time.Second

// startMissing starts the catalog's running queries that do not run
// here; it returns false if one failed to. The caller holds e.ddl.
func (e *Engine) startMissing(ctx context.Context) bool {
	ok := true
	for _, q := range e.cat.Queries() {
		e.mu.Lock()
		_, runs := e.running[q.ID]
		e.mu.Unlock()
		if q.State != catalog.Running || runs {
			continue
		}
		if err := e.startPersistent(ctx, q); err != nil {
			e.log.Error("cannot start a query on this server's partitions; trying again", "query", q.ID, "err", err, "retry", startRetry)
			ok = false
		}
	}
	return ok
}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// assignment returns the current assignment; false while there is none.
func (e *Engine) assignment() (kafka.Assignment, bool) {
	c := e.cluster
	if c == nil {
		return kafka.Assignment{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.assign == nil {
		return kafka.Assignment{}, false
	}
	return *c.assign, true
}

// noteSlots records that a query reads a topic of n partitions; when the
// plan has fewer slots it asks the group for a new one.
func (e *Engine) noteSlots(n int32) {
	c := e.cluster
	for {
		old := c.slots.Load()
		if n <= old {
			break
		}
		if c.slots.CompareAndSwap(old, n) {
			break
		}
	}
	if a, ok := e.assignment(); ok && int32(len(a.Owners)) < n && c.member != nil {
		c.member.Rebalance()
	}
}

// clusterPartitions returns the partition filter of a persistent query
// reading topic: false while the server has no assignment (the query
// starts with the first one).
func (e *Engine) clusterPartitions(ctx context.Context, topic string) (func(int32) bool, bool, error) {
	info, err := e.cfg.Kafka.DescribeTopic(ctx, topic)
	if err != nil {
		return nil, false, fmt.Errorf("engine: describe %s: %w", topic, err)
	}
	e.noteSlots(info.Partitions)
	a, ok := e.assignment()
	if !ok {
		return nil, false, nil
	}
	return a.Owns, true, nil
}

// tailCommands applies the commands other servers write to the command
// log, from offset next, and starts or stops queries to match.
func (e *Engine) tailCommands(ctx context.Context, next int64) {
	c, err := e.cfg.Kafka.NewConsumer(kafka.ConsumerOptions{ClientID: "sluice-command-tail"})
	if err != nil {
		e.log.Error("cannot tail the command log; statements run on other servers are not seen until a restart", "err", err)
		return
	}
	defer c.Close()
	c.Assign(map[string]map[int32]int64{e.commands: {0: next}})
	for {
		recs, err := c.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrClosed) {
				return
			}
			e.log.Warn("command log tail", "err", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		e.ddl.Lock()
		n, err := e.applyCommands(recs)
		if n > 0 {
			e.reconcile(ctx)
		}
		e.ddl.Unlock()
		e.notify()
		if err != nil {
			e.log.Error("command log: this server stops applying the commands other servers write", "err", err)
			return
		}
	}
}

// applyCommands applies the commands of recs from e.cmdNext on, in order,
// and returns how many it applied. A statement on this server may have
// applied some already (see catchUp). A command the catalog refuses is
// refused on every server, which all apply the log in the same order; it
// is skipped as a bad record is (see applyRecord). A record of a newer
// plan version stops it there with an error: this server applies no more
// of the log until it runs that version. The caller holds e.ddl.
func (e *Engine) applyCommands(recs []*kafka.Record) (int, error) {
	n := 0
	for _, r := range recs {
		if r.Control || r.Offset < e.cmdNext {
			continue
		}
		ok, err := e.applyRecord(r)
		if err != nil {
			return n, err
		}
		e.cmdNext = r.Offset + 1
		if ok {
			n++
		}
	}
	return n, nil
}

// catchUp applies the commands of the log before offset end that this
// server has not applied yet, and starts or stops queries to match. The
// caller holds e.ddl.
func (e *Engine) catchUp(ctx context.Context, end int64) error {
	if e.cmdNext >= end {
		return nil
	}
	c, err := e.cfg.Kafka.NewConsumer(kafka.ConsumerOptions{ClientID: "sluice-command-catch-up"})
	if err != nil {
		return fmt.Errorf("cannot read the command log: %w", err)
	}
	defer c.Close()
	c.Assign(map[string]map[int32]int64{e.commands: {0: e.cmdNext}})
	applied := 0
	for e.cmdNext < end {
		recs, err := c.Poll(ctx)
		if err != nil {
			return fmt.Errorf("cannot read the command log: %w", err)
		}
		var before []*kafka.Record
		for _, r := range recs {
			if r.Offset < end {
				before = append(before, r)
			}
		}
		n, err := e.applyCommands(before)
		applied += n
		if err != nil {
			if applied > 0 {
				e.reconcile(ctx)
			}
			return err
		}
		if len(recs) > 0 && recs[len(recs)-1].Offset >= end-1 {
			break
		}
	}
	if applied > 0 {
		e.reconcile(ctx)
	}
	return nil
}

// reconcile starts the catalog's running queries that do not run here
// (or run an older plan) and stops those that no longer should, dropping
// the local state of terminated ones. The caller holds e.ddl.
func (e *Engine) reconcile(ctx context.Context) {
	if e.isClosed() {
		return
	}
	e.mu.Lock()
	var stop []*exec.Query
	var gone []string
	for id, rq := range e.running {
		q, ok := e.cat.Query(id)
		if !ok || q.State != catalog.Running || q.Plan != rq.Graph() {
			stop = append(stop, rq)
			delete(e.running, id)
			if !ok {
				gone = append(gone, id)
			}
		}
	}
	e.mu.Unlock()
	for _, rq := range stop {
		_ = rq.Stop()
	}
	for _, id := range gone {
		if err := e.store.DropQuery(id); err != nil {
			e.log.Warn("cannot delete the state of a terminated query", "query", id, "err", err)
		}
	}
	if !e.startMissing(ctx) {
		// The assignment loop tries again.
		select {
		case e.cluster.wake <- struct{}{}:
		default:
		}
	}
}

// ownership says which server owns which partitions, for SHOW QUERIES
// EXTENDED and DESCRIBE EXTENDED: "" outside cluster mode.
func (e *Engine) ownership() string {
	a, ok := e.assignment()
	if !ok {
		if e.cluster != nil {
			return "unassigned (waiting for the cluster group)"
		}
		return ""
	}
	by := map[string][]string{}
	for s, addr := range a.Owners {
		by[addr] = append(by[addr], fmt.Sprint(s))
	}
	addrs := make([]string, 0, len(by))
	for addr := range by {
		addrs = append(addrs, addr)
	}
	sort.Strings(addrs)
	parts := make([]string, len(addrs))
	for i, addr := range addrs {
		mark := ""
		if addr == e.cluster.cfg.Address {
			mark = " (this server)"
		}
		parts[i] = addr + mark + " owns " + strings.Join(by[addr], ",")
	}
	return fmt.Sprintf("%s (partitions mod %d)", strings.Join(parts, "; "), len(a.Owners))
}

// WaitCluster blocks until this server runs its queries on an assignment
// that splits the partitions between servers servers, this one among
// them, or ctx ends. Tests
// and tools use it after starting or stopping a server of a cluster.
func (e *Engine) WaitCluster(ctx context.Context, servers int) error {
	if e.cluster == nil {
		return errors.New("engine: WaitCluster: not in cluster mode")
	}
	for {
		e.mu.Lock()
		wake := e.progress
		e.mu.Unlock()
		e.cluster.mu.Lock()
		a, pending := e.cluster.applied, e.cluster.pending
		e.cluster.mu.Unlock()
		if a != nil && pending == nil && len(a.Addresses()) == servers && slices.Contains(a.Owners, e.cluster.cfg.Address) {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("engine: waiting for a cluster of %d servers: %w", servers, ctx.Err())
		}
	}
}

// PullResult is a pull query's rows, as another server of the cluster
// answered them (ClusterConfig.Forward).
type PullResult struct {
	Columns []types.Column
	Rows    [][]any
}
