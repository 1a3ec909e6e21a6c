package rest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
)

// ksqlRequest is the body of POST /ksql.
type ksqlRequest struct {
	KSQL                  string         `json:"ksql"`
	StreamsProperties     map[string]any `json:"streamsProperties"`
	Properties            map[string]any `json:"properties"`
	SessionVariables      map[string]any `json:"sessionVariables"`
	CommandSequenceNumber *int64         `json:"commandSequenceNumber"`
}

// queryEndpointMessage is ksqlDB's answer to a query sent to /ksql.
const queryEndpointMessage = "The following statement types should be issued to the websocket endpoint '/query':\n\t* PRINT\n\t* SELECT"

// serveKSQL runs statements and answers with one entity per statement
// that has something to say, as ksqlDB's /ksql does. INSERT VALUES, SET,
// UNSET, DEFINE and UNDEFINE add no entity.
func (h *Handler) serveKSQL(w http.ResponseWriter, r *http.Request) {
	var req ksqlRequest
	if !h.readBody(w, r, &req) {
		return
	}
	props := req.StreamsProperties
	if props == nil {
		props = req.Properties
	}
	sess := session(props, req.SessionVariables)
	// Statements run to their end even while the server shuts down:
	// http.Server.Shutdown waits for them.
	ctx := r.Context()

	entities := []any{}
	fail := func(err error, stmt string) {
		body := statementErrorBody(err, stmt, entities)
		writeError(w, statusOf(body.Code), body)
	}
	script, err := parser.NewScript(req.KSQL)
	if err != nil {
		fail(parseError(req.KSQL, err), req.KSQL)
		return
	}
	lookup := func(name string) (string, bool) {
		v, ok := sess.Variables[strings.ToUpper(name)]
		return v, ok
	}
	for {
		st, err := script.Next(lookup)
		if err == io.EOF {
			break
		}
		if err != nil {
			fail(parseError(req.KSQL, err), req.KSQL)
			return
		}
		text := st.SQL()
		switch st.(type) {
		case *ast.Select, *ast.Print:
			ents := entities
			writeError(w, http.StatusBadRequest, errorBody{Type: "statement_error", Code: codeQueryEndpoint,
				Message: queryEndpointMessage, Statement: text + ";", Entities: &ents})
			return
		}
		results, err := h.eng.Execute(ctx, sess, text+";")
		for _, res := range results {
			if res.Stream != nil {
				res.Stream.Close()
			}
		}
		if err != nil {
			fail(shiftError(err, st.Position()), text+";")
			return
		}
		for _, res := range results {
			if e := h.entity(st, text+";", res); e != nil {
				entities = append(entities, e)
			}
		}
	}
	w.Header().Set("Content-Type", ksqlContentType(r))
	writeJSON(w, http.StatusOK, entities)
}

// ksqlContentType answers application/json to clients that ask for it, and
// ksqlDB's versioned type otherwise.
func ksqlContentType(r *http.Request) string {
	if accepts(r, "application/json") && !accepts(r, "application/vnd.ksql.v1+json") {
		return "application/json"
	}
	return "application/vnd.ksql.v1+json"
}

// requestContext is the request's context, also ended by Close.
func (h *Handler) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(h.shutdown, cancel)
	return ctx, func() { stop(); cancel() }
}

// parseError turns a parser error into an engine StatementError.
func parseError(sql string, err error) error {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return &engine.StatementError{Statement: pe.Statement, Line: pe.Line, Col: pe.Col, Msg: pe.Msg, Code: codeBadStatement}
	}
	return &engine.StatementError{Statement: sql, Msg: err.Error(), Code: codeBadStatement}
}

// shiftError moves the position of an error in one statement, run on its
// own, to the request's text, where the statement starts at p.
func shiftError(err error, p ast.Pos) error {
	var se *engine.StatementError
	if !errors.As(err, &se) || se.Line == 0 {
		return err
	}
	cp := *se
	if cp.Line == 1 {
		cp.Col += p.Col - 1
	}
	cp.Line += p.Line - 1
	return &cp
}

