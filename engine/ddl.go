package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

func kindWord(k catalog.Kind) string { return strings.ToLower(string(k)) }

// errNoTopic says a source's topic does not exist and no PARTITIONS were
// given to create it.
var errNoTopic = errors.New("engine: the topic does not exist")

// headerConstraint is the constraint that declares src's header column i:
// " HEADERS", or " HEADER('key')".
func headerConstraint(src *catalog.Source, i int) string {
	if i < len(src.HeaderKeys) && src.HeaderKeys[i] != "" {
		return " HEADER('" + strings.ReplaceAll(src.HeaderKeys[i], "'", "''") + "')"
	}
	return " HEADERS"
}

// createExample is the statement st with PARTITIONS=2 added, written the
// way ksqlDB shows it in its refusal of a source whose topic is missing:
// the columns with their types, then the properties in name order.
func createExample(st *ast.CreateSource, src *catalog.Source) string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if st.IsSource {
		b.WriteString("SOURCE ")
	}
	b.WriteString(string(src.Kind) + " " + src.Name + " (")
	keyWord := " KEY"
	if src.Kind == catalog.Table {
		keyWord = " PRIMARY KEY"
	}
	var cols []string
	for _, c := range src.Key {
		cols = append(cols, c.Name+" "+c.Type.String()+keyWord)
	}
	for _, c := range src.Value {
		cols = append(cols, c.Name+" "+c.Type.String())
	}
	for i, c := range src.Headers {
		cols = append(cols, c.Name+" "+c.Type.String()+headerConstraint(src, i))
	}
	b.WriteString(strings.Join(cols, ", ") + ") WITH (")
	props := map[string]string{"PARTITIONS": "2"}
	for _, p := range st.Props {
		if p.Name == "PARTITIONS" || p.Value == nil {
			continue
		}
		v := p.Value.Text
		if p.Value.Kind == ast.StringLit {
			v = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		}
		props[p.Name] = v
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n + "=" + props[n])
	}
	b.WriteString(");")
	return b.String()
}

func (e *Engine) createSource(ctx context.Context, s *Session, st *ast.CreateSource) (Result, error) {
	if err := planning(ctx); err != nil {
		return Result{}, err
	}
	spec, err := planner.PlanCreateSource(e.cat, st, e.withInfer(ctx, defaults(s)))
	if err != nil {
		return Result{}, err
	}
	src := spec.Source
	if err := e.checkTopic(propPos(st.Props, "KAFKA_TOPIC", st.Pos), useRead, src.Topic); err != nil {
		return Result{}, err
	}
	if err := e.checkRegistry(st.Pos, src.KeyFormat, src.ValueFormat); err != nil {
		return Result{}, err
	}
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	if old, ok := e.cat.Source(src.Name); ok {
		switch {
		case old.System && st.OrReplace:
			return Result{}, systemSourceError(st.NamePos, src.Name, "replace")
		case st.IfNotExists:
			return Result{Kind: ResultStatus, Message: fmt.Sprintf("Cannot add %s %s: A %s with the same name already exists.", kindWord(src.Kind), src.Name, kindWord(old.Kind))}, nil
		case !st.OrReplace:
			return Result{}, userError(st.NamePos, "Cannot add %s '%s': A %s with the same name already exists\nDROP it first, or use CREATE OR REPLACE.", kindWord(src.Kind), src.Name, kindWord(old.Kind))
		}
		if why := sourceUpgradeProblem(old, src); why != "" {
			return Result{}, userError(st.NamePos, "Cannot upgrade data source: %s\nA replaced source keeps its kind, topic, formats, timestamp column and key, and may only add value columns at the end; DROP it and create it again for other changes.", why)
		}
	}
	partitions, err := e.sourceTopic(ctx, st.Pos, src.Topic, spec.Partitions, spec.Partitions, spec.Replicas)
	if errors.Is(err, errNoTopic) {
		return Result{}, userError(st.Pos, "Topic '%s' does not exist. If you want to create a new topic for the stream/table please re-run the statement providing the required 'PARTITIONS' configuration in the WITH clause (and optionally 'REPLICAS'). For example: %s", src.Topic, createExample(st, src))
	}
	if err != nil {
		return Result{}, err
	}
	src.Partitions = partitions
	_, replacing := e.cat.Source(src.Name)
	if err := e.registerSchemas(ctx, st.Pos, src, !replacing, false); err != nil {
		return Result{}, err
	}
	if ctx, err = commit(ctx); err != nil {
		return Result{}, err
	}
	if src.IsSource && src.Kind == catalog.Table {
		if err := e.createSourceTable(ctx, st, src); err != nil {
			return Result{}, err
		}
		return Result{Kind: ResultStatus, Message: "Table created"}, nil
	}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.CreateSource, Source: src, Replace: st.OrReplace}); err != nil {
		return Result{}, &internalError{err}
	}
	word := "Stream"
	if src.Kind == catalog.Table {
		word = "Table"
	}
	return Result{Kind: ResultStatus, Message: word + " created"}, nil
}

