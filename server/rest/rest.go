package rest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/engine/api"
)

// Options configure a Handler. The zero value is usable.
type Options struct {
	// Version is reported by /info.
	Version string
	// ServiceID names the Sluice cluster (ksqlDB's ksql.service.id);
	// reported by /info.
	ServiceID string
	// KafkaClusterID names the Kafka cluster in /info; the bootstrap
	// servers do when the cluster id is unknown.
	KafkaClusterID string
	// CheckKafka reports whether Kafka answers, for /healthcheck; nil counts
	// as healthy.
	CheckKafka func(ctx context.Context) error
	// Logger receives the handler's logs; default slog.Default().
	Logger *slog.Logger
	// StallTimeout is how long a response may wait for its client to take
	// what was written (a push query's rows, inserts' acks) before the
	// client is dropped and its query stopped; default
	// DefaultStallTimeout, negative for no limit.
	StallTimeout time.Duration
	// MaxRequestBytes bounds the body of a /ksql, /query, /query-stream or
	// /close-query request; default 1 MiB. /inserts-stream reads its rows
	// as they come and bounds each line by it.
	MaxRequestBytes int64
	// ReadTimeout bounds how long the whole body of a /ksql, /query,
	// /query-stream or /close-query request, and the first line of an
	// /inserts-stream one, may take to arrive; a request still sending
	// then is answered 408 and its connection closed. Default
	// DefaultReadTimeout, negative for no limit. The responses are not
	// bounded by it: a push query streams as long as its client reads.
	ReadTimeout time.Duration
	// InsertsIdleTimeout bounds the wait for each next row of an
	// /inserts-stream request; the stream ends with an error ack when none
	// comes in that time. Default DefaultInsertsIdleTimeout, negative for
	// no limit.
	InsertsIdleTimeout time.Duration
}

// DefaultStallTimeout is how long a response waits by default for a
// client that does not read.
const DefaultStallTimeout = 30 * time.Second

// DefaultReadTimeout is how long a request's body may take to arrive by
// default.
const DefaultReadTimeout = 30 * time.Second

// DefaultInsertsIdleTimeout is how long an /inserts-stream request may
// wait for its next row by default.
const DefaultInsertsIdleTimeout = 10 * time.Minute

// Route is one endpoint of the API.
type Route struct {
	Method string
	Path   string
}

// routes lists every endpoint with its handler; Routes and New read it.
var routes = []struct {
	Route
	serve func(h *Handler, w http.ResponseWriter, r *http.Request)
}{
	{Route{http.MethodPost, "/ksql"}, (*Handler).serveKSQL},
	{Route{http.MethodPost, "/query"}, (*Handler).serveQuery},
	{Route{http.MethodPost, "/query-stream"}, (*Handler).serveQueryStream},
	{Route{http.MethodPost, "/close-query"}, (*Handler).serveCloseQuery},
	{Route{http.MethodPost, "/inserts-stream"}, (*Handler).serveInsertsStream},
	{Route{http.MethodGet, "/info"}, (*Handler).serveInfo},
	{Route{http.MethodGet, "/healthcheck"}, (*Handler).serveHealthcheck},
	{Route{http.MethodGet, "/status"}, (*Handler).serveStatuses},
	{Route{http.MethodGet, "/status/{commandId...}"}, (*Handler).serveStatus},
	{Route{http.MethodGet, "/{$}"}, (*Handler).serveRoot},
}

// Routes lists every route the handler serves, with its method; a path
// ending in {name...} matches any path below it.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, r := range routes {
		out[i] = r.Route
		// "/{$}" is how a ServeMux spells "/ alone".
		out[i].Path = strings.TrimSuffix(r.Path, "{$}")
	}
	return out
}

// Handler serves ksqlDB's REST API over an engine. It is an http.Handler;
// serve it over HTTP/1.1 and HTTP/2 (h2c or TLS): /inserts-stream needs
// HTTP/2, as in ksqlDB.
type Handler struct {
	eng  api.Engine
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	// paths matches the routes' paths whatever the method, to tell an
	// unknown path (404) from a wrong method (405).
	paths *http.ServeMux

	// shutdown ends when Close is called: open query and insert streams
	// end.
	shutdown context.Context
	cancel   context.CancelFunc

	mu sync.Mutex
	// queries are the push queries in progress, by query id, each with the
	// function that ends it (close-query); PRINTs of one topic share an id.
	queries map[string]map[*func()]bool
}

