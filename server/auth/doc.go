// Package auth secures a server: HTTP basic authentication as middleware
// (the REST API's, and Guard for other HTTP surfaces such as the schema
// registry) and gRPC interceptors, users from a password file or flags,
// the count and rate-limited log of refused logins (Failures), TLS
// configuration with optional client certificates (mTLS), and the
// matching client-side credentials.
package auth
