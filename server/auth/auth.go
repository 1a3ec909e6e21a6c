package auth

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Realm is the realm a 401 response names.
const Realm = "Sluice"

// Users checks user names and passwords.
type Users struct {
	m map[string]secret
	// failures counts and logs refused requests; nil counts none.
	failures *Failures
}

// secret is a stored password: plain, or the hex digest of one.
type secret struct {
	scheme string // "", "MD5" or "SHA256"
	value  []byte
}

func (s secret) matches(password string) bool {
	var got []byte
	switch s.scheme {
	case "MD5":
		h := md5.Sum([]byte(password))
		got = h[:]
	case "SHA256":
		h := sha256.Sum256([]byte(password))
		got = h[:]
	default:
		got = []byte(password)
	}
	return subtle.ConstantTimeCompare(got, s.value) == 1
}

// NewUsers returns an empty set of users.
func NewUsers() *Users { return &Users{m: map[string]secret{}} }

// Add adds a user with a plain password.
func (u *Users) Add(user, password string) { u.m[user] = secret{value: []byte(password)} }

// Len is the number of users.
func (u *Users) Len() int { return len(u.m) }

// SetFailures makes the guards of u (Middleware, ServerOptions, Guard)
// count and log the requests they refuse in f (see Failures); nil counts
// none. Call it before making the guards: each makes its surface show in
// f.Counts at zero.
func (u *Users) SetFailures(f *Failures) { u.failures = f }

// ParseUsers reads a password file in the format of the property file
// ksqlDB's basic authentication (Jetty's HashLoginService) uses: one
// "user: password[,role ...]" a line, "#" comments. A password may be
// plain or "MD5:<hex>" or "SHA256:<hex>", the digest of the password.
// Roles are accepted and ignored. Errors name the line, never a password.
func ParseUsers(r io.Reader) (*Users, error) {
	u := NewUsers()
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("line %d: want \"user: password[,role ...]\"", n)
		}
		pw, _, _ := strings.Cut(rest, ",")
		pw = strings.TrimSpace(pw)
		s := secret{value: []byte(pw)}
		for _, scheme := range []string{"MD5", "SHA256"} {
			if hexed, ok := strings.CutPrefix(pw, scheme+":"); ok {
				b, err := hex.DecodeString(hexed)
				if err != nil {
					return nil, fmt.Errorf("line %d: user %s: the %s digest is not hexadecimal", n, name, scheme)
				}
				s = secret{scheme: scheme, value: b}
			}
		}
		if pw == "" {
			return nil, fmt.Errorf("line %d: user %s has no password", n, name)
		}
		u.m[name] = s
	}
	return u, sc.Err()
}

