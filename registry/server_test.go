package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-sql/sluice/kafka"
)

const (
	userV1 = `{"type":"record","name":"User","fields":[{"name":"name","type":"string"}]}`
	// userV2 adds a field with a default: BACKWARD and FORWARD compatible.
	userV2 = `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0}]}`
	// userBad adds a field without a default: not BACKWARD compatible.
	userBad = `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"email","type":"string"}]}`
)

type api struct {
	t   *testing.T
	url string
}

// call sends a request and returns the status and the decoded answer.
func (a api) call(method, path string, body any) (int, any) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, a.url+path, rd)
	req.Header.Set("Content-Type", ContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != ContentType {
		a.t.Errorf("%s %s: content type %q", method, path, ct)
	}
	data, _ := io.ReadAll(resp.Body)
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		out = string(data)
	}
	return resp.StatusCode, out
}

// want checks a call's status and its answer as compact JSON.
func (a api) want(method, path string, body any, status int, answer string) {
	a.t.Helper()
	got, out := a.call(method, path, body)
	b, _ := json.Marshal(out)
	var w any
	if err := json.Unmarshal([]byte(answer), &w); err == nil {
		wb, _ := json.Marshal(w)
		answer = string(wb)
	}
	if got != status || (answer != "" && string(b) != answer) {
		a.t.Errorf("%s %s: got %d %s, want %d %s", method, path, got, b, status, answer)
	}
}

func errCode(code int) string { return `"error_code":` + itoa(code) }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// wantErr checks a call fails with a Confluent error code.
func (a api) wantErr(method, path string, body any, code int) {
	a.t.Helper()
	st, out := a.call(method, path, body)
	b, _ := json.Marshal(out)
	if st != (&Error{Code: code}).Status() || !strings.Contains(string(b), errCode(code)) || !strings.Contains(string(b), `"message"`) {
		a.t.Errorf("%s %s: got %d %s, want error code %d", method, path, st, b, code)
	}
}

func newAPI(t *testing.T, m *Memory) api {
	srv := httptest.NewServer(NewServer(m))
	t.Cleanup(srv.Close)
	return api{t, srv.URL}
}

func avroBody(s string) map[string]any { return map[string]any{"schema": s} }

