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
}

// JoinWindow is a stream-stream join's WITHIN clause.
type JoinWindow struct {
	Before int64 `json:"before"`
	After  int64 `json:"after"`
	Grace  int64 `json:"grace"`
}
