package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/planner/bind"
)

// ProcessingLogStream is the stream every server declares at start over
// its processing-log topic (ksqlDB's KSQL_PROCESSING_LOG).
const ProcessingLogStream = "SLUICE_PROCESSING_LOG"

// DefaultMaxRecordBytes is the default of Config.MaxRecordBytes.
const DefaultMaxRecordBytes = exec.DefaultMaxRecordBytes

// propMaxRecordBytes is exec.MaxRecordBytesProperty, settable per session
// for the queries it creates.
const propMaxRecordBytes = exec.MaxRecordBytesProperty

func checkMaxRecordBytes(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return fmt.Errorf("'%s' takes a number of bytes of at least 1, not '%s'", propMaxRecordBytes, v)
	}
	return nil
}

// sessionMaxRecordBytes is the session's sluice.max.record.bytes, or 0 to
// use the server's.
func sessionMaxRecordBytes(s *Session) int {
	n, err := strconv.Atoi(strings.TrimSpace(s.Properties[propMaxRecordBytes]))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// processingLogColumns are the columns of SLUICE_PROCESSING_LOG, one per
// member of exec.ProcessingLogEntry.
var processingLogColumns = []types.Column{
	{Name: "LEVEL", Type: types.StringType},
	{Name: "TYPE", Type: types.StringType},
	{Name: "QUERY_ID", Type: types.StringType},
	{Name: "MESSAGE", Type: types.StringType},
	{Name: "TOPIC", Type: types.StringType},
	{Name: "PARTITION", Type: types.IntType},
	{Name: "OFFSET", Type: types.BigintType},
	{Name: "TIMESTAMP", Type: types.BigintType},
	{Name: "KEY", Type: types.BytesType},
	{Name: "VALUE", Type: types.BytesType},
	{Name: "TRUNCATED", Type: types.BooleanType},
}

// processingLogRow is an entry as a row of processingLogColumns.
func processingLogRow(e *exec.ProcessingLogEntry) []any {
	row := []any{e.Level, e.Type, e.QueryID, e.Message, e.Topic, e.Partition, e.Offset, e.Timestamp, nil, nil, e.Truncated}
	if e.Key != nil {
		row[8] = e.Key
	}
	if e.Value != nil {
		row[9] = e.Value
	}
	return row
}

// declareProcessingLog adds SLUICE_PROCESSING_LOG to the catalog, unless a
// source of that name came from the command log. Every server declares it
// itself; it is never written to the command log.
func (e *Engine) declareProcessingLog() {
	if _, ok := e.cat.Source(ProcessingLogStream); ok {
		return
	}
	sql := fmt.Sprintf("CREATE SOURCE STREAM %s (LEVEL STRING, `TYPE` STRING, QUERY_ID STRING, MESSAGE STRING, TOPIC STRING, `PARTITION` INT, `OFFSET` BIGINT, `TIMESTAMP` BIGINT, `KEY` BYTES, `VALUE` BYTES, TRUNCATED BOOLEAN) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON')", ProcessingLogStream, e.processing)
	src := &catalog.Source{
		Name: ProcessingLogStream, Kind: catalog.Stream, Topic: e.processing, Partitions: 1,
		KeyFormat: "KAFKA", ValueFormat: "JSON", Value: processingLogColumns,
		IsSource: true, System: true, SQL: sql,
	}
	if err := e.cat.Apply(&catalog.Command{Kind: catalog.CreateSource, Source: src}); err != nil {
		e.log.Error("cannot declare the processing log stream", "err", err)
	}
}

// systemSourceError refuses to change a source the server declares.
func systemSourceError(pos ast.Pos, name, verb string) error {
	return userError(pos, "cannot %s %s: the server declares it over its processing log at start; it cannot be dropped or changed (query it, or create a stream over it with CREATE STREAM ... AS SELECT)", verb, name)
}

// replayState is what REPLAY has done for one query, kept as the value
// of the query's key in the compacted replays topic: every entry of the
// query in the processing log before From was replayed (or cannot be),
// and so were those at the offsets Done (all at or after From).
type replayState struct {
	From int64   `json:"from"`
	Done []int64 `json:"done,omitempty"`
}

// loadReplayState reads the replay state of query id.
func (e *Engine) loadReplayState(ctx context.Context, id string) (replayState, error) {
	var st replayState
	recs, err := kafka.ReadAll(ctx, e.cfg.Kafka, e.replays)
	if err != nil {
		return st, internal("cannot read the replay state of %s: %v", id, err)
	}
	for _, r := range recs {
		if string(r.Key) != id {
			continue
		}
		st = replayState{}
		if r.Value != nil {
			if err := json.Unmarshal(r.Value, &st); err != nil {
				return st, internal("the replay state of %s cannot be read: %v", id, err)
			}
		}
	}
	return st, nil
}

// saveReplayState writes the replay state of query id.
func (e *Engine) saveReplayState(ctx context.Context, id string, st replayState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return e.produce(ctx, []*kafka.Record{{Topic: e.replays, Partition: 0, Key: []byte(id), Value: b, Timestamp: e.cfg.Now()}})
}

// replayLog runs REPLAY PROCESSING LOG FOR id [WHERE cond]: it reads the
// processing log from the query's replay state to its end now, takes the
// entries of the query not replayed yet that cond keeps (without cond:
// those of type DESERIALIZATION_ERROR, records that never reached the
// pipeline, so that a plain REPLAY writes no row twice), runs their
// records once more through the query's current plan, and notes them as
// done in the replay state. An entry is thus replayed at most once across
// REPLAYs; one cond left out stays for a later REPLAY; a record that fails
// again is logged again (as a new entry, which a later REPLAY can take).
func (e *Engine) replayLog(ctx context.Context, st *ast.Replay) (Result, error) {
	q, ok := e.cat.Query(st.QueryID)
	if !ok {
		return Result{}, userError(st.QueryIDPos, "unknown query %s; SHOW QUERIES lists the queries", st.QueryID)
	}
	if exec.Replayable(q.Plan) != nil {
		return Result{}, userError(st.QueryIDPos, "cannot replay the records of %s: REPLAY runs them through a fresh copy of the query's pipeline, which only a query without aggregation, join or table source allows; re-produce the records to its input topic instead", st.QueryID)
	}
	var where eval.Evaluator
	if st.Where != nil {
		b, err := bind.Bind(st.Where, bind.ScopeOf("", processingLogColumns))
		if err != nil {
			var pe *planner.Error
			if errors.As(err, &pe) {
				return Result{}, err
			}
			return Result{}, userError(st.Pos, "REPLAY ... WHERE: %v; the condition may use the columns of %s (LEVEL, TYPE, QUERY_ID, MESSAGE, TOPIC, PARTITION, OFFSET, TIMESTAMP, KEY, VALUE, TRUNCATED)", err, ProcessingLogStream)
		}
		if b.Type == nil || b.Type.Kind != types.Boolean {
			return Result{}, userError(st.Pos, "REPLAY ... WHERE needs a BOOLEAN condition, not %v", b.Type)
		}
		if where, err = eval.Compile(b); err != nil {
			return Result{}, internal("cannot compile the REPLAY condition: %v", err)
		}
	}
	// One REPLAY of a query at a time: the position moves under the lock.
	if err := e.replayMu.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.replayMu.Unlock()
	state, err := e.loadReplayState(ctx, q.ID)
	if err != nil {
		return Result{}, err
	}
	entries, end, err := e.readProcessingLog(ctx, state.From)
	if err != nil {
		return Result{}, err
	}
	done := map[int64]bool{}
	for _, off := range state.Done {
		done[off] = true
	}
	var recs []*kafka.Record
	seen := map[string]bool{}
	skipped := 0
	next := end // the first entry of the query left for later
	for _, le := range entries {
		if le.QueryID != q.ID || done[le.logOffset] {
			continue
		}
		keep := le.Type == exec.DeserializationError
		if where != nil {
			v, err := where.Eval(processingLogRow(&le.ProcessingLogEntry))
			keep = err == nil && eval.Truthy(v)
		}
		if !keep {
			next = min(next, le.logOffset)
			continue
		}
		done[le.logOffset] = true
		id := fmt.Sprintf("%s/%d/%d", le.Topic, le.Partition, le.Offset)
		if le.Truncated || le.Offset < 0 || le.Topic != q.Plan.Source.Topic || seen[id] {
			// Not the whole record, a row of no single record, a record of
			// another input (the query was replaced since), or a record
			// already taken.
			if !seen[id] {
				skipped++
			}
			continue
		}
		seen[id] = true
		recs = append(recs, &kafka.Record{Topic: le.Topic, Partition: le.Partition, Offset: le.Offset, Key: le.Key, Value: le.Value, Timestamp: time.UnixMilli(le.Timestamp)})
	}
	kept := replayState{From: next}
	for off := range done {
		if off >= next {
			kept.Done = append(kept.Done, off)
		}
	}
	slices.Sort(kept.Done)
	deps := exec.Deps{Kafka: e.cfg.Kafka, Registry: e.cfg.Registry, ProcessingLog: e.processing, Logger: e.log.With("query", q.ID), Now: e.cfg.Now, MaxRecordBytes: e.cfg.MaxRecordBytes, Compression: q.Compression}
	if q.MaxRecordBytes > 0 {
		deps.MaxRecordBytes = q.MaxRecordBytes
	}
	// Records replayed are written: the statement commits, so that the
	// replay state it keeps says so.
	if ctx, err = commit(ctx); err != nil {
		return Result{}, err
	}
	stats, err := exec.Replay(ctx, q.Plan, deps, recs, "replayed from the processing log and failed again: ")
	if err != nil {
		return Result{}, internal("cannot replay the records of %s: %v", q.ID, err)
	}
	if err := e.saveReplayState(ctx, q.ID, kept); err != nil {
		return Result{}, internal("the records of %s were replayed, but the replay state could not be kept (a later REPLAY would take them again): %v", q.ID, err)
	}
	msg := fmt.Sprintf("Replayed %d records of %s from the processing log: %d rows written, %d filtered, %d failed again.", stats.In, q.ID, stats.Out, stats.Filtered, stats.Failed)
	if skipped > 0 {
		msg += fmt.Sprintf(" %d entries could not be replayed (truncated, not of one record, or of another input topic).", skipped)
	}
	return Result{Kind: ResultStatus, Message: msg}, nil
}

// loggedEntry is a processing-log entry and its offset in the log.
type loggedEntry struct {
	exec.ProcessingLogEntry
	logOffset int64
}

// readProcessingLog returns the processing-log entries from offset from to
// the log's end now, and that end.
func (e *Engine) readProcessingLog(ctx context.Context, from int64) ([]*loggedEntry, int64, error) {
	bounds, err := e.cfg.Kafka.ListStableOffsets(ctx, e.processing)
	if err != nil {
		return nil, 0, internal("cannot list the offsets of %s: %v", e.processing, err)
	}
	if len(bounds) != 1 {
		return nil, 0, internal("the processing log %s has %d partitions; it must have exactly 1", e.processing, len(bounds))
	}
	end := bounds[0].End
	from = max(from, bounds[0].Start)
	if from >= end {
		return nil, end, nil
	}
	c, err := e.cfg.Kafka.NewConsumer(kafka.ConsumerOptions{ClientID: "sluice-replay", ReadCommitted: true, KeepControl: true})
	if err != nil {
		return nil, 0, internal("%v", err)
	}
	defer c.Close()
	c.Assign(map[string]map[int32]int64{e.processing: {0: from}})
	var out []*loggedEntry
	for next := from; next < end; {
		recs, err := c.Poll(ctx)
		if err != nil {
			return nil, 0, internal("cannot read the processing log %s: %v", e.processing, err)
		}
		for _, r := range recs {
			if r.Offset < next || r.Offset >= end {
				continue
			}
			next = r.Offset + 1
			if r.Control {
				continue
			}
			le := loggedEntry{logOffset: r.Offset}
			if err := json.Unmarshal(r.Value, &le.ProcessingLogEntry); err != nil {
				e.log.Warn("processing log entry not readable; not replayed", "offset", r.Offset, "err", err)
				continue
			}
			out = append(out, &le)
		}
	}
	return out, end, nil
}
