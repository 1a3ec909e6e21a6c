package rqtt

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/qtt"
	"github.com/sluice-sql/sluice/server/rest"
)

// Result is the outcome of one run.
type Result struct {
	ID     string     `json:"id"`
	File   string     `json:"file"`
	Index  int        `json:"index"`
	Status qtt.Status `json:"status"`
	// Reason is the skip reason, or the first difference on one line.
	Reason string `json:"reason,omitempty"`
	// Detail is the whole failure: both sides of the differing response,
	// or the error.
	Detail string `json:"detail,omitempty"`
	Millis int64  `json:"ms"`
}

// DefaultTimeout bounds one run.
const DefaultTimeout = 60 * time.Second

// IdleTimeout is how long a push query's response may go without an entry
// before the runner stops reading it and judges what came: a push query
// that stalls short of its expected rows fails after it instead of holding
// the run until its timeout. Passing runs never wait for it.
var IdleTimeout = 5 * time.Second

// The media types of the /query responses.
const (
	jsonMedia  = "application/vnd.ksql.v1+json"
	protoMedia = "application/vnd.ksql.v1+protobuf"
)

// RunOne runs r through a fresh engine and REST handler over a fresh
// in-memory broker and returns its outcome; timeout bounds the run
// (DefaultTimeout when zero).
func RunOne(ctx context.Context, r Run, timeout time.Duration) Result {
	start := time.Now()
	res := Result{ID: r.ID, File: r.File, Index: r.Index}
	if reason := SkipReason(r); reason != "" {
		res.Status, res.Reason = qtt.Skip, reason
		return res
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := execute(ctx, r)
	res.Millis = time.Since(start).Milliseconds()
	if err == nil {
		res.Status = qtt.Pass
		return res
	}
	res.Status = qtt.Fail
	res.Reason = firstLine(err.Error())
	res.Detail = err.Error()
	var d *Difference
	var m *qtt.Mismatch
	switch {
	case errors.As(err, &d) && d.Detail != "":
		res.Detail = d.Error() + "\n" + d.Detail
	case errors.As(err, &m):
		res.Detail = m.Error() + "\n" + m.Diff
	}
	if ctx.Err() != nil && !strings.Contains(res.Reason, "timed out") {
		res.Reason = "run timed out: " + res.Reason
	}
	return res
}

// client sends one run's requests to its REST handler.
type client struct {
	url   string
	http  *http.Client
	props map[string]json.RawMessage
}

// execute runs r as ksqlDB's runner does; a failure is an error, a
// response difference a *Difference.
// topicPartitions is the partitions of the topics a case does not give a
// count: ksqlDB's REST runner creates them with 4 on a real broker, where
// they decide ROWPARTITION and the order a pull query scans a table in.
const topicPartitions = 4

func execute(ctx context.Context, r Run) error {
	c := r.Test
	expected, err := c.expectedResponses()
	if err != nil {
		return err
	}
	admin, queries, err := split(r.Statements)
	if err != nil {
		return err
	}
	waitPush := c.InputConditions != nil && c.InputConditions.WaitForActivePushQuery
	if waitPush && len(queries) > 1 {
		return errors.New("invalid case: waitForActivePushQuery allows one query only")
	}
	last := ""
	if n := len(r.Statements); n > 0 {
		last = r.Statements[n-1]
	}

	w, err := qtt.NewWorldPartitions(ctx, r.Run, topicPartitions)
	if err != nil {
		return err
	}
	defer w.Close()
	eng, err := w.OpenEngine(ctx)
	if err != nil {
		return err
	}
	h := rest.New(eng, rest.Options{Version: Version, ServiceID: "sluice", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	cl := &client{url: srv.URL, http: srv.Client(), props: properties(r)}

	// The statements before the first query, in one request.
	var responses []Response
	if len(admin) > 0 {
		status, body, err := cl.post(ctx, "/ksql", jsonMedia, strings.Join(admin, "\n"))
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return judgeError(c.ExpectedError, status, body, last)
		}
		list, ok := body.([]any)
		if !ok {
			return fmt.Errorf("/ksql answered %d with %s, not a list of entities", status, render(body))
		}
		for _, e := range list {
			responses = append(responses, Response{Kind: "admin", Entity: e})
		}
	}
	nAdmin := len(responses)
	w.NoteSources()
	feed := func() error {
		if err := w.Feed(ctx); err != nil {
			return err
		}
		return eng.Flush(ctx)
	}
	if !waitPush {
		if err := feed(); err != nil {
			return err
		}
	}

	// Each query; one that fails must be the expected error.
	failed := false
	for i, q := range queries {
		var after func() error
		if waitPush && i == 0 {
			after = feed
		}
		media, kind := jsonMedia, "query"
		if r.Proto {
			media, kind = protoMedia, "queryProto"
		}
		want := expectedQuery(expected, i, kind)
		entries, status, body, err := cl.query(ctx, q, media, want, after)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			if err := judgeError(c.ExpectedError, status, body, last); err != nil {
				return err
			}
			failed = true
			continue
		}
		if r.Proto {
			if entries, err = decodeProtoRows(entries); err != nil {
				return err
			}
		}
		responses = append(responses, Response{Kind: kind, Entries: entries})
	}
	if c.ExpectedError != nil {
		if len(responses) > nAdmin || !failed {
			return fmt.Errorf("expected the last statement to fail (%s), but it succeeded", describeError(c.ExpectedError))
		}
	}

	if err := w.Check(ctx); err != nil {
		return err
	}
	if r.Proto {
		expected = protoView(expected)
	} else {
		expected = jsonView(expected)
	}
	verifyOrder := c.OutputConditions != nil && c.OutputConditions.VerifyOrder
	if d := CompareResponses(expected, responses, r.Statements, verifyOrder); d != nil {
		return d
	}
	return nil
}

// jsonView and protoView are the expected responses the plain and the
// protobuf runs check: the plain run all but the queryProto ones; the
// protobuf run the admin and queryProto ones.
func jsonView(exp []Expected) []Expected {
	var out []Expected
	for _, e := range exp {
		if e.Kind != "queryProto" {
			out = append(out, e)
		}
	}
	return out
}

func protoView(exp []Expected) []Expected {
	var out []Expected
	for _, e := range exp {
		if e.Kind != "query" {
			out = append(out, e)
		}
	}
	return out
}

// expectedQuery is the expected entries of the i-th expected response
// of kind ("query" or "queryProto"): nil when the case names none.
func expectedQuery(exp []Expected, i int, kind string) []any {
	n := 0
	for _, e := range exp {
		if e.Kind != kind {
			continue
		}
		if n == i {
			l, _ := e.Payload.([]any)
			return l
		}
		n++
	}
	return nil
}

// judgeError turns an error response into the run's outcome: nil when it
// is the expected error, else an error saying what differs.
func judgeError(want *ExpectedError, status int, body any, last string) error {
	if want == nil {
		obj, _ := body.(map[string]any)
		stmt, _ := obj["statementText"].(string)
		msg, _ := obj["message"].(string)
		if msg == "" {
			msg = render(body)
		}
		return fmt.Errorf("statement failed (HTTP %d): %s\nstatement: %s\nerror: %s", status, firstLine(msg), stmt, render(body))
	}
	if d := MatchError(want, status, body, last); d != nil {
		d.Detail = fmt.Sprintf("expected %s\ngot HTTP %d: %s", describeError(want), status, render(body))
		return d
	}
	return nil
}

func describeError(e *ExpectedError) string {
	var parts []string
	if e.Type != "" {
		parts = append(parts, "type "+e.Type)
	}
	if e.Status != 0 {
		parts = append(parts, fmt.Sprintf("status %d", e.Status))
	}
	if e.Message != "" {
		parts = append(parts, "message containing "+render(e.Message))
	}
	return strings.Join(parts, ", ")
}

// split separates the statements before the first query (sent to /ksql)
// from the queries, which must come last.
func split(stmts []string) (admin, queries []string, err error) {
	for i, s := range stmts {
		if isQuery(s) {
			queries = append(queries, s)
			continue
		}
		if len(queries) > 0 {
			return nil, nil, fmt.Errorf("invalid case: statement %d follows a query but is not one", i)
		}
		admin = append(admin, s)
	}
	return admin, queries, nil
}

// isQuery reports whether a statement is a SELECT, as ksqlDB's runner
// tells them apart.
func isQuery(s string) bool {
	return strings.HasPrefix(s, "SELECT ")
}

var (
	emitChangesRE = regexp.MustCompile(`(?i)\bEMIT\s+CHANGES\b`)
	limitRE       = regexp.MustCompile(`(?i)\bLIMIT\s+\d+\s*;?\s*$`)
)

// properties are the request properties of every request of r: the
// runner's auto.offset.reset=earliest, then the case's properties as
// written.
func properties(r Run) map[string]json.RawMessage {
	out := map[string]json.RawMessage{"auto.offset.reset": json.RawMessage(`"earliest"`)}
	for k, v := range r.Test.Properties {
		if s, ok := r.Properties[k]; ok && strings.Contains(string(v), "{CONFIG}") {
			b, _ := json.Marshal(s)
			v = b
		}
		out[k] = v
	}
	return out
}

// post sends sql to path as {"ksql": ..., "streamsProperties": ...} and
// returns the status and the whole JSON answer.
func (c *client) post(ctx context.Context, path, accept, sql string) (int, any, error) {
	resp, err := c.send(ctx, path, accept, sql)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("runner: read the %s answer: %w", path, err)
	}
	v, err := decode(b)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s answered %d with what is not JSON (%v): %q", path, resp.StatusCode, err, truncate(string(b)))
	}
	return resp.StatusCode, v, nil
}

