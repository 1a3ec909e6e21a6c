package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sluice-sql/sluice/internal/failpoint"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/state"
)

// restoreChunk is how many changelog records one Store.Restore call
// writes.
const restoreChunk = 10_000

// restoreState brings the local state of one partition of a persistent
// query up to the end of its changelog topics, reading what the store has
// not seen yet, and counts its progress in t.restored and t.toRestore.
func restoreState(ctx context.Context, t *task) error {
	deps, partition := t.q.deps, t.partition
	stored, err := deps.State.Offsets(deps.StateNamespace, partition)
	if err != nil {
		return err
	}
	type span struct {
		st        topology.Store
		from, end int64
	}
	var todo []span
	for _, st := range t.st.stores {
		if st.Changelog == "" {
			continue
		}
		var bounds []kafka.Offsets
		if t.mode.transactional() {
			// Up to the last stable offset: the task's producer is
			// registered, so no transaction of its own is open.
			bounds, err = deps.Kafka.ListStableOffsets(ctx, st.Changelog)
		} else {
			bounds, err = deps.Kafka.ListOffsets(ctx, st.Changelog)
		}
		if err != nil {
			return fmt.Errorf("exec: list offsets of changelog %s: %w", st.Changelog, err)
		}
		if int(partition) >= len(bounds) {
			return fmt.Errorf("exec: changelog %s has %d partitions; partition %d is missing", st.Changelog, len(bounds), partition)
		}
		from, ok := stored[st.Name]
		if !ok || from < bounds[partition].Start {
			from = bounds[partition].Start
		}
		if end := bounds[partition].End; from < end {
			todo = append(todo, span{st, from, end})
			t.toRestore.Add(end - from)
		}
	}
	for _, s := range todo {
		if err := replayChangelog(ctx, t, s.st, s.from, s.end); err != nil {
			return err
		}
	}
	return nil
}

// replayChangelog reads t's partition of st's changelog from from to end
// and restores the entries into st's state table.
func replayChangelog(ctx context.Context, t *task, st topology.Store, from, end int64) error {
	deps, partition := t.q.deps, t.partition
	c, err := deps.Kafka.NewConsumer(kafka.ConsumerOptions{ClientID: deps.StateNamespace + "-restore", ReadCommitted: t.mode.transactional(), KeepControl: true})
	if err != nil {
		return err
	}
	defer c.Close()
	c.Assign(map[string]map[int32]int64{st.Changelog: {partition: from}})
	var entries []state.Entry
	next := from
	for next < end {
		recs, err := c.Poll(ctx)
		if err != nil {
			return fmt.Errorf("exec: read changelog %s[%d]: %w", st.Changelog, partition, err)
		}
		for _, r := range recs {
			if r.Offset >= end {
				break
			}
			t.restored.Add(r.Offset + 1 - next)
			next = r.Offset + 1
			if r.Control {
				continue
			}
			entries = append(entries, state.Entry{Key: r.Key, Value: r.Value})
		}
		if len(entries) >= restoreChunk || (next >= end && len(entries) > 0) {
			if err := deps.State.Restore(deps.StateNamespace, partition, st.Name, entries, next); err != nil {
				return err
			}
			entries = entries[:0]
			failpoint.Hit("restore")
		}
	}
	if next > from {
		deps.Logger.Info("state restored from changelog", "changelog", st.Changelog, "partition", partition, "from", from, "to", next)
	}
	return nil
}

