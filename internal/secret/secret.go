package secret

import (
	"regexp"
	"sort"
	"strings"
)

// Hidden replaces a secret wherever Sluice shows it.
const Hidden = "[hidden]"

// secretWords are the words of a name that make its value a secret.
var secretWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "passphrase": true, "secret": true, "secrets": true,
	"token": true, "credential": true, "credentials": true, "apikey": true, "accesskey": true,
	"privatekey": true, "secretkey": true, "jaas": true,
}

// secretNames are names (or endings of names) whose values are secrets
// though no one word of them says so.
var secretNames = []string{"basic.auth.user.info", "ssl.keystore.key", "ssl.keystore.certificate.chain"}

// notKeyQualifiers are the words before a trailing "key" that name a
// record's or table's key, not a secret one.
var notKeyQualifiers = map[string]bool{
	"primary": true, "message": true, "record": true, "partition": true, "document": true,
	"routing": true, "row": true, "schema": true, "topic": true, "id": true, "sort": true,
	"hash": true, "foreign": true, "unique": true, "cache": true,
}

func words(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == '.' || r == '_' || r == '-' || r == ' '
	})
}

// IsSecret reports whether the value of the property name is a secret.
func IsSecret(name string) bool {
	n := strings.ToLower(name)
	for _, s := range secretNames {
		if n == s || strings.HasSuffix(n, "."+s) {
			return true
		}
	}
	ws := words(n)
	for _, w := range ws {
		if secretWords[w] {
			return true
		}
	}
	if l := len(ws); l >= 2 && ws[l-1] == "key" && !notKeyQualifiers[ws[l-2]] {
		return true
	}
	return false
}

// urlSecrets find the credentials inside a URL or connection string: a
// password=, pwd=, token= ... parameter (after '?', '&' or ';', or at the
// start), and the password of user:password@host.
var (
	paramSecret = regexp.MustCompile(`(?i)((?:^|[?&;,\s])(?:password|passwd|pwd|secret|token|access_token|api_key|apikey|sslpassword|sslkey_password)\s*=\s*)([^&;,\s]+)`)
	userInfo    = regexp.MustCompile(`(//[^/@:\s]*:)([^@/\s]+)(@)`)
)

// MaskURL hides the credentials inside s, a URL or connection string,
// and keeps the rest.
func MaskURL(s string) string {
	s = paramSecret.ReplaceAllString(s, "${1}"+Hidden)
	return userInfo.ReplaceAllString(s, "${1}"+Hidden+"${3}")
}

// Value is what may be shown of the property name's value: Hidden for a
// secret, the value with any URL credentials hidden otherwise.
func Value(name, value string) string {
	if IsSecret(name) {
		if value == "" {
			return ""
		}
		return Hidden
	}
	return MaskURL(value)
}

// Config returns a copy of config with each value as Value shows it.
func Config(config map[string]string) map[string]string {
	if config == nil {
		return nil
	}
	out := make(map[string]string, len(config))
	for k, v := range config {
		out[k] = Value(k, v)
	}
	return out
}

// minSecretLen is the shortest secret Redactor looks for in a text: a
// shorter one would hide every match of a letter or two.
const minSecretLen = 3

// Redactor hides known secret values in texts: the messages of a Connect
// worker, which may echo a value it refuses, and log lines.
type Redactor struct{ values []string }

// NewRedactor returns a Redactor for the secrets of config: the values of
// its secret properties and the credentials inside its URLs.
func NewRedactor(config map[string]string) *Redactor {
	seen := map[string]bool{}
	add := func(v string) {
		if len(v) >= minSecretLen && !seen[v] {
			seen[v] = true
		}
	}
	for k, v := range config {
		if IsSecret(k) {
			add(v)
			// A JAAS line's password="..." is a secret of its own too.
			for _, m := range jaasPassword.FindAllStringSubmatch(v, -1) {
				add(m[1])
			}
			continue
		}
		for _, m := range paramSecret.FindAllStringSubmatch(v, -1) {
			add(m[2])
		}
		for _, m := range userInfo.FindAllStringSubmatch(v, -1) {
			add(m[2])
		}
	}
	r := &Redactor{}
	for v := range seen {
		r.values = append(r.values, v)
	}
	// Longest first, so that a secret holding another is hidden whole.
	sort.Slice(r.values, func(i, j int) bool {
		if len(r.values[i]) != len(r.values[j]) {
			return len(r.values[i]) > len(r.values[j])
		}
		return r.values[i] < r.values[j]
	})
	return r
}

var jaasPassword = regexp.MustCompile(`(?i)password\s*=\s*"([^"]*)"`)

// Text returns s with every known secret, and every URL credential, hidden.
func (r *Redactor) Text(s string) string {
	if r != nil {
		for _, v := range r.values {
			s = strings.ReplaceAll(s, v, Hidden)
		}
	}
	return MaskURL(s)
}
