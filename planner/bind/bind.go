package bind

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// Bind resolves names and types in e against scope, following ksqlDB's
// typing rules, and returns the bound tree. Errors are *Error values naming
// the position of the offending node. The result's Type is nil only when e
// is a bare NULL; callers that need a type report that as ksqlDB does ("Can't
// infer a type of null").
func Bind(e ast.Expr, scope Scope) (*expr.Expr, error) {
	b := &binder{scope: scope}
	out, err := b.bind(e)
	if err != nil {
		return nil, err
	}
	return out, nil
}

type binder struct {
	scope Scope
	// lambdas are the parameters of the lambdas enclosing the node being
	// bound, outermost first; depth is their total count.
	lambdas []lambdaScope
	depth   int
	// nest is the depth in the tree of the node being bound.
	nest int
}

type lambdaScope struct {
	names []string
	types []*types.Type
	first int
}

var binaryOps = map[ast.BinaryOp]expr.Op{
	ast.OpAdd: expr.OpAdd, ast.OpSub: expr.OpSub, ast.OpMul: expr.OpMul, ast.OpDiv: expr.OpDiv, ast.OpMod: expr.OpMod,
	ast.OpEq: expr.OpEq, ast.OpNe: expr.OpNe, ast.OpLt: expr.OpLt, ast.OpLe: expr.OpLe, ast.OpGt: expr.OpGt, ast.OpGe: expr.OpGe,
	ast.OpAnd: expr.OpAnd, ast.OpOr: expr.OpOr, ast.OpConcat: expr.OpConcat,
}