// commitState takes the task's state changes since the last commit from
// its cache, produces their changelog records (for a persistent query)
// ahead of the batch's output, and commits the input offsets; then the
// changes are committed in the cache, which writes them to Pebble later
// (see persistDue). On failure the cache is reset to the committed state.
func (t *task) commitState(ctx context.Context, next int64) (err error) {
	deps := t.q.deps
	defer func() {
		if err != nil {
			t.cache.Reset()
		}
	}()
	bufs := &t.logBufs
	changes := t.cache.Flush(bufs.changes)
	bufs.changes = changes
	var logRecs []*kafka.Record
	var logTables []string // the table of each of logRecs
	if len(changes) > 0 && persistent(t.g) {
		// A store without a changelog (a push query's, whose first
		// stage may write a repartition topic) logs nothing.
		logRecs = slices.Grow(bufs.recs[:0], len(changes))
		logTables = slices.Grow(bufs.tables[:0], len(changes))
		slab := slices.Grow(bufs.slab[:0], len(changes))
		bufs.recs, bufs.tables, bufs.slab = logRecs, logTables, slab
		now := deps.Now()
		table, topic := "", ""
		for _, ch := range changes {
			if ch.Table != table {
				// Flush groups the changes by table.
				table, topic = ch.Table, t.changelogs[ch.Table]
			}
			if topic == "" {
				continue
			}
			slab = append(slab, kafka.Record{Topic: topic, Partition: t.partition, Key: ch.Key, Value: ch.Value, Timestamp: now})
			logRecs = append(logRecs, &slab[len(slab)-1])
			logTables = append(logTables, table)
		}
		merged := slices.Grow(bufs.merged[:0], len(logRecs)+len(t.pending))
		merged = append(append(merged, logRecs...), t.pending...)
		clear(t.pending)
		t.pending, bufs.merged = merged, t.pending[:0]
	}
	if _, err := t.mode.commit(ctx, next, len(logRecs)); err != nil {
		return err
	}
	// The commit produced every record: none is referenced any more.
	defer bufs.recycle(len(logRecs))
	if t.sink != nil {
		t.sink.recycle()
	}
	var offsets map[string]int64
	if len(logRecs) > 0 {
		offsets = map[string]int64{}
		for i, r := range logRecs {
			offsets[logTables[i]] = max(offsets[logTables[i]], r.Offset+1)
		}
	}
	t.cache.Commit(offsets)
	if t.persistDue() {
		return t.persist()
	}
	if t.cache.Unpersisted() > 0 {
		t.unpersisted.Store(true)
	}
	return nil
}

// commitBufs are the slices commitState fills at each commit, reused by
// the next: the cache's changes, the changelog records (slab), pointers
// to them (recs) with their tables, and merged, the next commit's
// pending records.
type commitBufs struct {
	changes []state.Change
	slab    []kafka.Record
	recs    []*kafka.Record
	tables  []string
	merged  []*kafka.Record
}

// maxCommitBufs bounds the entries commitBufs keeps of a slice for the
// next commit; a larger one goes to the collector.
const maxCommitBufs = 16 << 10

// recycle drops what the slices reference, n entries of the changelog
// ones and all of changes, and lets go of those grown past
// maxCommitBufs.
func (b *commitBufs) recycle(n int) {
	clear(b.changes)
	clear(b.slab[:n])
	clear(b.recs[:n])
	clear(b.tables[:n])
	if cap(b.changes) > maxCommitBufs {
		b.changes = nil
	}
	if cap(b.slab) > maxCommitBufs {
		b.slab, b.recs, b.tables = nil, nil, nil
	}
	if cap(b.merged) > maxCommitBufs {
		b.merged = nil
	}
}

// DefaultPersistInterval is the default of Deps.PersistInterval.
const DefaultPersistInterval = time.Second

// persistIdle is how long a task with state Pebble does not hold yet
// waits for records before it writes that state (the task is idle).
const persistIdle = 20 * time.Millisecond

// pollFirst polls the task's consumer. When the task's cache holds
// committed state the store does not, it waits no longer than persistIdle:
// when no record came meanwhile it returns none and no error, and the
// task, idle, writes its state. A join task waiting for an input waits no
// longer than it has left to (see processJoin).
func (t *task) pollFirst(ctx context.Context) ([]*kafka.Record, error) {
	wait := time.Duration(-1)
	if t.cache != nil && t.cache.Unpersisted() > 0 {
		wait = persistIdle
	}
	if !t.waitingSince.IsZero() {
		// A join task holding rows for an input polls no longer than it
		// waits for it (see processJoin).
		if left := max(syncWait-time.Since(t.waitingSince), 0); wait < 0 || left < wait {
			wait = left
		}
	}
	if wait < 0 {
		return t.consumer.Poll(ctx)
	}
	pctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	recs, err := t.consumer.Poll(pctx)
	if err != nil && len(recs) == 0 && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return nil, nil
	}
	return recs, err
}

// persistDue reports whether the task should write its committed state
// to Pebble now: its cache is over its bound, or the persist interval
// passed since the last write.
func (t *task) persistDue() bool {
	if t.cache.Unpersisted() == 0 {
		return false
	}
	if t.cache.PersistDue() {
		return true
	}
	iv := t.q.deps.PersistInterval
	if iv <= 0 {
		iv = DefaultPersistInterval
	}
	return t.q.deps.Now().Sub(t.persistedAt) >= iv
}

// persist writes the task's committed state to Pebble (TaskCache.Persist)
// and tells the flush barrier, which waits for it (Query.Unpersisted).
func (t *task) persist() error {
	defer timed(&t.stats.persist, time.Now())
	if err := t.cache.Persist(); err != nil {
		return fmt.Errorf("exec: write state: %w", err)
	}
	t.persistedAt = t.q.deps.Now()
	if t.unpersisted.Swap(false) && t.q.deps.Progress != nil {
		t.q.deps.Progress()
	}
	return nil
}
