package parser

import (
	"time"

	"github.com/sluice-sql/sluice/parser/ast"
)

var showKinds = map[string]ast.ShowKind{
	"STREAMS": ast.ShowStreams, "TABLES": ast.ShowTables, "QUERIES": ast.ShowQueries,
	"TOPICS": ast.ShowTopics, "FUNCTIONS": ast.ShowFunctions, "PROPERTIES": ast.ShowProperties,
	"VARIABLES": ast.ShowVariables, "TYPES": ast.ShowTypes,
}

// show parses SHOW|LIST what [EXTENDED].
func (c *cursor) show(src ast.Source) (ast.Statement, error) {
	verb := c.next().upper()
	if c.peek().is("CONNECTORS") || (c.peek().is("SOURCE") || c.peek().is("SINK")) && c.peekAt(1).is("CONNECTORS") {
		return c.showConnectors(src, verb)
	}
	c.accept("ALL") // SHOW ALL TOPICS lists internal topics too; the engine lists all.
	t := c.peek()
	k, ok := showKinds[t.upper()]
	if t.kind != tkWord || !ok {
		return nil, c.errAt(t, "expected what to "+verb+" but found "+t.describe()+"; write one of STREAMS, TABLES, QUERIES, TOPICS, FUNCTIONS, PROPERTIES, VARIABLES, TYPES, CONNECTORS")
	}
	c.i++
	s := &ast.Show{Source: src, What: k, Extended: c.accept("EXTENDED")}
	return s, c.end(verb + " " + t.upper())
}

// describe parses DESCRIBE [EXTENDED] name | DESCRIBE FUNCTION name.
func (c *cursor) describe(src ast.Source) (ast.Statement, error) {
	c.next()
	if c.peek().is("CONNECTOR") && c.peekAt(1).isName() {
		return c.describeConnector(src)
	}
	if c.peek().is("FUNCTION") && c.peekAt(1).isName() {
		c.next()
		n, _, _ := c.name("a function name")
		return &ast.DescribeFunction{Source: src, Name: n}, c.end("DESCRIBE FUNCTION " + n)
	}
	ext := false
	if c.peek().is("EXTENDED") && c.peekAt(1).isName() {
		c.next()
		ext = true
	}
	n, nt, err := c.name("the name of a stream or table to describe")
	if err != nil {
		return nil, err
	}
	if c.accept("EXTENDED") {
		ext = true
	}
	return &ast.Describe{Source: src, Name: n, NamePos: c.pos(nt), Extended: ext}, c.end("DESCRIBE " + n)
}

// queryID consumes a query id (a word, possibly with digits and '_').
func (c *cursor) queryID(verb string) (string, error) {
	t := c.peek()
	if !t.isName() {
		return "", c.errAt(t, "expected a query id after "+verb+", e.g. CSAS_OUTPUT_0, but found "+t.describe())
	}
	c.i++
	return t.val, nil
}

// explain parses EXPLAIN queryId | EXPLAIN statement.
func (c *cursor) explain(src ast.Source) (ast.Statement, error) {
	c.next()
	t := c.peek()
	if t.isName() && c.peekAt(1).kind == tkEOF {
		c.next()
		return &ast.Explain{Source: src, QueryID: t.val}, nil
	}
	if t.kind == tkEOF {
		return nil, c.errAt(t, "expected a query id or a statement after EXPLAIN")
	}
	inner, err := c.statement()
	if err != nil {
		return nil, err
	}
	// EXPLAIN of a CREATE CONNECTOR echoes no secret of it either.
	src.Text = maskText(c.toks, src.Text, src.Offset)
	return &ast.Explain{Source: src, Statement: inner}, nil
}

// terminate parses TERMINATE queryId | TERMINATE ALL.
func (c *cursor) terminate(src ast.Source) (ast.Statement, error) {
	c.next()
	if c.peek().is("ALL") && c.peekAt(1).kind == tkEOF {
		c.next()
		return &ast.Terminate{Source: src, All: true}, nil
	}
	id, err := c.queryID("TERMINATE")
	if err != nil {
		return nil, err
	}
	return &ast.Terminate{Source: src, QueryID: id}, c.end("TERMINATE " + id)
}

// replay parses REPLAY PROCESSING LOG FOR queryId [WHERE expr].
func (c *cursor) replay(src ast.Source) (ast.Statement, error) {
	c.next()
	for _, w := range []string{"PROCESSING", "LOG", "FOR"} {
		if err := c.expect(w, "; write REPLAY PROCESSING LOG FOR <query id> [WHERE <condition>]"); err != nil {
			return nil, err
		}
	}
	t := c.peek()
	id, err := c.queryID("REPLAY PROCESSING LOG FOR")
	if err != nil {
		return nil, err
	}
	s := &ast.Replay{Source: src, QueryID: id, QueryIDPos: c.pos(t)}
	if !c.accept("WHERE") {
		return s, c.end("REPLAY PROCESSING LOG FOR " + id)
	}
	if c.atEOF() {
		return nil, c.errAt(c.peek(), "expected a condition after WHERE, e.g. WHERE OFFSET > 100")
	}
	toks := c.toks[c.i : len(c.toks)-1]
	es, err := c.exprList(toks, c.peek().off)
	if err != nil {
		return nil, err
	}
	if len(es) != 1 {
		return nil, c.errAt(toks[0], "expected one condition after WHERE; join conditions with AND or OR")
	}
	c.i = len(c.toks) - 1
	s.Where = es[0]
	return s, nil
}

