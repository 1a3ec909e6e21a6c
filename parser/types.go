package parser

import (
	"strings"

	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
)

// parseType reads a ksqlDB type: a primitive, DECIMAL(p, s), VARCHAR[(n)],
// ARRAY<T>, MAP<K, V>, STRUCT<name T, ...>, or a custom type name. after
// names what precedes the type, for the error message.
func (c *cursor) parseType(after string) (*types.Type, error) {
	t := c.peek()
	if !t.isName() {
		return nil, c.errAt(t, "expected a type after "+after+", e.g. VARCHAR, BIGINT, but found "+t.describe())
	}
	c.i++
	if t.kind == tkQIdent {
		return &types.Type{Name: t.val, Kind: types.Unknown}, c.typeParams()
	}
	if t.is("NULL") {
		return nil, c.errAt(t, "expected a type after "+after+", e.g. VARCHAR, BIGINT, but found NULL; NULL is a value, not a type")
	}
	switch t.upper() {
	case "ARRAY", "MAP", "STRUCT":
		if c.typeDepth >= ast.MaxNesting {
			return nil, c.errAt(t, "type nested deeper than "+itoa(ast.MaxNesting)+" levels; simplify it or split the column into several")
		}
		c.typeDepth++
		defer func() { c.typeDepth-- }()
	}
	switch t.upper() {
	case "BOOLEAN", "BOOL":
		return types.BooleanType, c.typeParams()
	case "INT", "INTEGER":
		return types.IntType, c.typeParams()
	case "BIGINT":
		return types.BigintType, c.typeParams()
	case "DOUBLE":
		return types.DoubleType, c.typeParams()
	case "STRING":
		return types.StringType, c.typeParams()
	case "VARCHAR":
		return types.StringType, c.typeParams()
	case "BYTES":
		return types.BytesType, c.typeParams()
	case "TIMESTAMP":
		return types.TimestampType, c.typeParams()
	case "DATE":
		return types.DateType, c.typeParams()
	case "TIME":
		return types.TimeType, c.typeParams()
	case "DECIMAL":
		if !c.peek().isOp("(") {
			return nil, c.errAt(c.peek(), "DECIMAL needs a precision and a scale, e.g. DECIMAL(10, 2)")
		}
		c.i++
		p, err := c.integer("the DECIMAL precision")
		if err != nil {
			return nil, err
		}
		if err := c.expectOp(",", "between DECIMAL precision and scale, e.g. DECIMAL(10, 2),"); err != nil {
			return nil, err
		}
		s, err := c.integer("the DECIMAL scale")
		if err != nil {
			return nil, err
		}
		if err := c.expectOp(")", "to close DECIMAL(p, s)"); err != nil {
			return nil, err
		}
		if p < 1 {
			return nil, c.errAt(t, "DECIMAL precision must be at least 1")
		}
		if s < 0 || s > p {
			return nil, c.errAt(t, "DECIMAL scale must be between 0 and the precision")
		}
		return types.DecimalOf(int(p), int(s)), nil
	case "ARRAY":
		if err := c.expectOp("<", "after ARRAY, e.g. ARRAY<STRING>,"); err != nil {
			return nil, err
		}
		e, err := c.parseType("ARRAY<")
		if err != nil {
			return nil, err
		}
		if err := c.expectOp(">", "to close ARRAY<...>"); err != nil {
			return nil, err
		}
		return types.ArrayOf(e), nil
	case "MAP":
		if err := c.expectOp("<", "after MAP, e.g. MAP<STRING, INT>,"); err != nil {
			return nil, err
		}
		k, err := c.parseType("MAP<")
		if err != nil {
			return nil, err
		}
		if err := c.expectOp(",", "between the MAP key and value types"); err != nil {
			return nil, err
		}
		v, err := c.parseType("the MAP key type")
		if err != nil {
			return nil, err
		}
		if err := c.expectOp(">", "to close MAP<...>"); err != nil {
			return nil, err
		}
		return types.MapOf(k, v), nil
	case "STRUCT":
		if err := c.expectOp("<", "after STRUCT, e.g. STRUCT<A INT, B STRING>,"); err != nil {
			return nil, err
		}
		var fields []types.Field
		if !c.acceptOp(">") {
			for {
				n, nt, err := c.name("a STRUCT field name")
				if err != nil {
					return nil, err
				}
				for _, f := range fields {
					if f.Name == n {
						return nil, c.errAt(nt, "duplicate STRUCT field "+n+"; give each field its own name")
					}
				}
				ft, err := c.parseType("'" + nt.text + "'")
				if err != nil {
					return nil, err
				}
				fields = append(fields, types.Field{Name: n, Type: ft})
				if c.acceptOp(",") {
					continue
				}
				if err := c.expectOp(">", "or ',' in STRUCT<...>"); err != nil {
					return nil, err
				}
				break
			}
		}
		return types.StructOf(fields...), nil
	}
	return &types.Type{Name: t.val, Kind: types.Unknown}, c.typeParams()
}

// typeParams consumes the parameters a type name may carry, as in
// VARCHAR(100): whole numbers or the word STRING, which ksqlDB's grammar
// allows after any type name and ignores.
func (c *cursor) typeParams() error {
	if !c.acceptOp("(") {
		return nil
	}
	for {
		t := c.peek()
		if !(t.kind == tkNumber && !strings.ContainsAny(t.text, ".eE") || t.is("STRING")) {
			return c.errAt(t, "expected a type parameter (a whole number, as in VARCHAR(100)) but found "+t.describe())
		}
		c.i++
		if c.acceptOp(",") {
			continue
		}
		if c.acceptOp(")") {
			return nil
		}
		t = c.peek()
		return c.errAt(t, "expected ',' or ')' in the type parameters but found "+t.describe())
	}
}

// typedLitTypes are the types of TIMESTAMP '...', DATE '...', TIME '...'.
var typedLitTypes = map[string]*types.Type{
	"TIMESTAMP": types.TimestampType,
	"DATE":      types.DateType,
	"TIME":      types.TimeType,
}
