package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/sluice-sql/sluice/kafka"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
	"github.com/sluice-sql/sluice/server/auth"
	"github.com/sluice-sql/sluice/server/headless"
)

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sluice.properties")
	props := `# ksqlDB names and ours
bootstrap.servers=file:9092
ksql.service.id=from_file
listeners=http://0.0.0.0:18088
grpc=file:8089
log-level=debug
ksql.streams.num.stream.threads=2
`
	if err := os.WriteFile(file, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SLUICE_CONFIG": file, "SLUICE_GRPC": "env:8089", "SLUICE_SERVICE_ID": "from_env"}
	c, err := parseConfig([]string{"--service-id", "from_flag"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.serviceID != "from_flag" { // flag > env > file
		t.Errorf("service id %q", c.serviceID)
	}
	if c.grpcAddr != "env:8089" { // env > file
		t.Errorf("grpc %q", c.grpcAddr)
	}
	if c.httpAddr != "0.0.0.0:18088" || strings.Join(c.bootstrap, ",") != "file:9092" || c.logLevel.String() != "DEBUG" { // file > default
		t.Errorf("from file: http %q bootstrap %q level %v", c.httpAddr, c.bootstrap, c.logLevel)
	}
	if c.dataDir != "./sluice-data" { // default
		t.Errorf("data dir %q", c.dataDir)
	}
	if c.sources["service-id"] != "flag" || c.sources["grpc"] != "env" || c.sources["http"] != "file" || c.sources["data-dir"] != "" {
		t.Errorf("sources %v", c.sources)
	}
	if strings.Join(c.ignored, ",") != "ksql.streams.num.stream.threads" {
		t.Errorf("ignored %v", c.ignored)
	}
	for _, args := range [][]string{
		{"--log-format", "xml"},
		{"--tls-cert", "a.pem"},
		{"--tls-client-ca", "ca.pem"},
		{"--auth-user", "alice"},
	} {
		if _, err := parseConfig(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded", args)
		}
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, &out, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "sluice-server "+version+" (go") {
		t.Errorf("--version printed %q", out.String())
	}
}

func httpGet(t *testing.T, c *http.Client, url string, header ...string) (int, string) {
	t.Helper()
	return httpDo(t, c, "GET", url, header...)
}

// httpDo sends a request (with an empty JSON object as the body of a
// POST) and returns the status and body of the answer.
func httpDo(t *testing.T, c *http.Client, method, url string, header ...string) (int, string) {
	t.Helper()
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestProbesAndMetrics(t *testing.T) {
	srv := startServer(t, t.TempDir())
	defer srv.stop()
	base := "http://" + srv.addrs.HTTP
	for _, p := range []string{"/livez", "/readyz"} {
		if code, body := httpGet(t, http.DefaultClient, base+p); code != 200 || body != "ok\n" {
			t.Errorf("%s: %d %q", p, code, body)
		}
	}
	srv.sh(t, nil, `CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM big AS SELECT k, v FROM s WHERE v > 1;`)
	code, body := httpGet(t, http.DefaultClient, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`sluice_query_info{query="CSAS_BIG_1",type="PERSISTENT",status="RUNNING"} 1`,
		"# TYPE sluice_query_records_in_total counter",
		`sluice_query_records_filtered_total{query="CSAS_BIG_1"} `,
		`sluice_query_consumer_lag_records{query="CSAS_BIG_1"} `,
		`sluice_query_restore_progress_ratio{query="CSAS_BIG_1"} `,
		"go_goroutines ",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}

func TestHeadless(t *testing.T) {
	dir := t.TempDir()
	queries := filepath.Join(dir, "queries.sql")
	script := `SET 'auto.offset.reset'='earliest';
DEFINE topic = 'orders';
CREATE STREAM orders (id VARCHAR KEY, amount DOUBLE) WITH (KAFKA_TOPIC='${topic}', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM big AS SELECT id, amount FROM orders WHERE amount > 10;
`
	if err := os.WriteFile(queries, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	for range 2 { // the second start finds the queries in its catalog
		srv := startServer(t, data, "--queries-file", queries)
		client := sluicev1.NewSluiceClient(srv.conn)
		if _, err := client.Info(context.Background(), &sluicev1.InfoRequest{}); err != nil {
			t.Errorf("Info in headless mode: %v", err)
		}
		stream, err := client.Execute(context.Background(), &sluicev1.ExecuteRequest{Sql: "SHOW STREAMS;"})
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != headless.Message {
			t.Errorf("Execute in headless mode: %v", err)
		}
		base := "http://" + srv.addrs.HTTP
		code, body := httpGet(t, http.DefaultClient, base+"/metrics")
		if code != 200 || !strings.Contains(body, `sluice_query_info{query="CSAS_BIG_1",type="PERSISTENT",status="RUNNING"} 1`) {
			t.Errorf("/metrics in headless mode: %d\n%s", code, body)
		}
		for _, p := range []string{"/ksql", "/query-stream", "/query", "/inserts-stream", "/close-query"} {
			if code, body := httpDo(t, http.DefaultClient, "POST", base+p); code != http.StatusForbidden || !strings.Contains(body, `"error_code":40300,"message":"`+headless.Message+`"`) {
				t.Errorf("%s in headless mode: %d %s", p, code, body)
			}
		}
		if code, body := httpGet(t, http.DefaultClient, base+"/info"); code != 200 {
			t.Errorf("/info in headless mode: %d %s", code, body)
		}
		srv.stop()
	}
	// A changed file is refused: the server keeps running what it started
	// with.
	if err := os.WriteFile(queries, []byte(script+"CREATE STREAM small AS SELECT id FROM orders;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--playground-addr", "127.0.0.1:0", "--schema-registry-addr", "127.0.0.1:0", "--data-dir", data, "--queries-file", queries}
	err := run(context.Background(), args, io.Discard, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "changed since it ran") {
		t.Errorf("a changed queries file: %v", err)
	}
}

// pki is a test CA with a server and a client certificate, as PEM files.
type pki struct {
	caFile, certFile, keyFile, clientCert, clientKey string
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage, name string) (string, string) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kb)
	}
	p := pki{caFile: write("ca.pem", "CERTIFICATE", caDER)}
	p.certFile, p.keyFile = leaf(2, x509.ExtKeyUsageServerAuth, "server")
	p.clientCert, p.clientKey = leaf(3, x509.ExtKeyUsageClientAuth, "client")
	return p
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent logging.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecurity serves over mutual TLS with basic authentication and checks
// that every gRPC method the server registers (found by GetServiceInfo, so
// methods added later are covered) and every HTTP route refuses a call
// without credentials or with wrong ones and accepts the right ones; only
// the probes are exempt. The password never shows in the logs.
func TestSecurity(t *testing.T) {
	const user, password = "alice", "pw-Zq81-secret"
	t.Setenv("SLUICE_AUTH_PASSWORD", password)
	p := newPKI(t)
	clientTLS, err := auth.ClientTLS(p.caFile, p.clientCert, p.clientKey, false)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv := startServerOpts(t, t.TempDir(), logs, []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(clientTLS))},
		"--tls-cert", p.certFile, "--tls-key", p.keyFile, "--tls-client-ca", p.caFile, "--auth-user", user, "--log-level", "debug")
	defer srv.stop()

	right := auth.Basic{User: user, Password: password}
	wrongs := map[string][]grpc.CallOption{
		"no credentials": nil,
		"wrong password": {grpc.PerRPCCredentials(auth.Basic{User: user, Password: "nope"})},
		"unknown user":   {grpc.PerRPCCredentials(auth.Basic{User: "mallory", Password: password})},
		"empty user":     {grpc.PerRPCCredentials(auth.Basic{Password: password})},
	}
	call := func(method string, sd grpc.MethodInfo, opts []grpc.CallOption) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if !sd.IsClientStream && !sd.IsServerStream {
			return srv.conn.Invoke(ctx, method, &emptypb.Empty{}, &emptypb.Empty{}, opts...)
		}
		st, err := srv.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, opts...)
		if err != nil {
			return err
		}
		if err := st.SendMsg(&emptypb.Empty{}); err != nil && err != io.EOF {
			return err
		}
		_ = st.CloseSend()
		if err := st.RecvMsg(&emptypb.Empty{}); err != io.EOF {
			return err
		}
		return nil
	}
	methods := 0
	for svc, info := range srv.addrs.Services {
		for _, m := range info.Methods {
			methods++
			method := "/" + svc + "/" + m.Name
			for what, opts := range wrongs {
				if err := call(method, m, opts); status.Code(err) != codes.Unauthenticated {
					t.Errorf("%s with %s: %v, want Unauthenticated", method, what, err)
				}
			}
			err := call(method, m, []grpc.CallOption{grpc.PerRPCCredentials(right)})
			if code := status.Code(err); code == codes.Unauthenticated || code == codes.Unavailable {
				t.Errorf("%s with the right credentials: %v", method, err)
			}
		}
	}
	t.Logf("checked %d gRPC methods of %d services", methods, len(srv.addrs.Services))
	if methods < 4 || srv.addrs.Services[sluicev1.Sluice_ServiceDesc.ServiceName].Methods == nil {
		t.Fatalf("found %d gRPC methods in %v", methods, srv.addrs.Services)
	}

	// Without a client certificate the TLS handshake fails.
	noCert, err := auth.ClientTLS(p.caFile, "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(srv.addrs.GRPC, grpc.WithTransportCredentials(credentials.NewTLS(noCert)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sluicev1.NewSluiceClient(conn).Info(context.Background(), &sluicev1.InfoRequest{}, grpc.PerRPCCredentials(right))
	conn.Close()
	if err == nil {
		t.Error("a gRPC client without a certificate was served over mTLS")
	}

	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}}
	defer hc.CloseIdleConnections()
	base := "https://" + srv.addrs.HTTP
	exempt := map[string]bool{"/livez": true, "/readyz": true}
	routes := httpRoutes()
	for _, r := range routes {
		path := strings.ReplaceAll(r.Path, "{commandId...}", "stream/S/create")
		url := base + path
		for what, hdr := range map[string][]string{
			"no credentials": nil,
			"wrong password": {"Authorization", auth.HeaderValue(user, "nope")},
			"unknown user":   {"Authorization", auth.HeaderValue("mallory", password)},
			"not basic":      {"Authorization", "Bearer " + password},
		} {
			code, _ := httpDo(t, hc, r.Method, url, hdr...)
			if exempt[r.Path] {
				if code != 200 {
					t.Errorf("%s %s with %s: %d, want 200 (exempt)", r.Method, r.Path, what, code)
				}
			} else if code != http.StatusUnauthorized {
				t.Errorf("%s %s with %s: %d, want 401", r.Method, r.Path, what, code)
			}
		}
		if code, body := httpDo(t, hc, r.Method, url, "Authorization", auth.HeaderValue(user, password)); code == http.StatusUnauthorized || code >= 500 {
			t.Errorf("%s %s with the right credentials: %d %s", r.Method, r.Path, code, body)
		}
	}
	t.Logf("checked %d HTTP routes", len(routes))
	if len(routes) < 10 {
		t.Errorf("only %d HTTP routes: %v", len(routes), routes)
	}
	// Over TLS, HTTP/2 is negotiated (/inserts-stream needs it).
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS.Clone(), ForceAttemptHTTP2: true}}
	if resp, err := h2.Get(base + "/livez"); err != nil || resp.ProtoMajor != 2 {
		t.Errorf("HTTP/2 over TLS: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	h2.CloseIdleConnections()
	if _, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: clientTLS.RootCAs}}}).Get(base + "/livez"); err == nil {
		t.Error("an HTTP client without a certificate was served over mTLS")
	}
	// The built-in schema registry serves TLS too, with the same
	// credentials.
	reg := "https://" + srv.addrs.Registry + "/subjects"
	if code, body := httpGet(t, hc, reg, "Authorization", auth.HeaderValue(user, password)); code != 200 {
		t.Errorf("the registry over TLS: %d %s", code, body)
	}
	if code, _ := httpGet(t, hc, reg); code != http.StatusUnauthorized {
		t.Errorf("the registry over TLS without credentials: %d", code)
	}
	if resp, err := http.Get("http://" + srv.addrs.Registry + "/subjects"); err == nil && resp.StatusCode == 200 {
		resp.Body.Close()
		t.Error("the registry answered plain HTTP under --tls-cert")
	}
	// A secret property set through the API shows neither in the reply's
	// message nor in the logs. (The session, which the client keeps and
	// sends back, holds it; so does the echo of the client's statement.)
	stream, err := sluicev1.NewSluiceClient(srv.conn).Execute(context.Background(),
		&sluicev1.ExecuteRequest{Sql: "SET 'ksql.streams.ssl.key.password'='" + password + "';"}, grpc.PerRPCCredentials(right))
	if err != nil {
		t.Fatal(err)
	}
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(resp.GetMessage().GetText(), password) {
			t.Errorf("the reply to SET shows the secret: %v", resp)
		}
	}
	if strings.Contains(logs.String(), password) {
		t.Errorf("the password shows in the logs:\n%s", logs.String())
	}
}