func (b *binder) bindAll(es []ast.Expr) ([]*expr.Expr, error) {
	if len(es) == 0 {
		return nil, nil
	}
	out := make([]*expr.Expr, len(es))
	for i, e := range es {
		x, err := b.bind(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func (b *binder) bind(e ast.Expr) (*expr.Expr, error) {
	if e != nil && b.nest > ast.MaxNesting {
		// The parser refuses such trees; this one was built otherwise.
		// Binding it would make a plan too deep to persist.
		return nil, errorf(e.Position(), "%s", ast.NestingMessage())
	}
	b.nest++
	defer func() { b.nest-- }()
	if r, ok := b.scope.(ExprResolver); ok && b.depth == 0 {
		if idx, name, t, found := r.ResolveExpr(e); found {
			return expr.Column(idx, name, t), nil
		}
	}
	switch n := e.(type) {
	case *ast.Literal:
		return bindLiteral(n, false)
	case *ast.TypedLiteral:
		c, err := eval.CastFunc(types.StringType, n.Type)
		if err != nil {
			return nil, errorf(n.Pos, "%s literals are not supported", n.Type)
		}
		v, err := c(n.Text)
		if err != nil {
			return nil, errorf(n.Pos, "%v", err)
		}
		return expr.Literal(v, n.Type), nil
	case *ast.ColumnRef:
		return b.bindColumn(n)
	case *ast.Unary:
		return b.bindUnary(n)
	case *ast.Binary:
		return b.bindBinary(n)
	case *ast.Nary:
		return b.bindNary(n)
	case *ast.IsNull:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		op := expr.OpIsNull
		if n.Not {
			op = expr.OpIsNotNull
		}
		return &expr.Expr{Op: op, Type: types.BooleanType, Args: []*expr.Expr{x}}, nil
	case *ast.IsDistinct:
		op := expr.OpIsDistinct
		if n.Not {
			op = expr.OpIsNotDistinct
		}
		return b.bindComparison(n.Pos, op, n.L, n.R)
	case *ast.In:
		return b.bindIn(n)
	case *ast.Between:
		return b.bindBetween(n)
	case *ast.Like:
		return b.bindLike(n)
	case *ast.Case:
		return b.bindCase(n)
	case *ast.Cast:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		if name := unresolved(n.Type); name != "" {
			return nil, errorf(n.Pos, "unknown type %s; create it with CREATE TYPE", name)
		}
		if _, err := eval.CastFunc(x.Type, n.Type); err != nil {
			return nil, errorf(n.Pos, "%v", err)
		}
		return &expr.Expr{Op: expr.OpCast, Type: n.Type, Args: []*expr.Expr{x}}, nil
	case *ast.FuncCall:
		if r, ok := b.scope.(CallResolver); ok {
			if idx, name, t, found := r.ResolveCall(n); found {
				return expr.Column(idx, name, t), nil
			}
		}
		return b.bindCall(n)
	case *ast.Dereference:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		if x.Type == nil || x.Type.Kind != types.Struct {
			return nil, errorf(n.Pos, "cannot dereference %s of type %s with ->; only STRUCT values have fields", x, x.Type)
		}
		for _, f := range x.Type.Fields {
			if f.Name == n.Field {
				return &expr.Expr{Op: expr.OpField, Type: f.Type, Name: n.Field, Args: []*expr.Expr{x}}, nil
			}
		}
		var names []string
		for _, f := range x.Type.Fields {
			names = append(names, f.Name)
		}
		return nil, errorf(n.Pos, "field '%s' not found in %s; fields: %s", n.Field, x, strings.Join(names, ", "))
	case *ast.Subscript:
		return b.bindSubscript(n)
	case *ast.ArrayCtor:
		if len(n.Elems) == 0 {
			return nil, errorf(n.Pos, "Array constructor cannot be empty. Please supply at least one element (see https://github.com/confluentinc/ksql/issues/4239).")
		}
		args, err := b.bindAll(n.Elems)
		if err != nil {
			return nil, err
		}
		et, err := coerceList(n.Pos, args)
		if err != nil {
			return nil, err
		}
		if et == nil {
			return nil, errorf(n.Pos, "Cannot construct an array with all NULL elements (see https://github.com/confluentinc/ksql/issues/4239). As a workaround, you may cast a NULL value to the desired type.")
		}
		return &expr.Expr{Op: expr.OpArray, Type: types.ArrayOf(et), Args: args}, nil
	case *ast.MapCtor:
		if len(n.Keys) == 0 {
			return nil, errorf(n.Pos, "Map constructor cannot be empty. Please supply at least one key value pair (see https://github.com/confluentinc/ksql/issues/4239).")
		}
		keys, err := b.bindAll(n.Keys)
		if err != nil {
			return nil, err
		}
		vals, err := b.bindAll(n.Values)
		if err != nil {
			return nil, err
		}
		kt, err := coerceList(n.Pos, keys)
		if err != nil {
			return nil, err
		}
		if kt == nil {
			return nil, errorf(n.Pos, "Cannot construct a map with all NULL keys (see https://github.com/confluentinc/ksql/issues/4239). As a workaround, you may cast a NULL key to the desired type.")
		}
		vt, err := coerceList(n.Pos, vals)
		if err != nil {
			return nil, err
		}
		if vt == nil {
			return nil, errorf(n.Pos, "Cannot construct a map with all NULL values (see https://github.com/confluentinc/ksql/issues/4239). As a workaround, you may cast a NULL value to the desired type.")
		}
		args := make([]*expr.Expr, 0, 2*len(keys))
		for i := range keys {
			args = append(args, keys[i], vals[i])
		}
		return &expr.Expr{Op: expr.OpMap, Type: types.MapOf(kt, vt), Args: args}, nil
	case *ast.StructCtor:
		for i, name := range n.Names {
			for _, prev := range n.Names[:i] {
				if prev == name {
					return nil, errorf(n.Pos, "Duplicate field names found in STRUCT: '%s'", name)
				}
			}
		}
		args, err := b.bindAll(n.Values)
		if err != nil {
			return nil, err
		}
		fields := make([]types.Field, len(args))
		for i, a := range args {
			if a.Type == nil {
				return nil, errorf(n.Pos, "cannot infer the type of field %s := NULL; cast it to the type wanted", n.Names[i])
			}
			fields[i] = types.Field{Name: n.Names[i], Type: a.Type}
		}
		names := append([]string(nil), n.Names...)
		if len(names) == 0 {
			names = nil
		}
		return &expr.Expr{Op: expr.OpStruct, Type: types.StructOf(fields...), Args: args, Names: names}, nil
	case *ast.Lambda:
		return nil, errorf(n.Pos, "lambda expressions are only allowed as arguments of higher-order functions such as TRANSFORM, REDUCE and FILTER")
	case *ast.VariableRef:
		return nil, errorf(n.Pos, "variable ${%s} is not defined", n.Name)
	case nil:
		return nil, &Error{Msg: "missing expression"}
	}
	return nil, errorf(e.Position(), "unsupported expression %T", e)
}

func bindLiteral(n *ast.Literal, neg bool) (*expr.Expr, error) {
	text := n.Text
	if neg {
		text = "-" + text
	}
	switch n.Kind {
	case ast.NullLit:
		return expr.Literal(nil, nil), nil
	case ast.BoolLit:
		return expr.Literal(strings.EqualFold(n.Text, "TRUE"), types.BooleanType), nil
	case ast.IntLit:
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, errorf(n.Pos, "Invalid numeric literal: %s", text)
		}
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return expr.Literal(int32(v), types.IntType), nil
		}
		return expr.Literal(v, types.BigintType), nil
	case ast.DecimalLit:
		d, err := types.ParseDec(text)
		if err != nil {
			return nil, errorf(n.Pos, "Invalid numeric literal: %s", text)
		}
		return expr.Literal(d, types.DecimalOf(max(d.Precision(), d.Scale), d.Scale)), nil
	case ast.DoubleLit:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, errorf(n.Pos, "Number overflows DOUBLE: %s", text)
		}
		return expr.Literal(f, types.DoubleType), nil
	case ast.StringLit:
		return expr.Literal(n.Text, types.StringType), nil
	case ast.BytesLit:
		return expr.Literal([]byte(n.Text), types.BytesType), nil
	}
	return nil, errorf(n.Pos, "unknown literal kind %d", n.Kind)
}