// sourceTopic checks that a source's topic exists (creating it when the
// statement gave PARTITIONS) and returns its partition count.
// sourceTopic returns the partition count of topic, creating it when it
// does not exist. given is the statement's PARTITIONS (0 when it has
// none), which an existing topic must match; create is the count a new
// topic is made with (given, or for a CREATE ... AS SELECT its input's).
// Without either, a missing topic is errNoTopic.
func (e *Engine) sourceTopic(ctx context.Context, pos ast.Pos, topic string, given, create int32, replicas int16) (int32, error) {
	info, err := e.cfg.Kafka.DescribeTopic(ctx, topic)
	switch {
	case err == nil:
		if given > 0 && info.Partitions != given {
			return 0, userError(pos, "a Kafka topic with the name '%s' already exists with %d partitions, not the %d given in PARTITIONS; remove PARTITIONS or give %d", topic, info.Partitions, given, info.Partitions)
		}
		return info.Partitions, nil
	case !errors.Is(err, kafka.ErrUnknownTopic):
		return 0, internal("cannot describe topic %s: %v", topic, err)
	case create == 0:
		return 0, errNoTopic
	}
	err = e.createTopic(ctx, kafka.TopicSpec{Name: topic, Partitions: create, ReplicationFactor: replicas})
	if err != nil && !errors.Is(err, kafka.ErrTopicExists) {
		return 0, internal("cannot create topic %s: %v", topic, err)
	}
	return create, nil
}

func (e *Engine) createAsSelect(ctx context.Context, s *Session, st *ast.CreateAsSelect) (Result, error) {
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	if old, ok := e.cat.Source(st.Name); ok {
		switch {
		case old.System && st.OrReplace:
			return Result{}, systemSourceError(st.NamePos, st.Name, "replace")
		case st.OrReplace && old.IsSource:
			return Result{}, userError(st.NamePos, "Cannot insert into read-only %s: %s\nIt was created with CREATE SOURCE, which makes it read-only; choose another name for the query's sink.", kindWord(old.Kind), st.Name)
		case st.OrReplace:
			return e.replaceQuery(ctx, st, old, sessionMaxRecordBytes(s))
		case st.IfNotExists:
			return Result{Kind: ResultStatus, Message: fmt.Sprintf("Cannot add %s %s: A %s with the same name already exists.", strings.ToLower(st.Kind.String()), st.Name, kindWord(old.Kind))}, nil
		default:
			return Result{}, userError(st.NamePos, "Cannot add %s '%s': A %s with the same name already exists\nDROP it first, or use CREATE OR REPLACE.", strings.ToLower(st.Kind.String()), st.Name, kindWord(old.Kind))
		}
	}
	prefix, kind := "CSAS", catalog.Stream
	if st.Kind == ast.Table {
		prefix, kind = "CTAS", catalog.Table
	}
	id := e.cat.NextQueryID(prefix, st.Name)
	if err := planning(ctx); err != nil {
		return Result{}, err
	}
	plan, err := planner.PlanSelect(e.cat, st.Query, planner.QueryOptions{
		QueryID: id, Sink: st.Name, SinkPos: st.NamePos, SinkProps: st.Props, OffsetReset: offsetReset(s), SinkKind: kind, Defaults: defaults(s),
		AggregateLimits: aggregateLimits(s),
		InternalPrefix:  e.internalPrefix(),
		Ctx:             ctx,
	})
	if err != nil {
		return Result{}, err
	}
	plan.Sink.SQL = st.SQL()
	if err := e.checkTopic(propPos(st.Props, "KAFKA_TOPIC", st.NamePos), useWrite, plan.Sink.Topic); err != nil {
		return Result{}, err
	}
	if err := e.checkRegistry(st.Pos, plan.Sink.KeyFormat, plan.Sink.ValueFormat); err != nil {
		return Result{}, err
	}
	// Without PARTITIONS, a sink topic that exists keeps its partitions;
	// only a new one takes the input's.
	given := int32(0)
	if _, ok := st.Props.Get("PARTITIONS"); ok {
		given = plan.Sink.Partitions
	}
	n, err := e.sourceTopic(ctx, st.Pos, plan.Sink.Topic, given, plan.Sink.Partitions, plan.Replicas)
	if err != nil {
		return Result{}, err
	}
	if err := e.registerSchemas(ctx, st.Pos, plan.Sink, false, true); err != nil {
		return Result{}, err
	}
	plan.Sink.Partitions, plan.Graph.Sink.Partitions = n, n
	// The plan's physical part lists the sink topic as it is.
	if err := topology.Complete(plan.Graph); err != nil {
		return Result{}, internal("cannot plan query %s: %v", id, err)
	}
	q := &catalog.Query{ID: id, SQL: st.SQL(), Sink: st.Name, State: catalog.Running, Plan: plan.Graph, Guarantee: e.sessionGuarantee(s), MaxRecordBytes: sessionMaxRecordBytes(s), Compression: s.Properties[propCompression]}
	if ctx, err = commit(ctx); err != nil {
		return Result{}, err
	}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.CreateQuery, Query: q, Source: plan.Sink}); err != nil {
		return Result{}, &internalError{err}
	}
	if err := e.startPersistent(ctx, q); err != nil {
		return Result{}, internal("query %s was created but could not start: %v", id, err)
	}
	return Result{Kind: ResultStatus, Message: "Created query with ID " + id, QueryID: id}, nil
}

