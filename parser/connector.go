package parser

import (
	"strings"

	"github.com/sluice-sql/sluice/internal/secret"
	"github.com/sluice-sql/sluice/parser/ast"
)

// This file parses the connector statements, as ksqlDB's grammar has them:
//
//	CREATE SOURCE|SINK CONNECTOR [IF NOT EXISTS] name WITH (prop = literal, ...)
//	DROP CONNECTOR [IF EXISTS] name
//	DESCRIBE CONNECTOR name
//	SHOW|LIST [SOURCE|SINK] CONNECTORS

// atConnector reports whether the cursor is at SOURCE CONNECTOR or SINK
// CONNECTOR.
func (c *cursor) atConnector() bool {
	return (c.peek().is("SOURCE") || c.peek().is("SINK")) && c.peekAt(1).is("CONNECTOR")
}

// createConnector parses what follows CREATE [OR REPLACE], at SOURCE|SINK
// CONNECTOR.
func (c *cursor) createConnector(src ast.Source, orReplace bool) (ast.Statement, error) {
	kt := c.next()
	if orReplace {
		return nil, c.errAt(kt, "CREATE OR REPLACE "+kt.upper()+" CONNECTOR is not supported; drop the connector first (DROP CONNECTOR name)")
	}
	s := &ast.CreateConnector{Source: src, Kind: ast.SourceConnector}
	if kt.is("SINK") {
		s.Kind = ast.SinkConnector
	}
	c.next() // CONNECTOR
	var err error
	if s.IfNotExists, err = c.ifNotExists(); err != nil {
		return nil, err
	}
	n, nt, err := c.name("the name of the connector")
	if err != nil {
		return nil, err
	}
	s.Name, s.NamePos = n, c.pos(nt)
	if err := c.expect("WITH", "; a connector's configuration follows WITH, as in WITH ('connector.class'='...', ...)"); err != nil {
		return nil, err
	}
	if s.Props, err = c.connectorProperties(); err != nil {
		return nil, err
	}
	if err := c.end("the connector's WITH (...)"); err != nil {
		return nil, err
	}
	s.Text = maskText(c.toks, src.Text, src.Offset)
	return s, nil
}

// connectorProperties parses "(name = literal, ...)" after WITH. A name is
// a quoted string or identifier, whose case is kept, or a bare word, which
// is upper-cased as ksqlDB does.
func (c *cursor) connectorProperties() ([]ast.ConnectorProperty, error) {
	if err := c.expectOp("(", "after WITH, as in WITH ('connector.class'='...', ...),"); err != nil {
		return nil, err
	}
	var ps []ast.ConnectorProperty
	seen := map[string]bool{}
	for {
		t := c.peek()
		var name string
		switch t.kind {
		case tkString, tkQIdent, tkWord:
			name = t.val
		default:
			return nil, c.errAt(t, "expected a connector property name, e.g. 'connector.class', but found "+t.describe())
		}
		c.next()
		if seen[name] {
			return nil, c.errAt(t, "duplicate property "+name)
		}
		seen[name] = true
		if err := c.expectOp("=", "after property "+name+", as in '"+name+"'='value',"); err != nil {
			return nil, err
		}
		lit, err := c.propValue(name)
		if err != nil {
			return nil, err
		}
		v := lit.Text
		if lit.Kind == ast.BoolLit {
			v = strings.ToLower(v)
		}
		ps = append(ps, ast.ConnectorProperty{Pos: c.pos(t), Name: name, Value: v})
		if c.acceptOp(",") {
			continue
		}
		if c.acceptOp(")") {
			return ps, nil
		}
		t = c.peek()
		return nil, c.errAt(t, "expected ',' or ')' in the WITH list but found "+t.describe())
	}
}

// maskText returns text, the statement of toks (text starts at byte off of
// the source the tokens point into), with each secret-looking value of a
// name = value pair (see package secret) written as '[hidden]': the text a
// statement echoes (replies, errors, logs) keeps none.
func maskText(toks []token, text string, off int) string {
	var b strings.Builder
	at := 0
	for i := 0; i+2 < len(toks); i++ {
		n, eq, v := toks[i], toks[i+1], toks[i+2]
		if !eq.isOp("=") || (n.kind != tkString && n.kind != tkQIdent && n.kind != tkWord) || v.kind != tkString {
			continue
		}
		shown := secret.Value(n.val, v.val)
		if shown == v.val || v.off-off < at || v.end-off > len(text) {
			continue
		}
		b.WriteString(text[at : v.off-off])
		b.WriteString(ast.QuoteString(shown))
		at = v.end - off
	}
	if at == 0 {
		return text
	}
	b.WriteString(text[at:])
	return b.String()
}

// dropConnector parses what follows DROP, at CONNECTOR.
func (c *cursor) dropConnector(src ast.Source) (ast.Statement, error) {
	c.next()
	d := &ast.DropConnector{Source: src}
	if c.peek().is("IF") && c.peekAt(1).is("EXISTS") {
		c.i += 2
		d.IfExists = true
	}
	n, nt, err := c.name("the name of the connector to drop")
	if err != nil {
		return nil, err
	}
	d.Name, d.NamePos = n, c.pos(nt)
	return d, c.end("DROP CONNECTOR " + n)
}

// describeConnector parses what follows DESCRIBE, at CONNECTOR name.
func (c *cursor) describeConnector(src ast.Source) (ast.Statement, error) {
	c.next()
	n, nt, err := c.name("the name of the connector to describe")
	if err != nil {
		return nil, err
	}
	return &ast.DescribeConnector{Source: src, Name: n, NamePos: c.pos(nt)}, c.end("DESCRIBE CONNECTOR " + n)
}

// showConnectors parses what follows SHOW|LIST, at [SOURCE|SINK]
// CONNECTORS.
func (c *cursor) showConnectors(src ast.Source, verb string) (ast.Statement, error) {
	s := &ast.ShowConnectors{Source: src}
	switch {
	case c.accept("SOURCE"):
		s.Scope = ast.SourceConnectors
	case c.accept("SINK"):
		s.Scope = ast.SinkConnectors
	}
	c.next() // CONNECTORS
	return s, c.end(verb + " CONNECTORS")
}