func TestServerEndpoints(t *testing.T) {
	a := newAPI(t, NewMemory())
	a.want("GET", "/subjects", nil, 200, `[]`)
	a.want("GET", "/schemas/types", nil, 200, `["JSON","PROTOBUF","AVRO"]`)
	a.want("GET", "/config", nil, 200, `{"compatibilityLevel":"BACKWARD"}`)

	a.want("POST", "/subjects/users-value/versions", avroBody(userV1), 200, `{"id":1}`)
	a.want("POST", "/subjects/users-value/versions", avroBody(userV1), 200, `{"id":1}`) // again: same id
	// Whitespace does not make another schema.
	a.want("POST", "/subjects/users-value/versions", avroBody(strings.ReplaceAll(userV1, ",", ", ")), 200, `{"id":1}`)
	a.want("POST", "/subjects/users-value/versions", avroBody(userV2), 200, `{"id":2}`)
	a.want("POST", "/subjects/other-value/versions", avroBody(userV1), 200, `{"id":1}`) // same schema, same id
	a.want("GET", "/subjects", nil, 200, `["other-value","users-value"]`)
	a.want("GET", "/subjects?subjectPrefix=users", nil, 200, `["users-value"]`)
	a.want("GET", "/subjects/users-value/versions", nil, 200, `[1,2]`)
	a.want("GET", "/subjects/users-value/versions/1", nil, 200, `{"id":1,"schema":`+quote(userV1)+`,"subject":"users-value","version":1}`)
	a.want("GET", "/subjects/users-value/versions/latest", nil, 200, `{"id":2,"schema":`+quote(userV2)+`,"subject":"users-value","version":2}`)
	a.want("GET", "/subjects/users-value/versions/latest/schema", nil, 200, userV2)
	a.want("GET", "/subjects/users-value/versions/1/referencedby", nil, 200, `[]`)
	a.want("POST", "/subjects/users-value", avroBody(userV1), 200, `{"id":1,"schema":`+quote(userV1)+`,"subject":"users-value","version":1}`)
	a.want("GET", "/schemas/ids/2", nil, 200, `{"schema":`+quote(userV2)+`}`)
	a.want("GET", "/schemas/ids/2/schema", nil, 200, userV2)
	a.want("GET", "/schemas/ids/1/versions", nil, 200, `[{"subject":"other-value","version":1},{"subject":"users-value","version":1}]`)

	// JSON and PROTOBUF schemas say their type.
	js := `{"type":"object","properties":{"a":{"type":"integer"}}}`
	a.want("POST", "/subjects/j-value/versions", map[string]any{"schema": js, "schemaType": "JSON"}, 200, `{"id":3}`)
	a.want("GET", "/schemas/ids/3", nil, 200, `{"schema":`+quote(js)+`,"schemaType":"JSON"}`)
	pb := "syntax = \"proto3\";\nmessage M {\n  int32 a = 1;\n}\n"
	a.want("POST", "/subjects/p-value/versions", map[string]any{"schema": pb, "schemaType": "PROTOBUF"}, 200, `{"id":4}`)

	// References.
	ref := `{"type":"record","name":"Wrapper","fields":[{"name":"user","type":"User"}]}`
	a.want("POST", "/subjects/wrap-value/versions", map[string]any{"schema": ref,
		"references": []Reference{{Name: "User", Subject: "users-value", Version: 1}}}, 200, `{"id":5}`)
	a.want("GET", "/subjects/users-value/versions/1/referencedby", nil, 200, `[5]`)
	a.wantErr("POST", "/subjects/wrap2-value/versions", map[string]any{"schema": ref}, CodeInvalidSchema)

	// Config.
	a.want("PUT", "/config", map[string]string{"compatibility": "full"}, 200, `{"compatibility":"FULL"}`)
	a.want("GET", "/config", nil, 200, `{"compatibilityLevel":"FULL"}`)
	a.wantErr("GET", "/config/users-value", nil, CodeSubjectLevelNotSet)
	a.want("GET", "/config/users-value?defaultToGlobal=true", nil, 200, `{"compatibilityLevel":"FULL"}`)
	a.want("PUT", "/config/users-value", map[string]string{"compatibility": "NONE"}, 200, `{"compatibility":"NONE"}`)
	a.want("GET", "/config/users-value", nil, 200, `{"compatibilityLevel":"NONE"}`)
	a.want("DELETE", "/config/users-value", nil, 200, `{"compatibilityLevel":"NONE"}`)
	a.wantErr("PUT", "/config", map[string]string{"compatibility": "SIDEWAYS"}, CodeInvalidCompatibility)
	a.want("PUT", "/config", map[string]string{"compatibility": "BACKWARD"}, 200, "")

	// Compatibility checks.
	a.want("POST", "/compatibility/subjects/users-value/versions/latest", avroBody(userV2), 200, `{"is_compatible":true}`)
	a.want("POST", "/compatibility/subjects/users-value/versions/1", avroBody(userBad), 200, `{"is_compatible":false}`)
	st, out := a.call("POST", "/compatibility/subjects/users-value/versions/latest?verbose=true", avroBody(userBad))
	if b, _ := json.Marshal(out); st != 200 || !strings.Contains(string(b), `"messages":["BACKWARD`) {
		t.Errorf("verbose compatibility: %d %s", st, b)
	}
	a.want("POST", "/compatibility/subjects/nobody-value/versions/latest", avroBody(userBad), 200, `{"is_compatible":true}`)
	a.wantErr("POST", "/compatibility/subjects/users-value/versions/9", avroBody(userBad), CodeVersionNotFound)

	// Deletes: soft, then permanent.
	a.want("DELETE", "/subjects/users-value/versions/2", nil, 200, `2`)
	a.wantErr("DELETE", "/subjects/users-value/versions/2", nil, CodeVersionSoftDeleted)
	a.want("GET", "/subjects/users-value/versions", nil, 200, `[1]`)
	a.want("GET", "/subjects/users-value/versions?deleted=true", nil, 200, `[1,2]`)
	a.want("GET", "/subjects/users-value/versions/2?deleted=true", nil, 200, "")
	a.wantErr("GET", "/subjects/users-value/versions/2", nil, CodeVersionNotFound)
	a.want("GET", "/schemas/ids/2", nil, 200, "") // ids of soft-deleted versions still resolve
	a.wantErr("DELETE", "/subjects/users-value/versions/1?permanent=true", nil, CodeVersionNotSoftDeleted)
	a.want("DELETE", "/subjects/users-value/versions/2?permanent=true", nil, 200, `2`)
	a.wantErr("GET", "/schemas/ids/2", nil, CodeSchemaNotFound)
	a.wantErr("DELETE", "/subjects/other-value?permanent=true", nil, CodeSubjectNotSoftDeleted)
	a.want("DELETE", "/subjects/other-value", nil, 200, `[1]`)
	a.wantErr("DELETE", "/subjects/other-value", nil, CodeSubjectSoftDeleted)
	a.want("GET", "/subjects", nil, 200, `["j-value","p-value","users-value","wrap-value"]`)
	a.want("GET", "/subjects?deleted=true", nil, 200, `["j-value","other-value","p-value","users-value","wrap-value"]`)
	a.want("DELETE", "/subjects/other-value?permanent=true", nil, 200, `[1]`)
	a.want("GET", "/schemas/ids/1", nil, 200, "") // users-value still holds id 1
	// A new schema gets a new id: 2 is not reused.
	a.want("POST", "/subjects/users-value/versions", avroBody(userV2), 200, `{"id":6}`)
	// Like Confluent's, a version deleted for good is a free number again.
	a.want("GET", "/subjects/users-value/versions", nil, 200, `[1,2]`)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestServerErrors(t *testing.T) {
	a := newAPI(t, NewMemory())
	a.wantErr("GET", "/subjects/nope/versions", nil, CodeSubjectNotFound)
	a.wantErr("GET", "/subjects/nope/versions/1", nil, CodeSubjectNotFound)
	a.wantErr("GET", "/subjects/nope/versions/latest", nil, CodeSubjectNotFound)
	a.wantErr("POST", "/subjects/nope", avroBody(userV1), CodeSubjectNotFound)
	a.wantErr("DELETE", "/subjects/nope", nil, CodeSubjectNotFound)
	a.wantErr("GET", "/schemas/ids/7", nil, CodeSchemaNotFound)
	a.wantErr("GET", "/schemas/ids/x", nil, CodeSchemaNotFound)
	a.wantErr("GET", "/schemas/ids/7/versions", nil, CodeSchemaNotFound)
	a.wantErr("POST", "/subjects/s/versions", avroBody(`{"type":"recrod"}`), CodeInvalidSchema)
	a.wantErr("POST", "/subjects/s/versions", avroBody(""), CodeInvalidSchema)
	a.wantErr("POST", "/subjects/s/versions", map[string]any{"schema": "[1]", "schemaType": "JSON"}, CodeInvalidSchema)
	a.wantErr("POST", "/subjects/s/versions", map[string]any{"schema": "message M {", "schemaType": "PROTOBUF"}, CodeInvalidSchema)
	a.wantErr("POST", "/subjects/s/versions", map[string]any{"schema": "{}", "schemaType": "XML"}, CodeInvalidSchema)
	a.want("POST", "/subjects/s/versions", avroBody(userV1), 200, `{"id":1}`)
	a.wantErr("GET", "/subjects/s/versions/2", nil, CodeVersionNotFound)
	a.wantErr("GET", "/subjects/s/versions/zero", nil, CodeInvalidVersion)
	a.wantErr("GET", "/subjects/s/versions/0", nil, CodeInvalidVersion)
	a.wantErr("POST", "/subjects/s", avroBody(userV2), CodeSchemaNotFound)
	a.wantErr("POST", "/subjects/s/versions", avroBody(userBad), CodeIncompatible)
	a.wantErr("GET", "/nothing/here", nil, 404)
	a.wantErr("DELETE", "/config/s", nil, CodeSubjectNotFound)

	req, _ := http.NewRequest("POST", a.url+"/subjects/s/versions", strings.NewReader(`{"schema":"\"int\""}`))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 415 {
		t.Errorf("text/plain: got %d, want 415", resp.StatusCode)
	}
	// Plain application/json is accepted.
	req, _ = http.NewRequest("POST", a.url+"/subjects/plain/versions", strings.NewReader(`{"schema":"\"int\""}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("application/json: got %d, want 200", resp.StatusCode)
	}
}

func TestCompatibilityLevels(t *testing.T) {
	// v1 -> v2 adds a defaulted field (both ways fine); bad adds a
	// required field: a reader of bad cannot read v1 (BACKWARD fails), but
	// v1 can read bad (FORWARD holds).
	dropName := `{"type":"record","name":"User","fields":[{"name":"age","type":"int","default":0}]}`
	cases := []struct {
		level string
		prev  []string
		next  string
		ok    bool
	}{
		{None, []string{userV1}, `"int"`, true},
		{Backward, []string{userV1}, userV2, true},
		{Backward, []string{userV1}, userBad, false},
		{Forward, []string{userV1}, userBad, true},
		{Forward, []string{userV1}, dropName, false}, // v1 needs name, dropName lacks it
		{Full, []string{userV1}, userV2, true},
		{Full, []string{userV1}, userBad, false},
		// Transitive levels check every version; plain ones the latest.
		{Backward, []string{userBad, userV1}, dropName, true},
		{BackwardTransitive, []string{userV1, userV2}, dropName, true},
		{Backward, []string{`"int"`, userV1}, userV2, true},
		{BackwardTransitive, []string{`"int"`, userV1}, userV2, false},
		{Forward, []string{`"int"`, userV1}, userV2, true},
		{ForwardTransitive, []string{`"int"`, userV1}, userV2, false},
		{FullTransitive, []string{userV1, userV2}, userV2, true},
	}
	for _, c := range cases {
		m := NewMemory()
		ctx := context.Background()
		_ = m.SetLevel(ctx, "", None)
		for _, p := range c.prev {
			if _, err := m.Register(ctx, "s", Schema{Schema: p}); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.SetLevel(ctx, "s", c.level); err != nil {
			t.Fatal(err)
		}
		_, err := m.Register(ctx, "s", Schema{Schema: c.next})
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrIncompatible)) {
			t.Errorf("%s %v then %s: got %v, want ok=%v", c.level, c.prev, c.next, err, c.ok)
		}
	}
}

func TestCompatibilityJSONAndProtobuf(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	_ = m.SetLevel(ctx, "", Backward)
	reg := func(subject, typ, s string) error {
		_, err := m.Register(ctx, subject, Schema{Type: typ, Schema: s})
		return err
	}
	if err := reg("j", JSON, `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`); err != nil {
		t.Fatal(err)
	}
	if err := reg("j", JSON, `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"]}`); err != nil {
		t.Errorf("adding an optional property: %v", err)
	}
	if err := reg("j", JSON, `{"type":"object","properties":{"a":{"type":"integer"},"c":{"type":"string"}},"required":["a","c"]}`); !errors.Is(err, ErrIncompatible) {
		t.Errorf("requiring a new property: got %v", err)
	}
	if err := reg("j", JSON, `{"type":"object","properties":{"a":{"type":"string"}}}`); !errors.Is(err, ErrIncompatible) {
		t.Errorf("changing a type: got %v", err)
	}
	p1 := "syntax = \"proto3\";\nmessage M {\n  int32 a = 1;\n  message N {\n    string s = 1;\n  }\n}\n"
	if err := reg("p", Protobuf, p1); err != nil {
		t.Fatal(err)
	}
	if err := reg("p", Protobuf, strings.Replace(p1, "int32 a = 1;", "int32 renamed = 1;\n  string b = 2;", 1)); err != nil {
		t.Errorf("renaming and adding fields: %v", err)
	}
	if err := reg("p", Protobuf, strings.Replace(p1, "int32 a = 1;", "string a = 1;", 1)); !errors.Is(err, ErrIncompatible) {
		t.Errorf("changing a field's type: got %v", err)
	}
	if err := reg("p", Avro, userV1); !errors.Is(err, ErrIncompatible) {
		t.Errorf("changing the schema type: got %v", err)
	}
}

func TestJournalRestart(t *testing.T) {
	ctx := context.Background()
	j := &FileJournal{Path: filepath.Join(t.TempDir(), "schemas.jsonl")}
	m, err := OpenMemory(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	a := newAPI(t, m)
	a.want("POST", "/subjects/a-value/versions", avroBody(userV1), 200, `{"id":1}`)
	a.want("POST", "/subjects/a-value/versions", avroBody(userV2), 200, `{"id":2}`)
	a.want("POST", "/subjects/b-value/versions", avroBody(`"string"`), 200, `{"id":3}`)
	a.want("PUT", "/config/a-value", map[string]string{"compatibility": "FULL"}, 200, "")
	a.want("DELETE", "/subjects/b-value", nil, 200, `[1]`)
	a.want("DELETE", "/subjects/b-value?permanent=true", nil, 200, `[1]`)
	a.want("DELETE", "/subjects/a-value/versions/1", nil, 200, `1`)

	m2, err := OpenMemory(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	b := newAPI(t, m2)
	b.want("GET", "/subjects", nil, 200, `["a-value"]`)
	b.want("GET", "/subjects/a-value/versions", nil, 200, `[2]`)
	b.want("GET", "/subjects/a-value/versions?deleted=true", nil, 200, `[1,2]`)
	b.want("GET", "/config/a-value", nil, 200, `{"compatibilityLevel":"FULL"}`)
	b.want("GET", "/schemas/ids/1", nil, 200, "")
	b.wantErr("GET", "/schemas/ids/3", nil, CodeSchemaNotFound)
	// Id 3 was used and deleted for good: the next schema gets 4.
	b.want("POST", "/subjects/c-value/versions", avroBody(`"long"`), 200, `{"id":4}`)
	b.want("POST", "/subjects/a-value/versions", avroBody(userV1), 200, `{"id":1}`)
	b.want("GET", "/subjects/a-value/versions", nil, 200, `[2,3]`)
}

func TestHTTPClient(t *testing.T) {
	ctx := context.Background()
	var calls, fails atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(nil))
	inner := NewServer(NewMemory())
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if fails.Add(-1) >= 0 { // a registry restarting
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	})
	defer srv.Close()

	if _, err := NewHTTPClient("ftp://x", ClientOptions{}); err == nil {
		t.Error("ftp URL accepted")
	}
	bad, err := NewHTTPClient(srv.URL, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Subjects(ctx); err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Errorf("no credentials: got %v", err)
	}
	c, err := NewHTTPClient(strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1), ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.URL(), "s3cret") || !strings.Contains(Redact(strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1)), "xxxxx") {
		t.Error("the password shows")
	}
	fails.Store(2)
	id, err := c.Register(ctx, "t-value", Schema{Schema: userV1})
	if err != nil || id != 1 {
		t.Fatalf("Register after two 503s: %d %v", id, err)
	}
	n := calls.Load()
	if id, err := c.Register(ctx, "t-value", Schema{Schema: userV1}); err != nil || id != 1 || calls.Load() != n {
		t.Errorf("Register again: %d %v, %d calls (want it cached)", id, err, calls.Load()-n)
	}
	s, err := c.ByID(ctx, 1)
	if err != nil || s.Schema != userV1 || s.Type != Avro {
		t.Errorf("ByID: %+v %v", s, err)
	}
	n = calls.Load()
	if _, err := c.ByID(ctx, 1); err != nil || calls.Load() != n {
		t.Errorf("ByID again: %v, %d calls (want it cached)", err, calls.Load()-n)
	}
	if _, err := c.ByID(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("ByID(99): %v", err)
	}
	if _, err := c.Register(ctx, "t-value", Schema{Schema: userBad}); !errors.Is(err, ErrIncompatible) {
		t.Errorf("incompatible Register: %v", err)
	}
	if msgs, err := c.Compatible(ctx, "t-value", Schema{Schema: userBad}); err != nil || len(msgs) == 0 {
		t.Errorf("Compatible: %v %v", msgs, err)
	}
	if err := c.SetLevel(ctx, "t-value", None); err != nil {
		t.Fatal(err)
	}
	if id, err := c.Register(ctx, "t-value", Schema{Schema: userBad}); err != nil || id != 2 {
		t.Errorf("Register under NONE: %d %v", id, err)
	}
	if s, err := c.Latest(ctx, "t-value"); err != nil || s.Version != 2 || s.ID != 2 || s.Subject != "t-value" {
		t.Errorf("Latest: %+v %v", s, err)
	}
	if s, err := c.Version(ctx, "t-value", 1); err != nil || s.ID != 1 {
		t.Errorf("Version: %+v %v", s, err)
	}
	if s, err := c.Lookup(ctx, "t-value", Schema{Schema: userBad}); err != nil || s.Version != 2 {
		t.Errorf("Lookup: %+v %v", s, err)
	}
	if _, err := c.Version(ctx, "t-value", 5); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version 5: %v", err)
	}
	if subs, err := c.Subjects(ctx); err != nil || len(subs) != 1 {
		t.Errorf("Subjects: %v %v", subs, err)
	}
	if vs, err := c.Versions(ctx, "t-value"); err != nil || len(vs) != 2 {
		t.Errorf("Versions: %v %v", vs, err)
	}
	if vs, err := c.DeleteSubject(ctx, "t-value"); err != nil || len(vs) != 2 {
		t.Errorf("DeleteSubject: %v %v", vs, err)
	}
	if _, err := c.Latest(ctx, "t-value"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Latest after delete: %v", err)
	}
	fails.Store(10)
	r, _ := NewHTTPClient(strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1), ClientOptions{Retries: 1})
	if _, err := r.Subjects(ctx); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("retries exhausted: %v", err)
	}
}