func (e *Engine) insertInto(ctx context.Context, s *Session, st *ast.InsertInto) (Result, error) {
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	target, ok := e.cat.Source(st.Target)
	switch {
	case !ok:
		return Result{}, userError(st.TargetPos, "Source `%s` does not exist.%s", st.Target, e.didYouMean(st.Target))
	case target.Kind == catalog.Table:
		return Result{}, userError(st.TargetPos, "INSERT INTO can only be used to insert into a stream. %s is a table.", st.Target)
	case target.IsSource:
		return Result{}, userError(st.TargetPos, "Cannot insert into read-only %s: %s\nIt was created with CREATE SOURCE, which makes it read-only; create a stream over the topic with CREATE STREAM to write it.", kindWord(target.Kind), st.Target)
	}
	if err := e.checkTopic(st.TargetPos, useWrite, target.Topic); err != nil {
		return Result{}, err
	}
	if len(st.Props) > 0 {
		return Result{}, userError(st.Props[0].Pos, "INSERT INTO ... SELECT takes no WITH properties here; the target stream's topic and formats are used")
	}
	id := e.cat.NextQueryID("INSERTQUERY", "")
	if err := planning(ctx); err != nil {
		return Result{}, err
	}
	plan, err := planner.PlanSelect(e.cat, st.Query, planner.QueryOptions{
		QueryID: id, Sink: target.Name, SinkPos: st.TargetPos, OffsetReset: offsetReset(s), Target: target, Defaults: defaults(s),
		AggregateLimits: aggregateLimits(s),
		InternalPrefix:  e.internalPrefix(),
		Ctx:             ctx,
	})
	if err != nil {
		return Result{}, err
	}
	q := &catalog.Query{ID: id, SQL: st.SQL(), Sink: target.Name, State: catalog.Running, Plan: plan.Graph, Guarantee: e.sessionGuarantee(s), MaxRecordBytes: sessionMaxRecordBytes(s), Compression: s.Properties[propCompression]}
	if ctx, err = commit(ctx); err != nil {
		return Result{}, err
	}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.CreateQuery, Query: q}); err != nil {
		return Result{}, &internalError{err}
	}
	if err := e.startPersistent(ctx, q); err != nil {
		return Result{}, internal("query %s was created but could not start: %v", id, err)
	}
	return Result{Kind: ResultStatus, Message: "Created query with ID " + id, QueryID: id}, nil
}

// didYouMean suggests the source whose name differs from name only in case.
func (e *Engine) didYouMean(name string) string {
	for _, src := range e.cat.Sources() {
		if src.Name != name && strings.EqualFold(src.Name, name) {
			if src.Name == strings.ToUpper(src.Name) {
				return fmt.Sprintf("\nDid you mean %s? Hint: try removing double quotes from the source name.", src.Name)
			}
			return fmt.Sprintf("\nDid you mean \"%s\"? Hint: wrap the source name in double quotes to make it case-sensitive.", src.Name)
		}
	}
	return ""
}

