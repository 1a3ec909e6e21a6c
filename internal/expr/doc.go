// Package expr holds bound expressions: typed, serializable trees that the
// planner builds from the AST and stores in query plans, and the compiler
// that turns them into evaluators run by exec over rows.
//
//	ast.Expr ──Bind(scope)──▶ *Expr (typed, JSON) ──Compile──▶ Evaluator ──Eval(row)──▶ value
//
// Values follow the Go representation documented in package types. Column
// references are resolved to row indexes at bind time, so an *Expr only runs
// over rows laid out as the scope it was bound against. Custom types named
// in CASTs must be resolved first with ResolveTypes.
//
// Lambdas are arguments of higher-order functions (TRANSFORM, FILTER,
// REDUCE). Their parameters shadow columns; each parameter has a slot,
// numbered across nested lambdas outermost first, and the function
// evaluates a lambda's body over the row extended with the values of its
// parameters (see Frame).
//
// Errors on a row are local to the node that fails, which evaluates to
// null; see Evaluator for the contract.
package expr
