package rest

import (
	"context"
	"errors"
	"net/http"

	"github.com/sluice-sql/sluice/engine/api"
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

// refuseQueries is /ksql's Admit: queries and PRINT go to /query, as in
// ksqlDB (error 40002).
func refuseQueries(st api.StatementInfo) error {
	if st.Kind.IsQuery() {
		return &api.StatementError{Statement: st.Text, Start: st.Start, End: st.End, Code: api.CodeQueryEndpoint, Msg: queryEndpointMessage}
	}
	return nil
}

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

	results, err := h.eng.Execute(ctx, sess, req.KSQL, api.Options{Admit: refuseQueries})
	// A query cannot pass refuseQueries; a stream is closed all the same.
	closeStreams(results)
	entities := []any{}
	for _, res := range results {
		if e := h.entity(ctx, res); e != nil {
			entities = append(entities, e)
		}
	}
	// A request of blanks or comments only runs nothing and says so with
	// no entity, as in ksqlDB.
	if err != nil && !(len(results) == 0 && noStatement(err)) {
		// The statement refused with 40002 is answered with its text and
		// ksqlDB's message, the entities of those before it too.
		body := statementErrorBody(err, req.KSQL, entities)
		writeError(w, statusOf(body.Code), body)
		return
	}
	w.Header().Set("Content-Type", ksqlContentType(r))
	writeJSON(w, http.StatusOK, entities)
}

// noStatement reports whether err is the engine's answer to a script that
// holds no statement (blanks or comments only).
func noStatement(err error) bool {
	return errors.Is(err, api.ErrNoStatement)
}

// closeStreams closes the row streams of results.
func closeStreams(results []api.Result) {
	for _, r := range results {
		if r.Stream != nil {
			r.Stream.Close()
		}
	}
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

// entity is the /ksql entity of one statement's result, or nil for a
// statement ksqlDB answers with none: a status without a command (SET,
// UNSET, DEFINE, UNDEFINE, INSERT VALUES).
func (h *Handler) entity(ctx context.Context, r api.Result) any {
	// ksqlDB's statement texts end with their semicolon.
	text := r.Statement + ";"
	switch r.Kind {
	case api.ResultStatus:
		if r.Command == "" {
			return nil
		}
		msg := r.Message
		if msg == "" {
			msg = "Done"
		}
		var qid *string
		if r.QueryID != "" {
			q := r.QueryID
			qid = &q
		}
		cs := commandStatus{Status: api.StatusSuccess, Message: msg, QueryID: qid}
		return currentStatus{Type: "currentStatus", StatementText: text, CommandID: r.Command, CommandStatus: cs,
			CommandSequenceNumber: r.CommandSeq, Warnings: []any{}}
	case api.ResultEntity:
		return h.entityJSON(ctx, text, r.Entity)
	}
	return nil
}