func (c *client) send(ctx context.Context, path, accept, sql string) (*http.Response, error) {
	body, err := json.Marshal(map[string]any{"ksql": sql, "streamsProperties": c.props})
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("runner: POST %s: %w", path, err)
	}
	return resp, nil
}

// query sends one SELECT to /query and reads the streamed JSON array: to
// its end, or for a push query without LIMIT until it holds as many
// entries as want; a push query idle for IdleTimeout is judged on what
// came. after, when set, runs once the header arrived (the inputs of
// waitForActivePushQuery). A failed query returns its status and error
// body instead.
func (c *client) query(ctx context.Context, sql, accept string, want []any, after func() error) ([]any, int, any, error) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := c.send(qctx, "/query", accept, sql)
	if err != nil {
		return nil, 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, 0, nil, fmt.Errorf("runner: read the /query answer: %w", err)
		}
		v, err := decode(b)
		if err != nil {
			v = string(b)
		}
		return nil, resp.StatusCode, v, nil
	}
	if accept == protoMedia {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, protoMedia) {
			return nil, 0, nil, fmt.Errorf("/query does not serve %s: it answered with Content-Type %q", protoMedia, ct)
		}
	}
	push := emitChangesRE.MatchString(sql)
	stopAt := -1
	if push && !limitRE.MatchString(sql) {
		stopAt = len(want)
	}

	type item struct {
		v   any
		err error
	}
	items := make(chan item, 64)
	go func() {
		defer close(items)
		dec := json.NewDecoder(resp.Body)
		dec.UseNumber()
		tok, err := dec.Token()
		if err != nil {
			items <- item{err: err}
			return
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			items <- item{err: fmt.Errorf("the answer is not a JSON array: it starts with %v", tok)}
			return
		}
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				items <- item{err: err}
				return
			}
			select {
			case items <- item{v: v}:
			case <-qctx.Done():
				return
			}
		}
		if _, err := dec.Token(); err != nil {
			items <- item{err: err}
		}
	}()

	var entries []any
	var idle *time.Timer
	var idleC <-chan time.Time
	if push {
		idle = time.NewTimer(IdleTimeout)
		defer idle.Stop()
		idleC = idle.C
	}
	for stopAt < 0 || len(entries) < stopAt {
		select {
		case it, ok := <-items:
			if !ok {
				return entries, http.StatusOK, nil, nil
			}
			if it.err != nil {
				if ctx.Err() != nil {
					return nil, 0, nil, fmt.Errorf("run timed out reading %q after %d entries: %w", sql, len(entries), ctx.Err())
				}
				return nil, 0, nil, fmt.Errorf("/query answered %q with a broken stream after %d entries: %v\nentries: %s", sql, len(entries), it.err, render(entries))
			}
			entries = append(entries, it.v)
			if after != nil {
				f := after
				after = nil
				if err := f(); err != nil {
					return nil, 0, nil, err
				}
			}
			if idle != nil {
				idle.Reset(IdleTimeout)
			}
		case <-idleC:
			return entries, http.StatusOK, nil, nil
		case <-ctx.Done():
			return nil, 0, nil, fmt.Errorf("run timed out reading %q after %d entries: %w", sql, len(entries), ctx.Err())
		}
	}
	return entries, http.StatusOK, nil, nil
}

