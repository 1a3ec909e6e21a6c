package eval

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

// URL functions. URLs are parsed as java.net.URI parses them (RFC 2396):
// a URL with characters URI rejects, such as spaces, fails; components are
// returned with their %XX escapes decoded.

type uri struct {
	scheme, userInfo, host string
	port                   int // -1 when absent
	path, query, fragment  string
	hasQuery, hasFragment  bool
	// opaque is set for a URI such as mailto:x, which has no path.
	opaque bool
}

// uriIllegal reports the ASCII characters that may not appear in a URI.
func uriIllegal(c byte) bool {
	if c <= ' ' || c == 0x7f {
		return true
	}
	switch c {
	case '"', '<', '>', '\\', '^', '`', '{', '|', '}':
		return true
	}
	return false
}

func isSchemeChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case first:
		return false
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.':
		return true
	}
	return false
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// parseURI parses s as java.net.URI does, far enough for the URL_EXTRACT
// functions.
func parseURI(s string) (*uri, error) {
	bad := func(why string) error { return fmt.Errorf("URL input has invalid syntax: %s: %s", s, why) }
	if s == "" {
		return nil, bad("expected scheme-specific part")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf && uriIllegal(c) {
			return nil, bad(fmt.Sprintf("illegal character at index %d", i))
		}
		if c == '%' && (i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2])) {
			return nil, bad(fmt.Sprintf("malformed escape pair at index %d", i))
		}
	}
	u := &uri{port: -1}
	rest := s
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		u.fragment, u.hasFragment = rest[i+1:], true
		if strings.IndexByte(u.fragment, '#') >= 0 {
			return nil, bad("illegal character in fragment")
		}
		rest = rest[:i]
	}
	if i := strings.IndexAny(rest, ":/?"); i > 0 && rest[i] == ':' {
		ok := isSchemeChar(rest[0], true)
		for j := 1; ok && j < i; j++ {
			ok = isSchemeChar(rest[j], false)
		}
		if ok {
			u.scheme = rest[:i]
			rest = rest[i+1:]
			if rest == "" {
				return nil, bad("expected scheme-specific part")
			}
			if rest[0] != '/' {
				u.opaque = true
				return u, nil
			}
		}
	} else if i == 0 {
		return nil, bad("expected scheme name")
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		u.query, u.hasQuery = rest[i+1:], true
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		rest = rest[end:]
		if auth == "" && rest == "" && !u.hasQuery && !u.hasFragment {
			return nil, bad("expected authority")
		}
		u.parseAuthority(auth)
	}
	u.path = rest
	return u, nil
}

// parseAuthority reads userinfo@host:port; an authority that is not a
// valid server (registry-based) leaves host empty and port -1.
func (u *uri) parseAuthority(auth string) {
	userInfo, hostPort := "", auth
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		userInfo, hostPort = auth[:i], auth[i+1:]
	}
	host, port := hostPort, ""
	if strings.HasPrefix(hostPort, "[") {
		end := strings.IndexByte(hostPort, ']')
		if end < 0 {
			return
		}
		host, port = hostPort[:end+1], hostPort[end+1:]
		if port != "" && port[0] != ':' {
			return
		}
		port = strings.TrimPrefix(port, ":")
	} else if i := strings.LastIndexByte(hostPort, ':'); i >= 0 {
		host, port = hostPort[:i], hostPort[i+1:]
	}
	if !validHostname(host) {
		return
	}
	p := -1
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 {
			return
		}
		p = n
	}
	u.userInfo, u.host, u.port = userInfo, host, p
}

func validHostname(h string) bool {
	if h == "" {
		return false
	}
	if h[0] == '[' {
		return true
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// uriDecode decodes the %XX escapes of a URI component as UTF-8.
func uriDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return utf8String(b)
}

// urlEncodeParam encodes s as application/x-www-form-urlencoded, as
// Java's URLEncoder does with UTF-8.
func urlEncodeParam(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		}
	}
	return b.String()
}

