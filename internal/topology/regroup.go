package topology

import "github.com/sluice-sql/sluice/internal/types"

// Regrouping: a GROUP BY over a table whose groups are not its keys, read
// from several partitions, moves each change of the table to the task
// owning the groups it touches, as Kafka Streams' KGroupedTable does. The
// change of a source key takes its old row out of the old row's group and
// puts its new row into the new row's group; the Repartition (Step.Regroup)
// writes those moves as change records keyed by the group key, and the
// Aggregate after it (Step.Regroup too) applies them:
//
//   - when the old and the new row fall in the same group, one record
//     carries both (RegroupRetract|RegroupAdd), and the group takes the
//     update at once: one result row, never a passing state without the
//     row;
//   - when they fall in different groups, the record retracting the old
//     row (RegroupRetract) goes to the old group first, then the record
//     adding the new row (RegroupAdd) to the new group;
//   - a delete (a tombstone) sends the retraction alone, and an insert the
//     addition alone.
//
// This keeps every group right while rows move between groups: all the
// records of a group go to one partition of the topic, and all the
// changes of a source key are read by one task, in order, which writes
// their records in that order; so the retraction of a row always reaches
// its group after the addition of that row, whatever the records of other
// keys in between (the aggregates of a table can undo, and commute). One
// record holding the old and the new row of different groups could reach
// only one of their partitions; two records for a move within a group
// would show the group without the row for a moment.
//
// A change record is a Repartition row laid out as RegroupSchema says:
// the group key, the new row's columns, the old row's columns, and the
// RegroupChange column saying which of the two it carries (the other's
// columns are null).

// RegroupChange is the column of a change record that says what it carries:
// RegroupAdd, RegroupRetract or both, as an INTEGER.
const RegroupChange = "KSQL_CHANGE"

// The bits of RegroupChange.
const (
	RegroupAdd     = 1
	RegroupRetract = 2
)

// RegroupSchema returns the row layout of a regrouping Repartition whose
// input is rekeyed, laid out as the pseudo-columns, keys key columns and
// the row's columns: the same, then the old row's columns (named with a
// KSQL_OLD_ prefix), then RegroupChange.
func RegroupSchema(rekeyed []types.Column, keys int) []types.Column {
	at := PseudoColumns + keys
	out := make([]types.Column, 0, 2*len(rekeyed)-at+1)
	out = append(out, rekeyed...)
	for _, c := range rekeyed[at:] {
		out = append(out, types.Column{Name: "KSQL_OLD_" + c.Name, Type: c.Type})
	}
	return append(out, types.Column{Name: RegroupChange, Type: types.IntType})
}

// RegroupWidth returns how many columns of a change record laid out as
// schema (with keys key columns, see RegroupSchema) hold one row: those
// after the key, up to the old row's; ok is false when schema is not such
// a layout.
func RegroupWidth(schema []types.Column, keys int) (width int, ok bool) {
	n := len(schema) - PseudoColumns - keys - 1
	if keys < 0 || n < 0 || n%2 != 0 || schema[len(schema)-1].Name != RegroupChange {
		return 0, false
	}
	return n / 2, true
}