func (b *binder) bindColumn(n *ast.ColumnRef) (*expr.Expr, error) {
	if n.Qualifier == "" {
		for i := len(b.lambdas) - 1; i >= 0; i-- {
			l := b.lambdas[i]
			for j, p := range l.names {
				if p == n.Name {
					return &expr.Expr{Op: expr.OpLambdaVar, Type: l.types[j], Col: l.first + j, Name: p}, nil
				}
			}
		}
	}
	idx, t, ok := b.scope.Resolve(n.Qualifier, n.Name)
	if ok {
		return &expr.Expr{Op: expr.OpColumn, Type: t, Col: idx, Qualifier: n.Qualifier, Name: n.Name}, nil
	}
	full := n.Name
	if n.Qualifier != "" {
		full = n.Qualifier + "." + n.Name
	}
	if d, ok := b.scope.(ScopeDescriber); ok {
		if err := d.Explain(n.Qualifier, n.Name); err != nil {
			return nil, errorf(n.Pos, "%v", err)
		}
		return nil, errorf(n.Pos, "column '%s' cannot be resolved; known columns: %s", full, strings.Join(d.Names(), ", "))
	}
	return nil, errorf(n.Pos, "column '%s' cannot be resolved", full)
}

func (b *binder) bindUnary(n *ast.Unary) (*expr.Expr, error) {
	if lit, ok := n.X.(*ast.Literal); ok && n.Op == ast.OpNeg {
		switch lit.Kind {
		case ast.IntLit, ast.DecimalLit, ast.DoubleLit:
			return bindLiteral(lit, true)
		}
	}
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	switch n.Op {
	case ast.OpNot:
		if x.Type != nil && x.Type.Kind != types.Boolean {
			return nil, errorf(n.Pos, "NOT needs a BOOLEAN operand, but %s is %s", x, x.Type)
		}
		if x.Type == nil {
			x = retype(x, types.BooleanType)
		}
		return &expr.Expr{Op: expr.OpNot, Type: types.BooleanType, Args: []*expr.Expr{x}}, nil
	case ast.OpPlus, ast.OpNeg:
		if x.Type == nil || !x.Type.IsNumeric() {
			return nil, errorf(n.Pos, "unary %s needs a numeric operand, but %s is %s", map[ast.UnaryOp]string{ast.OpNeg: "-", ast.OpPlus: "+"}[n.Op], x, x.Type)
		}
		if n.Op == ast.OpPlus {
			return x, nil
		}
		return &expr.Expr{Op: expr.OpNeg, Type: x.Type, Args: []*expr.Expr{x}}, nil
	}
	return nil, errorf(n.Pos, "unknown unary operator")
}

// retype gives an untyped NULL literal the type t.
func retype(e *expr.Expr, t *types.Type) *expr.Expr {
	if e.Type == nil && e.Op == expr.OpLiteral {
		return expr.Literal(nil, t)
	}
	return e
}

func (b *binder) bindBinary(n *ast.Binary) (*expr.Expr, error) {
	op := binaryOps[n.Op]
	switch op {
	case expr.OpEq, expr.OpNe, expr.OpLt, expr.OpLe, expr.OpGt, expr.OpGe:
		return b.bindComparison(n.Pos, op, n.L, n.R)
	}
	l, err := b.bind(n.L)
	if err != nil {
		return nil, err
	}
	r, err := b.bind(n.R)
	if err != nil {
		return nil, err
	}
	args := []*expr.Expr{l, r}
	t, err := binaryType(n.Pos, n.Op, args, 1, l.Type)
	if err != nil {
		return nil, err
	}
	return &expr.Expr{Op: op, Type: t, Args: args}, nil
}

// bindNary binds a chain of one associative operator as one node with an
// argument per operand, typed by folding from the left exactly as the
// nested Binary nodes it stands for, with the same coercions and errors.
// A leading sub-chain that the scope resolves (a GROUP BY expression
// a + b in a + b + c) is read as that column, as the nested form's would
// be.
func (b *binder) bindNary(n *ast.Nary) (*expr.Expr, error) {
	op := binaryOps[n.Op]
	if len(n.Args) < 2 || !n.Op.Associative() {
		return nil, errorf(n.Pos, "invalid chain of %d operands of %s", len(n.Args), n.Op)
	}
	var acc *expr.Expr
	start := 1
	if r, ok := b.scope.(ExprResolver); ok && b.depth == 0 {
		for k := len(n.Args) - 1; k >= 2 && acc == nil; k-- {
			if idx, name, t, found := r.ResolveExpr(n.Prefix(k)); found {
				acc, start = expr.Column(idx, name, t), k
			}
		}
	}
	if acc == nil {
		var err error
		if acc, err = b.bind(n.Args[0]); err != nil {
			return nil, err
		}
	}
	args := make([]*expr.Expr, 1, len(n.Args)-start+1)
	args[0] = acc
	t := acc.Type
	for i := start; i < len(n.Args); i++ {
		r, err := b.bind(n.Args[i])
		if err != nil {
			return nil, err
		}
		args = append(args, r)
		if t, err = binaryType(n.LinkPos(i-1), n.Op, args, len(args)-1, t); err != nil {
			return nil, err
		}
	}
	return &expr.Expr{Op: op, Type: t, Args: args}, nil
}

