package rest

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/render"
	"github.com/sluice-sql/sluice/internal/wire"
)

// This file draws the engine's entities (package api) as ksqlDB's /ksql
// entities: the same names and shapes as io.confluent.ksql.rest.entity's.

// entityJSON is ksqlDB's entity for a listing or description; text is its
// statement's text.
func (h *Handler) entityJSON(ctx context.Context, text string, en api.Entity) any {
	base := func(typ string) map[string]any {
		return map[string]any{"@type": typ, "statementText": text, "warnings": []any{}}
	}
	switch en := en.(type) {
	case *api.SourceList:
		if en.Extended {
			list := []any{}
			for _, src := range en.Sources {
				// Each source with its queries and their figures, as
				// DESCRIBE ... EXTENDED gives them.
				d, err := h.eng.DescribeSource(ctx, src.Name, true)
				if err != nil {
					d = &api.SourceDescription{Source: src, Extended: true}
				}
				list = append(list, sourceDescription(d))
			}
			e := base("source_descriptions")
			e["sourceDescriptions"] = list
			return e
		}
		key := "streams"
		if en.Kind == api.SourceTable {
			key = "tables"
		}
		list := []any{}
		for _, src := range en.Sources {
			list = append(list, map[string]any{"type": string(src.Kind), "name": src.Name, "topic": src.Topic,
				"keyFormat": src.KeyFormat, "valueFormat": src.ValueFormat, "isWindowed": src.Windowed()})
		}
		e := base(key)
		e[key] = list
		return e
	case *api.SourceDescription:
		e := base("sourceDescription")
		e["sourceDescription"] = sourceDescription(en)
		return e
	case *api.QueryList:
		if en.Extended {
			list := []any{}
			for i := range en.Queries {
				q := &en.Queries[i]
				d := &api.QueryDescription{Query: q}
				if q.Type == api.Persistent {
					// The plan and topology come with EXPLAIN's description;
					// the figures stay the listing's.
					if p, err := h.eng.ExplainQuery(ctx, q.ID); err == nil {
						d.Plan, d.Topology = p.Plan, p.Topology
					}
				}
				list = append(list, h.queryDescription(ctx, d, ""))
			}
			e := base("query_descriptions")
			e["queryDescriptions"] = list
			return e
		}
		list := []any{}
		for _, q := range en.Queries {
			list = append(list, queryInfo(q))
		}
		e := base("queries")
		e["queries"] = list
		return e
	case *api.TopicList:
		list := []any{}
		for _, tp := range en.Topics {
			replicas := make([]int, tp.Partitions)
			for i := range replicas {
				replicas[i] = tp.ReplicationFactor
			}
			list = append(list, map[string]any{"name": tp.Name, "replicaInfo": replicas})
		}
		e := base("kafka_topics")
		e["topics"] = list
		return e
	case *api.PropertyList:
		// ksqlDB's PropertiesList: every property in ksqlDB's scope KSQL
		// (the engine names them as ksqlDB does); those the session sets
		// are listed in overwrittenProperties, those at their default in
		// defaultProperties. A default of no value is null.
		list := []any{}
		overwritten, atDefault := []string{}, []string{}
		for _, p := range en.Properties {
			name := p.Name
			var value any = p.Value
			switch p.Scope {
			case "SESSION":
				overwritten = append(overwritten, name)
			case "DEFAULT":
				atDefault = append(atDefault, name)
				if p.Value == "" {
					value = nil
				}
			}
			list = append(list, map[string]any{"name": name, "scope": "KSQL", "value": value})
		}
		e := base("properties")
		e["properties"], e["overwrittenProperties"], e["defaultProperties"] = list, overwritten, atDefault
		return e
	case *api.VariableList:
		list := []any{}
		for _, v := range en.Variables {
			list = append(list, map[string]any{"name": v.Name, "value": v.Value})
		}
		e := base("variables")
		e["variables"] = list
		return e
	case *api.TypeList:
		m := map[string]any{}
		for _, t := range en.Types {
			m[t.Name] = schemaOf(t.Type)
		}
		e := base("type_list")
		e["types"] = m
		return e
	case *api.FunctionList:
		list := []any{}
		for _, f := range en.Functions {
			list = append(list, map[string]any{"name": f.Name, "type": f.Type, "category": f.Category})
		}
		e := base("function_names")
		e["functions"] = list
		return e
	case *api.FunctionDescription:
		// ksqlDB's FunctionDescriptionList: one entry per variation, with
		// its argument types.
		f := en.Function
		e := base("describe_function")
		e["name"], e["description"], e["type"] = f.Name, f.Description, f.Type
		e["author"], e["version"], e["path"] = "", "", "internal"
		vars := []any{}
		for _, v := range f.Variations {
			args := []any{}
			types := []any{}
			for _, a := range variationArgs(v) {
				typ, name := splitArg(a)
				args = append(args, map[string]any{"name": name, "type": typ, "description": "", "isVariadic": a == "..."})
				types = append(types, typ)
			}
			vars = append(vars, map[string]any{"arguments": args, "argumentTypes": types, "returnType": "", "description": v})
		}
		e["functions"] = vars
		return e
	case *api.QueryDescription:
		e := base("queryDescription")
		e["queryDescription"] = h.queryDescription(ctx, en, text)
		return e
	}
	if e := connectorEntityJSON(base, en); e != nil {
		return e
	}
	// An entity this facade does not know yet: its kind at least.
	return base("sluice_entity")
}

