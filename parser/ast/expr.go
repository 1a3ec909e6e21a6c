package ast

import (
	"slices"
	"strconv"

	"github.com/sluice-sql/sluice/internal/types"
)

// MaxNesting is how deeply an expression may nest. The parser refuses a
// statement whose brackets (parentheses, calls, ARRAY[...], subscripts),
// CASEs, runs of prefix operators (NOT, -), lambda bodies or postfix
// chains (->, [i]) nest deeper, before it does any work that grows with
// the depth, and an expression tree deeper than this, counting one level
// for each node between the root and a leaf (a Nary is one node); the
// planner's binder refuses a deeper tree built by other means. The
// statements of ksqlDB's own test corpus nest at most 6 levels either
// way, and Postgres and MySQL bound nesting only by their stack size; 200
// leaves generated SQL ample room while keeping every accepted
// expression, bound and persisted as JSON (two levels of JSON a node, at
// most one CAST added above each), far inside encoding/json's limit of
// 10000 levels.
const MaxNesting = 200

// NestingMessage is the message of the error refusing an expression nested
// deeper than MaxNesting.
func NestingMessage() string {
	return "expression nested deeper than " + strconv.Itoa(MaxNesting) +
		" levels; simplify the expression or split it, e.g. into several columns or queries"
}

// Expr is an expression.
type Expr interface {
	Node
	expr()
}

// ColumnRef is a column name, optionally qualified by a source name or
// alias: `col`, `s.col`.
type ColumnRef struct {
	Pos
	Qualifier string
	Name      string
}

// LiteralKind is the lexical kind of a literal.
type LiteralKind uint8

// The literal kinds. The planner gives each its SQL type as ksqlDB does: an
// integer literal is INTEGER when it fits, else BIGINT; a literal with a
// decimal point is DECIMAL; one with an exponent is DOUBLE.
const (
	NullLit LiteralKind = iota
	BoolLit
	IntLit     // digits only
	DecimalLit // digits with a decimal point, no exponent
	DoubleLit  // with an exponent
	StringLit
	BytesLit // X'0AFF'
)

// Literal is a constant. Text is the literal as written for numbers, the
// unquoted value for strings, "TRUE"/"FALSE" for booleans, the decoded hex for
// bytes.
type Literal struct {
	Pos
	Kind LiteralKind
	Text string
}

// TypedLiteral is a literal with a type keyword: TIMESTAMP '...', DATE '...',
// TIME '...'.
type TypedLiteral struct {
	Pos
	Type *types.Type
	Text string
}

// BinaryOp is a binary operator.
type BinaryOp uint8

// The binary operators.
const (
	OpAdd BinaryOp = iota
	OpSub
	OpMul
	OpDiv
	OpMod
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAnd
	OpOr
	OpConcat // ||
)

var binaryOpNames = [...]string{"+", "-", "*", "/", "%", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "||"}

func (o BinaryOp) String() string { return binaryOpNames[o] }

// Binary is L op R.
type Binary struct {
	Pos
	Op   BinaryOp
	L, R Expr
}

// Associative reports whether a chain of o, such as a + b + c, is written
// as one Nary node: o is AND, OR, +, * or ||.
func (o BinaryOp) Associative() bool {
	switch o {
	case OpAnd, OpOr, OpAdd, OpMul, OpConcat:
		return true
	}
	return false
}

// Nary is a chain of three or more operands of one associative operator,
// Args[0] Op Args[1] Op ... Op Args[n-1]. It means, types and prints as
// the left-nested binary tree ((Args[0] Op Args[1]) Op Args[2]) ... that
// ksqlDB builds, but is one node however long the chain, so that a long
// sum or a long list of ORs is not a deep tree. A chain of two operands is
// a Binary. The parser writes a chain of a - b - c, or of mixed operators,
// as nested Binary nodes.
type Nary struct {
	Pos
	Op   BinaryOp
	Args []Expr
	// Links holds, for each operator of the chain, the position of the
	// left-nested sub-chain it ends: Links[i] is the position of
	// Args[0] Op ... Op Args[i+1], which differs from Pos only where the
	// user wrote parentheses, as in (a + b) + c. The parser fills it; nil
	// means every sub-chain is at Pos.
	Links []Pos
}

