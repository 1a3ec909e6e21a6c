package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestRESTServed checks that the server serves the REST API over HTTP/1.1
// and h2c, and that stopping it ends an open push query's response.
func TestRESTServed(t *testing.T) {
	srv := startServer(t, filepath.Join(t.TempDir(), "data"))
	stopped := false
	defer func() {
		if !stopped {
			srv.stop()
		}
	}()
	base := "http://" + srv.addrs.HTTP
	h2 := new(http.Protocols)
	h2.SetUnencryptedHTTP2(true)
	clients := map[string]*http.Client{
		"HTTP/1.1": {Transport: &http.Transport{}},
		"HTTP/2.0": {Transport: &http.Transport{Protocols: h2}},
	}
	for proto, c := range clients {
		resp, err := c.Get(base + "/info")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Proto != proto || !strings.Contains(string(b), `"ksqlServiceId":"sluice"`) ||
			!strings.Contains(string(b), `"kafkaClusterId":"sluice-playground"`) {
			t.Fatalf("GET /info over %s: %s %d %s", proto, resp.Proto, resp.StatusCode, b)
		}
	}
	resp, err := clients["HTTP/1.1"].Post(base+"/ksql", "application/json", strings.NewReader(
		`{"ksql": "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"commandId":"stream/`+"`S`"+`/create"`) {
		t.Fatalf("POST /ksql: %d %s", resp.StatusCode, b)
	}

	// A push query stays open until the server stops.
	resp, err = clients["HTTP/2.0"].Post(base+"/query-stream", "application/json", strings.NewReader(`{"sql": "SELECT * FROM s EMIT CHANGES;"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || !strings.Contains(sc.Text(), `"queryId"`) {
		t.Fatalf("no header: %q %v", sc.Text(), sc.Err())
	}
	srv.stop()
	stopped = true
	for sc.Scan() {
		t.Errorf("unexpected line %q", sc.Text())
	}
}

// TestHTTPReadTimeout starts the server with a short --http-read-timeout:
// a request that announces a body and sends none is answered 408 and its
// connection closed, while push queries opened before it, over HTTP/1.1
// and h2c, go on streaming past the timeout.
func TestHTTPReadTimeout(t *testing.T) {
	srv := startServer(t, filepath.Join(t.TempDir(), "data"), "--http-read-timeout", "300ms")
	defer srv.stop()
	base := "http://" + srv.addrs.HTTP
	h2 := new(http.Protocols)
	h2.SetUnencryptedHTTP2(true)
	h1c := &http.Client{Transport: &http.Transport{}}
	h2c := &http.Client{Transport: &http.Transport{Protocols: h2}}
	post := func(c *http.Client, path, body string) *http.Response {
		t.Helper()
		resp, err := c.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(h1c, "/ksql", `{"ksql": "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var streams []*bufio.Scanner
	for _, c := range []*http.Client{h1c, h2c} {
		resp := post(c, "/query-stream", `{"sql": "SELECT id FROM s EMIT CHANGES;"}`)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		if !sc.Scan() || !strings.Contains(sc.Text(), `"queryId"`) {
			t.Fatalf("no header: %q %v", sc.Text(), sc.Err())
		}
		streams = append(streams, sc)
	}

	conn, err := net.Dial("tcp", srv.addrs.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // a bound on the test only
	io.WriteString(conn, "POST /ksql HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
	br := bufio.NewReader(conn)
	stalled, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(stalled.Body)
	if stalled.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "--http-read-timeout") {
		t.Fatalf("a body that never came: %s %s", stalled.Status, b)
	}
	if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("the connection stayed open: %d %v", n, err)
	}

	resp = post(h1c, "/ksql", `{"ksql": "INSERT INTO s (id, v) VALUES ('late', 1);"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for _, sc := range streams {
		if !sc.Scan() || sc.Text() != `["late"]` {
			t.Fatalf("the push query did not go on: %q %v", sc.Text(), sc.Err())
		}
	}
}

// TestH2CUpgrade: an HTTP/1.1 request that asks to switch to HTTP/2
// (Upgrade: h2c) is answered over HTTP/2, so that /inserts-stream, which
// needs HTTP/2, takes rows from clients that upgrade rather than start
// with prior knowledge.
func TestH2CUpgrade(t *testing.T) {
	srv := startServer(t, filepath.Join(t.TempDir(), "data"))
	defer srv.stop()
	resp, err := http.Post("http://"+srv.addrs.HTTP+"/ksql", "application/json", strings.NewReader(
		`{"ksql": "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	conn, err := net.Dial("tcp", srv.addrs.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	body := `{"target":"S"}` + "\n" + `{"ID":"a","V":1}` + "\n"
	// An empty SETTINGS payload, base64url: the client's defaults.
	req := "POST /inserts-stream HTTP/1.1\r\nHost: sluice\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: \r\n" +
		"Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 101 ") {
		t.Fatalf("status line %q, %v: want 101 Switching Protocols", status, err)
	}
	for { // the rest of the 101 response's header
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	// The client's connection preface, then HTTP/2 frames: the answer to
	// the upgraded request comes on stream 1.
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, br)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	dec := hpack.NewDecoder(4096, nil)
	var code, data string
	for !strings.Contains(data, "\n") {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading frames (status %q, data %q): %v", code, data, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.HeadersFrame:
			fields, err := dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				t.Fatal(err)
			}
			for _, hf := range fields {
				if hf.Name == ":status" {
					code = hf.Value
				}
			}
		case *http2.DataFrame:
			if f.StreamID == 1 {
				data += string(f.Data())
			}
		}
	}
	if code != "200" || !strings.Contains(data, `{"status":"ok","seq":0}`) {
		t.Errorf("upgraded /inserts-stream: status %q, body %q", code, data)
	}
}

// TestCommandSequenceAndStatusSurviveRestart: commandSequenceNumber is the
// statement's offset in the command log, so it goes on growing across a
// restart, and /status answers for the commands run before it.
func TestCommandSequenceAndStatusSurviveRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	post := func(srv *runningServer, ksql string) []map[string]any {
		t.Helper()
		resp, err := http.Post("http://"+srv.addrs.HTTP+"/ksql", "application/json", strings.NewReader(`{"ksql": `+strconv.Quote(ksql)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out []map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", ksql, resp.StatusCode, err)
		}
		return out
	}
	get := func(srv *runningServer, path string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Get("http://" + srv.addrs.HTTP + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	seq := func(ents []map[string]any) []float64 {
		var out []float64
		for _, e := range ents {
			out = append(out, e["commandSequenceNumber"].(float64))
		}
		return out
	}

	srv := startServer(t, dir)
	first := seq(post(srv, "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1); CREATE STREAM big AS SELECT * FROM s WHERE v > 1;"))
	if len(first) != 2 || first[1] <= first[0] {
		t.Fatalf("sequence numbers %v: want two, growing", first)
	}
	srv.stop()

	srv = startServer(t, dir)
	defer srv.stop()
	if code, st := get(srv, "/status/stream/S/create"); code != 200 || st["status"] != "SUCCESS" || st["message"] != "Stream created" {
		t.Errorf("/status/stream/S/create after a restart: %d %v", code, st)
	}
	if code, st := get(srv, "/status/stream/`BIG`/create"); code != 200 || st["status"] != "SUCCESS" || !strings.HasPrefix(fmt.Sprint(st["queryId"]), "CSAS_BIG_") {
		t.Errorf("/status/stream/`BIG`/create after a restart: %d %v", code, st)
	}
	if code, all := get(srv, "/status"); code != 200 || len(all["commandStatuses"].(map[string]any)) < 2 {
		t.Errorf("/status after a restart: %d %v", code, all)
	}
	if next := seq(post(srv, "CREATE STREAM t (id VARCHAR KEY) WITH (KAFKA_TOPIC='t', VALUE_FORMAT='JSON', PARTITIONS=1);")); len(next) != 1 || next[0] <= first[1] {
		t.Errorf("sequence number after a restart %v, want above %v", next, first)
	}
}