// binaryType types one operator of a chain of AND, OR, arithmetic or ||
// (a Binary is a chain of one): args[:i] are its left operand, of type
// lt (nil for an untyped NULL, only when i is 1), and args[i] its right
// operand. Arithmetic refuses an untyped NULL operand; AND, OR and || give
// it the other side's type in place. It returns the type of the
// operator's result.
func binaryType(pos ast.Pos, bop ast.BinaryOp, args []*expr.Expr, i int, lt *types.Type) (*types.Type, error) {
	op := binaryOps[bop]
	r := args[i]
	switch op {
	case expr.OpAdd, expr.OpSub, expr.OpMul, expr.OpDiv, expr.OpMod:
		if lt == nil || r.Type == nil {
			// As ksqlDB, arithmetic refuses an untyped NULL operand
			// rather than typing it from the other side.
			l := args[0]
			if i > 1 {
				l = &expr.Expr{Op: op, Type: lt, Args: args[:i]}
			}
			node := &expr.Expr{Op: op, Args: []*expr.Expr{l, r}}
			return nil, errorf(pos, "Error processing expression: %s. Arithmetic on types %s and %s are not supported.",
				node, nullableTypeName(lt), nullableTypeName(r.Type))
		}
	}
	if lt == nil && r.Type == nil {
		return nil, errorf(pos, "cannot infer the type of NULL %s NULL; cast one side", bop)
	}
	if lt == nil {
		args[0] = retype(args[0], r.Type)
		lt = r.Type
	}
	if r.Type == nil {
		r = retype(r, lt)
		args[i] = r
	}
	// l is the left operand, printed in messages.
	l := args[0]
	if i > 1 {
		l = &expr.Expr{Op: op, Type: lt, Args: args[:i]}
	}
	switch op {
	case expr.OpAnd, expr.OpOr:
		if lt.Kind != types.Boolean || r.Type.Kind != types.Boolean {
			return nil, errorf(pos, "%s needs BOOLEAN operands, but got %s and %s in %s %s %s", bop, lt, r.Type, l, bop, r)
		}
		return types.BooleanType, nil
	case expr.OpConcat:
		if lt.Kind == types.String && r.Type.Kind == types.String {
			return types.StringType, nil
		}
		if lt.Kind == types.Bytes && r.Type.Kind == types.Bytes {
			return types.BytesType, nil
		}
		return nil, errorf(pos, "|| needs STRING operands, but got %s and %s in %s || %s", lt, r.Type, l, r)
	}
	if op == expr.OpAdd && lt.Kind == types.String && r.Type.Kind == types.String {
		return types.StringType, nil
	}
	if !lt.IsNumeric() || !r.Type.IsNumeric() {
		return nil, errorf(pos, "cannot apply %s to %s and %s in %s %s %s", bop, lt, r.Type, l, bop, r)
	}
	return expr.ArithType(op, lt, r.Type), nil
}

// nullableTypeName prints t as ksqlDB prints an operand's type, null for
// an untyped NULL.
func nullableTypeName(t *types.Type) string {
	if t == nil {
		return "null"
	}
	return t.String()
}

// cmpTypeNames are ksqlDB's names of the comparison operators.
var cmpTypeNames = map[expr.Op]string{
	expr.OpEq: "EQUAL", expr.OpNe: "NOT_EQUAL", expr.OpLt: "LESS_THAN", expr.OpLe: "LESS_THAN_OR_EQUAL",
	expr.OpGt: "GREATER_THAN", expr.OpGe: "GREATER_THAN_OR_EQUAL",
	expr.OpIsDistinct: "IS_DISTINCT_FROM", expr.OpIsNotDistinct: "IS_NOT_DISTINCT_FROM",
}

var cmpNames = map[expr.Op]string{
	expr.OpEq: "=", expr.OpNe: "<>", expr.OpLt: "<", expr.OpLe: "<=", expr.OpGt: ">", expr.OpGe: ">=",
	expr.OpIsDistinct: "IS DISTINCT FROM", expr.OpIsNotDistinct: "IS NOT DISTINCT FROM", expr.OpIn: "IN",
}

// coerceLiteralPair implements the implicit conversions of ksqlDB's
// comparisons between a STRING and a TIMESTAMP, DATE or TIME (the only
// pairs of different types it compares besides numbers): a STRING literal
// compared with one is parsed as its type, and a literal of one compared
// with a STRING becomes a string. Any other pair of types is left to
// comparable: ksqlDB does not compare an INTEGER with '10'.
func coerceLiteralPair(pos ast.Pos, l, r *expr.Expr) (*expr.Expr, *expr.Expr, error) {
	if l.Type == nil || r.Type == nil || l.Type.Kind == r.Type.Kind {
		return l, r, nil
	}
	conv := func(lit *expr.Expr, to *types.Type) (*expr.Expr, error) {
		c, err := eval.CastFunc(lit.Type, to)
		if err != nil {
			return lit, nil
		}
		v, err := c(lit.Value)
		if err != nil {
			return nil, errorf(pos, "%v", err)
		}
		return expr.Literal(v, to), nil
	}
	var err error
	switch {
	case r.Op == expr.OpLiteral && r.Value != nil && r.Type.Kind == types.String && isTemporal(l.Type):
		r, err = conv(r, l.Type)
	case l.Op == expr.OpLiteral && l.Value != nil && l.Type.Kind == types.String && isTemporal(r.Type):
		l, err = conv(l, r.Type)
	case r.Op == expr.OpLiteral && r.Value != nil && l.Type.Kind == types.String && isTemporal(r.Type):
		r, err = conv(r, types.StringType)
	case l.Op == expr.OpLiteral && l.Value != nil && r.Type.Kind == types.String && isTemporal(l.Type):
		l, err = conv(l, types.StringType)
	}
	return l, r, err
}