// currentStatus is ksqlDB's CommandStatusEntity: the outcome of a statement
// that changed the catalog or the running queries.
type currentStatus struct {
	Type                  string        `json:"@type"`
	StatementText         string        `json:"statementText"`
	CommandID             string        `json:"commandId"`
	CommandStatus         commandStatus `json:"commandStatus"`
	CommandSequenceNumber int64         `json:"commandSequenceNumber"`
	Warnings              []any         `json:"warnings"`
}

// commandStatus is ksqlDB's CommandStatus.
type commandStatus struct {
	Status  string  `json:"status"`
	Message string  `json:"message"`
	QueryID *string `json:"queryId"`
}

// commandID names a statement's command as ksqlDB does:
// stream/`NAME`/create, terminate/ID/execute; empty for statements that
// are not commands.
func commandID(st ast.Statement) string {
	kind := func(k ast.SourceKind) string { return strings.ToLower(k.String()) }
	switch st := st.(type) {
	case *ast.CreateSource:
		return kind(st.Kind) + "/`" + st.Name + "`/create"
	case *ast.CreateAsSelect:
		return kind(st.Kind) + "/`" + st.Name + "`/create"
	case *ast.InsertInto:
		return "stream/`" + st.Target + "`/create"
	case *ast.Drop:
		return kind(st.Kind) + "/`" + st.Name + "`/drop"
	case *ast.AlterSource:
		return kind(st.Kind) + "/`" + st.Name + "`/alter"
	case *ast.CreateType:
		return "type/`" + st.Name + "`/create"
	case *ast.DropType:
		return "type/`" + st.Name + "`/drop"
	case *ast.Terminate:
		if st.All {
			return "terminate/ALL/execute"
		}
		return "terminate/" + st.QueryID + "/execute"
	case *ast.Replay:
		return "replay/" + st.QueryID + "/execute"
	case *ast.PauseResume:
		verb := "pause"
		if st.Resume {
			verb = "resume"
		}
		if st.All {
			return verb + "/ALL/execute"
		}
		return verb + "/" + st.QueryID + "/execute"
	}
	return ""
}

// entity is the /ksql entity of one statement's result, or nil for a
// statement ksqlDB answers with none.
func (h *Handler) entity(st ast.Statement, text string, r engine.Result) any {
	switch st := st.(type) {
	case *ast.InsertValues, *ast.SetProperty, *ast.UnsetProperty, *ast.Define, *ast.Undefine:
		return nil
	case *ast.Show:
		return h.showEntity(st, text, r)
	case *ast.Describe:
		if src, err := h.eng.DescribeSource(st.Name); err == nil {
			d := h.sourceDescription(src, st.Extended)
			if st.Extended && r.Table != nil {
				// The runtime figures DESCRIBE EXTENDED prints, one query a
				// line.
				var stats []string
				for line := range strings.SplitSeq(r.Table.Footer, "\n") {
					if strings.Contains(line, ": total-messages: ") {
						stats = append(stats, line)
					}
				}
				d["statistics"] = strings.Join(stats, "\n")
			}
			return map[string]any{"@type": "sourceDescription", "statementText": text, "sourceDescription": d, "warnings": []any{}}
		}
	case *ast.Explain:
		return h.queryDescription(st, text, r)
	}
	if id := commandID(st); id != "" {
		msg := r.Message
		if msg == "" {
			msg = "Done"
		}
		var qid *string
		if r.QueryID != "" {
			q := r.QueryID
			qid = &q
		}
		cs := commandStatus{Status: "SUCCESS", Message: msg, QueryID: qid}
		return currentStatus{Type: "currentStatus", StatementText: text, CommandID: id, CommandStatus: cs,
			CommandSequenceNumber: h.recordCommand(id, cs), Warnings: []any{}}
	}
	return tableEntity(text, r)
}

