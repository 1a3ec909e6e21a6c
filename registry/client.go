package registry

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTPClient is a Client of a registry speaking Confluent's REST API:
// Confluent Schema Registry, the playground's built-in registry, Apicurio's
// ccompat API, Redpanda, Karapace. It is safe for concurrent use.
//
// Schemas by id, and the ids of registered schemas, never change, so it
// caches them; subjects and versions it asks for every time.
type HTTPClient struct {
	base  *url.URL // without userinfo
	user  string
	pass  string
	auth  bool
	http  *http.Client
	tries int

	mu   sync.Mutex
	ids  map[int]Schema
	regs map[string]int // subject + "\x00" + type + "\x00" + schema
}

// ClientOptions configure an HTTPClient.
type ClientOptions struct {
	// TLS configures https connections; nil uses the system's roots.
	TLS *tls.Config
	// Timeout bounds one request; 30s when zero.
	Timeout time.Duration
	// Retries is how many times a request that failed with a 5xx status
	// or a connection error is tried again; 3 when zero, none when < 0.
	Retries int
}

// NewHTTPClient returns a client of the registry at rawURL (http or https;
// basic-auth credentials may be given as the URL's userinfo, as in
// https://user:password@host:8081).
func NewHTTPClient(rawURL string, opts ClientOptions) (*HTTPClient, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, fmt.Errorf("schema registry URL %q: %w", Redact(rawURL), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("schema registry URL %q: the scheme must be http or https, as in http://localhost:8081", Redact(rawURL))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("schema registry URL %q has no host: give it as http://host:port", Redact(rawURL))
	}
	c := &HTTPClient{ids: map[int]Schema{}, regs: map[string]int{}, tries: 4}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
		c.auth = true
		u.User = nil
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	c.base = u
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if opts.TLS != nil {
		tr.TLSClientConfig = opts.TLS
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	c.http = &http.Client{Transport: tr, Timeout: timeout}
	switch {
	case opts.Retries < 0:
		c.tries = 1
	case opts.Retries > 0:
		c.tries = opts.Retries + 1
	}
	return c, nil
}

// Redact returns a registry URL with its password hidden.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	return u.Redacted()
}

// URL is the registry's address, without credentials.
func (c *HTTPClient) URL() string { return c.base.String() }

// do sends a request and decodes the JSON answer into out (if not nil).
func (c *HTTPClient) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	var last error
	for try := 0; try < c.tries; try++ {
		if try > 0 {
			t := time.NewTimer(time.Duration(50<<try) * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return errors.Join(last, ctx.Err())
			case <-t.C:
			}
		}
		retry, err := c.once(ctx, method, path, body, out)
		if err == nil || !retry {
			return err
		}
		last = err
	}
	return last
}

func (c *HTTPClient) once(ctx context.Context, method, path string, body []byte, out any) (retry bool, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", ContentType+", application/json")
	if body != nil {
		req.Header.Set("Content-Type", ContentType)
	}
	if c.auth {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("schema registry %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return true, fmt.Errorf("schema registry %s: reading the answer to %s %s: %w", c.base, method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &Error{}
		if json.Unmarshal(data, e) != nil || e.Code == 0 {
			e = &Error{Code: resp.StatusCode, Message: fmt.Sprintf("%s %s: HTTP %s: %s", method, path, resp.Status, bytes.TrimSpace(data))}
		}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			e.Message += " (give the registry's credentials in the URL, as in https://user:password@host:8081)"
		}
		return resp.StatusCode >= 500, e
	}
	if out == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return false, fmt.Errorf("schema registry %s: %s %s: unexpected answer %q: %w", c.base, method, path, data, err)
	}
	return false, nil
}

func esc(s string) string { return url.PathEscape(s) }

func wireSchema(s Schema) map[string]any {
	body := map[string]any{"schema": s.Schema}
	if t := normType(s.Type); t != Avro {
		body["schemaType"] = t
	}
	if len(s.References) > 0 {
		body["references"] = s.References
	}
	return body
}

// Register implements Client.
func (c *HTTPClient) Register(ctx context.Context, subject string, s Schema) (int, error) {
	key := subject + "\x00" + normType(s.Type) + "\x00" + s.Schema
	if len(s.References) == 0 {
		c.mu.Lock()
		id, ok := c.regs[key]
		c.mu.Unlock()
		if ok {
			return id, nil
		}
	}
	var out struct {
		ID int `json:"id"`
	}
	if err := c.do(ctx, http.MethodPost, "/subjects/"+esc(subject)+"/versions", wireSchema(s), &out); err != nil {
		return 0, err
	}
	if len(s.References) == 0 {
		c.mu.Lock()
		c.regs[key] = out.ID
		c.mu.Unlock()
	}
	return out.ID, nil
}

