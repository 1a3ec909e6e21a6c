// Command gendocs writes docs/reference/functions.md from the function
// registry: every scalar function of package eval, every aggregate and
// every table function, with the arguments each accepts and its
// description.
//
// Run it from this directory with go generate, or from the repository's
// root:
//
//	go run ./internal/eval/cmd/gendocs -o docs/reference/functions.md
//
// The arguments come from the registry itself: gendocs calls each
// function's Check with argument lists no function accepts and reads the
// alternatives its error lists. The few functions whose errors list none
// (or list them in a form that reads poorly) have their arguments in the
// signatures table of main.go; gendocs fails when a function has neither,
// so a new function cannot be left out. A test fails when the file is out
// of date.
package main

//go:generate go run . -o ../../../../docs/reference/functions.md
