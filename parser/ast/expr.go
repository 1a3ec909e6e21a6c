package ast

import "github.com/sluice-sql/sluice/internal/types"

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
