// Package expr holds bound expressions: typed, serializable trees that the
// planner builds from the AST and stores in query plans, and the compiler
// that turns them into evaluators run by exec over rows.
//
//	ast.Expr ──Bind(scope)──▶ *Expr (typed, JSON) ──Compile──▶ Evaluator ──Eval(row)──▶ value
//
// Values follow the Go representation documented in package types. Column
// references are resolved to row indexes at bind time, so an *Expr only runs
// over rows laid out as the scope it was bound against.
package expr
