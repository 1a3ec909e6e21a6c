package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/eval"
)

// TestFunctionsUpToDate fails when docs/reference/functions.md is not what
// the registry generates.
func TestFunctionsUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "..", "..", "docs", "reference", "functions.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date: run go generate ./internal/eval/cmd/gendocs (or go run ./internal/eval/cmd/gendocs -o docs/reference/functions.md) and commit the result", path)
	}
}

// TestEveryFunctionListed checks that every registered function has a row
// with its arguments.
func TestEveryFunctionListed(t *testing.T) {
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, n := range append(eval.FuncNames(), eval.AggregateNames()...) {
		if !strings.Contains(doc, "\n| "+n+" | `"+n) {
			t.Errorf("no row for %s with its arguments", n)
		}
	}
}

func TestAlternatives(t *testing.T) {
	for _, c := range []struct {
		name, msg string
		want      []string
	}{
		{"ABS", "Function 'abs' does not accept parameters ().\nValid alternatives are:\nabs(INTEGER|BIGINT)", []string{"ABS(INTEGER|BIGINT)"}},
		{"F", "Function 'f' does not accept parameters (). Valid alternatives are: f(), f(DATE, STRING)", []string{"F()", "F(DATE, STRING)"}},
		{"F", "Function 'f' does not accept parameters (). Valid alternatives are: f(ARRAY<T>) where T is A, B or C", []string{"F(ARRAY<T>) where T is A, B or C"}},
		{"F", "Function 'F' does not accept parameters (); expected (INTEGER), (MAP<STRING, T>, INTEGER) or (DOUBLE)", []string{"F(INTEGER)", "F(MAP<STRING, T>, INTEGER)", "F(DOUBLE)"}},
		{"F", "Function 'F' does not accept parameters (); expected arguments of one type", []string{"F: arguments of one type"}},
		{"F", "Function 'F' does not accept parameters (); expected (T, INTEGER) where T is one of (INTEGER) or (DOUBLE)", []string{"F(T, INTEGER) where T is one of (INTEGER) or (DOUBLE)"}},
		{"F", "F takes one argument", nil},
	} {
		got := alternatives(c.name, errString(c.msg))
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") || (got == nil) != (c.want == nil) {
			t.Errorf("alternatives(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
