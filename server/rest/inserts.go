package rest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
)

// insertsTarget is the first line of an /inserts-stream request.
type insertsTarget struct {
	Target string `json:"target"`
}

// ack is the answer to one row of /inserts-stream.
type ack struct {
	Status  string `json:"status"`
	Seq     int64  `json:"seq"`
	Code    int    `json:"error_code,omitempty"`
	Message string `json:"message,omitempty"`
}

// serveInsertsStream inserts rows into a stream as they arrive: the body
// is a line {"target": "NAME"} then one JSON object a line; each row is
// acknowledged as {"status":"ok","seq":n} once written to Kafka, as one
// line each or, when the client accepts only application/json, as the
// elements of one JSON array. A row that cannot be inserted is answered
// with an error ack that ends the request. Only over HTTP/2, as in ksqlDB.
//
// The first line must arrive within the read timeout; each next row
// within the inserts idle timeout of the one before, or the stream ends
// with an error ack that says so.
func (h *Handler) serveInsertsStream(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor < 2 {
		writeError(w, http.StatusBadRequest, errorBody{Type: "generic_error", Code: codeHTTP2Only,
			Message: "This endpoint is only available when using HTTP2; use an HTTP/2 client (curl --http2-prior-knowledge), or INSERT INTO ... VALUES through /ksql"})
		return
	}
	// A row being inserted is finished when the server shuts down, but no
	// more are read: closing the body ends the read in progress.
	ctx := r.Context()
	defer context.AfterFunc(h.shutdown, func() { _ = r.Body.Close() })()

	rc := http.NewResponseController(w)
	deadline := func(d time.Duration) {
		if d > 0 {
			_ = rc.SetReadDeadline(time.Now().Add(d))
		} else {
			_ = rc.SetReadDeadline(time.Time{})
		}
	}
	timedOut := false
	defer func() {
		if !timedOut {
			_ = rc.SetReadDeadline(time.Time{})
		}
	}()
	deadline(h.opts.ReadTimeout)
	in := bufio.NewReaderSize(r.Body, 64<<10)
	line, err := readLine(in, h.opts.MaxRequestBytes)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		timedOut = true
		writeError(w, http.StatusRequestTimeout, errorBody{Type: "generic_error", Code: codeRequestTimeout,
			Message: "the first line {\"target\": \"STREAM_NAME\"} did not arrive within the server's read timeout of " + h.opts.ReadTimeout.String() +
				"; start the server with a longer --http-read-timeout (SLUICE_HTTP_READ_TIMEOUT) if it needs more"})
		return
	}
	if err != nil || len(bytes.TrimSpace(line)) == 0 {
		writeError(w, http.StatusBadRequest, errorBody{Type: "generic_error", Code: codeBadRequest,
			Message: "the request must start with a line {\"target\": \"STREAM_NAME\"}"})
		return
	}
	var tgt insertsTarget
	if err := json.Unmarshal(line, &tgt); err != nil || tgt.Target == "" {
		writeError(w, http.StatusBadRequest, errorBody{Type: "generic_error", Code: codeBadRequest,
			Message: "the first line must be a JSON object {\"target\": \"STREAM_NAME\"}: " + string(line)})
		return
	}
	src, ok := h.findSource(ctx, tgt.Target)
	if !ok {
		writeError(w, http.StatusBadRequest, errorBody{Type: "generic_error", Code: codeBadStatement,
			Message: "Cannot insert values into an unknown stream/table: `" + tgt.Target + "`; SHOW STREAMS lists the streams"})
		return
	}
	var se *api.StatementError
	if err := h.eng.CheckInsert(src.Name); errors.As(err, &se) {
		writeError(w, http.StatusBadRequest, errorBody{Type: "generic_error", Code: se.Code, Message: se.Message()})
		return
	}

	asJSON := accepts(r, jsonType) && !accepts(r, delimitedType)
	if asJSON {
		w.Header().Set("Content-Type", jsonType)
	} else {
		w.Header().Set("Content-Type", delimitedType)
	}
	w.WriteHeader(http.StatusOK)
	rw := h.rowWriter(w)
	defer rw.done()
	rw.err = rw.rc.Flush()
	var seq int64
	send := func(a ack) {
		b, _ := jsonMarshal(a)
		switch {
		case asJSON && seq == 0:
			b = append([]byte{'['}, b...)
		case asJSON:
			b = append([]byte{','}, b...)
		}
		rw.write(append(b, '\n'))
	}
	for rw.err == nil {
		deadline(h.opts.InsertsIdleTimeout)
		line, err := readLine(in, h.opts.MaxRequestBytes)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			line = nil // a row cut short is no row
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if ierr := h.insertRow(ctx, src, line); ierr != nil {
				code, msg := codeBadStatement, ierr.Error()
				var se *api.StatementError
				if errors.As(ierr, &se) {
					code, msg = se.Code, se.Message()
				}
				send(ack{Status: "error", Seq: seq, Code: code, Message: msg})
				seq++
				break
			}
			send(ack{Status: "ok", Seq: seq})
			seq++
		}
		if err != nil {
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				timedOut = true
				h.log.Info("inserts stream closed: no row within the idle timeout", "target", src.Name, "remote", r.RemoteAddr, "timeout", h.opts.InsertsIdleTimeout)
				send(ack{Status: "error", Seq: seq, Code: codeRequestTimeout, Message: "no row arrived within the server's inserts idle timeout of " +
					h.opts.InsertsIdleTimeout.String() + ": the stream is closed; open a new one to insert more, or start the server with a longer --inserts-idle-timeout (SLUICE_INSERTS_IDLE_TIMEOUT)"})
				seq++
			case !errors.Is(err, io.EOF) && ctx.Err() == nil && h.shutdown.Err() == nil:
				send(ack{Status: "error", Seq: seq, Code: codeBadRequest, Message: err.Error()})
				seq++
			}
			break
		}
	}
	if asJSON {
		if seq == 0 {
			rw.write([]byte("[]\n"))
		} else {
			rw.write([]byte("]\n"))
		}
	}
}

