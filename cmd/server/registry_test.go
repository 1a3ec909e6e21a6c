package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sql/sluice/cmd/cli/shell"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
	"github.com/sluice-sql/sluice/registry"
	"github.com/sluice-sql/sluice/server/auth"
)

// childServer is the server's main running in a child process.
type childServer struct {
	cmd      *exec.Cmd
	stderr   *syncBuffer
	grpc     string
	registry string // http://host:port
	kafka    string
}

var bootstrapLog = regexp.MustCompile(`"bootstrap_servers":"([^"]+)"`)

// startChild runs the server in playground mode on free ports in a child
// process and waits for its banner.
func startChild(t *testing.T, dir string) *childServer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--playground-addr", "127.0.0.1:0",
		"--schema-registry-addr", "127.0.0.1:0", "--data-dir", dir, "--log-format", "json")
	cmd.Env = append(os.Environ(), "SLUICE_TEST_RUN_MAIN=1")
	c := &childServer{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "Sluice server listening on "); ok {
			c.grpc = a
		}
		if u, ok := strings.CutPrefix(lines.Text(), "Schema registry (Confluent's REST API) on "); ok {
			c.registry = u
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if m := bootstrapLog.FindStringSubmatch(c.stderr.String()); m != nil {
		c.kafka = m[1]
	}
	if c.registry == "" || c.kafka == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("server did not print its registry and broker:\n%s", c.stderr.String())
	}
	return c
}

func (c *childServer) stop(t *testing.T) {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	if err := c.cmd.Wait(); err != nil {
		t.Errorf("server exited with %v:\n%s", err, c.stderr.String())
	}
}

// registryPython returns a Python with confluent_kafka's schema registry
// and Avro support: $SLUICE_PYTHON, the virtualenv .ci/run makes, or
// python3.
func registryPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("SLUICE_PYTHON"), "/tmp/sluice-rest-venv/bin/python", "python3"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil &&
			exec.Command(path, "-c", "import confluent_kafka.schema_registry.avro, fastavro").Run() == nil {
			return path
		}
	}
	msg := "no Python with confluent_kafka's Avro support: pip install 'confluent-kafka[avro]' (.ci/run installs it into /tmp/sluice-rest-venv)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestRegistryInterop runs the server binary's main in playground mode and
