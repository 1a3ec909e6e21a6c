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
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine"
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

	in := bufio.NewReaderSize(r.Body, 64<<10)
	line, err := readLine(in, h.opts.MaxRequestBytes)
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
	src, ok := h.findSource(tgt.Target)
	if !ok {
		writeError(w, http.StatusBadRequest, errorBody{Type: "generic_error", Code: codeBadStatement,
			Message: "Cannot insert values into an unknown stream/table: `" + tgt.Target + "`; SHOW STREAMS lists the streams"})
		return
	}

	asJSON := accepts(r, jsonType) && !accepts(r, delimitedType)
	if asJSON {
		w.Header().Set("Content-Type", jsonType)
	} else {
		w.Header().Set("Content-Type", delimitedType)
	}
	w.WriteHeader(http.StatusOK)
	rw := &rowWriter{w: w, rc: http.NewResponseController(w)}
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
		line, err := readLine(in, h.opts.MaxRequestBytes)
		if len(bytes.TrimSpace(line)) > 0 {
			if ierr := h.insertRow(ctx, src, line); ierr != nil {
				code, msg := codeBadStatement, ierr.Error()
				var se *engine.StatementError
				if errors.As(ierr, &se) {
					code, msg = se.Code, se.Msg
				}
				send(ack{Status: "error", Seq: seq, Code: code, Message: msg})
				seq++
				break
			}
			send(ack{Status: "ok", Seq: seq})
			seq++
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil && h.shutdown.Err() == nil {
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
func (h *Handler) findSource(name string) (*catalog.Source, bool) {
	cat := h.eng.Catalog()
	if s, ok := cat.Source(name); ok {
		return s, true
	}
	return cat.Source(strings.ToUpper(name))
}

// insertRow inserts one JSON object through INSERT VALUES, so that rows
// get the same coercions, timestamps and encodings as that statement's.
func (h *Handler) insertRow(ctx context.Context, src *catalog.Source, line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var row map[string]any
	if err := dec.Decode(&row); err != nil || row == nil {
		return fmt.Errorf("a row must be one JSON object on one line, mapping column names to values: %s", line)
	}
	cols := src.Columns()
	names := make([]string, 0, len(row))
	for k := range row {
		names = append(names, k)
	}
	sort.Strings(names)
	var colList, valList []string
	for _, k := range names {
		var col *types.Column
		for i := range cols {
			if cols[i].Name == k {
				col = &cols[i]
				break
			}
		}
		if col == nil {
			for i := range cols {
				if strings.EqualFold(cols[i].Name, k) {
					col = &cols[i]
					break
				}
			}
		}
		if col == nil {
			if strings.EqualFold(k, "ROWTIME") {
				col = &types.Column{Name: "ROWTIME", Type: types.BigintType}
			} else {
				return fmt.Errorf("%s has no column %s; its columns are %s", src.Name, k, strings.Join(columnNames(cols), ", "))
			}
		}
		lit, err := literal(row[k], col.Type)
		if err != nil {
			return fmt.Errorf("value for column %s: %v", col.Name, err)
		}
		colList = append(colList, quoteIdent(col.Name))
		valList = append(valList, lit)
	}
	stmt := "INSERT INTO " + quoteIdent(src.Name) + " (" + strings.Join(colList, ", ") + ") VALUES (" + strings.Join(valList, ", ") + ");"
	_, err := h.eng.Execute(ctx, engine.NewSession(), stmt)
	return err
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// literal spells a JSON value as a SQL expression of type t.
func literal(v any, t *types.Type) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	cast := func(e string) string { return "CAST(" + e + " AS " + t.String() + ")" }
	switch x := v.(type) {
	case bool:
		if x {
			return "TRUE", nil
		}
		return "FALSE", nil
	case json.Number:
		return cast(x.String()), nil
	case string:
		switch t.Kind {
		case types.String:
			return quoteString(x), nil
		case types.Bytes:
			return "TO_BYTES(" + quoteString(x) + ", 'base64')", nil
		}
		return cast(quoteString(x)), nil
	case []any:
		if t.Kind != types.Array {
			return "", fmt.Errorf("a JSON array cannot be a %s", t)
		}
		parts := make([]string, len(x))
		for i, e := range x {
			p, err := literal(e, t.Elem)
			if err != nil {
				return "", err
			}
			parts[i] = p
		}
		return cast("ARRAY[" + strings.Join(parts, ", ") + "]"), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		switch t.Kind {
		case types.Struct:
			var parts []string
			for _, f := range t.Fields {
				for _, k := range keys {
					if strings.EqualFold(k, f.Name) {
						p, err := literal(x[k], f.Type)
						if err != nil {
							return "", err
						}
						parts = append(parts, quoteIdent(f.Name)+" := "+p)
					}
				}
			}
			return "STRUCT(" + strings.Join(parts, ", ") + ")", nil
		case types.Map:
			if len(keys) == 0 {
				return "", fmt.Errorf("an empty map cannot be inserted this way; use INSERT INTO ... VALUES")
			}
			parts := make([]string, len(keys))
			for i, k := range keys {
				p, err := literal(x[k], t.Elem)
				if err != nil {
					return "", err
				}
				kl, err := literal(k, t.Key)
				if err != nil {
					return "", err
				}
				parts[i] = kl + " := " + p
			}
			return "MAP(" + strings.Join(parts, ", ") + ")", nil
		}
		return "", fmt.Errorf("a JSON object cannot be a %s", t)
	}
	return "", fmt.Errorf("unexpected JSON value %v", v)
}
