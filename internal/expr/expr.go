package expr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
)

// Op is the kind of a bound expression node.
type Op uint8

// The node kinds. Args lists the operands in the order given.
const (
	OpInvalid Op = iota
	// OpColumn reads row[Col]; Name (and Qualifier) keep the column's name.
	OpColumn
	// OpLiteral is the constant Value of type Type (nil Value is NULL).
	OpLiteral
	OpNeg // -Args[0]
	OpNot // NOT Args[0]
	// OpAdd, OpMul, OpConcat, OpAnd and OpOr take two or more arguments: a
	// chain of one of them, a + b + c, is one node meaning the left-nested
	// ((a + b) + c), typed and evaluated so (see package eval).
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMod
	OpConcat // string or bytes concatenation (|| and + on strings)
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAnd
	OpOr
	OpIsNull
	OpIsNotNull
	OpIsDistinct    // Args[0] IS DISTINCT FROM Args[1]
	OpIsNotDistinct // Args[0] IS NOT DISTINCT FROM Args[1]
	OpIn            // Args[0] IN (Args[1:])
	OpNotIn
	OpBetween // Args[0] BETWEEN Args[1] AND Args[2]
	OpNotBetween
	OpLike // Args[0] LIKE Args[1] [ESCAPE Args[2]]
	OpNotLike
	// OpCase is a searched CASE: Args holds WHEN/THEN pairs, then the ELSE
	// result when Else is set.
	OpCase
	OpCast  // CAST(Args[0] AS Type)
	OpCall  // Func(Args...)
	OpField // Args[0]->Name
	OpIndex // Args[0][Args[1]]: 1-based array element or map value
	OpArray // ARRAY[Args...]
	OpMap   // MAP(Args[0] := Args[1], ...): keys and values alternate
	// OpStruct is STRUCT(Names[i] := Args[i], ...).
	OpStruct
	// OpLambda is a lambda argument of a higher-order function call:
	// Names are its parameters, Args[0] its body and Type the body's type.
	// Col is the slot of its first parameter: slots number the parameters
	// of nested lambdas, outermost first, so a lambda directly in a call
	// outside any lambda starts at slot 0.
	OpLambda
	// OpLambdaVar reads the lambda parameter in slot Col; Name is the
	// parameter's name.
	OpLambdaVar
	opCount
)

var opNames = [...]string{
	OpInvalid:       "INVALID",
	OpColumn:        "COLUMN",
	OpLiteral:       "LITERAL",
	OpNeg:           "NEG",
	OpNot:           "NOT",
	OpAdd:           "ADD",
	OpSub:           "SUB",
	OpMul:           "MUL",
	OpDiv:           "DIV",
	OpMod:           "MOD",
	OpConcat:        "CONCAT",
	OpEq:            "EQ",
	OpNe:            "NE",
	OpLt:            "LT",
	OpLe:            "LE",
	OpGt:            "GT",
	OpGe:            "GE",
	OpAnd:           "AND",
	OpOr:            "OR",
	OpIsNull:        "IS_NULL",
	OpIsNotNull:     "IS_NOT_NULL",
	OpIsDistinct:    "IS_DISTINCT",
	OpIsNotDistinct: "IS_NOT_DISTINCT",
	OpIn:            "IN",
	OpNotIn:         "NOT_IN",
	OpBetween:       "BETWEEN",
	OpNotBetween:    "NOT_BETWEEN",
	OpLike:          "LIKE",
	OpNotLike:       "NOT_LIKE",
	OpCase:          "CASE",
	OpCast:          "CAST",
	OpCall:          "CALL",
	OpField:         "FIELD",
	OpIndex:         "INDEX",
	OpArray:         "ARRAY",
	OpMap:           "MAP",
	OpStruct:        "STRUCT",
	OpLambda:        "LAMBDA",
	OpLambdaVar:     "LAMBDA_VAR",
}