func isTemporal(t *types.Type) bool {
	switch t.Kind {
	case types.Timestamp, types.Date, types.Time:
		return true
	}
	return false
}

func isScalar(t *types.Type) bool {
	switch t.Kind {
	case types.Array, types.Map, types.Struct, types.Bytes:
		return false
	}
	return true
}

func (b *binder) bindComparison(pos ast.Pos, op expr.Op, le, re ast.Expr) (*expr.Expr, error) {
	l, err := b.bind(le)
	if err != nil {
		return nil, err
	}
	r, err := b.bind(re)
	if err != nil {
		return nil, err
	}
	if (l.Type == nil) != (r.Type == nil) {
		// ksqlDB refuses a comparison with an untyped NULL (the NULL
		// literal), naming the other side's base type.
		return nil, errorf(pos, "Comparison with NULL not supported: %s %s %s\nUse 'IS NULL' or 'IS NOT NULL' instead.", nullOrKind(l.Type), cmpNames[op], nullOrKind(r.Type))
	}
	return b.compare(pos, op, l, r)
}

// nullOrKind names t's base type, or NULL for no type, as ksqlDB does in
// its refusal of comparisons with NULL.
func nullOrKind(t *types.Type) string {
	if t == nil {
		return "NULL"
	}
	return t.Kind.String()
}

func (b *binder) compare(pos ast.Pos, op expr.Op, l, r *expr.Expr) (*expr.Expr, error) {
	if l.Type == nil && r.Type == nil {
		return nil, errorf(pos, "Comparison with NULL not supported: NULL %s NULL\nUse 'IS NULL' or 'IS NOT NULL' instead.", cmpNames[op])
	}
	if l.Type == nil {
		l = retype(l, r.Type)
	}
	if r.Type == nil {
		r = retype(r, l.Type)
	}
	l, r, err := coerceLiteralPair(pos, l, r)
	if err != nil {
		return nil, err
	}
	if isCompound(l.Type) && isCompound(r.Type) {
		if l, err = coerceCtor(pos, l, r.Type); err != nil {
			return nil, err
		}
		if r, err = coerceCtor(pos, r, l.Type); err != nil {
			return nil, err
		}
	}
	// A DATE compares with a TIMESTAMP as the timestamp of its midnight.
	switch {
	case l.Type.Kind == types.Date && r.Type.Kind == types.Timestamp:
		if l, err = convertTo(pos, l, r.Type); err != nil {
			return nil, err
		}
	case l.Type.Kind == types.Timestamp && r.Type.Kind == types.Date:
		if r, err = convertTo(pos, r, l.Type); err != nil {
			return nil, err
		}
	}
	if !expr.Comparable(op, l.Type, r.Type) {
		return nil, errorf(pos, "Cannot compare %s (%s) to %s (%s) with %s.", l, l.Type, r, r.Type, cmpTypeNames[op])
	}
	return &expr.Expr{Op: op, Type: types.BooleanType, Args: []*expr.Expr{l, r}}, nil
}

func (b *binder) bindIn(n *ast.In) (*expr.Expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	list, err := b.bindAll(n.List)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errorf(n.Pos, "IN needs at least one value")
	}
	args := append([]*expr.Expr{x}, list...)
	t, err := coerceList(n.Pos, args)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errorf(n.Pos, "Comparison with NULL not supported: NULL IN NULL")
	}
	op := expr.OpIn
	if n.Not {
		op = expr.OpNotIn
	}
	return &expr.Expr{Op: op, Type: types.BooleanType, Args: args}, nil
}

func (b *binder) bindBetween(n *ast.Between) (*expr.Expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	lo, err := b.bind(n.Lo)
	if err != nil {
		return nil, err
	}
	hi, err := b.bind(n.Hi)
	if err != nil {
		return nil, err
	}
	c1, err := b.compare(n.Pos, expr.OpGe, x, lo)
	if err != nil {
		return nil, err
	}
	c2, err := b.compare(n.Pos, expr.OpLe, c1.Args[0], hi)
	if err != nil {
		return nil, err
	}
	op := expr.OpBetween
	if n.Not {
		op = expr.OpNotBetween
	}
	return &expr.Expr{Op: op, Type: types.BooleanType, Args: []*expr.Expr{c2.Args[0], c1.Args[1], c2.Args[1]}}, nil
}

