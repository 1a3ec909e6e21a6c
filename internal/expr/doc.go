// Package expr holds bound expressions: typed, serializable trees that the
// planner builds from the AST (package planner/bind) and stores in query
// plans, and that package eval compiles into evaluators run by exec over
// rows.
//
//	ast.Expr ──bind.Bind(scope)──▶ *Expr (typed, JSON) ──eval.Compile──▶ Evaluator ──Eval(row)──▶ value
//
// It has the nodes (Op, Expr, with String, Walk and Columns, and the
// constructors Literal and Column), their JSON form and that of the values
// they carry (MarshalValue, AppendValue, AppendRow, UnmarshalValue), and
// ksqlDB's typing rules that both the binder and the function library
// follow: the result type of arithmetic (ArithType), the type values
// widen to (Widen, CommonType, AsDecimal) and which types compare
// (Comparable). It knows nothing of the SQL text: no AST, no parser.
//
// Values follow the Go representation documented in package types. Column
// references are resolved to row indexes at bind time, so an *Expr only runs
// over rows laid out as the scope it was bound against.
//
// Lambdas are arguments of higher-order functions (TRANSFORM, FILTER,
// REDUCE). Their parameters shadow columns; each parameter has a slot,
// numbered across nested lambdas outermost first (OpLambdaVar nodes read
// them), and the function evaluates a lambda's body over the row extended
// with the values of its parameters (see eval.Frame).
package expr
