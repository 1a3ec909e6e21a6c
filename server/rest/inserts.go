package rest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
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

// insertRow inserts one JSON object, its values converted to its columns'
// types, through the engine's Insert: rows get the same checks, timestamps
// and encodings as INSERT VALUES gives them.
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
		v, err := jsonValue(obj[k], col.Type)
		if err != nil {
			return fmt.Errorf("value for column %s: %v", col.Name, err)
		}
		row.Add(col.Name, v, col.Type)
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

// jsonValue converts a decoded JSON value (numbers as json.Number) to a
// value of type t, as ksqlDB reads an inserted row: objects are structs or
// maps as the column says, strings convert as CAST does (to TIMESTAMP,
// DECIMAL, ...), and BYTES are base64.
func jsonValue(v any, t *types.Type) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return assign(x, types.BooleanType, t)
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			// Typed as SQL types an integer literal, so that it fits an
			// INTEGER column.
			if i == int64(int32(i)) {
				return assign(int32(i), types.IntType, t)
			}
			return assign(i, types.BigintType, t)
		}
		if t.Kind == types.Decimal {
			d, err := types.ParseDec(x.String())
			if err != nil {
				return nil, err
			}
			return assign(d, types.DecimalOf(max(d.Precision(), d.Scale), d.Scale), t)
		}
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return assign(f, types.DoubleType, t)
	case string:
		if t.Kind == types.Bytes {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("BYTES are given in base64: %v", err)
			}
			return b, nil
		}
		return assign(x, types.StringType, t)
	case []any:
		if t.Kind != types.Array {
			return nil, fmt.Errorf("a JSON array cannot be a %s", t)
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := jsonValue(e, t.Elem)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		switch t.Kind {
		case types.Struct:
			out := make(types.StructValue, len(t.Fields))
			for k, e := range x {
				i := slices.IndexFunc(t.Fields, func(f types.Field) bool { return strings.EqualFold(f.Name, k) })
				if i < 0 {
					return nil, fmt.Errorf("%s has no field %s", t, k)
				}
				c, err := jsonValue(e, t.Fields[i].Type)
				if err != nil {
					return nil, err
				}
				out[i] = c
			}
			return out, nil
		case types.Map:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			m := &types.MapValue{Keys: make([]any, len(keys)), Values: make([]any, len(keys))}
			for i, k := range keys {
				kv, err := assign(k, types.StringType, t.Key)
				if err != nil {
					return nil, err
				}
				ev, err := jsonValue(x[k], t.Elem)
				if err != nil {
					return nil, err
				}
				m.Keys[i], m.Values[i] = kv, ev
			}
			return m, nil
		}
		return nil, fmt.Errorf("a JSON object cannot be a %s", t)
	}
	return nil, fmt.Errorf("unexpected JSON value %v", v)
}

// assign converts v, a JSON value read as a value of type from, to type
// to, a column's, as INSERT VALUES assigns a constant without a CAST:
// integers widen to BIGINT, DECIMAL and DOUBLE, decimals fit a DECIMAL's
// scale or become DOUBLE, strings are read as TIMESTAMP, DATE or TIME.
// Other conversions are refused with a message naming both types. The
// engine checks the value again as it inserts it.
func assign(v any, from, to *types.Type) (any, error) {
	if v == nil || from.Equal(to) {
		return v, nil
	}
	refused := fmt.Errorf("cannot assign a value of type %s to type %s", from, to)
	switch to.Kind {
	case types.Bigint:
		if x, ok := v.(int32); ok {
			return int64(x), nil
		}
	case types.Double:
		switch x := v.(type) {
		case int32:
			return float64(x), nil
		case int64:
			return float64(x), nil
		case types.Dec:
			return x.Float64(), nil
		}
	case types.Decimal:
		var d types.Dec
		switch x := v.(type) {
		case int32:
			d = types.DecFromInt64(int64(x))
		case int64:
			d = types.DecFromInt64(x)
		case types.Dec:
			d = x
		default:
			return nil, refused
		}
		r := d.Rescale(to.Scale)
		if r.Sign() != 0 && r.Precision() > to.Precision {
			return nil, fmt.Errorf("numeric field overflow: %s does not fit %s", d, to)
		}
		return r, nil
	case types.Timestamp, types.Date, types.Time:
		s, ok := v.(string)
		if !ok {
			break
		}
		var out any
		var err error
		switch to.Kind {
		case types.Timestamp:
			out, err = types.ParseTimestamp(s)
		case types.Date:
			out, err = types.ParseDate(s)
		default:
			out, err = types.ParseTime(s)
		}
		if err != nil {
			return nil, fmt.Errorf("invalid input syntax for type %s: %q", to, s)
		}
		return out, nil
	}
	return nil, refused
}