// New returns a handler over eng (an *engine.Engine, or any api.Engine).
func New(eng api.Engine, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StallTimeout == 0 {
		opts.StallTimeout = DefaultStallTimeout
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 1 << 20
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.InsertsIdleTimeout == 0 {
		opts.InsertsIdleTimeout = DefaultInsertsIdleTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handler{
		eng:      eng,
		opts:     opts,
		log:      opts.Logger,
		mux:      http.NewServeMux(),
		paths:    http.NewServeMux(),
		shutdown: ctx,
		cancel:   cancel,
		queries:  map[string]map[*func()]bool{},
	}
	methods := map[string][]string{}
	for _, r := range routes {
		serve := r.serve
		h.mux.HandleFunc(r.Method+" "+r.Path, func(w http.ResponseWriter, req *http.Request) { serve(h, w, req) })
		methods[r.Path] = append(methods[r.Path], r.Method)
	}
	for path, ms := range methods {
		allow := strings.Join(ms, ", ")
		h.paths.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			WriteError(w, CodeMethodNotAllowed, r.Method+" "+r.URL.Path+" is not served; use "+allow)
		})
	}
	return h
}

// ServeHTTP implements http.Handler. Unknown paths answer 404 with a
// ksqlDB error body.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := h.mux.Handler(r); pattern == "" {
		if _, p := h.paths.Handler(r); p != "" {
			h.paths.ServeHTTP(w, r)
			return
		}
		WriteError(w, codeNotFound, "no endpoint "+r.Method+" "+r.URL.Path+"; the API serves POST /ksql, /query, /query-stream, /close-query, /inserts-stream and GET /info, /healthcheck, /status")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Close ends the open query and insert streams: their responses finish
// and their handlers return. Call it before http.Server.Shutdown (or
// register it with RegisterOnShutdown), which waits for handlers.
func (h *Handler) Close() {
	h.cancel()
}

// ksqlDB's error codes: the HTTP status times 100, plus a detail. Those
// other packages answer with (authentication) are exported.
const (
	// CodeUnauthorized answers a request without valid credentials (401).
	CodeUnauthorized = 40100
	// CodeForbidden answers a request its user may not make (403).
	CodeForbidden = 40300
	// CodeMethodNotAllowed answers a known path with another method (405).
	CodeMethodNotAllowed = 40500

	codeBadRequest     = 40000
	codeBadStatement   = api.CodeBadStatement
	codeQueryEndpoint  = api.CodeQueryEndpoint
	codeHTTP2Only      = 40004
	codeNotFound       = 40400
	codeRequestTimeout = 40800
	codeServerError    = api.CodeServerError
	codeShuttingDown   = 50302
)

// errorBody is ksqlDB's error entity (KsqlErrorMessage and, with a
// statement, KsqlStatementErrorMessage).
type errorBody struct {
	Type      string `json:"@type"`
	Code      int    `json:"error_code"`
	Message   string `json:"message"`
	Statement string `json:"statementText,omitempty"`
	// Entities are the results of the statements before the failing one
	// (statement errors only).
	Entities *[]any `json:"entities,omitempty"`
}

// statusOf is the HTTP status of an error code.
func statusOf(code int) int {
	s := code / 100
	if s < 400 || s > 599 {
		return http.StatusInternalServerError
	}
	return s
}

// WriteError answers with ksqlDB's generic error body,
// {"@type":"generic_error","error_code":code,"message":message}, and the
// HTTP status the code is made from (code / 100), as ksqlDB does.
func WriteError(w http.ResponseWriter, code int, message string) {
	writeError(w, statusOf(code), errorBody{Type: "generic_error", Code: code, Message: message})
}

