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
