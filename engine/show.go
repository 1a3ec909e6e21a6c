package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

func (e *Engine) show(ctx context.Context, s *Session, st *ast.Show) (Result, error) {
	switch st.What {
	case ast.ShowStreams, ast.ShowTables:
		kind, title := catalog.Stream, "Stream Name"
		if st.What == ast.ShowTables {
			kind, title = catalog.Table, "Table Name"
		}
		t := &Table{Columns: []string{title, "Kafka Topic", "Key Format", "Value Format", "Windowed"}}
		if st.Extended {
			t.Columns = append(t.Columns, "Partitions", "Timestamp", "Columns", "Written By", "Read By")
		}
		for _, src := range e.cat.Sources() {
			if src.Kind != kind {
				continue
			}
			row := []string{src.Name, src.Topic, src.KeyFormat, src.ValueFormat, fmt.Sprint(src.Window != nil)}
			if st.Extended {
				cols := make([]string, 0, len(src.Key)+len(src.Value))
				for _, c := range src.Key {
					cols = append(cols, c.Name+" "+c.Type.String()+" KEY")
				}
				for _, c := range src.Value {
					cols = append(cols, c.Name+" "+c.Type.String())
				}
				row = append(row, fmt.Sprint(src.Partitions), orDefault(src.Timestamp, "ROWTIME"), strings.Join(cols, ", "),
					strings.Join(e.cat.Writers(src.Name), ", "), strings.Join(e.cat.Readers(src.Name), ", "))
			}
			t.Rows = append(t.Rows, row)
		}
		return Result{Kind: ResultTable, Table: t}, nil
	case ast.ShowQueries:
		t := &Table{Columns: []string{"Query ID", "Query Type", "Status", "Sink Name", "Sink Kafka Topic", "Query String"}}
		if st.Extended {
			t.Columns = append(append(t.Columns, "Processing Guarantee"), statsColumns...)
			if e.cluster != nil {
				t.Columns = append(t.Columns, "Partitions")
			}
		}
		owners := e.ownership()
		for _, q := range e.cat.Queries() {
			topic := ""
			if q.Plan.Sink != nil {
				topic = q.Plan.Sink.Topic
			}
			row := []string{q.ID, "PERSISTENT", e.queryStatus(q.ID), q.Sink, topic, q.SQL}
			if st.Extended {
				e.mu.Lock()
				rq := e.running[q.ID]
				e.mu.Unlock()
				row = append(append(row, e.guaranteeOf(q)), statsRow(ctx, rq)...)
				if e.cluster != nil {
					row = append(row, owners)
				}
			}
			t.Rows = append(t.Rows, row)
		}
		e.mu.Lock()
		var ids []string
		for id := range e.transient {
			ids = append(ids, id)
		}
		e.mu.Unlock()
		sort.Strings(ids)
		for _, id := range ids {
			row := []string{id, "PUSH", "RUNNING", "", "", ""}
			if st.Extended {
				e.mu.Lock()
				tq := e.transient[id]
				e.mu.Unlock()
				// A push query writes nothing to commit.
				row = append(append(row, AtLeastOnce), statsRow(ctx, tq)...)
				if e.cluster != nil {
					row = append(row, "this server")
				}
			}
			t.Rows = append(t.Rows, row)
		}
		t.Footer = "For detailed information on a Query run: EXPLAIN <Query ID>;"
		return Result{Kind: ResultTable, Table: t}, nil
	case ast.ShowTopics:
		topics, err := e.cfg.Kafka.ListTopics(ctx)
		if err != nil {
			return Result{}, internal("cannot list topics: %v", err)
		}
		t := &Table{Columns: []string{"Kafka Topic", "Partitions", "Partition Replicas"}}
		for _, tp := range topics {
			if strings.HasPrefix(tp.Name, "_") && !st.Extended {
				continue
			}
			t.Rows = append(t.Rows, []string{tp.Name, fmt.Sprint(tp.Partitions), fmt.Sprint(tp.ReplicationFactor)})
		}
		return Result{Kind: ResultTable, Table: t}, nil
	case ast.ShowProperties:
		t := &Table{Columns: []string{"Property", "Scope", "Value"}}
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Rows = append(t.Rows, []string{k, "SESSION", Redact(k, s.Properties[k])})
		}
		if _, ok := s.Properties[propOffsetReset]; !ok {
			t.Rows = append(t.Rows, []string{propOffsetReset, "DEFAULT", "latest"})
		}
		if _, ok := s.Properties[propGuarantee]; !ok {
			t.Rows = append(t.Rows, []string{propGuarantee, "SERVER", e.cfg.ProcessingGuarantee})
		}
		t.Rows = append(t.Rows, []string{"ksql.service.id", "SERVER", e.cfg.ServiceID})
		return Result{Kind: ResultTable, Table: t}, nil
	case ast.ShowVariables:
		t := &Table{Columns: []string{"Variable Name", "Value"}}
		names := make([]string, 0, len(s.Variables))
		for k := range s.Variables {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			t.Rows = append(t.Rows, []string{k, s.Variables[k]})
		}
		return Result{Kind: ResultTable, Table: t}, nil
	case ast.ShowTypes:
		t := &Table{Columns: []string{"Type Name", "Schema"}}
		for _, n := range e.cat.TypeNames() {
			typ, _ := e.cat.Type(n)
			t.Rows = append(t.Rows, []string{n, typ.String()})
		}
		return Result{Kind: ResultTable, Table: t}, nil
	case ast.ShowFunctions:
		return showFunctions(), nil
	}
	return Result{}, userError(st.Pos, "%s is not supported yet", statementName(st))
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
	src, ok := e.cat.Source(st.Name)
	if !ok {
		return Result{}, userError(st.NamePos, "%s does not exist; SHOW STREAMS lists the streams", st.Name)
	}
	t := &Table{Columns: []string{"Field", "Type"}}
	t.Title = fmt.Sprintf("Name                 : %s", src.Name)
	for _, c := range src.Key {
		suffix := "(key)"
		if src.Kind == catalog.Table {
			suffix = "(primary key)"
		}
		t.Rows = append(t.Rows, []string{c.Name, c.Type.String() + "  " + suffix})
	}
	for _, c := range src.Value {
		t.Rows = append(t.Rows, []string{c.Name, c.Type.String()})
	}
	for i, c := range src.Headers {
		suffix := "(headers)"
		if k := src.HeaderKeys[i]; k != "" {
			suffix = "(header('" + k + "'))"
		}
		t.Rows = append(t.Rows, []string{c.Name, c.Type.String() + "  " + suffix})
	}
	if st.Extended {
		var b strings.Builder
		fmt.Fprintf(&b, "Type                 : %s\n", src.Kind)
		fmt.Fprintf(&b, "Timestamp field      : %s\n", orDefault(src.Timestamp, "Not set - using <ROWTIME>"))
		fmt.Fprintf(&b, "Key format           : %s\n", src.KeyFormat)
		if src.Window != nil {
			fmt.Fprintf(&b, "Windowed key         : %s\n", src.Window)
		}
		fmt.Fprintf(&b, "Value format         : %s\n", src.ValueFormat)
		fmt.Fprintf(&b, "Kafka topic          : %s (partitions: %d)\n", src.Topic, src.Partitions)
		if owners := e.ownership(); owners != "" {
			fmt.Fprintf(&b, "Cluster              : %s\n", owners)
		}
		fmt.Fprintf(&b, "Statement            : %s\n", src.SQL)
		if ws := e.cat.Writers(src.Name); len(ws) > 0 {
			fmt.Fprintf(&b, "Queries that write into this %s: %s\n", kindWord(src.Kind), strings.Join(ws, ", "))
			for _, id := range ws {
				if q, ok := e.cat.Query(id); ok {
					fmt.Fprintf(&b, "Processing guarantee : %s (%s)\n", e.guaranteeOf(q), id)
				}
			}
		}
		if rs := e.cat.Readers(src.Name); len(rs) > 0 {
			fmt.Fprintf(&b, "Queries that read from this %s: %s\n", kindWord(src.Kind), strings.Join(rs, ", "))
		}
		stats := false
		for _, id := range append(e.cat.Writers(src.Name), e.cat.Readers(src.Name)...) {
			e.mu.Lock()
			rq := e.running[id]
			e.mu.Unlock()
			if rq == nil {
				continue
			}
			if !stats {
				b.WriteString("Local runtime statistics\n------------------------\n")
				stats = true
			}
			writeRuntimeStats(ctx, &b, id, rq)
		}
		t.Footer = b.String()
	} else {
		t.Footer = fmt.Sprintf("For runtime statistics and query details run: DESCRIBE %s EXTENDED;", src.Name)
	}
	return Result{Kind: ResultTable, Table: t}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (e *Engine) explain(ctx context.Context, s *Session, st *ast.Explain) (Result, error) {
	if st.Statement != nil {
		if err := planning(ctx); err != nil {
			return Result{}, err
		}
		var q *ast.Query
		opts := planner.QueryOptions{OffsetReset: s.offsetReset(), AggregateLimits: s.aggregateLimits(), Ctx: ctx}
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
			return Result{}, userError(st.Statement.Position(), "EXPLAIN takes a query id, a SELECT or a CREATE ... AS SELECT")
		}
		plan, err := planner.PlanSelect(e.cat, q, opts)
		if err != nil {
			return Result{}, err
		}
		t := &Table{Title: "Query String         : " + st.Statement.SQL(), Footer: "Execution plan\n" + plan.Graph.String()}
		return Result{Kind: ResultTable, Table: t}, nil
	}
	id, ok := e.findQuery(st.QueryID)
	q, _ := e.cat.Query(id)
	if !ok {
		return Result{}, userError(st.Pos, "unknown query id %s; SHOW QUERIES lists the running queries", st.QueryID)
	}
	t := &Table{
		Title:   fmt.Sprintf("ID                   : %s\nQuery Type           : PERSISTENT\nSQL                  : %s\nStatus               : %s", q.ID, q.SQL, e.queryStatus(q.ID)),
		Columns: []string{"Field", "Type"},
		Footer:  "Execution plan\n" + q.Plan.String(),
	}
	for i, c := range q.Plan.Output {
		typ := c.Type.String()
		if i < q.Plan.KeyColumns {
			typ += "  (key)"
		}
		t.Rows = append(t.Rows, []string{c.Name, typ})
	}
	return Result{Kind: ResultTable, Table: t}, nil
}
