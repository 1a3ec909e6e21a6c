package rest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
)

// queryStreamRequest is the body of POST /query-stream.
type queryStreamRequest struct {
	SQL              string         `json:"sql"`
	Properties       map[string]any `json:"properties"`
	SessionVariables map[string]any `json:"sessionVariables"`
}

// The media types of /query-stream's two forms.
const (
	delimitedType = "application/vnd.ksqlapi.delimited.v1"
	jsonType      = "application/json"
)

// queryResult is a query's answer: a pull query's rows, a push query's
// or a PRINT's stream.
type queryResult struct {
	id     string
	cols   []types.Column
	stream *api.Stream
}

// noQueryMessage answers a request that holds no statement.
const noQueryMessage = "no query found; send one SELECT statement, such as SELECT * FROM s EMIT CHANGES;"

// admitQueries is the query endpoints' Admit: they run SELECT and PRINT
// only.
func admitQueries(st api.StatementInfo) error {
	if !st.Kind.IsQuery() {
		return &api.StatementError{Statement: st.Text, Line: st.Line, Col: st.Col, Code: api.CodeBadStatement,
			Msg: "this endpoint runs queries (SELECT and PRINT) only; send other statements to POST /ksql"}
	}
	return nil
}

// runQuery runs the one SELECT or PRINT of sql. On failure it answers the
// client itself and returns nil; otherwise the caller reads the stream and
// closes it.
func (h *Handler) runQuery(ctx context.Context, w http.ResponseWriter, sql string, sess *api.Session) *queryResult {
	fail := func(err error) {
		body := statementErrorBody(err, sql, nil)
		writeError(w, statusOf(body.Code), body)
	}
	results, err := h.eng.Execute(ctx, sess, sql, api.Options{Single: true, Admit: admitQueries})
	if err != nil {
		closeStreams(results)
		var se *api.StatementError
		switch {
		case len(results) > 0 || !errors.As(err, &se):
		case noStatement(err):
			err = &api.StatementError{Statement: sql, Msg: noQueryMessage, Code: codeBadStatement}
		case errors.Is(err, api.ErrNotSingle):
			// The request as a whole is refused: no position in it.
			cp := *se
			cp.Line, cp.Col = 0, 0
			err = &cp
		}
		fail(err)
		return nil
	}
	if len(results) != 1 || results[0].Kind != api.ResultRows || results[0].Stream == nil {
		closeStreams(results)
		fail(errors.New("the statement returned no rows"))
		return nil
	}
	s := results[0].Stream
	return &queryResult{id: s.ID, cols: s.TypedColumns(), stream: s}
}

// streamHeader is the first object of a /query-stream answer; pull
// queries have no query id.
type streamHeader struct {
	QueryID     string   `json:"queryId,omitempty"`
	ColumnNames []string `json:"columnNames"`
	ColumnTypes []string `json:"columnTypes"`
}

// rowWriter writes a query's rows as they come and flushes each. A write
// the client does not take within stall (when positive) fails: a client
// that stops reading is dropped rather than holding its query for ever.
type rowWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	buf   []byte
	err   error
	count int
}

func (h *Handler) rowWriter(w http.ResponseWriter) *rowWriter {
	return &rowWriter{w: w, rc: http.NewResponseController(w), stall: h.opts.StallTimeout}
}

// done lifts the deadline, which would otherwise outlive the response on
// a kept-alive HTTP/1.1 connection.
func (rw *rowWriter) done() {
	if rw.stall > 0 {
		_ = rw.rc.SetWriteDeadline(time.Time{})
	}
}

func (rw *rowWriter) write(b []byte) {
	if rw.err != nil {
		return
	}
	if rw.stall > 0 {
		// Not every ResponseWriter can time out; those that cannot write
		// without a deadline.
		_ = rw.rc.SetWriteDeadline(time.Now().Add(rw.stall))
	}
	if _, err := rw.w.Write(b); err != nil {
		rw.err = err
		return
	}
	rw.err = rw.rc.Flush()
}

