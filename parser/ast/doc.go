// Package ast is Sluice's own syntax tree for the ksqlDB dialect. The parser
// produces it; the planner and engine consume it. No type of the underlying
// SQL parser library appears here.
//
// Identifiers are stored canonical: unquoted identifiers upper-cased, quoted
// (back-quoted or double-quoted) identifiers exactly as written, as ksqlDB
// does. Positions are 1-based line and column in the text the user gave.
//
// Format prints a statement back to canonical SQL (FormatExpr an expression,
// FormatType a type) that the parser reads back to the same tree, positions
// aside, unless the parentheses it writes around every operator nest it
// deeper than MaxNesting.
package ast