// pauseResume parses PAUSE|RESUME queryId|ALL.
func (c *cursor) pauseResume(src ast.Source) (ast.Statement, error) {
	verb := c.next().upper()
	s := &ast.PauseResume{Source: src, Resume: verb == "RESUME"}
	if c.peek().is("ALL") && c.peekAt(1).kind == tkEOF {
		c.next()
		s.All = true
		return s, nil
	}
	id, err := c.queryID(verb)
	if err != nil {
		return nil, err
	}
	s.QueryID = id
	return s, c.end(verb + " " + id)
}

// sourceKind consumes STREAM or TABLE.
func (c *cursor) sourceKind(after string) (ast.SourceKind, error) {
	switch {
	case c.accept("STREAM"):
		return ast.Stream, nil
	case c.accept("TABLE"):
		return ast.Table, nil
	}
	t := c.peek()
	return 0, c.errAt(t, "expected STREAM or TABLE after "+after+" but found "+t.describe())
}

// drop parses DROP STREAM|TABLE [IF EXISTS] name [DELETE TOPIC] and DROP TYPE.
func (c *cursor) drop(src ast.Source) (ast.Statement, error) {
	c.next()
	if c.peek().is("CONNECTOR") {
		return c.dropConnector(src)
	}
	if c.accept("TYPE") {
		d := &ast.DropType{Source: src}
		if c.peek().is("IF") {
			c.next()
			if err := c.expect("EXISTS", "; write DROP TYPE IF EXISTS name"); err != nil {
				return nil, err
			}
			d.IfExists = true
		}
		n, _, err := c.name("the name of the type to drop")
		if err != nil {
			return nil, err
		}
		d.Name = n
		return d, c.end("DROP TYPE " + n)
	}
	k, err := c.sourceKind("DROP (or TYPE, CONNECTOR)")
	if err != nil {
		return nil, err
	}
	d := &ast.Drop{Source: src, Kind: k}
	if c.peek().is("IF") && c.peekAt(1).is("EXISTS") {
		c.i += 2
		d.IfExists = true
	}
	n, nt, err := c.name("the name of the " + k.String() + " to drop")
	if err != nil {
		return nil, err
	}
	d.Name, d.NamePos = n, c.pos(nt)
	if c.accept("DELETE") {
		if err := c.expect("TOPIC", "; write DROP "+k.String()+" name DELETE TOPIC"); err != nil {
			return nil, err
		}
		d.DeleteTopic = true
	}
	return d, c.end("DROP " + k.String() + " " + n)
}

// set parses SET 'name' = 'value'.
func (c *cursor) set(src ast.Source) (ast.Statement, error) {
	c.next()
	n, err := c.stringLit("the property name after SET")
	if err != nil {
		return nil, err
	}
	if err := c.expectOp("=", "after the property name, as in SET 'auto.offset.reset' = 'earliest',"); err != nil {
		return nil, err
	}
	v, err := c.stringLit("the property value")
	if err != nil {
		return nil, err
	}
	return &ast.SetProperty{Source: src, Name: n, Value: v}, c.end("SET")
}

// unset parses UNSET 'name'.
func (c *cursor) unset(src ast.Source) (ast.Statement, error) {
	c.next()
	n, err := c.stringLit("the property name after UNSET")
	if err != nil {
		return nil, err
	}
	return &ast.UnsetProperty{Source: src, Name: n}, c.end("UNSET")
}

// define parses DEFINE name = 'value'.
func (c *cursor) define(src ast.Source) (ast.Statement, error) {
	c.next()
	t := c.peek()
	if t.kind != tkWord {
		return nil, c.errAt(t, "expected a variable name after DEFINE but found "+t.describe())
	}
	c.i++
	if err := c.expectOp("=", "after the variable name, as in DEFINE name = 'value',"); err != nil {
		return nil, err
	}
	v, err := c.stringLit("the variable value")
	if err != nil {
		return nil, err
	}
	return &ast.Define{Source: src, Name: t.text, Value: v}, c.end("DEFINE")
}

// undefine parses UNDEFINE name.
func (c *cursor) undefine(src ast.Source) (ast.Statement, error) {
	c.next()
	t := c.peek()
	if t.kind != tkWord {
		return nil, c.errAt(t, "expected a variable name after UNDEFINE but found "+t.describe())
	}
	c.i++
	return &ast.Undefine{Source: src, Name: t.text}, c.end("UNDEFINE " + t.text)
}