// queryWatch is a running query as close-query and shutdown see it: a
// push query is registered under its id from watch on, before the
// response's header gives the client that id, so a close-query sent as
// soon as the header arrives finds it.
type queryWatch struct {
	q      *queryResult
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
	closed atomic.Bool
	forget func()
}

// watch registers q (a push query) for close-query; stop forgets it.
func (h *Handler) watch(ctx context.Context, q *queryResult) *queryWatch {
	qw := &queryWatch{q: q, parent: ctx}
	qw.ctx, qw.cancel = context.WithCancel(ctx)
	if !q.stream.Pull {
		qw.forget = h.register(q.id, func() { qw.closed.Store(true); qw.cancel() })
	}
	return qw
}

func (qw *queryWatch) stop() {
	qw.cancel()
	if qw.forget != nil {
		qw.forget()
		qw.forget = nil
	}
}

// stream forwards a watched query's rows through emit until it ends: a
// pull query's when they are all sent; a push query's or PRINT's when it
// ends, the client goes, close-query is called or the server shuts down.
// It returns why the stream ended, and the error that ended it (nil when
// it completed, its limit was reached or it was closed). emit receives
// the tombstones of a push query over a table too.
func (h *Handler) stream(qw *queryWatch, emit func(row api.Row) error) (api.EndReason, error) {
	q := qw.q
	defer q.stream.Close()
	defer qw.stop()
	for {
		row, err := q.stream.NextRow(qw.ctx)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return q.stream.End(), nil
		case qw.ctx.Err() != nil:
			if qw.closed.Load() || h.shutdown.Err() != nil {
				return api.EndClosed, nil
			}
			return api.EndError, qw.parent.Err()
		default:
			return api.EndError, err
		}
		if err := emit(row); err != nil {
			return api.EndError, err
		}
	}
}

// serveQueryStream runs a pull or push query and streams its rows, in
// ksqlDB's delimited form (a header object, then one JSON array a line)
// or, when the client accepts only application/json, as one JSON array.
func (h *Handler) serveQueryStream(w http.ResponseWriter, r *http.Request) {
	var req queryStreamRequest
	if !h.readBody(w, r, &req) {
		return
	}
	ctx, cancel := h.requestContext(r.Context())
	defer cancel()
	q := h.runQuery(ctx, w, req.SQL, session(req.Properties, req.SessionVariables))
	if q == nil {
		return
	}
	defer q.stream.Close()
	qw := h.watch(ctx, q)
	defer qw.stop()
	asJSON := accepts(r, jsonType) && !accepts(r, delimitedType)
	// Every query has its id in the header, pull queries too (clients
	// such as DB-API drivers read it).
	header := streamHeader{QueryID: q.stream.ID, ColumnNames: columnNames(q.cols), ColumnTypes: columnTypes(q.cols)}
	hb, _ := jsonMarshal(header)
	if asJSON {
		w.Header().Set("Content-Type", jsonType)
	} else {
		w.Header().Set("Content-Type", delimitedType)
	}
	w.WriteHeader(http.StatusOK)
	rw := h.rowWriter(w)
	defer rw.done()
	if asJSON {
		rw.write(append(append([]byte{'['}, hb...), '\n'))
	} else {
		rw.write(append(hb, '\n'))
	}
	emit := func(row api.Row) error {
		if row.Tombstone {
			// As ksqlDB's /query-stream: its rows are values only, and a
			// delete has none.
			return nil
		}
		rw.buf = rw.buf[:0]
		if asJSON {
			rw.buf = append(rw.buf, ',')
		}
		rw.buf = appendRow(rw.buf, row.Values, q.cols)
		rw.buf = append(rw.buf, '\n')
		rw.write(rw.buf)
		rw.count++
		return rw.err
	}
	_, err := h.stream(qw, emit)
	if rw.err != nil && ctx.Err() == nil && !q.stream.Pull {
		h.log.Warn("push query client dropped: it did not take the rows sent to it", "query", q.id, "err", rw.err)
	}
	if err != nil && rw.err == nil && ctx.Err() == nil {
		h.log.Warn("query ended with an error", "query", q.id, "err", err)
		body := statementErrorBody(err, req.SQL, nil)
		body.Statement, body.Entities, body.Type = "", nil, "generic_error"
		b, _ := jsonMarshal(body)
		if asJSON {
			b = append([]byte{','}, b...)
		}
		rw.write(append(b, '\n'))
	}
	if asJSON {
		rw.write([]byte("]\n"))
	}
}