func (b *binder) bindLike(n *ast.Like) (*expr.Expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	p, err := b.bind(n.Pattern)
	if err != nil {
		return nil, err
	}
	x, p = retype(x, types.StringType), retype(p, types.StringType)
	if x.Type.Kind != types.String || p.Type.Kind != types.String {
		return nil, errorf(n.Pos, "LIKE needs STRING operands, but got %s and %s in %s LIKE %s", x.Type, p.Type, x, p)
	}
	args := []*expr.Expr{x, p}
	if n.Escape != nil {
		esc, err := b.bind(n.Escape)
		if err != nil {
			return nil, err
		}
		s, ok := esc.Value.(string)
		if esc.Op != expr.OpLiteral || !ok || len([]rune(s)) != 1 {
			return nil, errorf(n.Pos, "ESCAPE must be a single-character string literal, got %s", esc)
		}
		args = append(args, esc)
	}
	op := expr.OpLike
	if n.Not {
		op = expr.OpNotLike
	}
	return &expr.Expr{Op: op, Type: types.BooleanType, Args: args}, nil
}

// unify computes the common type of es and converts each element to it
// (literals directly, other nodes through a CAST node).
func (b *binder) unify(pos ast.Pos, what string, es []*expr.Expr) (*types.Type, error) {
	return unifyExprs(pos, what, es)
}

func unifyExprs(pos ast.Pos, what string, es []*expr.Expr) (*types.Type, error) {
	ts := make([]*types.Type, len(es))
	for i, e := range es {
		ts[i] = e.Type
	}
	t, err := expr.CommonType(ts)
	if err != nil {
		return nil, errorf(pos, "%s must have compatible types: %v", what, err)
	}
	if t == nil {
		return nil, nil
	}
	for i, e := range es {
		ne, err := convertTo(pos, e, t)
		if err != nil {
			return nil, err
		}
		es[i] = ne
	}
	return t, nil
}

func convertTo(pos ast.Pos, e *expr.Expr, t *types.Type) (*expr.Expr, error) {
	if e.Type == nil {
		return retype(e, t), nil
	}
	if e.Type.Equal(t) {
		return e, nil
	}
	c, err := eval.CastFunc(e.Type, t)
	if err != nil {
		return nil, errorf(pos, "%v", err)
	}
	if e.Op == expr.OpLiteral {
		if e.Value == nil {
			return expr.Literal(nil, t), nil
		}
		v, err := c(e.Value)
		if err != nil {
			return nil, errorf(pos, "%v", err)
		}
		return expr.Literal(v, t), nil
	}
	return &expr.Expr{Op: expr.OpCast, Type: t, Args: []*expr.Expr{e}}, nil
}

// caseTypes refuses a CASE whose results have no common type, as ksqlDB
// words it: the first THEN whose type does not go with the THENs before
// it, or an ELSE that does not go with them.
func caseTypes(n *ast.Case, results []*expr.Expr) error {
	var prev []*types.Type
	common := func(ts []*types.Type) (*types.Type, bool) {
		t, err := expr.CommonType(ts)
		return t, err == nil
	}
	for i, w := range n.Whens {
		next := append(append([]*types.Type(nil), prev...), results[i].Type)
		if _, ok := common(next); !ok {
			pt, _ := common(prev)
			return errorf(w.Result.Position(), "Invalid Case expression. Type for all 'THEN' clauses should be the same.\nTHEN expression 'WHEN %s THEN %s' has type: %s.\nPrevious THEN expression(s) type: %s.",
				ast.FormatExpr(w.Cond), ast.FormatExpr(w.Result), results[i].Type, pt)
		}
		prev = next
	}
	if n.Else != nil {
		et := results[len(results)-1].Type
		if _, ok := common(append(append([]*types.Type(nil), prev...), et)); !ok {
			pt, _ := common(prev)
			return errorf(n.Else.Position(), "Invalid Case expression. Type for the default clause should be the same as for 'THEN' clauses.\nTHEN type: %s.\nDEFAULT type: %s.", pt, et)
		}
	}
	return nil
}

func (b *binder) bindCase(n *ast.Case) (*expr.Expr, error) {
	var operand *expr.Expr
	if n.Operand != nil {
		var err error
		if operand, err = b.bind(n.Operand); err != nil {
			return nil, err
		}
	}
	var conds, results []*expr.Expr
	for _, w := range n.Whens {
		c, err := b.bind(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if c, err = b.compare(w.Cond.Position(), expr.OpEq, operand, c); err != nil {
				return nil, err
			}
		}
		c = retype(c, types.BooleanType)
		if c.Type.Kind != types.Boolean {
			return nil, errorf(w.Cond.Position(), "WHEN operand type should be boolean.\nType for '%s' is %s", ast.FormatExpr(w.Cond), c.Type)
		}
		r, err := b.bind(w.Result)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
		results = append(results, r)
	}
	if n.Else != nil {
		e, err := b.bind(n.Else)
		if err != nil {
			return nil, err
		}
		results = append(results, e)
	}
	if err := caseTypes(n, results); err != nil {
		return nil, err
	}
	t, err := b.unify(n.Pos, "CASE results", results)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errorf(n.Pos, "Invalid Case expression. All case branches have NULL type")
	}
	args := make([]*expr.Expr, 0, len(conds)*2+1)
	for i := range conds {
		args = append(args, conds[i], results[i])
	}
	if n.Else != nil {
		args = append(args, results[len(results)-1])
	}
	return &expr.Expr{Op: expr.OpCase, Type: t, Args: args, Else: n.Else != nil}, nil
}

