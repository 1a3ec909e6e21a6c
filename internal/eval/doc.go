// Package eval runs bound expressions (package expr): Compile turns an
// *expr.Expr into an Evaluator that exec calls on each row, and the
// package holds the library of scalar functions (Func, Register,
// LookupFunc) and aggregates (Aggregate, Accumulator, RegisterAggregate,
// LookupAggregate) that calls name, with each one's typing (Check) and
// implementation, and the CASTs and implicit conversions between types
// (CastFunc, ImplicitCast, Coerce).
//
// It imports no part of the parser: expressions reach it bound, from
// package planner/bind or from a stored plan.
//
// Lambdas are evaluated over a Frame: the row extended with the values of
// the lambdas' parameters.
//
// Errors on a row are local to the node that fails, which evaluates to
// null; see Evaluator for the contract.
package eval