// LinkPos returns the position of the sub-chain Args[0] Op ... Op Args[i+1].
func (n *Nary) LinkPos(i int) Pos {
	if i < len(n.Links) {
		return n.Links[i]
	}
	return n.Pos
}

// Prefix returns the left-nested sub-chain of the first k operands of n
// (1 <= k <= len(n.Args)): Args[0] for 1, a Binary for 2, a Nary sharing
// n's operands for more.
func (n *Nary) Prefix(k int) Expr {
	switch {
	case k <= 1:
		return n.Args[0]
	case k == 2:
		return &Binary{Pos: n.LinkPos(0), Op: n.Op, L: n.Args[0], R: n.Args[1]}
	case k >= len(n.Args):
		return n
	}
	var links []Pos
	if len(n.Links) >= k-1 {
		links = slices.Clip(n.Links[:k-1])
	}
	return &Nary{Pos: n.LinkPos(k - 2), Op: n.Op, Args: slices.Clip(n.Args[:k]), Links: links}
}

// UnaryOp is a unary operator.
type UnaryOp uint8

// The unary operators.
const (
	OpNeg UnaryOp = iota
	OpPlus
	OpNot
)

// Unary is op X.
type Unary struct {
	Pos
	Op UnaryOp
	X  Expr
}

// IsNull is X IS [NOT] NULL.
type IsNull struct {
	Pos
	X   Expr
	Not bool
}

// IsDistinct is L IS [NOT] DISTINCT FROM R.
type IsDistinct struct {
	Pos
	L, R Expr
	Not  bool
}

// In is X [NOT] IN (list).
type In struct {
	Pos
	X    Expr
	List []Expr
	Not  bool
}

// Between is X [NOT] BETWEEN Lo AND Hi.
type Between struct {
	Pos
	X, Lo, Hi Expr
	Not       bool
}

// Like is X [NOT] LIKE Pattern [ESCAPE Escape].
type Like struct {
	Pos
	X, Pattern Expr
	Escape     Expr // nil when absent
	Not        bool
}

// Case is CASE [Operand] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	Pos
	Operand Expr // nil for a searched CASE
	Whens   []When
	Else    Expr // nil when absent
}

// When is one WHEN cond THEN result arm.
type When struct {
	Cond, Result Expr
}

// Cast is CAST(X AS Type).
type Cast struct {
	Pos
	X    Expr
	Type *types.Type
}

// FuncCall is name(args). Name is upper-cased. Star is COUNT(*).
type FuncCall struct {
	Pos
	Name     string
	Args     []Expr
	Star     bool
	Distinct bool
}

// Dereference is X->Field (struct field access).
type Dereference struct {
	Pos
	X     Expr
	Field string
}

// Subscript is X[Index]: array element (1-based, negative from the end) or
// map value.
type Subscript struct {
	Pos
	X, Index Expr
}

// ArrayCtor is ARRAY[e, ...].
type ArrayCtor struct {
	Pos
	Elems []Expr
}

// MapCtor is MAP(k := v, ...).
type MapCtor struct {
	Pos
	Keys, Values []Expr
}

// StructCtor is STRUCT(name := v, ...).
type StructCtor struct {
	Pos
	Names  []string
	Values []Expr
}

// Lambda is x => body or (x, y) => body. Params are upper-cased like other
// identifiers.
type Lambda struct {
	Pos
	Params []string
	Body   Expr
}

// VariableRef is ${name} left in an expression (substitution normally
// happens before parsing).
type VariableRef struct {
	Pos
	Name string
}

func (*ColumnRef) expr()    {}
func (*Literal) expr()      {}
func (*TypedLiteral) expr() {}
func (*Binary) expr()       {}
func (*Nary) expr()         {}
func (*Unary) expr()        {}
func (*IsNull) expr()       {}
func (*IsDistinct) expr()   {}
func (*In) expr()           {}
func (*Between) expr()      {}
func (*Like) expr()         {}
func (*Case) expr()         {}
func (*Cast) expr()         {}
func (*FuncCall) expr()     {}
func (*Dereference) expr()  {}
func (*Subscript) expr()    {}
func (*ArrayCtor) expr()    {}
func (*MapCtor) expr()      {}
func (*StructCtor) expr()   {}
func (*Lambda) expr()       {}
func (*VariableRef) expr()  {}