// readLine reads one line without its end, at most limit bytes.
func readLine(in *bufio.Reader, limit int64) ([]byte, error) {
	var line []byte
	for {
		part, err := in.ReadSlice('\n')
		line = append(line, part...)
		if int64(len(line)) > limit {
			return nil, fmt.Errorf("a line is longer than %d bytes", limit)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// findSource finds a source by name: as written, then upper-cased as an
// unquoted identifier would be.
func (h *Handler) findSource(ctx context.Context, name string) (api.SourceInfo, bool) {
	for _, n := range []string{name, strings.ToUpper(name)} {
		if d, err := h.eng.DescribeSource(ctx, n, false); err == nil {
			return d.Source, true
		}
	}
	return api.SourceInfo{}, false
}

// insertRow inserts one JSON object through the engine's Insert, which
// converts its values to their columns' types: rows get the same checks,
// timestamps and encodings as INSERT VALUES gives them.
func (h *Handler) insertRow(ctx context.Context, src api.SourceInfo, line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return fmt.Errorf("a row must be one JSON object on one line, mapping column names to values: %s", line)
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	var row api.InsertRow
	for _, k := range names {
		col, ok := findColumn(src, k)
		if !ok {
			return fmt.Errorf("%s has no column %s; its columns are %s", src.Name, k, sourceColumnNames(src))
		}
		// The engine converts the JSON value to the column's type.
		row.Add(col.Name, obj[k], nil)
	}
	_, err := h.eng.Insert(ctx, src.Name, []api.InsertRow{row})
	return err
}

// findColumn finds a column by name: as written, then ignoring case;
// ROWTIME sets the record time.
func findColumn(src api.SourceInfo, name string) (types.Column, bool) {
	for _, c := range src.Columns {
		if c.Name == name {
			return c.Column, true
		}
	}
	for _, c := range src.Columns {
		if strings.EqualFold(c.Name, name) {
			return c.Column, true
		}
	}
	if strings.EqualFold(name, "ROWTIME") {
		return types.Column{Name: "ROWTIME", Type: types.BigintType}, true
	}
	return types.Column{}, false
}

func sourceColumnNames(src api.SourceInfo) string {
	names := make([]string, len(src.Columns))
	for i, c := range src.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