func (b *binder) bindSubscript(n *ast.Subscript) (*expr.Expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	idx, err := b.bind(n.Index)
	if err != nil {
		return nil, err
	}
	if x.Type == nil {
		return nil, errorf(n.Pos, "cannot subscript NULL")
	}
	switch x.Type.Kind {
	case types.Array:
		idx = retype(idx, types.IntType)
		if idx.Type.Kind != types.Int && idx.Type.Kind != types.Bigint {
			return nil, errorf(n.Pos, "array index %s must be INTEGER or BIGINT, not %s", idx, idx.Type)
		}
		return &expr.Expr{Op: expr.OpIndex, Type: x.Type.Elem, Args: []*expr.Expr{x, idx}}, nil
	case types.Map:
		idx = retype(idx, x.Type.Key)
		k, err := convertTo(n.Pos, idx, x.Type.Key)
		if err != nil || !eval.ImplicitCast(idx.Type, x.Type.Key) && idx.Op != expr.OpLiteral {
			return nil, errorf(n.Pos, "map key %s must be %s, not %s", idx, x.Type.Key, idx.Type)
		}
		return &expr.Expr{Op: expr.OpIndex, Type: x.Type.Elem, Args: []*expr.Expr{x, k}}, nil
	}
	return nil, errorf(n.Pos, "cannot subscript %s of type %s; only ARRAY and MAP values can be subscripted", x, x.Type)
}

