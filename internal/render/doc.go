// Package render draws the engine's typed results, in their protobuf form,
// as the shell shows them: a table of typed cells with a title above and a
// footer below. The shell prints it (as a table, or as JSON or CSV rows
// that keep the cells' types), and the SQL corpus compares it.
package render
