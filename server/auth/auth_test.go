package auth

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
)

func TestParseUsers(t *testing.T) {
	md := md5.Sum([]byte("md5pw"))
	sh := sha256.Sum256([]byte("shapw"))
	file := "# users\nalice: plainpw,admin\nbob: MD5:" + hex.EncodeToString(md[:]) + "\ncarol : SHA256:" + hex.EncodeToString(sh[:]) + ", user\n"
	u, err := ParseUsers(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, pw string
		ok       bool
	}{
		{"alice", "plainpw", true}, {"alice", "plainpw,admin", false}, {"alice", "", false},
		{"bob", "md5pw", true}, {"bob", "MD5:" + hex.EncodeToString(md[:]), false},
		{"carol", "shapw", true}, {"dave", "plainpw", false},
	} {
		if got := u.Check(c.user, c.pw); got != c.ok {
			t.Errorf("Check(%q, %q) = %v", c.user, c.pw, got)
		}
	}
	for _, bad := range []string{"nocolon\n", "eve:\n", "bob: MD5:zz\n"} {
		_, err := ParseUsers(strings.NewReader(bad))
		if err == nil {
			t.Errorf("ParseUsers(%q) succeeded", bad)
		} else if strings.Contains(err.Error(), "zz") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

func TestMiddleware(t *testing.T) {
	u := NewUsers()
	u.Add("alice", "pw")
	h := u.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }), "/livez")
	for _, c := range []struct {
		path, auth string
		code       int
	}{
		{"/ksql", "", 401}, {"/ksql", HeaderValue("alice", "no"), 401}, {"/ksql", HeaderValue("alice", "pw"), 204},
		{"/livez", "", 204}, {"/livez/x", "", 401}, {"/ksql", "Basic !!!", 401},
	} {
		r := httptest.NewRequest("GET", c.path, nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.code {
			t.Errorf("%s with %q: %d, want %d", c.path, c.auth, w.Code, c.code)
		}
		if w.Code == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("401 without a Basic challenge")
		}
	}
}

func TestCaller(t *testing.T) {
	u := NewUsers()
	u.Add("alice", "pw")
	var got string
	h := u.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = Caller(r.Context()) }))
	r := httptest.NewRequest("GET", "/query", nil)
	r.Header.Set("Authorization", HeaderValue("alice", "pw"))
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got != HeaderValue("alice", "pw") {
		t.Errorf("Caller in a REST request: %q", got)
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Basic x"))
	if got := Caller(ctx); got != "Basic x" {
		t.Errorf("Caller in a gRPC call: %q", got)
	}
	if got := Caller(context.Background()); got != "" {
		t.Errorf("Caller without credentials: %q", got)
	}
}