// decodeProtoRows turns the rows of a protobuf-format answer into rows of
// columns: each row's protobufBytes are read with the header's
// protoSchema.
func decodeProtoRows(entries []any) ([]any, error) {
	var codec, asJSON format.Codec
	var n int
	out := make([]any, len(entries))
	for i, e := range entries {
		out[i] = e
		obj, _ := e.(map[string]any)
		if hdr, ok := obj["header"].(map[string]any); ok {
			schema, _ := hdr["protoSchema"].(string)
			if schema == "" {
				continue
			}
			cols, err := format.ProtobufColumns(schema, nil, "")
			if err != nil {
				return nil, fmt.Errorf("the header's protoSchema does not compile: %w", err)
			}
			if codec, err = format.NewProtobufBody(schema, nil, "", cols, false); err != nil {
				return nil, fmt.Errorf("the header's protoSchema: %w", err)
			}
			if asJSON, err = format.NewValueCodec(format.JSON, cols, nil); err != nil {
				return nil, fmt.Errorf("runner: %w", err)
			}
			n = len(cols)
			continue
		}
		row, ok := obj["row"].(map[string]any)
		if !ok {
			continue
		}
		b64, ok := row["protobufBytes"].(string)
		if !ok || codec == nil {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("row %d: protobufBytes is not base64: %w", i, err)
		}
		vals := make([]any, n)
		if err := codec.Decode(raw, vals); err != nil {
			return nil, fmt.Errorf("row %d: protobufBytes do not decode with the header's protoSchema: %w", i, err)
		}
		js, err := asJSON.Encode(nil, vals)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		v, err := decode(js)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out[i] = map[string]any{"row": v}
	}
	return out, nil
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