// String returns the op's stable name, used in the JSON form.
func (o Op) String() string {
	if o < opCount {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// MarshalText writes the op's name.
func (o Op) MarshalText() ([]byte, error) {
	if o == OpInvalid || o >= opCount {
		return nil, fmt.Errorf("expr: cannot marshal %s", o)
	}
	return []byte(o.String()), nil
}

// UnmarshalText reads an op written by MarshalText.
func (o *Op) UnmarshalText(b []byte) error {
	s := string(b)
	for i := OpColumn; i < opCount; i++ {
		if opNames[i] == s {
			*o = i
			return nil
		}
	}
	return fmt.Errorf("expr: unknown op %q", s)
}

// Expr is a bound, typed expression node. It is plain data: build it with
// Bind, persist it with encoding/json, run it with Compile. Nodes are not
// modified after Bind returns and may be shared.
type Expr struct {
	Op Op
	// Type is the node's SQL type; nil only for an untyped NULL literal.
	Type *types.Type
	// Col is the row index read by OpColumn, and the lambda parameter
	// slot of OpLambda and OpLambdaVar.
	Col int
	// Qualifier and Name name the column of OpColumn (Qualifier may be
	// empty); Name is also the field of OpField.
	Qualifier string
	Name      string
	// Value is the constant of OpLiteral, in the Go representation of Type.
	Value any
	// Func is the upper-case function name of OpCall.
	Func string
	// Args are the operands.
	Args []*Expr
	// Names are the field names of OpStruct, one per argument, and the
	// parameter names of OpLambda.
	Names []string
	// Else marks an OpCase whose last argument is the ELSE result.
	Else bool
}

// String prints the expression as SQL-like text for EXPLAIN: columns by
// name, binary operators parenthesized as ksqlDB prints them, e.g.
// (A + 1), (NAME = 'x'), CAST(A AS BIGINT), UCASE(S).
func (e *Expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

var binarySyms = map[Op]string{
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%", OpConcat: "||",
	OpEq: "=", OpNe: "<>", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpAnd: "AND", OpOr: "OR",
}

func (e *Expr) write(b *strings.Builder) {
	if e == nil {
		b.WriteString("<nil>")
		return
	}
	if sym, ok := binarySyms[e.Op]; ok && len(e.Args) >= 2 {
		// A chain of more than two operands prints as the left-nested
		// binary tree it stands for: ((A + B) + C).
		for range len(e.Args) - 1 {
			b.WriteByte('(')
		}
		e.Args[0].write(b)
		for _, a := range e.Args[1:] {
			b.WriteString(" " + sym + " ")
			a.write(b)
			b.WriteByte(')')
		}
		return
	}
	list := func(args []*Expr) {
		for i, a := range args {
			if i > 0 {
				b.WriteString(", ")
			}
			a.write(b)
		}
	}
	switch e.Op {
	case OpColumn:
		if e.Qualifier != "" {
			b.WriteString(e.Qualifier + ".")
		}
		b.WriteString(e.Name)
	case OpLiteral:
		writeLiteral(b, e.Value, e.Type)
	case OpNeg:
		b.WriteByte('-')
		e.Args[0].write(b)
	case OpNot:
		b.WriteString("(NOT ")
		e.Args[0].write(b)
		b.WriteByte(')')
	case OpIsNull, OpIsNotNull:
		b.WriteByte('(')
		e.Args[0].write(b)
		if e.Op == OpIsNull {
			b.WriteString(" IS NULL)")
		} else {
			b.WriteString(" IS NOT NULL)")
		}
	case OpIsDistinct, OpIsNotDistinct:
		b.WriteByte('(')
		e.Args[0].write(b)
		if e.Op == OpIsDistinct {
			b.WriteString(" IS DISTINCT FROM ")
		} else {
			b.WriteString(" IS NOT DISTINCT FROM ")
		}
		e.Args[1].write(b)
		b.WriteByte(')')
	case OpIn, OpNotIn:
		b.WriteByte('(')
		e.Args[0].write(b)
		if e.Op == OpNotIn {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		list(e.Args[1:])
		b.WriteString("))")
	case OpBetween, OpNotBetween:
		b.WriteByte('(')
		e.Args[0].write(b)
		if e.Op == OpNotBetween {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		e.Args[1].write(b)
		b.WriteString(" AND ")
		e.Args[2].write(b)
		b.WriteByte(')')
	case OpLike, OpNotLike:
		b.WriteByte('(')
		e.Args[0].write(b)
		if e.Op == OpNotLike {
			b.WriteString(" NOT")
		}
		b.WriteString(" LIKE ")
		e.Args[1].write(b)
		if len(e.Args) > 2 {
			b.WriteString(" ESCAPE ")
			e.Args[2].write(b)
		}
		b.WriteByte(')')
	case OpCase:
		b.WriteString("(CASE")
		n := len(e.Args)
		if e.Else {
			n--
		}
		for i := 0; i+1 < n; i += 2 {
			b.WriteString(" WHEN ")
			e.Args[i].write(b)
			b.WriteString(" THEN ")
			e.Args[i+1].write(b)
		}
		if e.Else {
			b.WriteString(" ELSE ")
			e.Args[n].write(b)
		}
		b.WriteString(" END)")
	case OpCast:
		b.WriteString("CAST(")
		e.Args[0].write(b)
		b.WriteString(" AS " + e.Type.String() + ")")
	case OpCall:
		b.WriteString(e.Func + "(")
		list(e.Args)
		b.WriteByte(')')
	case OpField:
		e.Args[0].write(b)
		b.WriteString("->" + e.Name)
	case OpIndex:
		e.Args[0].write(b)
		b.WriteByte('[')
		e.Args[1].write(b)
		b.WriteByte(']')
	case OpArray:
		b.WriteString("ARRAY[")
		list(e.Args)
		b.WriteByte(']')
	case OpMap:
		b.WriteString("MAP(")
		for i := 0; i+1 < len(e.Args); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			e.Args[i].write(b)
			b.WriteString(":=")
			e.Args[i+1].write(b)
		}
		b.WriteByte(')')
	case OpStruct:
		b.WriteString("STRUCT(")
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.Names[i] + ":=")
			a.write(b)
		}
		b.WriteByte(')')
	case OpLambda:
		if len(e.Names) == 1 {
			b.WriteString(e.Names[0])
		} else {
			b.WriteString("(" + strings.Join(e.Names, ", ") + ")")
		}
		b.WriteString(" => ")
		if len(e.Args) > 0 {
			e.Args[0].write(b)
		}
	case OpLambdaVar:
		b.WriteString(e.Name)
	default:
		b.WriteString(e.Op.String())
	}
}

func writeLiteral(b *strings.Builder, v any, t *types.Type) {
	if v == nil {
		b.WriteString("null")
		return
	}
	switch x := v.(type) {
	case string:
		b.WriteString("'" + strings.ReplaceAll(x, "'", "''") + "'")
	case types.TimestampValue:
		b.WriteString("TIMESTAMP '" + types.FormatTimestamp(x) + "'")
	case types.DateValue:
		b.WriteString("DATE '" + types.FormatDate(x) + "'")
	case types.TimeValue:
		b.WriteString("TIME '" + types.FormatTime(x) + "'")
	case []byte:
		fmt.Fprintf(b, "X'%X'", x)
	case float64:
		b.WriteString(types.FormatDouble(x))
	default:
		b.WriteString(types.FormatValue(v, t))
	}
}

// Walk calls fn for e and every node below it, parents first, stopping
// early when fn returns false for a node (its children are skipped).
func Walk(e *Expr, fn func(*Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	for _, a := range e.Args {
		Walk(a, fn)
	}
}

// Columns returns the distinct row indexes read by e, in first-use order.
func Columns(e *Expr) []int {
	var out []int
	seen := map[int]bool{}
	Walk(e, func(n *Expr) bool {
		if n.Op == OpColumn && !seen[n.Col] {
			seen[n.Col] = true
			out = append(out, n.Col)
		}
		return true
	})
	return out
}

// Literal returns a literal node holding v of type t.
func Literal(v any, t *types.Type) *Expr { return &Expr{Op: OpLiteral, Type: t, Value: v} }

// Column returns a column reference node.
func Column(index int, name string, t *types.Type) *Expr {
	return &Expr{Op: OpColumn, Col: index, Name: name, Type: t}
}