// queryInfo is ksqlDB's RunningQuery.
func queryInfo(q api.QueryInfo) map[string]any {
	out := map[string]any{"queryString": q.SQL, "id": q.ID, "queryType": string(q.Type), "state": q.State,
		"statusCount": map[string]int{q.State: 1}, "sinks": []string{}, "sinkKafkaTopics": []string{}}
	if q.Sink != "" {
		out["sinks"] = []string{q.Sink}
	}
	if q.SinkTopic != "" {
		out["sinkKafkaTopics"] = []string{q.SinkTopic}
	}
	return out
}

// sourceDescription is ksqlDB's SourceDescription of a stream or table;
// extended, with the runtime figures of the queries writing and reading
// it in statistics and errorStats.
func sourceDescription(d *api.SourceDescription) map[string]any {
	src := d.Source
	fields := []fieldJSON{}
	for _, c := range src.Columns {
		f := fieldJSON{Name: c.Name, Schema: schemaOf(c.Type)}
		switch c.Role {
		case api.RoleKey:
			f.Type = "KEY"
		case api.RoleHeader:
			f.Type = "HEADER"
		}
		fields = append(fields, f)
	}
	queries := func(qs []api.QueryInfo) []any {
		out := []any{}
		for _, q := range qs {
			out = append(out, queryInfo(q))
		}
		return out
	}
	var window any
	if src.WindowType != "" {
		window = src.WindowType
	}
	stats, errorStats := "", ""
	if d.Extended {
		stats, errorStats = statistics(d)
	}
	return map[string]any{
		"name": src.Name, "windowType": window, "readQueries": queries(d.Readers),
		"writeQueries": queries(d.Writers), "fields": fields, "type": string(src.Kind),
		"timestamp": src.Timestamp, "statistics": stats, "errorStats": errorStats, "extended": d.Extended,
		"keyFormat": src.KeyFormat, "valueFormat": src.ValueFormat, "topic": src.Topic,
		"partitions": src.Partitions, "replication": 1, "statement": src.SQL,
		"queryOffsetSummaries": []any{}, "sourceConstraints": []any{},
	}
}

// statistics are the figures of the queries that write into and read from
// a source and run here, one query a line: the line DESCRIBE EXTENDED
// prints under "Local runtime statistics", and the failed-message counts
// of those that failed on some.
func statistics(d *api.SourceDescription) (stats, errorStats string) {
	var lines, errs []string
	for _, q := range append(append([]api.QueryInfo(nil), d.Writers...), d.Readers...) {
		if !q.Running {
			continue
		}
		lines = append(lines, render.RuntimeStats(wire.EncodeQuery(&q)))
		if q.Stats.Errors > 0 {
			errs = append(errs, fmt.Sprintf("%s: failed-messages: %d", q.ID, q.Stats.Errors))
		}
	}
	return strings.Join(lines, "\n"), strings.Join(errs, "\n")
}

// sluiceStatistics are a query's figures as numbers; a figure not
// measured is null.
type sluiceStatistics struct {
	RecordsIn        int64    `json:"recordsIn"`
	RecordsOut       int64    `json:"recordsOut"`
	Filtered         int64    `json:"filtered"`
	Errors           int64    `json:"errors"`
	Late             int64    `json:"late"`
	NullsDropped     int64    `json:"nullsDropped"`
	LagRecords       *int64   `json:"lagRecords"`
	LagSeconds       *float64 `json:"lagSeconds"`
	RestorePercent   int      `json:"restorePercent"`
	LastRecordMillis *int64   `json:"lastRecordMillis"`
}