// tableEntity is a listing with no ksqlDB counterpart, sent as its
// columns and rows.
func tableEntity(text string, r engine.Result) any {
	e := map[string]any{"@type": "sluice_table", "statementText": text, "warnings": []any{}}
	if r.Message != "" {
		e["message"] = r.Message
	}
	if t := r.Table; t != nil {
		rows := t.Rows
		if rows == nil {
			rows = [][]string{}
		}
		e["title"], e["columns"], e["rows"], e["footer"] = t.Title, t.Columns, rows, t.Footer
	}
	return e
}

// rows returns a listing's rows as maps from column name to cell.
func rows(r engine.Result) []map[string]string {
	out := []map[string]string{}
	if r.Table == nil {
		return out
	}
	for _, row := range r.Table.Rows {
		m := make(map[string]string, len(row))
		for i, c := range r.Table.Columns {
			if i < len(row) {
				m[c] = row[i]
			}
		}
		out = append(out, m)
	}
	return out
}

func (h *Handler) showEntity(st *ast.Show, text string, r engine.Result) any {
	base := func(typ string) map[string]any {
		return map[string]any{"@type": typ, "statementText": text, "warnings": []any{}}
	}
	switch st.What {
	case ast.ShowStreams, ast.ShowTables:
		kind, typ, key := catalog.Stream, "STREAM", "streams"
		if st.What == ast.ShowTables {
			kind, typ, key = catalog.Table, "TABLE", "tables"
		}
		list := []any{}
		for _, src := range h.eng.Sources(kind) {
			if st.Extended {
				list = append(list, h.sourceDescription(src, true))
				continue
			}
			list = append(list, map[string]any{"type": typ, "name": src.Name, "topic": src.Topic,
				"keyFormat": src.KeyFormat, "valueFormat": src.ValueFormat, "isWindowed": src.Windowed})
		}
		if st.Extended {
			e := base("source_descriptions")
			e["sourceDescriptions"] = list
			return e
		}
		e := base(key)
		e[key] = list
		return e
	case ast.ShowQueries:
		list := []any{}
		for _, q := range h.eng.Queries() {
			list = append(list, queryInfo(q))
		}
		e := base("queries")
		e["queries"] = list
		return e
	case ast.ShowTopics:
		list := []any{}
		for _, row := range rows(r) {
			n, _ := strconv.Atoi(row["Partitions"])
			rf, _ := strconv.Atoi(row["Partition Replicas"])
			replicas := make([]int, n)
			for i := range replicas {
				replicas[i] = rf
			}
			list = append(list, map[string]any{"name": row["Kafka Topic"], "replicaInfo": replicas})
		}
		e := base("kafka_topics")
		e["topics"] = list
		return e
	case ast.ShowProperties:
		list := []any{}
		for _, row := range rows(r) {
			list = append(list, map[string]any{"name": row["Property"], "scope": row["Scope"], "value": row["Value"]})
		}
		e := base("properties")
		e["properties"], e["overwrittenProperties"], e["defaultProperties"] = list, []string{}, []string{}
		return e
	case ast.ShowVariables:
		list := []any{}
		for _, row := range rows(r) {
			list = append(list, map[string]any{"name": row["Variable Name"], "value": row["Value"]})
		}
		e := base("variables")
		e["variables"] = list
		return e
	case ast.ShowTypes:
		m := map[string]any{}
		for _, n := range h.eng.Catalog().TypeNames() {
			t, _ := h.eng.Catalog().Type(n)
			m[n] = schemaOf(t)
		}
		e := base("type_list")
		e["types"] = m
		return e
	case ast.ShowFunctions:
		list := []any{}
		for _, row := range rows(r) {
			list = append(list, map[string]any{"name": row["Function Name"], "type": row["Type"], "category": ""})
		}
		e := base("function_names")
		e["functions"] = list
		return e
	}
	return tableEntity(text, r)
}

