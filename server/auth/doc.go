// Package auth secures a server: HTTP basic authentication as middleware
// and gRPC interceptors, users from a password file or flags, TLS
// configuration with optional client certificates (mTLS), and the
// matching client-side credentials.
package auth