func TestKafkaSecuritySettings(t *testing.T) {
	const secret = "kafka-pw-7781"
	p := newPKI(t)
	file := filepath.Join(t.TempDir(), "ksql-server.properties")
	props := `bootstrap.servers=broker1:9093
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="svc" password="` + secret + `";
ssl.truststore.location=` + p.caFile + "\n"
	if err := os.WriteFile(file, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseConfig([]string{"--config", file}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.kafka.TLS == nil || c.kafka.TLS.RootCAs == nil || c.kafka.SASL == nil ||
		*c.kafka.SASL != (kafka.SASL{Mechanism: "SCRAM-SHA-512", Username: "svc", Password: secret}) {
		t.Errorf("kafka security = TLS %v, SASL %v", c.kafka.TLS != nil, c.kafka.SASL)
	}
	// The password from the environment; PLAIN by default.
	env := map[string]string{"SLUICE_KAFKA_SASL_PASSWORD": secret}
	c, err = parseConfig([]string{"--bootstrap-servers", "b:9092", "--kafka-sasl-username", "svc"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || c.kafka.SASL == nil || c.kafka.SASL.Mechanism != "PLAIN" || c.kafka.SASL.Password != secret || c.kafka.TLS != nil {
		t.Errorf("SASL from flags and env: %+v, %v", c.kafka.SASL, err)
	}
	for _, args := range [][]string{
		{"--kafka-sasl-username", "svc"},                                                                           // no bootstrap servers
		{"--bootstrap-servers", "b:9092", "--kafka-sasl-username", "svc"},                                          // no password
		{"--bootstrap-servers", "b:9092", "--kafka-security-protocol", "PLAINTEXT", "--kafka-tls"},                 // contradiction
		{"--bootstrap-servers", "b:9092", "--kafka-security-protocol", "TLS"},                                      // unknown
		{"--bootstrap-servers", "b:9092", "--kafka-sasl-jaas-config", `Krb5LoginModule password="` + secret + `"`}, // unsupported
		{"--bootstrap-servers", "b:9092", "--kafka-sasl-username", "svc", "--kafka-sasl-password", secret, "--kafka-sasl-mechanism", "GSSAPI"},
	} {
		_, err := parseConfig(args, func(string) string { return "" }, io.Discard)
		if err == nil {
			t.Errorf("parseConfig(%q) succeeded", args)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("parseConfig(%q): the error shows the password: %v", args, err)
		}
	}
}

// metricValue returns the value of the series (name and labels, as the
// exposition writes them) in an exposition; the test fails without one.
func metricValue(t *testing.T, exposition, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(exposition, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Errorf("/metrics lacks %s:\n%s", series, exposition)
	return -1
}

// failedLoginLines are the "failed login" lines of surface in text logs.
func failedLoginLines(logs, surface string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `msg="failed login"`) && strings.Contains(line, " surface="+surface+" ") {
			out = append(out, line)
		}
	}
	return out
}

// TestFailedLogins checks that refused HTTP requests and gRPC calls are
// counted in /metrics per surface and kind, that a failed login is logged
// at WARN with the user and the caller's address but never the password,
// and that many failures log few lines (the line a second of each
// surface; auth's tests check the limit itself on a test clock).
func TestFailedLogins(t *testing.T) {
	const user, password = "alice", "pw-Fl19-secret"
	t.Setenv("SLUICE_AUTH_PASSWORD", password)
	logs := &syncBuffer{}
	srv := startServerOpts(t, t.TempDir(), logs, nil, "--auth-user", user)
	defer srv.stop()
	base := "http://" + srv.addrs.HTTP
	const n = 25
	start := time.Now()
	for i := range n {
		if code, _ := httpDo(t, http.DefaultClient, "POST", base+"/ksql", "Authorization", auth.HeaderValue(user, fmt.Sprintf("%s-%d", password, i))); code != http.StatusUnauthorized {
			t.Fatalf("POST /ksql with a wrong password: %d", code)
		}
	}
	httpElapsed := time.Since(start)
	for range 2 {
		if code, _ := httpGet(t, http.DefaultClient, base+"/info"); code != http.StatusUnauthorized {
			t.Fatalf("GET /info without credentials: %d", code)
		}
	}
	client := sluicev1.NewSluiceClient(srv.conn)
	wrong := grpc.PerRPCCredentials(auth.Basic{User: "mallory", Password: password, Insecure: true})
	start = time.Now()
	for range n {
		if _, err := client.Info(context.Background(), &sluicev1.InfoRequest{}, wrong); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("Info as an unknown user: %v", err)
		}
	}
	grpcElapsed := time.Since(start)
	if _, err := client.Info(context.Background(), &sluicev1.InfoRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Info without credentials: %v", err)
	}

	code, body := httpGet(t, http.DefaultClient, base+"/metrics", "Authorization", auth.HeaderValue(user, password))
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	for series, want := range map[string]float64{
		`sluice_auth_failed_logins_total{surface="http"}`:                  n,
		`sluice_auth_failed_logins_total{surface="grpc"}`:                  n,
		`sluice_auth_failed_logins_total{surface="schema-registry"}`:       0,
		`sluice_auth_missing_credentials_total{surface="http"}`:            2,
		`sluice_auth_missing_credentials_total{surface="grpc"}`:            1,
		`sluice_auth_missing_credentials_total{surface="schema-registry"}`: 0,
	} {
		if got := metricValue(t, body, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if !strings.Contains(body, "# TYPE sluice_auth_failed_logins_total counter\n") {
		t.Errorf("/metrics lacks the counter's header:\n%s", body)
	}

	text := logs.String()
	if strings.Contains(text, password) {
		t.Errorf("a password shows in the logs:\n%s", text)
	}
	remote := regexp.MustCompile(` remote=127\.0\.0\.1:[0-9]+ `)
	for surface, c := range map[string]struct {
		user    string
		elapsed time.Duration
	}{"http": {user, httpElapsed}, "grpc": {"mallory", grpcElapsed}} {
		lines := failedLoginLines(text, surface)
		// The limit allows a line at the start and one a second after.
		if most := int(c.elapsed/time.Second) + 1; len(lines) == 0 || len(lines) > most {
			t.Errorf("%d failed logins on %s in %v logged %d lines, want 1 to %d:\n%s", n, surface, c.elapsed, len(lines), most, text)
			continue
		}
		if l := lines[0]; !strings.Contains(l, "level=WARN") || !strings.Contains(l, " user="+c.user+" ") || !remote.MatchString(l) {
			t.Errorf("the %s line lacks the level, user or remote address: %s", surface, l)
		}
	}
}
