package auth

import (
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The surfaces refused requests are counted and logged under.
const (
	// SurfaceHTTP is the HTTP listener: the REST API and /metrics
	// (Middleware).
	SurfaceHTTP = "http"
	// SurfaceGRPC is the gRPC API (ServerOptions).
	SurfaceGRPC = "grpc"
	// SurfaceRegistry is the built-in schema registry (Guard).
	SurfaceRegistry = "schema-registry"
)

// Failures counts the requests that authentication refused, per surface,
// and logs the failed logins among them.
//
// A failed login is a request that carries credentials which do not
// match: an unknown user, a wrong password, or an Authorization value
// that is not basic authentication or does not decode. Each is counted
// (Count.Failed) and logged at WARN as
//
//	msg="failed login" surface=http user=alice remote=192.0.2.7:50122 reason="wrong password" suppressed=0
//
// with the user name given ("" when none could be read), the remote
// address of the connection (a proxy's, behind one: X-Forwarded-For is
// not trusted) and why; never the password. The log is rate-limited per
// surface: at most one line per Interval for each surface, whatever the
// remote addresses (so at most three lines a second for the three
// surfaces, however many addresses try). The failed logins in between
// are not logged; the next line of the surface says in its suppressed
// attribute how many there were since its previous line. The counts hold
// every one.
//
// A request carrying no credentials at all is counted apart
// (Count.Missing) and not logged: browsers and many HTTP clients send a
// first request without credentials and retry with them after the 401
// challenge, so such a request is no sign of someone guessing passwords.
//
// Set the fields before the first request and do not change them after.
// The methods are safe for concurrent use; those of a nil *Failures do
// nothing.
type Failures struct {
	// Log receives the failed-login lines; nil logs none.
	Log *slog.Logger
	// Interval is the least time between two lines; 0 means a second.
	Interval time.Duration
	// Now is the clock of the rate limit; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	surfaces map[string]*surface
}

// surface is the counts and the rate limit of one surface.
type surface struct {
	Count
	logged     bool      // a line was written, at last
	last       time.Time // when the last line was written
	suppressed uint64    // failed logins not logged since the last line
}

// Count is what a surface refused.
type Count struct {
	// Failed are requests with credentials that did not match.
	Failed uint64
	// Missing are requests without credentials.
	Missing uint64
}

// Counts returns the counts per surface: every surface a guard
// (Middleware, ServerOptions, Guard) was made for since SetFailures, zero
// or not, and any other surface recorded.
func (f *Failures) Counts() map[string]Count {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]Count, len(f.surfaces))
	for name, s := range f.surfaces {
		out[name] = s.Count
	}
	return out
}

// surface returns the state of the surface name, made on first use; the
// caller holds mu.
func (f *Failures) surface(name string) *surface {
	if f.surfaces == nil {
		f.surfaces = map[string]*surface{}
	}
	s := f.surfaces[name]
	if s == nil {
		s = &surface{}
		f.surfaces[name] = s
	}
	return s
}

// track makes surface show in Counts before its first refusal.
func (f *Failures) track(name string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.surface(name)
}

// maxUserLen bounds the user name a line shows: it is the client's text.
const maxUserLen = 64

// record counts a refused request on the surface name and logs it, within
// the surface's rate limit, when it carried credentials (v is not
// missing).
func (f *Failures) record(name string, v verdict, user, remote string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	s := f.surface(name)
	if v == missing {
		s.Missing++
		f.mu.Unlock()
		return
	}
	s.Failed++
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	t := now()
	every := f.Interval
	if every <= 0 {
		every = time.Second
	}
	if s.logged && t.Sub(s.last) < every {
		s.suppressed++
		f.mu.Unlock()
		return
	}
	suppressed := s.suppressed
	s.logged, s.last, s.suppressed = true, t, 0
	f.mu.Unlock()
	if f.Log != nil {
		f.Log.Warn("failed login", "surface", name, "user", shorten(user), "remote", remote,
			"reason", v.String(), "suppressed", suppressed)
	}
}

// shorten makes a client's user name fit a log line: valid UTF-8, at
// most maxUserLen bytes.
func shorten(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxUserLen {
		return s
	}
	cut := maxUserLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
