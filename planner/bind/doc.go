// Package bind binds expressions of the AST (package parser/ast) against a
// scope of columns: Bind resolves names to row indexes and types each node
// by ksqlDB's rules (package expr's typing rules and the signatures of
// package eval's functions), coercing literals and lists to a common type,
// and returns the bound *expr.Expr that a plan stores.
//
//	ast.Expr ──Bind(scope)──▶ *expr.Expr (typed, JSON) ──eval.Compile──▶ Evaluator
//
// A Scope resolves column names (ColumnScope, from ScopeOf, is the plain
// one); errors name the position of the offending node (Error). Custom
// types named in CASTs must be resolved first with ResolveTypes.
package bind