func (e *Engine) terminate(ctx context.Context, st *ast.Terminate) (Result, error) {
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	var ids []string
	if st.All {
		for _, q := range e.cat.Queries() {
			ids = append(ids, q.ID)
		}
	} else {
		id, ok := e.findQuery(st.QueryID)
		if !ok {
			e.mu.Lock()
			tq := e.transient[st.QueryID]
			sq := e.scalable[st.QueryID]
			e.mu.Unlock()
			if sq != nil {
				// Its Stream sees the end and releases itself.
				sq.tap.drop(sq, nil)
				return Result{Kind: ResultStatus, Message: "Query terminated."}, nil
			}
			if tq != nil {
				// Its Stream sees the end and releases itself.
				_ = tq.Stop()
				return Result{Kind: ResultStatus, Message: "Query terminated."}, nil
			}
			return Result{}, userError(st.Pos, "Failed to terminate query with query ID: '%s'\nSHOW QUERIES lists the running queries.", st.QueryID)
		}
		ids = []string{id}
	}
	ctx, err := commit(ctx)
	if err != nil {
		return Result{}, err
	}
	for _, id := range ids {
		if err := e.terminateQuery(ctx, id); err != nil {
			return Result{}, err
		}
	}
	msg := "Query terminated."
	if st.All {
		msg = fmt.Sprintf("%d %s terminated.", len(ids), plural(len(ids), "query", "queries"))
	}
	return Result{Kind: ResultStatus, Message: msg}, nil
}

