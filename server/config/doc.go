// Package config loads a server's settings from three places, in order of
// precedence: command-line flags, environment variables and a properties
// file, over the flags' defaults.
//
// Every flag --some-name can be set by the environment variable
// <Prefix>SOME_NAME and by the key some-name in the file. The file is a
// simple Java-style properties file such as ksqlDB's
// ksql-server.properties: "key=value" (or "key: value") lines, "#" and "!"
// comments, a trailing backslash continuing a line. Aliases map property
// names of other tools (bootstrap.servers, ksql.service.id, listeners, ...)
// to flags.
package config
