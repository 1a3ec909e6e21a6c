// Package secret tells secret-looking settings from the others and masks
// them: a connector's properties in DESCRIBE CONNECTOR, SHOW CONNECTORS,
// EXPLAIN, statement texts, error messages and logs.
//
// A property is secret when a word of its name (words are separated by
// '.', '_' and '-') says so: password, passwd, pwd, secret, token,
// credential(s), or a name ending in key after a qualifier (api.key,
// ssl.key, aws.secret.access.key, but not key.converter or
// primary.key.fields); sasl.jaas.config, basic.auth.user.info and
// ssl.keystore.key are secret too. Such a value is replaced whole with
// Hidden. Any other value keeps its text but for the credentials of a URL
// in it: jdbc:postgresql://h/db?user=u&password=p keeps user=u and hides p,
// and so does user:p@host.
package secret
