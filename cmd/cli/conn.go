package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/chzyer/readline"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sql/sluice/server/auth"
)

// connFlags are how the shell reaches a secured server: basic
// authentication and TLS.
type connFlags struct {
	user, password            string
	tls, insecureSkipVerify   bool
	caFile, certFile, keyFile string
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.user, "user", "", "`user` for the server's basic authentication")
	fs.StringVar(&c.user, "u", "", "shorthand for --user")
	fs.StringVar(&c.password, "password", "", "password of --user; prefer the SLUICE_PASSWORD environment variable, which ps does not show")
	fs.StringVar(&c.password, "p", "", "shorthand for --password")
	fs.BoolVar(&c.tls, "tls", false, "connect over TLS (implied by the other --tls-* flags)")
	fs.StringVar(&c.caFile, "tls-ca", "", "PEM CA `bundle` to verify the server with (default: the system's)")
	fs.StringVar(&c.certFile, "tls-cert", "", "PEM client certificate `file`, for a server requiring mutual TLS")
	fs.StringVar(&c.keyFile, "tls-key", "", "PEM private key `file` of --tls-cert")
	fs.BoolVar(&c.insecureSkipVerify, "tls-insecure-skip-verify", false, "do not verify the server's certificate (testing only)")
}

// dialOptions are the gRPC options for the flags. A --user without a
// password gets the SLUICE_PASSWORD environment variable, else a prompt
// when stdin is a terminal, as ksqlDB's CLI prompts.
func (c *connFlags) dialOptions(stdin io.Reader) ([]grpc.DialOption, error) {
	if c.password == "" {
		c.password = os.Getenv("SLUICE_PASSWORD")
	}
	if c.user != "" && c.password == "" && isTerminal(stdin) {
		pw, err := readline.Password("Password: ")
		if err != nil {
			return nil, fmt.Errorf("reading the password: %w", err)
		}
		c.password = string(pw)
	}
	if c.user == "" && c.password != "" {
		return nil, errors.New("a password without --user")
	}
	if c.user != "" && c.password == "" {
		return nil, errors.New("--user needs a password: set SLUICE_PASSWORD (or --password)")
	}
	useTLS := c.tls || c.caFile != "" || c.certFile != "" || c.keyFile != "" || c.insecureSkipVerify
	var opts []grpc.DialOption
	if useTLS {
		cfg, err := auth.ClientTLS(c.caFile, c.certFile, c.keyFile, c.insecureSkipVerify)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if c.user != "" {
		// Without TLS the password crosses the network in clear: allowed,
		// as for a server on loopback, but TLS is the way elsewhere.
		opts = append(opts, grpc.WithPerRPCCredentials(auth.Basic{User: c.user, Password: c.password, Insecure: !useTLS}))
	}
	return opts, nil
}
