package connect

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The defaults of Options.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultAttempts = 3
	DefaultBackoff  = 250 * time.Millisecond
)

// The settings errors name, so that a user knows what to change.
const (
	URLFlag        = "--connect-url"
	URLProperty    = "ksql.connect.url"
	TimeoutSetting = "--connect-timeout"
)

// Options configure a Client.
type Options struct {
	// URL is the worker's REST address, http://host:8083; a path is kept
	// as a prefix of every call's.
	URL string
	// User and Password, when User is set, authenticate every call with
	// HTTP basic authentication.
	User, Password string
	// TLS configures https:// URLs; nil uses the system's roots.
	TLS *tls.Config
	// Timeout bounds each call, its retries included; zero is
	// DefaultTimeout.
	Timeout time.Duration
	// Attempts is how many times a call is tried; zero is
	// DefaultAttempts.
	Attempts int
	// Backoff is the wait before the second try, doubled before each
	// next; zero is DefaultBackoff.
	Backoff time.Duration
	// Logger receives a line per failed try; nil discards them. Lines
	// name the method and path only, never a connector's configuration.
	Logger *slog.Logger
	// Transport, when set, replaces the HTTP transport (tests).
	Transport http.RoundTripper
}

// Client talks to one Kafka Connect worker (any worker of a Connect
// cluster forwards to its leader). Its methods are safe for concurrent
// use.
type Client struct {
	base     *url.URL
	opts     Options
	http     *http.Client
	log      *slog.Logger
	redacted string
}

// New returns a client of the worker at opts.URL.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(opts.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q is not an http:// or https:// URL of a Kafka Connect worker, e.g. http://localhost:8083", URLFlag, opts.URL)
	}
	if u.User != nil {
		// Credentials in the URL are taken as basic authentication.
		if opts.User == "" {
			opts.User = u.User.Username()
			opts.Password, _ = u.User.Password()
		}
		u.User = nil
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	tr := opts.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if opts.TLS != nil {
			t.TLSClientConfig = opts.TLS.Clone()
		}
		tr = t
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{base: u, opts: opts, http: &http.Client{Transport: tr}, log: log, redacted: u.String()}, nil
}

// URL is the worker's address, without credentials.
func (c *Client) URL() string { return c.redacted }

// Error is the worker's refusal: its HTTP status and Connect's message.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// IsNotFound reports whether err is the worker's 404.
func IsNotFound(err error) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.Status == http.StatusNotFound
}

// UnreachableError is a worker that did not answer: refused, reset or
// not resolved.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("Kafka Connect is unreachable at %s: %v; check that a worker runs there, or point %s (%s) at one", e.URL, e.Err, URLFlag, URLProperty)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// TimeoutError is a call that did not finish within Options.Timeout.
type TimeoutError struct {
	URL   string
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("Kafka Connect at %s did not answer within %s (%s)", e.URL, e.Limit, TimeoutSetting)
}

// retryable reports whether a try that ended with status (0 for no
// answer) may be tried again.
func retryable(status int) bool {
	return status == 0 || status >= 500 || status == http.StatusConflict
}

// do runs method path with body (marshalled as JSON when not nil) and
// decodes a 2xx answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	wait := c.opts.Backoff
	var last error
	for attempt := 1; ; attempt++ {
		status, err := c.try(ctx, method, path, payload, out)
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		if !retryable(status) || attempt >= c.opts.Attempts {
			return err
		}
		c.log.Warn("Kafka Connect call failed; trying again", "method", method, "path", path, "status", status, "attempt", attempt, "error", redact(ctx, err.Error()))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			break
		}
		wait *= 2
	}
	if err := parent.Err(); err != nil {
		// The caller's context ended first (its client went away, or a
		// statement timeout): its error says so.
		return err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{URL: c.redacted, Limit: c.opts.Timeout}
	}
	return last
}

// try makes one request; status is 0 when the worker did not answer.
func (c *Client) try(ctx context.Context, method, path string, payload []byte, out any) (int, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return -1, err
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.opts.User != "" {
		req.SetBasicAuth(c.opts.User, c.opts.Password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, &UnreachableError{URL: c.redacted, Err: netCause(err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, &UnreachableError{URL: c.redacted, Err: netCause(err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, &Error{Status: resp.StatusCode, Message: errorMessage(resp, data)}
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return -1, fmt.Errorf("Kafka Connect at %s answered %s %s with what is not its JSON: %v", c.redacted, method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// netCause is the network error beneath a failed request, without
// net/http's "Get URL:" prefix.
func netCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// errorMessage is Connect's message of a refusal ({"error_code":..,
// "message":..}), or its status and body when it is not Connect's JSON.
func errorMessage(resp *http.Response, data []byte) string {
	var e struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &e) == nil && e.Message != "" {
		return e.Message
	}
	if s := strings.TrimSpace(string(data)); s != "" && len(s) < 500 && !strings.HasPrefix(s, "<") {
		return resp.Status + ": " + s
	}
	return resp.Status
}

func esc(name string) string { return url.PathEscape(name) }

type redactKey struct{}

// WithRedaction returns ctx with hide, which the client applies to what it
// logs of the calls made in ctx: the worker's messages may echo a secret of
// the configuration being sent.
func WithRedaction(ctx context.Context, hide func(string) string) context.Context {
	return context.WithValue(ctx, redactKey{}, hide)
}

func redact(ctx context.Context, s string) string {
	if hide, ok := ctx.Value(redactKey{}).(func(string) string); ok && hide != nil {
		return hide(s)
	}
	return s
}