// queryRequest is the body of the older POST /query.
type queryRequest struct {
	KSQL              string         `json:"ksql"`
	StreamsProperties map[string]any `json:"streamsProperties"`
	SessionVariables  map[string]any `json:"sessionVariables"`
}

// serveQuery runs a query in the form of ksqlDB's older /query endpoint: a
// JSON array streamed in chunks, its header holding the schema, then one
// {"row":{"columns":[...]}} per row and a final message.
func (h *Handler) serveQuery(w http.ResponseWriter, r *http.Request) {
	var req queryRequest
	if !h.readBody(w, r, &req) {
		return
	}
	ctx, cancel := h.requestContext(r.Context())
	defer cancel()
	q := h.runQuery(ctx, w, req.KSQL, session(req.StreamsProperties, req.SessionVariables))
	if q == nil {
		return
	}
	defer q.stream.Close()
	qw := h.watch(ctx, q)
	defer qw.stop()
	w.Header().Set("Content-Type", ksqlContentType(r))
	w.WriteHeader(http.StatusOK)
	rw := h.rowWriter(w)
	defer rw.done()
	hb, _ := jsonMarshal(map[string]any{"header": map[string]any{"queryId": q.stream.ID, "schema": schemaString(q.stream)}})
	rw.write(append([]byte{'['}, hb...))
	emit := func(row api.Row) error {
		rw.buf = append(rw.buf[:0], ",\n"+`{"row":{"columns":`...)
		rw.buf = appendRow(rw.buf, row.Values, q.cols)
		if row.Tombstone {
			// A push query over a table deletes a key.
			rw.buf = append(rw.buf, `,"tombstone":true`...)
		}
		rw.buf = append(rw.buf, "}}"...)
		rw.write(rw.buf)
		return rw.err
	}
	reason, err := h.stream(qw, emit)
	var end []byte
	switch final := finalMessage(q.stream, reason); {
	case err != nil:
		body := statementErrorBody(err, req.KSQL, nil)
		body.Entities = nil
		eb, _ := jsonMarshal(map[string]any{"errorMessage": body})
		end = append(append([]byte(",\n"), eb...), "]\n"...)
	case final != "":
		fb, _ := jsonMarshal(map[string]string{"finalMessage": final})
		end = append(append([]byte(",\n"), fb...), "]\n"...)
	default:
		end = []byte("]\n")
	}
	rw.write(end)
}

// finalMessage is what ksqlDB's /query ends a query's rows with: "Limit
// Reached" when its LIMIT stopped it, "Query Completed" when a pull query
// on a stream or a PRINT read to its end; none after a pull query on a
// table.
func finalMessage(st *api.Stream, reason api.EndReason) string {
	switch {
	case reason == api.EndLimit && !st.Table:
		return "Limit Reached"
	case st.Table:
		return ""
	}
	return "Query Completed"
}

// closeQueryRequest is the body of POST /close-query.
type closeQueryRequest struct {
	QueryID string `json:"queryId"`
}

// serveCloseQuery ends a push query started by /query-stream or /query:
// its response ends.
func (h *Handler) serveCloseQuery(w http.ResponseWriter, r *http.Request) {
	var req closeQueryRequest
	if !h.readBody(w, r, &req) {
		return
	}
	if !h.closeQuery(req.QueryID) {
		writeError(w, http.StatusBadRequest, errorBody{Type: "generic_error", Code: codeBadRequest,
			Message: "No query with id " + req.QueryID + "; it may have ended already (SHOW QUERIES lists the running push queries)"})
		return
	}
	w.WriteHeader(http.StatusOK)
}

func columnNames(cols []types.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

func columnTypes(cols []types.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Type.String()
	}
	return out
}
