package main

import (
	"context"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-e", "SHOW STREAMS;", "-f", "x.sql"},
		{"--define", "novalue"},
		{"stray"},
	} {
		var out, errOut strings.Builder
		if got := run(context.Background(), args, strings.NewReader(""), &out, &errOut); got != exitUsage {
			t.Errorf("run(%q) = %d, want %d (stderr %q)", args, got, exitUsage, errOut.String())
		}
	}
}

func TestVersion(t *testing.T) {
	var out, errOut strings.Builder
	if got := run(context.Background(), []string{"--version"}, strings.NewReader(""), &out, &errOut); got != exitOK || out.String() != "sluice dev\n" {
		t.Errorf("run(--version) = %d, %q", got, out.String())
	}
}