// wire is a schema as the API shows it.
type wire struct {
	ID         int         `json:"id"`
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	Type       string      `json:"schemaType"`
	Schema     string      `json:"schema"`
	References []Reference `json:"references"`
}

func (w wire) schema() Schema {
	return Schema{ID: w.ID, Subject: w.Subject, Version: w.Version, Type: normType(w.Type), Schema: w.Schema, References: w.References}
}

// ByID implements Client.
func (c *HTTPClient) ByID(ctx context.Context, id int) (Schema, error) {
	c.mu.Lock()
	s, ok := c.ids[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	var w wire
	if err := c.do(ctx, http.MethodGet, "/schemas/ids/"+strconv.Itoa(id), nil, &w); err != nil {
		return Schema{}, err
	}
	w.ID = id
	s = w.schema()
	c.mu.Lock()
	c.ids[id] = s
	c.mu.Unlock()
	return s, nil
}

// Latest implements Client.
func (c *HTTPClient) Latest(ctx context.Context, subject string) (Schema, error) {
	return c.Version(ctx, subject, -1)
}

// Version implements Client; version -1 is the latest.
func (c *HTTPClient) Version(ctx context.Context, subject string, version int) (Schema, error) {
	v := "latest"
	if version != -1 {
		v = strconv.Itoa(version)
	}
	var w wire
	if err := c.do(ctx, http.MethodGet, "/subjects/"+esc(subject)+"/versions/"+v, nil, &w); err != nil {
		return Schema{}, err
	}
	if w.Subject == "" {
		w.Subject = subject
	}
	return w.schema(), nil
}

// Lookup returns the version of subject that holds s.
func (c *HTTPClient) Lookup(ctx context.Context, subject string, s Schema) (Schema, error) {
	var w wire
	if err := c.do(ctx, http.MethodPost, "/subjects/"+esc(subject), wireSchema(s), &w); err != nil {
		return Schema{}, err
	}
	return w.schema(), nil
}

// Subjects implements Client.
func (c *HTTPClient) Subjects(ctx context.Context) ([]string, error) {
	var out []string
	err := c.do(ctx, http.MethodGet, "/subjects", nil, &out)
	return out, err
}

// Versions lists a subject's versions.
func (c *HTTPClient) Versions(ctx context.Context, subject string) ([]int, error) {
	var out []int
	err := c.do(ctx, http.MethodGet, "/subjects/"+esc(subject)+"/versions", nil, &out)
	return out, err
}

// DeleteSubject implements Client (a soft delete).
func (c *HTTPClient) DeleteSubject(ctx context.Context, subject string) ([]int, error) {
	var out []int
	if err := c.do(ctx, http.MethodDelete, "/subjects/"+esc(subject), nil, &out); err != nil {
		return nil, err
	}
	c.mu.Lock()
	for k := range c.regs {
		if strings.HasPrefix(k, subject+"\x00") {
			delete(c.regs, k)
		}
	}
	c.mu.Unlock()
	return out, nil
}

// SetLevel sets the compatibility level of subject, or the global level
// when subject is "".
func (c *HTTPClient) SetLevel(ctx context.Context, subject, level string) error {
	path := "/config"
	if subject != "" {
		path += "/" + esc(subject)
	}
	return c.do(ctx, http.MethodPut, path, map[string]string{"compatibility": level}, nil)
}

// Compatible checks s against the latest version of subject and returns
// why it is incompatible (nothing when it is compatible).
func (c *HTTPClient) Compatible(ctx context.Context, subject string, s Schema) ([]string, error) {
	var out struct {
		OK       bool     `json:"is_compatible"`
		Messages []string `json:"messages"`
	}
	if err := c.do(ctx, http.MethodPost, "/compatibility/subjects/"+esc(subject)+"/versions/latest?verbose=true", wireSchema(s), &out); err != nil {
		return nil, err
	}
	if out.OK {
		return nil, nil
	}
	if len(out.Messages) == 0 {
		out.Messages = []string{"incompatible"}
	}
	return out.Messages, nil
}
