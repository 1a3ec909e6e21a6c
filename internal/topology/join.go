package topology

import "github.com/sluice-sql/sluice/internal/expr"

// Join is the kind of a step that joins the rows arriving from the steps
// before it (the left side) with the rows of a second input, Step.Join.Right,
// which the same task reads from the same partition number of its topic:
// both sides are co-partitioned by the join key when the step runs (the
// planner puts a Rekey and a Repartition on a side that is not).
//
// The step's Schema is the joined row: the pseudo-columns, Keys key columns
// (the join key), then every column of the left row after its
// pseudo-columns, then every column of the right row after its
// pseudo-columns. The projection after the step names them as ksqlDB does
// (L_A, R_B, ...).
const Join StepKind = "join"

// JoinType is INNER, LEFT, RIGHT or OUTER (FULL OUTER).
type JoinType string

// The join types.
const (
	InnerJoin JoinType = "INNER"
	LeftJoin  JoinType = "LEFT"
	RightJoin JoinType = "RIGHT"
	OuterJoin JoinType = "OUTER"
)

// JoinSpec describes a Join step.
type JoinSpec struct {
	Type JoinType `json:"type"`
	// LeftTable and RightTable say whether each side is a table (its rows
	// are upserts and deletes of their key, materialized in the side's
	// state table) or a stream.
	LeftTable  bool `json:"leftTable,omitempty"`
	RightTable bool `json:"rightTable,omitempty"`
	// Right is the right input: its Source, the Steps that run on its rows
	// before the join (filters, a Materialize for a table side, a Rekey and
	// Repartition to co-partition it), and Output, the right row's layout
	// (pseudo-columns, key columns, value columns); its KeyColumns counts
	// the key columns after the pseudo-columns. It has no Sink. Its
	// Repartition steps split off stages like those of the main graph.
	Right *Graph `json:"right"`
	// LeftKey and RightKey are the join expressions, bound over the left
	// row (the previous step's Schema) and the right row (Right.Output).
	// After co-partitioning they are the sides' key columns.
	LeftKey  []*expr.Expr `json:"leftKey"`
	RightKey []*expr.Expr `json:"rightKey"`
	// ForeignKey, for a foreign-key table-table join, computes the right
	// table's key from a left row; LeftKey and RightKey are then unused and
	// the output is keyed by the left table's key.
	ForeignKey *expr.Expr `json:"foreignKey,omitempty"`
	// Within bounds a stream-stream join: a left row at time t matches
	// right rows in [t-Before, t+After]. Grace is how long after a window
	// closes late rows are still joined, in milliseconds; -1 means
	// ksqlDB's default.
	Within *JoinWindow `json:"within,omitempty"`
	// LeftState and RightState name the state tables keeping each side's
	// rows (a table's current rows, or a stream's rows within the window);
	// LeftChangelog and RightChangelog are their changelog topics (empty
	// for a push query).
	LeftState      string `json:"leftState,omitempty"`
	RightState     string `json:"rightState,omitempty"`
	LeftChangelog  string `json:"leftChangelog,omitempty"`
	RightChangelog string `json:"rightChangelog,omitempty"`
	// ExtraState and ExtraChangelog name the join's third state table,
	// when it keeps one: a LEFT, RIGHT or FULL OUTER stream-stream join
	// with a GRACE PERIOD keeps there the unmatched rows waiting for their
	// window to close, a foreign-key join its index from foreign keys to
	// the left keys referencing them. Empty means LeftState and
	// LeftChangelog with "-outer" or "-fk-index" appended.
	ExtraState     string `json:"extraState,omitempty"`
	ExtraChangelog string `json:"extraChangelog,omitempty"`
	// LeftMaterialized and RightMaterialized, set by Complete, say that a
	// side's rows are kept by the Materialize step just before the join
	// (in the main steps, or last in Right.Steps), which the join reads
	// instead of keeping them itself.
	LeftMaterialized  bool `json:"leftMaterialized,omitempty"`
	RightMaterialized bool `json:"rightMaterialized,omitempty"`
	// TimeWindowed says both sides are streams of time-windowed keys:
	// their rows match on the key and the window's start alone, as a
	// time-windowed key is written (the end follows from the window's
	// size, which the sides need not share). Rows of session-windowed
	// sides match on both bounds.
	TimeWindowed bool `json:"timeWindowed,omitempty"`
}

// How the planner fills a JoinSpec, for the operators that run it:
//
//   - A table side is materialized by a Materialize step (in the main steps
//     for the left side, in Right.Steps for the right one) whose StateTable
//     and Changelog are LeftState/LeftChangelog or RightState/
//     RightChangelog: the join reads the side's rows from that state table.
//     A stream side of a stream-stream join has no such step: the join keeps
//     its rows within the window in LeftState/RightState itself. The stream
//     of a stream-table join keeps nothing (LeftState is empty).
//   - State tables are named join-left and join-right (joinN-left and
//     joinN-right for the Nth join of an n-way join); their changelogs and
//     the sides' repartition topics are InternalPrefix + query id +
//     "-join-left-changelog", "-join-right-repartition" and so on.
//   - A side is rekeyed and repartitioned only when its topic has several
//     partitions and it is not keyed by its join expression; otherwise the
//     join expression may be any expression over the side's row, which the
//     operator evaluates. Both sides always have as many partitions, except
//     in a foreign-key join, whose right table may have any number.
//   - The joined row's key column is the join key: for a LEFT join the left
//     side's, for a RIGHT join the right side's, for a FULL OUTER join
//     whichever side is present. In a foreign-key join it is the left
//     table's key columns.
//   - Both sides of a windowed source's join have the same window (the
//     planner refuses others); their window bounds travel as the
//     WINDOWSTART/WINDOWEND columns of each side's row.

// JoinWindow is a stream-stream join's WITHIN clause.
type JoinWindow struct {
	Before int64 `json:"before"`
	After  int64 `json:"after"`
	Grace  int64 `json:"grace"`
}
