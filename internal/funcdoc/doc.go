// Package funcdoc describes the functions of the registry as SHOW
// FUNCTIONS, DESCRIBE FUNCTION and the generated reference show them: each
// function's type, ksqlDB's category, its description and the argument
// lists it accepts, read from the function's own type check (the
// alternatives its errors list) or, for the few whose errors list none,
// from a table.
package funcdoc