// queryInfo is ksqlDB's RunningQuery.
func queryInfo(q engine.QueryInfo) map[string]any {
	typ := "PERSISTENT"
	if q.Push {
		typ = "PUSH"
	}
	state, _, _ := strings.Cut(q.Status, ":")
	out := map[string]any{"queryString": q.SQL, "id": q.ID, "queryType": typ, "state": state,
		"statusCount": map[string]int{state: 1}, "sinks": []string{}, "sinkKafkaTopics": []string{}}
	if q.Sink != "" {
		out["sinks"] = []string{q.Sink}
	}
	if q.SinkTopic != "" {
		out["sinkKafkaTopics"] = []string{q.SinkTopic}
	}
	return out
}

// sourceDescription is ksqlDB's SourceDescription of a stream or table.
func (h *Handler) sourceDescription(src engine.SourceInfo, extended bool) map[string]any {
	fields := []fieldJSON{}
	for _, c := range src.Columns {
		f := fieldJSON{Name: c.Name, Schema: schemaOf(c.Type)}
		switch c.Role {
		case engine.RoleKey:
			f.Type = "KEY"
		case engine.RoleHeader:
			f.Type = "HEADER"
		}
		fields = append(fields, f)
	}
	queries := func(ids []string) []any {
		out := []any{}
		for _, id := range ids {
			if q, err := h.eng.DescribeQuery(id); err == nil {
				out = append(out, queryInfo(q))
			}
		}
		return out
	}
	var window any
	if src.Windowed {
		if s, ok := h.eng.Catalog().Source(src.Name); ok && s.Window != nil {
			window = strings.ToUpper(strings.Fields(s.Window.String() + " ")[0])
		}
	}
	return map[string]any{
		"name": src.Name, "windowType": window, "readQueries": queries(src.Readers),
		"writeQueries": queries(src.Writers), "fields": fields, "type": string(src.Kind),
		"timestamp": src.Timestamp, "statistics": "", "errorStats": "", "extended": extended,
		"keyFormat": src.KeyFormat, "valueFormat": src.ValueFormat, "topic": src.Topic,
		"partitions": src.Partitions, "replication": 1, "statement": src.SQL,
		"queryOffsetSummaries": []any{}, "sourceConstraints": []any{},
	}
}

// queryDescription answers EXPLAIN: ksqlDB's QueryDescriptionEntity for a
// persistent query, with Sluice's plan text as its execution plan.
func (h *Handler) queryDescription(st *ast.Explain, text string, r engine.Result) any {
	d := map[string]any{"id": st.QueryID, "statementText": text, "windowType": nil, "fields": []fieldJSON{},
		"sources": []string{}, "sinks": []string{}, "topology": "", "executionPlan": "",
		"overriddenProperties": map[string]any{}, "ksqlHostQueryStatus": map[string]any{},
		"queryType": "PERSISTENT", "queryErrors": []any{}, "tasksMetadata": []any{}, "state": "RUNNING"}
	if t := r.Table; t != nil {
		d["executionPlan"] = strings.TrimSpace(t.Title + "\n" + t.Footer)
		d["topology"] = t.Footer
	}
	if q, ok := h.eng.Catalog().Query(st.QueryID); ok {
		d["statementText"] = q.SQL
		d["sources"] = q.Sources()
		d["sinks"] = []string{q.Sink}
		d["state"] = string(q.State)
		fields := []fieldJSON{}
		for _, c := range q.Plan.Output {
			fields = append(fields, fieldJSON{Name: c.Name, Schema: schemaOf(c.Type)})
		}
		d["fields"] = fields
	} else {
		d["id"] = ""
		d["queryType"] = "PULL"
	}
	return map[string]any{"@type": "queryDescription", "statementText": text, "queryDescription": d, "warnings": []any{}}
}