var errURLDecode = errors.New("URLDecoder: Illegal hex characters in escape (%) pattern")

// urlDecodeParam decodes application/x-www-form-urlencoded text, as Java's
// URLDecoder does with UTF-8.
func urlDecodeParam(s string) (string, error) {
	if !strings.ContainsAny(s, "%+") {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b = append(b, ' ')
		case '%':
			if i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2]) {
				return "", errURLDecode
			}
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return utf8String(b), nil
}

// urlParam returns the value of parameter name in the query of a URL, ""
// for a parameter without value, or null.
func urlParam(u *uri, name string) any {
	if !u.hasQuery {
		return nil
	}
	for _, p := range strings.Split(uriDecode(u.query), "&") {
		k, v, hasValue := strings.Cut(p, "=")
		if k == name {
			if !hasValue {
				return ""
			}
			return v
		}
	}
	return nil
}

func urlFunc(name, desc string, ret *types.Type, extract func(*uri) any) *Func {
	return &Func{
		Name: name, Description: desc,
		Check: fixed(name, "(STRING)", ret, kString),
		Build: buildStrict(func(a []any) (any, error) {
			u, err := parseURI(a[0].(string))
			if err != nil {
				return nil, err
			}
			return extract(u), nil
		}),
	}
}

func init() {
	Register(&Func{
		Name: "URL_ENCODE_PARAM", Description: "Escapes a string for use as a URL query parameter (application/x-www-form-urlencoded).",
		Check: fixed("URL_ENCODE_PARAM", "(STRING)", types.StringType, kString),
		Build: buildStrict(func(a []any) (any, error) { return urlEncodeParam(a[0].(string)), nil }),
	})
	Register(&Func{
		Name: "URL_DECODE_PARAM", Description: "Unescapes a URL query parameter (application/x-www-form-urlencoded).",
		Check: fixed("URL_DECODE_PARAM", "(STRING)", types.StringType, kString),
		Build: buildStrict(func(a []any) (any, error) {
			s, err := urlDecodeParam(a[0].(string))
			if err != nil {
				return nil, err
			}
			return s, nil
		}),
	})
	Register(urlFunc("URL_EXTRACT_FRAGMENT", "The fragment of a URL, null if none.", types.StringType, func(u *uri) any {
		if !u.hasFragment {
			return nil
		}
		return uriDecode(u.fragment)
	}))
	Register(urlFunc("URL_EXTRACT_HOST", "The host of a URL, null if none.", types.StringType, func(u *uri) any {
		if u.host == "" {
			return nil
		}
		return u.host
	}))
	Register(urlFunc("URL_EXTRACT_PATH", "The path of a URL, empty if none.", types.StringType, func(u *uri) any {
		if u.opaque {
			return nil
		}
		return uriDecode(u.path)
	}))
	Register(urlFunc("URL_EXTRACT_PORT", "The port of a URL, null if none.", types.IntType, func(u *uri) any {
		if u.port < 0 {
			return nil
		}
		return int32(u.port)
	}))
	Register(urlFunc("URL_EXTRACT_PROTOCOL", "The protocol (scheme) of a URL, null if none.", types.StringType, func(u *uri) any {
		if u.scheme == "" {
			return nil
		}
		return u.scheme
	}))
	Register(urlFunc("URL_EXTRACT_QUERY", "The query of a URL, null if none.", types.StringType, func(u *uri) any {
		if !u.hasQuery {
			return nil
		}
		return uriDecode(u.query)
	}))
	Register(&Func{
		Name: "URL_EXTRACT_PARAMETER", Description: "URL_EXTRACT_PARAMETER(url, name): the value of a query parameter of a URL, null if absent.",
		Check: fixed("URL_EXTRACT_PARAMETER", "(STRING, STRING)", types.StringType, kString, kString),
		Build: buildStrict(func(a []any) (any, error) {
			u, err := parseURI(a[0].(string))
			if err != nil {
				return nil, err
			}
			return urlParam(u, a[1].(string)), nil
		}),
	})
}