// findQuery finds a persistent query by id: exactly as written, else
// ignoring case (ids are upper-case unless a quoted sink name made them
// otherwise).
func (e *Engine) findQuery(id string) (string, bool) {
	if _, ok := e.cat.Query(id); ok {
		return id, true
	}
	var found string
	for _, q := range e.cat.Queries() {
		if strings.EqualFold(q.ID, id) {
			if found != "" {
				return "", false
			}
			found = q.ID
		}
	}
	return found, found != ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// pauseResume stops queries where they are, their offsets committed, or
// starts them again from there. The state is in the command log, so a
// restart keeps a paused query paused.
func (e *Engine) pauseResume(ctx context.Context, st *ast.PauseResume) (Result, error) {
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	want, verb := catalog.Paused, "paused"
	if st.Resume {
		want, verb = catalog.Running, "resumed"
	}
	var ids []string
	if st.All {
		for _, q := range e.cat.Queries() {
			if q.State != want {
				ids = append(ids, q.ID)
			}
		}
	} else {
		id, ok := e.findQuery(st.QueryID)
		if !ok {
			return Result{}, userError(st.Pos, "unknown query id %s; SHOW QUERIES lists the persistent queries", st.QueryID)
		}
		if q, _ := e.cat.Query(id); q.State == want {
			return Result{Kind: ResultStatus, Message: fmt.Sprintf("Query %s is already %s.", id, verb)}, nil
		}
		ids = []string{id}
	}
	ctx, err := commit(ctx)
	if err != nil {
		return Result{}, err
	}
	for _, id := range ids {
		if !st.Resume {
			e.mu.Lock()
			rq := e.running[id]
			delete(e.running, id)
			e.mu.Unlock()
			if rq != nil {
				_ = rq.Stop()
			}
		}
		if err := e.write(ctx, &catalog.Command{Kind: catalog.SetQueryState, QueryID: id, State: want}); err != nil {
			return Result{}, &internalError{err}
		}
		if st.Resume {
			q, _ := e.cat.Query(id)
			if err := e.startPersistent(ctx, q); err != nil {
				return Result{}, internal("query %s was resumed but could not start: %v", id, err)
			}
		}
	}
	if st.All {
		return Result{Kind: ResultStatus, Message: fmt.Sprintf("%d %s %s.", len(ids), plural(len(ids), "query", "queries"), verb)}, nil
	}
	return Result{Kind: ResultStatus, Message: fmt.Sprintf("Query %s %s.", ids[0], verb)}, nil
}

// dropChecks says whether source name can be dropped, as ksqlDB does: not
// while INSERT INTO queries read or write it, nor while sources created
// from it read it. It returns the queries the drop terminates: the one the
// source was created with, and the materializations of a CREATE SOURCE
// TABLE.
func (e *Engine) dropChecks(pos ast.Pos, name string) ([]string, error) {
	own := e.materializations(name)
	if id, ok := e.cat.CreatedBy(name); ok && !slices.Contains(own, id) {
		own = append(own, id)
	}
	// INSERT INTO queries: the writers and readers created on their own.
	insert := func(ids []string) []string {
		var out []string
		for _, id := range ids {
			q, ok := e.cat.Query(id)
			if !ok || slices.Contains(own, id) {
				continue
			}
			if created, ok := e.cat.CreatedBy(q.Sink); ok && created == id {
				continue // a query another source was created with
			}
			out = append(out, id)
		}
		sort.Strings(out)
		return out
	}
	if ws, rs := insert(e.cat.Writers(name)), insert(e.cat.Readers(name)); len(ws)+len(rs) > 0 {
		return nil, userError(pos, "Cannot drop %s.\nThe following queries read from this source: [%s].\nThe following queries write into this source: [%s].\nYou need to terminate them before dropping %s.",
			name, strings.Join(rs, ", "), strings.Join(ws, ", "), name)
	}
	var dependents []string
	for _, id := range e.cat.Readers(name) {
		if slices.Contains(own, id) {
			continue
		}
		if q, ok := e.cat.Query(id); ok && !slices.Contains(dependents, q.Sink) {
			dependents = append(dependents, q.Sink)
		}
	}
	if len(dependents) > 0 {
		sort.Strings(dependents)
		return nil, userError(pos, "Cannot drop %s.\nThe following streams and/or tables read from this source: [%s].\nYou need to drop them before dropping %s.",
			name, strings.Join(dependents, ", "), name)
	}
	return own, nil
}

func (e *Engine) drop(ctx context.Context, st *ast.Drop) (Result, error) {
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	src, ok := e.cat.Source(st.Name)
	if !ok {
		if st.IfExists {
			return Result{Kind: ResultStatus, Message: fmt.Sprintf("Source %s does not exist.", st.Name)}, nil
		}
		return Result{}, userError(st.NamePos, "Source %s does not exist.\nSHOW STREAMS and SHOW TABLES list the sources; DROP ... IF EXISTS does nothing when there is none.", st.Name)
	}
	if src.System {
		return Result{}, systemSourceError(st.NamePos, st.Name, "drop")
	}
	if want := catalog.Kind(st.Kind.String()); src.Kind != want {
		return Result{}, userError(st.NamePos, "Incompatible data source type is %s, but statement was DROP %s\n%s is a %s: use DROP %s.", src.Kind, want, st.Name, kindWord(src.Kind), src.Kind)
	}
	if st.DeleteTopic {
		if src.IsSource {
			return Result{}, userError(st.NamePos, "Cannot delete topic for read-only source: %s\nIt was created with CREATE SOURCE: its topic belongs to whoever writes it; drop the source without DELETE TOPIC.", st.Name)
		}
		if err := e.checkTopic(st.NamePos, useDelete, src.Topic); err != nil {
			return Result{}, err
		}
		var others []string
		for _, o := range e.cat.Sources() {
			if o.Name != src.Name && o.Topic == src.Topic {
				others = append(others, o.Name)
			}
		}
		if len(others) > 0 {
			return Result{}, userError(st.NamePos, "Refusing to delete topic. Found other data sources (%s) using topic %s\nDrop them first, or drop %s without DELETE TOPIC.", strings.Join(others, ", "), src.Topic, st.Name)
		}
	}
	own, err := e.dropChecks(st.NamePos, st.Name)
	if err != nil {
		return Result{}, err
	}
	ctx, err = commit(ctx)
	if err != nil {
		return Result{}, err
	}
	for _, id := range own {
		if err := e.terminateQuery(ctx, id); err != nil {
			return Result{}, err
		}
	}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.DropSource, Name: st.Name}); err != nil {
		return Result{}, &internalError{err}
	}
	msg := fmt.Sprintf("Source `%s` (topic: %s) was dropped.", st.Name, src.Topic)
	if st.DeleteTopic {
		if err := e.cfg.Kafka.DeleteTopic(ctx, src.Topic); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
			return Result{}, internal("%s was dropped, but its topic %s could not be deleted: %v", st.Name, src.Topic, err)
		}
		msg = fmt.Sprintf("Source `%s` (topic: %s) was dropped and its topic deleted.", st.Name, src.Topic)
	}
	return Result{Kind: ResultStatus, Message: msg}, nil
}