func statsOf(s api.Stats) sluiceStatistics {
	out := sluiceStatistics{RecordsIn: s.RecordsIn, RecordsOut: s.RecordsOut, Filtered: s.Filtered, Errors: s.Errors,
		Late: s.Late, NullsDropped: s.NullsDropped, RestorePercent: s.RestorePercent}
	if s.LagMeasured {
		records, secs := s.LagRecords, s.LagSeconds
		out.LagRecords, out.LagSeconds = &records, &secs
	}
	if !s.LastRecord.IsZero() {
		ms := s.LastRecord.UnixMilli()
		out.LastRecordMillis = &ms
	}
	return out
}

// queryDescription is ksqlDB's QueryDescription: of a persistent or push
// query (d.Query set), with Sluice's figures in statistics (the line
// DESCRIBE EXTENDED prints; empty for a query that does not run here) and
// sluiceStatistics; or of a statement EXPLAIN planned, whose text is text.
// The execution plan is the text EXPLAIN prints in the shell, and the
// topology the processing topology it prints below (empty for a pull
// query).
func (h *Handler) queryDescription(ctx context.Context, d *api.QueryDescription, text string) map[string]any {
	p := wire.EncodePlan(d)
	plan := "Execution plan\n" + render.PlanText(p.GetLines())
	out := map[string]any{"id": "", "statementText": text, "windowType": nil, "fields": []fieldJSON{},
		"sources": []string{}, "sinks": []string{}, "topology": render.TopologyText(p.GetTopology()),
		"executionPlan":        strings.TrimSpace(render.Description(p) + "\n" + plan),
		"overriddenProperties": map[string]any{}, "ksqlHostQueryStatus": map[string]any{},
		"queryType": "PULL", "queryErrors": []any{}, "tasksMetadata": []any{}, "state": "RUNNING"}
	q := d.Query
	if q == nil {
		return out
	}
	out["id"], out["statementText"], out["queryType"], out["state"] = q.ID, q.SQL, string(q.Type), q.State
	if len(d.Plan) == 0 {
		// A push query's plan is not kept.
		out["topology"], out["executionPlan"] = "", ""
	}
	if len(q.Sources) > 0 {
		out["sources"] = q.Sources
	}
	if q.Sink != "" {
		out["sinks"] = []string{q.Sink}
		if sink, err := h.eng.DescribeSource(ctx, q.Sink, false); err == nil && sink.Source.WindowType != "" {
			out["windowType"] = sink.Source.WindowType
		}
	}
	fields := []fieldJSON{}
	for i, c := range q.Columns {
		f := fieldJSON{Name: c.Name, Schema: schemaOf(c.Type)}
		if i < q.KeyColumns {
			f.Type = "KEY"
		}
		fields = append(fields, f)
	}
	out["fields"] = fields
	out["statistics"] = ""
	if q.Running {
		out["statistics"] = render.RuntimeStats(wire.EncodeQuery(q))
	}
	out["sluiceStatistics"] = statsOf(q.Stats)
	return out
}

// variationArgs splits the argument list of a variation such as
// F(ARRAY<T>, INTEGER k) into its arguments, leaving nested lists whole.
func variationArgs(v string) []string {
	open := strings.IndexByte(v, '(')
	if open < 0 {
		return nil
	}
	var out []string
	depth, start := 0, open+1
	for i := open; i < len(v); i++ {
		switch v[i] {
		case '(', '<':
			depth++
		case ')', '>':
			depth--
			if depth == 0 {
				if a := strings.TrimSpace(v[start:i]); a != "" {
					out = append(out, a)
				}
				return out
			}
		case ',':
			if depth == 1 {
				out = append(out, strings.TrimSpace(v[start:i]))
				start = i + 1
			}
		}
	}
	return out
}

// splitArg splits an argument of a variation, "ARRAY<T> in", into its type
// and its name (a lower-case word after the type), when it has one.
func splitArg(a string) (typ, name string) {
	i := strings.LastIndexByte(a, ' ')
	if i <= 0 {
		return a, ""
	}
	for _, r := range a[i+1:] {
		if !(r >= 'a' && r <= 'z' || r == '_' || r >= '0' && r <= '9') {
			return a, ""
		}
	}
	return a[:i], a[i+1:]
}