// writeError answers with an error body.
func writeError(w http.ResponseWriter, status int, body errorBody) {
	writeJSON(w, status, body)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := jsonMarshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = jsonMarshal(errorBody{Type: "generic_error", Code: codeServerError, Message: "cannot encode the response: " + err.Error()})
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// statementErrorBody turns an engine error into ksqlDB's error entity.
// stmt is the failing statement's text when known; entities the results
// before it.
func statementErrorBody(err error, stmt string, entities []any) errorBody {
	if entities == nil {
		entities = []any{}
	}
	if errors.Is(err, context.Canceled) {
		return errorBody{Type: "generic_error", Code: codeShuttingDown, Message: "the request was cancelled: the client went away or the server is shutting down"}
	}
	var se *api.StatementError
	if errors.As(err, &se) {
		if se.Code == codeBadRequest && se.Statement == "" {
			// The request as a whole is refused (its properties): ksqlDB
			// answers with its KsqlErrorMessage, naming no statement.
			return errorBody{Type: "generic_error", Code: codeBadRequest, Message: se.Message()}
		}
		code := se.Code
		if code == 0 {
			code = codeBadStatement
		}
		msg := se.Message()
		if se.Statement != "" {
			// ksqlDB's statement texts end with their semicolon.
			stmt = strings.TrimSpace(se.Statement)
			if !strings.HasSuffix(stmt, ";") {
				stmt += ";"
			}
		}
		if se.Syntax {
			// ksqlDB's syntax error: "Syntax Error", its (empty) detail,
			// the statement; Sluice's hint after them.
			msg = se.Msg + "\n\nStatement: " + stmt
			if se.Hint != "" {
				msg += "\n" + se.Hint
			}
		}
		if se.Line > 0 {
			msg = "line " + itoa(se.Line) + ":" + itoa(se.Col) + ": " + msg
		}
		return errorBody{Type: "statement_error", Code: code, Message: msg, Statement: stmt, Entities: &entities}
	}
	return errorBody{Type: "statement_error", Code: codeServerError, Message: err.Error(), Statement: stmt, Entities: &entities}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// readBody decodes a JSON request body into v, answering 400 (408 when
// the body did not arrive within the read timeout) itself when it cannot;
// it returns whether v was read. The body is read to its end, so that the
// request's context ends as soon as its client goes.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	rc := http.NewResponseController(w)
	// Not every ResponseWriter has deadlines; those read without one.
	deadline := h.opts.ReadTimeout > 0 && rc.SetReadDeadline(time.Now().Add(h.opts.ReadTimeout)) == nil
	body := http.MaxBytesReader(w, r.Body, h.opts.MaxRequestBytes)
	dec := json.NewDecoder(body)
	dec.UseNumber()
	err := dec.Decode(v)
	if err == nil {
		_, err = io.Copy(io.Discard, body)
	}
	if deadline && !errors.Is(err, os.ErrDeadlineExceeded) {
		// Lifted once the body is in: the connection is then read only
		// to notice that the client went away. A body that did not come
		// keeps it, so that the server reads no more of it.
		_ = rc.SetReadDeadline(time.Time{})
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		h.log.Warn("request body not received within the read timeout", "path", r.URL.Path, "remote", r.RemoteAddr, "timeout", h.opts.ReadTimeout)
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, errorBody{Type: "generic_error", Code: codeRequestTimeout,
			Message: "the request body did not arrive within the server's read timeout of " + h.opts.ReadTimeout.String() +
				"; send the whole body at once, or start the server with a longer --http-read-timeout (SLUICE_HTTP_READ_TIMEOUT)"})
		return false
	}
	if err != nil {
		msg := "the request body is not a JSON object of the expected shape: " + err.Error()
		if errors.Is(err, io.EOF) {
			msg = "the request body is empty; send a JSON object such as {\"ksql\": \"SHOW STREAMS;\"}"
		}
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			msg = "the request body is larger than " + itoa(int(mb.Limit)) + " bytes"
		}
		writeError(w, http.StatusBadRequest, errorBody{Type: "generic_error", Code: codeBadRequest, Message: msg})
		return false
	}
	return true
}

// session builds an engine session from a request's properties and
// variables. Variable names are upper-cased as DEFINE stores them. The
// engine checks the properties as ksqlDB checks a request's (names it
// does not take, values Sluice does not run are refused with ksqlDB's
// 40000 before any statement runs; statementErrorBody renders that) and
// reads each under whichever of ksqlDB's spellings it came
// (ksql.streams.auto.offset.reset is auto.offset.reset).
func session(props map[string]any, vars map[string]any) *api.Session {
	s := api.NewSession()
	for k, v := range props {
		s.Properties[k] = scalarText(v)
	}
	for k, v := range vars {
		s.Variables[strings.ToUpper(k)] = scalarText(v)
	}
	return s
}

// scalarText is a property or variable value as text.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// accepts reports whether the request's Accept header names media type mt.
func accepts(r *http.Request, mt string) bool {
	for _, a := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(a, ",") {
			if t, _, _ := strings.Cut(part, ";"); strings.EqualFold(strings.TrimSpace(t), mt) {
				return true
			}
		}
	}
	return false
}

// register records a running push query so that close-query can end it;
// the returned function forgets it.
func (h *Handler) register(id string, stop func()) func() {
	h.mu.Lock()
	if h.queries[id] == nil {
		h.queries[id] = map[*func()]bool{}
	}
	h.queries[id][&stop] = true
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.queries[id], &stop)
		if len(h.queries[id]) == 0 {
			delete(h.queries, id)
		}
		h.mu.Unlock()
	}
}

// closeQuery ends the push queries with id and reports whether there were
// any.
func (h *Handler) closeQuery(id string) bool {
	h.mu.Lock()
	var stops []func()
	for stop := range h.queries[id] {
		stops = append(stops, *stop)
	}
	h.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	return len(stops) > 0
}
