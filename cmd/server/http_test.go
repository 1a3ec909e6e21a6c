package main

import (
	"bufio"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
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
		if resp.StatusCode != 200 || resp.Proto != proto || !strings.Contains(string(b), `"ksqlServiceId":"sluice"`) {
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