func TestKafkaJournalRestart(t *testing.T) {
	ctx := context.Background()
	pg, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	cl, err := kafka.NewFranz(kafka.Config{Brokers: []string{pg.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	open := func() (*Memory, *KafkaJournal) {
		j, err := NewKafkaJournal(ctx, cl, "")
		if err != nil {
			t.Fatal(err)
		}
		m, err := OpenMemory(ctx, j)
		if err != nil {
			t.Fatal(err)
		}
		return m, j
	}
	m, j := open()
	if _, err := m.Register(ctx, "a", Schema{Schema: userV1}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Register(ctx, "b", Schema{Schema: `"int"`}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DeleteSubject(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DeleteSubjectPermanent(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	j.Close()
	m, j = open()
	defer j.Close()
	if s, err := m.Latest(ctx, "a"); err != nil || s.ID != 1 {
		t.Errorf("after a restart: %+v %v", s, err)
	}
	if id, err := m.Register(ctx, "c", Schema{Schema: `"long"`}); err != nil || id != 3 {
		t.Errorf("a new schema after a restart got id %d (%v), want 3", id, err)
	}
	if info, err := cl.DescribeTopic(ctx, DefaultTopic); err != nil || info.Partitions != 1 {
		t.Errorf("topic %s: %+v %v", DefaultTopic, info, err)
	}
}

// sliceJournal is a Journal of entries given by the test.
type sliceJournal []Entry

func (s *sliceJournal) Load(context.Context) ([]Entry, error) { return *s, nil }
func (s *sliceJournal) Append(_ context.Context, e Entry) error {
	e.Offset = int64(len(*s))
	*s = append(*s, e)
	return nil
}

// TestJournalSkipsBadEntries: entries that cannot be read, or that hold
// what the registry refuses, are skipped and listed with their offsets;
// the others load, and the registry goes on taking schemas.
func TestJournalSkipsBadEntries(t *testing.T) {
	ctx := context.Background()
	good := &sliceJournal{}
	m, err := OpenMemory(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Register(ctx, "a-value", Schema{Schema: userV1}); err != nil {
		t.Fatal(err)
	}
	j := append(sliceJournal{}, *good...)
	bad := []Entry{
		{Key: []byte(""), Value: []byte("x")},
		{Key: []byte("not json"), Value: []byte(`{}`)},
		{Key: schemaKey("b-value", 1), Value: []byte("{truncated")},
		{Key: schemaKey("c-value", 1), Value: schemaValue(Schema{ID: 7, Subject: "c-value", Version: 1, Type: Avro, Schema: `{"type":"nonsense"}`}, false)},
		{Key: schemaKey("d-value", 1), Value: schemaValue(Schema{ID: 1, Subject: "d-value", Version: 1, Type: Avro, Schema: `"string"`}, false)},
		{Key: []byte(`{"keytype":"WHATEVER","magic":0}`), Value: []byte(`{}`)},
		{Key: configKey("a-value"), Value: []byte(`{"compatibilityLevel":"SOMETIMES"}`)},
		{Key: []byte(`{"keytype":"NOOP","magic":0}`), Value: []byte(`{}`)},
	}
	for _, e := range bad {
		_ = j.Append(ctx, e)
	}
	m2, err := OpenMemory(ctx, &j)
	if err != nil {
		t.Fatalf("a journal with bad entries stops the registry: %v", err)
	}
	skipped := m2.Skipped()
	var offsets []int64
	for _, s := range skipped {
		offsets = append(offsets, s.Offset)
		if s.Reason == "" {
			t.Errorf("skipped entry %d without a reason", s.Offset)
		}
	}
	n := int64(len(*good))
	want := []int64{n, n + 1, n + 2, n + 5, n + 6, n + 4, n + 3} // schemas last, by id
	if fmt.Sprint(offsets) != fmt.Sprint(want) {
		t.Errorf("skipped offsets %v, want %v: %+v", offsets, want, skipped)
	}
	if s, err := m2.Latest(ctx, "a-value"); err != nil || s.ID != 1 {
		t.Errorf("the good schema after the bad entries: %+v %v", s, err)
	}
	if _, err := m2.Latest(ctx, "d-value"); err == nil {
		t.Error("an entry reusing id 1 for another schema was loaded")
	}
	if id, err := m2.Register(ctx, "e-value", Schema{Schema: `"long"`}); err != nil || id != 2 {
		t.Errorf("registering after the bad entries: id %d, %v", id, err)
	}
}