// Python confluent_kafka against it: SchemaRegistryClient and the Avro
// serializer register and read schemas in the built-in registry, Avro
// records go through the playground broker, and after a restart the
// registry still has the schemas (its _schemas topic).
func TestRegistryInterop(t *testing.T) {
	python := registryPython(t)
	dir := filepath.Join(t.TempDir(), "data")
	srv := startChild(t, dir)
	const n = 6
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "registry_interop.py"), srv.registry, srv.kafka, "readings", fmt.Sprint(n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		srv.stop(t)
		t.Fatalf("registry_interop.py: %v\n%s\nserver:\n%s", err, stderr.String(), srv.stderr.String())
	}
	var got struct {
		Subject       string   `json:"subject"`
		Version       int      `json:"version"`
		ID            int      `json:"id"`
		SchemaType    string   `json:"schema_type"`
		Subjects      []string `json:"subjects"`
		ByID          string   `json:"by_id"`
		CompatibleV2  bool     `json:"compatible_v2"`
		CompatibleBad bool     `json:"compatible_bad"`
		RegisterBad   any      `json:"register_bad"`
		IDV2          int      `json:"id_v2"`
		Versions      []int    `json:"versions"`
		Config        string   `json:"config"`
		Records       []struct {
			Key      string         `json:"key"`
			Magic    int            `json:"magic"`
			SchemaID int            `json:"schema_id"`
			Value    map[string]any `json:"value"`
		} `json:"records"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("registry_interop.py printed %q: %v", out, err)
	}
	if got.Subject != "readings-value" || got.Version != 1 || got.ID < 1 || got.SchemaType != "AVRO" ||
		strings.Join(got.Subjects, ",") != "readings-value" || got.ByID != "Reading" {
		t.Errorf("registered schema: %s", out)
	}
	if !got.CompatibleV2 || got.CompatibleBad || fmt.Sprint(got.RegisterBad) != "409" ||
		got.IDV2 <= got.ID || fmt.Sprint(got.Versions) != "[1 2]" || got.Config != "BACKWARD" {
		t.Errorf("compatibility as seen by SchemaRegistryClient: %s", out)
	}
	if len(got.Records) != n {
		t.Fatalf("read back %d records, want %d: %s", len(got.Records), n, out)
	}
	for i, r := range got.Records {
		if r.Key != fmt.Sprintf("k%d", i) || r.Magic != 0 || r.SchemaID != got.ID ||
			r.Value["sensor"] != fmt.Sprintf("s%d", i%3) || r.Value["seq"] != float64(i) || r.Value["reading"] != float64(i)*1.5 {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	checkSluiceReadsInteropAvro(t, srv)
	srv.stop(t)

	// A restart on the same data directory keeps the schemas and the ids.
	srv = startChild(t, dir)
	defer srv.stop(t)
	c, err := registry.NewHTTPClient(srv.registry, registry.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.ByID(ctx, got.ID)
	if err != nil || !strings.Contains(s.Schema, `"Reading"`) {
		t.Errorf("schema %d after a restart: %+v %v", got.ID, s, err)
	}
	if vs, err := c.Versions(ctx, "readings-value"); err != nil || fmt.Sprint(vs) != "[1 2]" {
		t.Errorf("versions after a restart: %v %v", vs, err)
	}
	id, err := c.Register(ctx, "other-value", registry.Schema{Schema: `"string"`})
	if err != nil || id <= got.IDV2 {
		t.Errorf("a new schema after a restart got id %d (%v), want one above %d", id, err, got.IDV2)
	}
}

// checkSluiceReadsInteropAvro is the hook that reads the records the
// Python script wrote (topic readings, its value schema in the registry)
// through a Sluice stream whose columns come from the registry, and checks
// them in a JSON copy of the stream.
func checkSluiceReadsInteropAvro(t *testing.T, srv *childServer) {
	t.Helper()
	conn, err := grpc.NewClient(srv.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	child := &runningServer{conn: conn}
	child.sh(t, shell.New(nil, nil, nil), `SET 'auto.offset.reset'='earliest';
CREATE STREAM readings WITH (KAFKA_TOPIC='readings', VALUE_FORMAT='AVRO');
CREATE STREAM readings_json WITH (VALUE_FORMAT='JSON') AS SELECT sensor, reading, seq FROM readings;`)
	got := sinkRecords(t, srv.kafka, "READINGS_JSON", 6)
	for i, line := range got {
		_, value, _ := strings.Cut(line, " ")
		var v struct {
			Sensor  string  `json:"SENSOR"`
			Reading float64 `json:"READING"`
			Seq     int64   `json:"SEQ"`
		}
		if err := json.Unmarshal([]byte(value), &v); err != nil || v.Sensor != fmt.Sprintf("s%d", i%3) || v.Reading != float64(i)*1.5 || v.Seq != int64(i) {
			t.Errorf("READINGS_JSON record %d: %s (%v)", i, line, err)
		}
	}
}

// TestRegistryServed checks the playground serves the built-in registry,
// the Info call names it, and an outside registry replaces it.
func TestRegistryServed(t *testing.T) {
	srv := startServer(t, t.TempDir())
	if srv.addrs.Registry == "" {
		srv.stop()
		t.Fatal("the playground serves no schema registry")
	}
	c, err := registry.NewHTTPClient("http://"+srv.addrs.Registry, registry.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if id, err := c.Register(ctx, "t-value", registry.Schema{Schema: `"string"`}); err != nil || id != 1 {
		t.Errorf("Register: %d %v", id, err)
	}
	info, err := sluicev1.NewSluiceClient(srv.conn).Info(ctx, &sluicev1.InfoRequest{})
	if err != nil || info.GetSchemaRegistryUrl() != "http://"+srv.addrs.Registry {
		t.Errorf("Info: %v %v", info, err)
	}
	srv.stop()

	// With --schema-registry-url the playground serves none and uses that
	// one, credentials hidden.
	outside := startServer(t, t.TempDir(), "--schema-registry-url", "http://u:pw@"+srv.addrs.Registry)
	defer outside.stop()
	info, err = sluicev1.NewSluiceClient(outside.conn).Info(ctx, &sluicev1.InfoRequest{})
	if outside.addrs.Registry != "" || err != nil || info.GetSchemaRegistryUrl() != "http://u:xxxxx@"+srv.addrs.Registry {
		t.Errorf("with --schema-registry-url: served %q, Info %v %v", outside.addrs.Registry, info, err)
	}
}

func TestRegistrySettings(t *testing.T) {
	env := map[string]string{"SLUICE_SCHEMA_REGISTRY_URL": "https://sr.example:8081"}
	c, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || c.registryURL != "https://sr.example:8081" || c.registryAddr != "127.0.0.1:8081" {
		t.Errorf("from the environment: %q %q %v", c.registryURL, c.registryAddr, err)
	}
	file := filepath.Join(t.TempDir(), "ksql-server.properties")
	if err := os.WriteFile(file, []byte("ksql.schema.registry.url=http://registry:8081\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = parseConfig([]string{"--config", file}, func(string) string { return "" }, io.Discard); err != nil || c.registryURL != "http://registry:8081" {
		t.Errorf("ksql.schema.registry.url: %q %v", c.registryURL, err)
	}
	if _, err := parseConfig([]string{"--schema-registry-url", "registry:8081"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "http or https") {
		t.Errorf("a URL without a scheme: %v", err)
	}
}

// registryUnauthorizedBody is Confluent Schema Registry's answer to a
// request without the right credentials.
const registryUnauthorizedBody = `{"error_code":401,"message":"Unauthorized"}`

// TestRegistryAuth checks that under --auth-user the built-in registry
// refuses every route, writes and reads, without the right credentials,
// with Confluent's 401, counts the refusals in /metrics, and serves Go's
// and Python confluent_kafka's clients given the credentials
// (basic.auth.user.info).
func TestRegistryAuth(t *testing.T) {
	const user, password = "alice", "pw-Rg44-secret"
	t.Setenv("SLUICE_AUTH_PASSWORD", password)
	logs := &syncBuffer{}
	srv := startServerOpts(t, t.TempDir(), logs, nil, "--auth-user", user)
	defer srv.stop()
	base := "http://" + srv.addrs.Registry
	right := auth.HeaderValue(user, password)
	post := func(path, authz string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest("POST", base+path, strings.NewReader(`{"schema":"\"string\""}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", registry.ContentType)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, strings.TrimSpace(string(b))
	}
	for what, authz := range map[string]string{
		"no credentials": "",
		"wrong password": auth.HeaderValue(user, "nope"),
		"unknown user":   auth.HeaderValue("mallory", password),
	} {
		code, hdr, body := post("/subjects/x-value/versions", authz)
		if code != http.StatusUnauthorized || body != registryUnauthorizedBody || hdr.Get("Content-Type") != registry.ContentType ||
			!strings.HasPrefix(hdr.Get("WWW-Authenticate"), `Basic realm="`) {
			t.Errorf("POST /subjects/x-value/versions with %s: %d %v %s", what, code, hdr, body)
		}
	}
	// Reads too, and paths the registry does not serve.
	for _, p := range []string{"/", "/subjects", "/schemas/ids/1", "/config", "/no-such-path"} {
		if code, body := httpGet(t, http.DefaultClient, base+p); code != http.StatusUnauthorized || strings.TrimSpace(body) != registryUnauthorizedBody {
			t.Errorf("GET %s without credentials: %d %s", p, code, body)
		}
	}
	code, _, body := post("/subjects/x-value/versions", right)
	if code != 200 || body != `{"id":1}` {
		t.Errorf("POST /subjects/x-value/versions with the right credentials: %d %s", code, body)
	}
	if code, body := httpGet(t, http.DefaultClient, base+"/subjects", "Authorization", right); code != 200 || strings.TrimSpace(body) != `["x-value"]` {
		t.Errorf("GET /subjects with the right credentials: %d %s", code, body)
	}
	// Sluice's own client, credentials in the URL as --schema-registry-url
	// takes them.
	ctx := context.Background()
	c, err := registry.NewHTTPClient("http://"+user+":"+password+"@"+srv.addrs.Registry, registry.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := c.Register(ctx, "y-value", registry.Schema{Schema: `"long"`}); err != nil || id != 2 {
		t.Errorf("Register through the HTTP client with credentials: %d %v", id, err)
	}

	pythonRan := false
	t.Run("confluent_kafka", func(t *testing.T) {
		python := registryPython(t)
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, python, filepath.Join("testdata", "registry_auth.py"), base, user, password)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("registry_auth.py: %v\n%s", err, stderr.String())
		}
		type refusal struct {
			Status    int    `json:"status"`
			ErrorCode int    `json:"error_code"`
			Message   string `json:"message"`
		}
		var got struct {
			Anonymous     map[string]refusal `json:"anonymous"`
			WrongPassword map[string]refusal `json:"wrong_password"`
			Right         struct {
				Magic    int      `json:"magic"`
				SchemaID int      `json:"schema_id"`
				ID       int      `json:"id"`
				Version  int      `json:"version"`
				Subjects []string `json:"subjects"`
			} `json:"right"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("registry_auth.py printed %q: %v", out, err)
		}
		for who, calls := range map[string]map[string]refusal{"anonymous": got.Anonymous, "wrong password": got.WrongPassword} {
			for _, call := range []string{"register", "subjects", "serialize"} {
				if r := calls[call]; r != (refusal{401, 401, "Unauthorized"}) {
					t.Errorf("%s %s: %+v, want 401 Unauthorized: %s", who, call, r, out)
				}
			}
		}
		r := got.Right
		if r.Magic != 0 || r.SchemaID != 3 || r.ID != 3 || r.Version != 1 || strings.Join(r.Subjects, ",") != "logins-value,x-value,y-value" {
			t.Errorf("with basic.auth.user.info: %s", out)
		}
		pythonRan = true
	})

	// The refusals are counted, per surface; /metrics itself wants the
	// credentials.
	if code, _ := httpGet(t, http.DefaultClient, "http://"+srv.addrs.HTTP+"/metrics"); code != http.StatusUnauthorized {
		t.Errorf("/metrics without credentials: %d", code)
	}
	code, metricsText := httpGet(t, http.DefaultClient, "http://"+srv.addrs.HTTP+"/metrics", "Authorization", right)
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, metricsText)
	}
	failed := metricValue(t, metricsText, `sluice_auth_failed_logins_total{surface="schema-registry"}`)
	missing := metricValue(t, metricsText, `sluice_auth_missing_credentials_total{surface="schema-registry"}`)
	wantFailed, wantMissing := 2.0, 6.0 // the wrong password and the unknown user; the anonymous POST and five GETs
	if pythonRan {
		wantFailed, wantMissing = wantFailed+3, wantMissing+3 // a request for each call of each client
	}
	if failed != wantFailed || missing != wantMissing {
		t.Errorf("schema-registry refusals: %v failed, %v missing; want %v and %v\n%s", failed, missing, wantFailed, wantMissing, metricsText)
	}
	if v := metricValue(t, metricsText, `sluice_auth_missing_credentials_total{surface="http"}`); v != 1 {
		t.Errorf("http requests without credentials: %v, want 1 (the scrape without them)", v)
	}
	if strings.Contains(logs.String(), password) {
		t.Errorf("the password shows in the logs:\n%s", logs.String())
	}
	if lines := failedLoginLines(logs.String(), "schema-registry"); len(lines) == 0 || !strings.Contains(lines[0], "remote=127.0.0.1:") {
		t.Errorf("no failed login logged for the registry:\n%s", logs.String())
	}
}