// LoadUsers reads a password file (see ParseUsers).
func LoadUsers(path string) (*Users, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u, err := ParseUsers(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// dummy is compared against when the user is unknown, so that the time a
// check takes does not tell whether a user exists.
var dummy = secret{value: []byte("\x00sluice-no-such-user\x00")}

// Check reports whether password is user's, in time independent of where
// the two differ.
func (u *Users) Check(user, password string) bool {
	s, ok := u.m[user]
	if !ok {
		dummy.matches(password)
		return false
	}
	return s.matches(password)
}

// verdict is what a check of credentials found.
type verdict int

const (
	accepted      verdict = iota
	missing               // no credentials
	malformed             // not basic authentication, or not decodable
	unknownUser           // no such user
	wrongPassword         // the user's password is another
)

// String is the verdict as the failed-login line gives it (reason).
func (v verdict) String() string {
	switch v {
	case accepted:
		return "accepted"
	case missing:
		return "no credentials"
	case malformed:
		return "not basic authentication"
	case unknownUser:
		return "unknown user"
	}
	return "wrong password"
}

// verify checks an Authorization value ("Basic ...", the scheme in any
// case): the verdict and the user name given ("" when none could be
// read). Like Check it takes time independent of whether the user exists.
func (u *Users) verify(h string) (verdict, string) {
	if h == "" {
		return missing, ""
	}
	scheme, enc, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return malformed, ""
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return malformed, ""
	}
	user, pw, ok := strings.Cut(string(raw), ":")
	if !ok {
		return malformed, "" // what was sent may be a secret
	}
	s, known := u.m[user]
	if !known {
		dummy.matches(pw)
		return unknownUser, user
	}
	if !s.matches(pw) {
		return wrongPassword, user
	}
	return accepted, user
}

// HeaderValue is the Authorization header value of basic authentication.
func HeaderValue(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// ksqlUnauthorized is the body of the REST API's 401, in ksqlDB's shape.
const ksqlUnauthorized = `{"@type":"generic_error","error_code":40100,"message":"Unauthorized: pass a user and password with HTTP basic authentication"}` + "\n"

// Middleware requires basic authentication on every request to next but
// those to the paths in exempt (health probes). A refused request gets 401
// with a WWW-Authenticate challenge and a ksqlDB-style error body; it is
// counted and logged under SurfaceHTTP (see SetFailures).
func (u *Users) Middleware(next http.Handler, exempt ...string) http.Handler {
	return u.Guard(next, SurfaceHTTP, "application/json", ksqlUnauthorized, exempt...)
}

// Guard requires basic authentication on every request to next but those
// to the paths in exempt, for an HTTP surface other than the REST API
// (the schema registry): a refused request is counted and logged under
// surface (see SetFailures) and gets 401 with a WWW-Authenticate
// challenge and body, of media type contentType. An accepted request
// reaches next with its credentials in its context (WithCaller).
func (u *Users) Guard(next http.Handler, surface, contentType, body string, exempt ...string) http.Handler {
	skip := map[string]bool{}
	for _, p := range exempt {
		skip[p] = true
	}
	u.failures.track(surface)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if skip[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		h := r.Header.Get("Authorization")
		v, user := u.verify(h)
		if v == accepted {
			next.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), h)))
			return
		}
		u.failures.record(surface, v, user, r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Basic realm="`+Realm+`", charset="UTF-8"`)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, body)
	})
}

type callerKey struct{}

// WithCaller returns ctx carrying the Authorization header value a
// request was accepted with, for calls made on the caller's behalf (a
// pull query forwarded to another server of a cluster).
func WithCaller(ctx context.Context, header string) context.Context {
	return context.WithValue(ctx, callerKey{}, header)
}

// Caller returns the Authorization header value of the call ctx belongs
// to: the one WithCaller stored (REST requests), else the "authorization"
// metadata of an incoming gRPC call; "" when there is none.
func Caller(ctx context.Context) string {
	if h, ok := ctx.Value(callerKey{}).(string); ok {
		return h
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("authorization"); len(v) > 0 {
		return v[0]
	}
	return ""
}

// errUnauthenticated is what a refused gRPC call gets.
var errUnauthenticated = status.Error(codes.Unauthenticated,
	`Unauthorized: pass a user and password as basic authentication in the "authorization" metadata`)

// checkContext checks the "authorization" metadata of an incoming call:
// any value may match; a refusal is counted and logged with the first.
func (u *Users) checkContext(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	for _, h := range vals {
		if v, _ := u.verify(h); v == accepted {
			return nil
		}
	}
	v, user := missing, ""
	if len(vals) > 0 {
		v, user = u.verify(vals[0])
	}
	remote := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		remote = p.Addr.String()
	}
	u.failures.record(SurfaceGRPC, v, user, remote)
	return errUnauthenticated
}

// ServerOptions are the gRPC interceptors that require basic
// authentication, carried in the "authorization" metadata, on every call
// but those to the full method names in exempt. A refused call is
// counted and logged under SurfaceGRPC (see SetFailures).
func (u *Users) ServerOptions(exempt ...string) []grpc.ServerOption {
	skip := map[string]bool{}
	for _, m := range exempt {
		skip[m] = true
	}
	u.failures.track(SurfaceGRPC)
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if !skip[info.FullMethod] {
				if err := u.checkContext(ctx); err != nil {
					return nil, err
				}
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if !skip[info.FullMethod] {
				if err := u.checkContext(ss.Context()); err != nil {
					return err
				}
			}
			return h(srv, ss)
		}),
	}
}

// Basic is the client side: per-call credentials sending a user and
// password. Over a connection without TLS it needs Insecure.
type Basic struct {
	User, Password string
	// Insecure allows sending the password without TLS (on loopback, in
	// tests).
	Insecure bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (b Basic) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": HeaderValue(b.User, b.Password)}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (b Basic) RequireTransportSecurity() bool { return !b.Insecure }

var _ credentials.PerRPCCredentials = Basic{}
