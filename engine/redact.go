package engine

import "strings"

// Hidden replaces a secret property's value wherever Sluice shows it.
const Hidden = "[hidden]"

// secretMarkers are the parts of property names whose values are secrets:
// passwords (ssl.key.password, ssl.truststore.password, ...), secrets,
// SASL JAAS configurations and Schema Registry credentials.
var secretMarkers = []string{"password", "secret", "sasl.jaas.config", "basic.auth.user.info", "credentials", "ssl.keystore.key"}

// IsSecret reports whether a property's value is a secret, which SHOW
// PROPERTIES, replies, logs and errors must not show.
func IsSecret(name string) bool {
	n := strings.ToLower(name)
	for _, m := range secretMarkers {
		if strings.Contains(n, m) {
			return true
		}
	}
	return false
}

// Redact returns value, or Hidden when name is a secret property.
func Redact(name, value string) string {
	if IsSecret(name) {
		return Hidden
	}
	return value
}
