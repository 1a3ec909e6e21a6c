package main

import (
	"context"
	"strings"
	"testing"
)

func TestConnFlags(t *testing.T) {
	t.Setenv("SLUICE_PASSWORD", "")
	for _, args := range [][]string{
		{"--user", "alice", "-e", "SHOW STREAMS;"},                                                  // no password
		{"--password", "pw", "-e", "SHOW STREAMS;"},                                                 // no user
		{"--tls-cert", "/no/such/cert.pem", "--tls-key", "/no/such/key.pem", "-e", "SHOW STREAMS;"}, // unreadable
	} {
		var out, errOut strings.Builder
		if got := run(context.Background(), args, strings.NewReader(""), &out, &errOut); got != exitUsage {
			t.Errorf("run(%q) = %d, want %d (stderr %q)", args, got, exitUsage, errOut.String())
		}
		if strings.Contains(errOut.String(), "pw") {
			t.Errorf("run(%q) shows the password: %q", args, errOut.String())
		}
	}
	t.Setenv("SLUICE_PASSWORD", "from-env")
	cf := connFlags{user: "alice"}
	opts, err := cf.dialOptions(strings.NewReader(""))
	if err != nil || len(opts) != 2 || cf.password != "from-env" {
		t.Errorf("SLUICE_PASSWORD: %d options, %v, password set: %v", len(opts), err, cf.password == "from-env")
	}
}