func (b *binder) bindCall(n *ast.FuncCall) (*expr.Expr, error) {
	f, ok := eval.LookupFunc(n.Name)
	if !ok {
		return nil, errorf(n.Pos, "Can't find any functions with the name '%s'. SHOW FUNCTIONS lists the functions.", n.Name)
	}
	if n.Star && !n.Distinct && len(n.Args) == 0 {
		// ksqlDB passes no arguments for F(*) to a scalar function.
		if _, err := f.Check(nil); err != nil {
			return nil, errorf(n.Pos, "%v", err)
		}
	}
	if n.Star || n.Distinct {
		return nil, errorf(n.Pos, "function '%s' is not an aggregate; * and DISTINCT are not allowed", n.Name)
	}
	args := make([]*expr.Expr, len(n.Args))
	ts := make([]*types.Type, len(n.Args))
	for i, a := range n.Args {
		lam, isLam := a.(*ast.Lambda)
		var params []*types.Type
		wantLam := false
		if f.LambdaParams != nil {
			var err error
			if params, wantLam, err = f.LambdaParams(ts[:i], i); err != nil {
				return nil, errorf(a.Position(), "%v", err)
			}
		}
		switch {
		case isLam && !wantLam:
			return nil, errorf(a.Position(), "argument %d of %s cannot be a lambda", i+1, f.Name)
		case !isLam && wantLam:
			return nil, errorf(a.Position(), "argument %d of %s must be a lambda with %d parameter%s", i+1, f.Name, len(params), plural(len(params)))
		case isLam:
			x, err := b.bindLambda(f.Name, i, lam, params)
			if err != nil {
				return nil, err
			}
			args[i] = x
		case unitArg(f, i, a) != nil:
			args[i] = unitArg(f, i, a)
		default:
			x, err := b.bind(a)
			if err != nil {
				return nil, err
			}
			args[i] = x
		}
		ts[i] = args[i].Type
	}
	if len(args) == 0 {
		args = nil
	}
	ret, err := f.Check(ts)
	if err != nil {
		return nil, errorf(n.Pos, "%v", err)
	}
	if f.Coerce != nil {
		for i, a := range args {
			want := f.Coerce(ts, i, ret)
			if want == nil {
				continue
			}
			if a.Op == expr.OpLambda {
				body, err := convertTo(n.Pos, a.Args[0], want)
				if err != nil {
					return nil, err
				}
				l := *a
				l.Args, l.Type = []*expr.Expr{body}, want
				args[i] = &l
				continue
			}
			if args[i], err = convertTo(n.Pos, a, want); err != nil {
				return nil, err
			}
		}
	}
	return &expr.Expr{Op: expr.OpCall, Type: ret, Func: f.Name, Args: args}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// bindLambda binds lambda argument i of function fn, whose parameters have
// the types params, in a scope where its parameters shadow columns and the
// parameters of enclosing lambdas.
func (b *binder) bindLambda(fn string, i int, n *ast.Lambda, params []*types.Type) (*expr.Expr, error) {
	if len(n.Params) != len(params) {
		return nil, errorf(n.Pos, "argument %d of %s must be a lambda with %d parameter%s, not %d", i+1, fn, len(params), plural(len(params)), len(n.Params))
	}
	for j, p := range n.Params {
		for _, q := range n.Params[:j] {
			if p == q {
				return nil, errorf(n.Pos, "lambda parameter %s is declared twice", p)
			}
		}
	}
	names := append([]string(nil), n.Params...)
	b.lambdas = append(b.lambdas, lambdaScope{names: names, types: params, first: b.depth})
	b.depth += len(names)
	body, err := b.bind(n.Body)
	b.depth -= len(names)
	b.lambdas = b.lambdas[:len(b.lambdas)-1]
	if err != nil {
		return nil, err
	}
	return &expr.Expr{Op: expr.OpLambda, Type: body.Type, Col: b.depth, Names: names, Args: []*expr.Expr{body}}, nil
}

func isCompound(t *types.Type) bool {
	switch t.Kind {
	case types.Array, types.Map, types.Struct:
		return true
	}
	return false
}

// coerceCtor converts the STRING literals inside an ARRAY, MAP or STRUCT
// constructor e to the matching scalar types of t, the type e is compared
// with, as ksqlDB does for literals in comparisons: STRUCT(A := '7') = S
// compares A as S->A's type. Other nodes are returned as they are.
func coerceCtor(pos ast.Pos, e *expr.Expr, t *types.Type) (*expr.Expr, error) {
	if t == nil || e.Type == nil {
		return e, nil
	}
	switch {
	case e.Op == expr.OpLiteral && e.Value != nil && e.Type.Kind == types.String && t.Kind != types.String && isScalar(t):
		c, err := eval.CastFunc(e.Type, t)
		if err != nil {
			return e, nil
		}
		v, err := c(e.Value)
		if err != nil {
			return nil, errorf(pos, "%v", err)
		}
		return expr.Literal(v, t), nil
	case e.Op == expr.OpArray && t.Kind == types.Array:
		args := make([]*expr.Expr, len(e.Args))
		for i, a := range e.Args {
			x, err := coerceCtor(pos, a, t.Elem)
			if err != nil {
				return nil, err
			}
			args[i] = x
		}
		et, err := unifyExprs(pos, "ARRAY elements", args)
		if err != nil || et == nil {
			return e, err
		}
		return &expr.Expr{Op: expr.OpArray, Type: types.ArrayOf(et), Args: args}, nil
	case e.Op == expr.OpMap && t.Kind == types.Map:
		keys := make([]*expr.Expr, 0, len(e.Args)/2)
		vals := make([]*expr.Expr, 0, len(e.Args)/2)
		for i := 0; i+1 < len(e.Args); i += 2 {
			k, err := coerceCtor(pos, e.Args[i], t.Key)
			if err != nil {
				return nil, err
			}
			v, err := coerceCtor(pos, e.Args[i+1], t.Elem)
			if err != nil {
				return nil, err
			}
			keys, vals = append(keys, k), append(vals, v)
		}
		kt, err := unifyExprs(pos, "MAP keys", keys)
		if err != nil || kt == nil {
			return e, err
		}
		vt, err := unifyExprs(pos, "MAP values", vals)
		if err != nil || vt == nil {
			return e, err
		}
		args := make([]*expr.Expr, 0, len(e.Args))
		for i := range keys {
			args = append(args, keys[i], vals[i])
		}
		return &expr.Expr{Op: expr.OpMap, Type: types.MapOf(kt, vt), Args: args}, nil
	case e.Op == expr.OpStruct && t.Kind == types.Struct:
		args := make([]*expr.Expr, len(e.Args))
		fields := make([]types.Field, len(e.Args))
		for i, a := range e.Args {
			x := a
			for _, f := range t.Fields {
				if f.Name == e.Names[i] {
					var err error
					if x, err = coerceCtor(pos, a, f.Type); err != nil {
						return nil, err
					}
					break
				}
			}
			args[i] = x
			fields[i] = types.Field{Name: e.Names[i], Type: x.Type}
		}
		return &expr.Expr{Op: expr.OpStruct, Type: types.StructOf(fields...), Args: args, Names: e.Names}, nil
	}
	return e, nil
}

// unresolved returns the name of the first custom type left unresolved in
// t (a type of Kind Unknown), or "".
func unresolved(t *types.Type) string {
	if t == nil {
		return ""
	}
	switch t.Kind {
	case types.Unknown:
		if t.Name == "" {
			return "UNKNOWN"
		}
		return t.Name
	case types.Array:
		return unresolved(t.Elem)
	case types.Map:
		if s := unresolved(t.Key); s != "" {
			return s
		}
		return unresolved(t.Elem)
	case types.Struct:
		for _, f := range t.Fields {
			if s := unresolved(f.Type); s != "" {
				return s
			}
		}
	}
	return ""
}

// timeUnits maps the time unit names accepted as arguments of DATEADD and
// its kin to their plural name, the one the function library's unit
// arguments take.
var timeUnits = map[string]string{
	"MILLISECOND": "MILLISECONDS", "MILLISECONDS": "MILLISECONDS",
	"SECOND": "SECONDS", "SECONDS": "SECONDS",
	"MINUTE": "MINUTES", "MINUTES": "MINUTES",
	"HOUR": "HOURS", "HOURS": "HOURS",
	"DAY": "DAYS", "DAYS": "DAYS",
}

// unitArg returns the bound time unit when argument i of a call to f is
// one (an unqualified name such as DAYS at a position in f.UnitArgs), and
// nil otherwise.
func unitArg(f *eval.Func, i int, a ast.Expr) *expr.Expr {
	if !slices.Contains(f.UnitArgs, i) {
		return nil
	}
	c, ok := a.(*ast.ColumnRef)
	if !ok || c.Qualifier != "" {
		return nil
	}
	u, ok := timeUnits[strings.ToUpper(c.Name)]
	if !ok {
		return nil
	}
	return expr.Literal(u, types.StringType)
}