// print parses PRINT topic [FROM BEGINNING] [INTERVAL|SAMPLE n] [LIMIT n].
// The topic name keeps its case, quoted or not, as ksqlDB does.
func (c *cursor) print(src ast.Source) (ast.Statement, error) {
	c.next()
	t := c.peek()
	p := &ast.Print{Source: src}
	switch t.kind {
	case tkString, tkQIdent:
		p.Topic = t.val
	case tkWord:
		p.Topic = t.text
	default:
		return nil, c.errAt(t, "expected a topic name after PRINT, e.g. PRINT 'my-topic', but found "+t.describe())
	}
	c.i++
	// An unquoted topic name may contain '-' and '.'.
	if t.kind == tkWord {
		for (c.peek().isOp("-") || c.peek().isOp(".")) && c.peekAt(1).off == c.peek().end && c.peek().off == c.toks[c.i-1].end {
			c.i++
			n := c.next()
			p.Topic = c.src[t.off:n.end]
		}
	}
	for !c.atEOF() {
		switch {
		case c.accept("FROM"):
			if err := c.expect("BEGINNING", "; write PRINT topic FROM BEGINNING"); err != nil {
				return nil, err
			}
			p.FromBeginning = true
		case c.accept("INTERVAL"), c.accept("SAMPLE"):
			n, err := c.integer("the INTERVAL")
			if err != nil {
				return nil, err
			}
			p.Interval = n
		case c.accept("LIMIT"):
			n, err := c.integer("the LIMIT")
			if err != nil {
				return nil, err
			}
			p.Limit = &n
		default:
			t := c.peek()
			return nil, c.errAt(t, "unexpected "+t.describe()+" in PRINT; expected FROM BEGINNING, INTERVAL n or LIMIT n")
		}
	}
	return p, nil
}

// runScript parses RUN SCRIPT 'path'.
func (c *cursor) runScript(src ast.Source) (ast.Statement, error) {
	c.next()
	if err := c.expect("SCRIPT", "; write RUN SCRIPT '/path/file.sql'"); err != nil {
		return nil, err
	}
	p, err := c.stringLit("the script path")
	if err != nil {
		return nil, err
	}
	return &ast.RunScript{Source: src, Path: p}, c.end("RUN SCRIPT")
}

// resourceName consumes the name of a topic or subject, as ksqlDB's
// grammar reads one: a string keeps its text, an identifier is a name
// (upper-cased unless quoted).
func (c *cursor) resourceName(what string) (string, error) {
	t := c.peek()
	switch t.kind {
	case tkString, tkQIdent:
	case tkWord:
		if ast.IsReserved(t.val) {
			return "", c.errAt(t, reservedNameError(t))
		}
	default:
		return "", c.errAt(t, "expected "+what+" but found "+t.describe())
	}
	c.i++
	return t.val, nil
}

// assert parses ASSERT [NOT EXISTS] TOPIC name [WITH (...)] [TIMEOUT n
// UNIT] and ASSERT [NOT EXISTS] SCHEMA [SUBJECT name] [ID n] [TIMEOUT n
// UNIT], as ksqlDB's migrations tool writes them.
func (c *cursor) assert(src ast.Source) (ast.Statement, error) {
	at := c.next()
	notExists := false
	if c.accept("NOT") {
		if err := c.expect("EXISTS", "; write ASSERT NOT EXISTS TOPIC|SCHEMA ..."); err != nil {
			return nil, err
		}
		notExists = true
	}
	timeout := func() (*time.Duration, error) {
		if !c.accept("TIMEOUT") {
			return nil, nil
		}
		d, err := c.duration("the TIMEOUT")
		if err != nil {
			return nil, err
		}
		return &d, nil
	}
	switch {
	case c.accept("TOPIC"):
		name, err := c.resourceName("a topic name after ASSERT TOPIC, e.g. ASSERT TOPIC 'orders',")
		if err != nil {
			return nil, err
		}
		st := &ast.AssertTopic{Source: src, Topic: name, NotExists: notExists}
		if c.accept("WITH") {
			ps, err := c.properties()
			if err != nil {
				return nil, err
			}
			st.Props = ps
		}
		d, err := timeout()
		if err != nil {
			return nil, err
		}
		st.Timeout = d
		return st, c.end("ASSERT TOPIC " + name)
	case c.accept("SCHEMA"):
		st := &ast.AssertSchema{Source: src, NotExists: notExists}
		if c.accept("SUBJECT") {
			name, err := c.resourceName("a subject name after SUBJECT, e.g. SUBJECT 'orders-value',")
			if err != nil {
				return nil, err
			}
			st.Subject = name
		}
		if c.accept("ID") {
			n, err := c.integer("the schema ID")
			if err != nil {
				return nil, err
			}
			id := int(n)
			st.ID = &id
		}
		if st.Subject == "" && st.ID == nil {
			return nil, c.errAt(at, "ASSERT SCHEMA statements much include a subject name or an id\nName one: ASSERT SCHEMA SUBJECT 'orders-value' or ASSERT SCHEMA ID 1.")
		}
		d, err := timeout()
		if err != nil {
			return nil, err
		}
		st.Timeout = d
		return st, c.end("ASSERT SCHEMA")
	}
	t := c.peek()
	return nil, c.errAt(t, "expected TOPIC or SCHEMA after ASSERT but found "+t.describe()+"; write ASSERT TOPIC name or ASSERT SCHEMA SUBJECT name")
}
