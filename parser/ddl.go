package parser

import (
	"strings"

	"github.com/sluice-sql/sluice/parser/ast"
)

// create parses the CREATE statements: STREAM/TABLE (with columns or AS
// SELECT) and TYPE.
func (c *cursor) create(src ast.Source) (ast.Statement, error) {
	c.next()
	orReplace := false
	if c.accept("OR") {
		if err := c.expect("REPLACE", "; write CREATE OR REPLACE"); err != nil {
			return nil, err
		}
		orReplace = true
	}
	if c.atConnector() {
		return c.createConnector(src, orReplace)
	}
	if c.accept("TYPE") {
		if orReplace {
			return nil, c.errAt(c.toks[c.i-1], "CREATE OR REPLACE TYPE is not supported; drop the type first")
		}
		return c.createType(src)
	}
	isSource := false
	if c.peek().is("SOURCE") && (c.peekAt(1).is("STREAM") || c.peekAt(1).is("TABLE")) {
		c.next()
		isSource = true
	}
	if !c.peek().is("STREAM") && !c.peek().is("TABLE") {
		t := c.peek()
		return nil, c.errAt(t, "expected STREAM, TABLE, TYPE, SOURCE CONNECTOR or SINK CONNECTOR after CREATE but found "+t.describe())
	}
	kind, _ := c.sourceKind("CREATE")
	ifNotExists, err := c.ifNotExists()
	if err != nil {
		return nil, err
	}
	name, nt, err := c.name("the name of the " + kind.String())
	if err != nil {
		return nil, err
	}
	var cols []ast.ColumnDef
	hasCols := false
	if c.peek().isOp("(") {
		hasCols = true
		c.next()
		if cols, err = c.columnDefs(kind, ")"); err != nil {
			return nil, err
		}
	}
	var props ast.Properties
	if c.accept("WITH") {
		if props, err = c.properties(); err != nil {
			return nil, err
		}
	}
	if c.peek().is("AS") {
		at := c.next()
		if hasCols {
			return nil, c.errAt(at, "CREATE ... AS SELECT takes no column list; the columns come from the query")
		}
		if isSource {
			return nil, c.errAt(at, "CREATE SOURCE "+kind.String()+" cannot be AS SELECT; drop SOURCE")
		}
		if !c.peek().is("SELECT") {
			return nil, c.errAt(c.peek(), "expected SELECT after AS but found "+c.peek().describe())
		}
		q, err := c.query()
		if err != nil {
			return nil, err
		}
		return &ast.CreateAsSelect{Source: src, Kind: kind, OrReplace: orReplace, IfNotExists: ifNotExists,
			Name: name, NamePos: c.pos(nt), Props: props, Query: q}, nil
	}
	if err := c.end("the " + kind.String() + " definition; to create from a query write AS SELECT ..."); err != nil {
		return nil, err
	}
	if err := c.checkWindowProps(props); err != nil {
		return nil, err
	}
	return &ast.CreateSource{Source: src, Kind: kind, OrReplace: orReplace, IsSource: isSource,
		IfNotExists: ifNotExists, Name: name, NamePos: c.pos(nt), Columns: cols, Props: props}, nil
}

// ifNotExists consumes IF NOT EXISTS, if it is there.
func (c *cursor) ifNotExists() (bool, error) {
	if !c.peek().is("IF") {
		return false, nil
	}
	c.next()
	for _, w := range []string{"NOT", "EXISTS"} {
		if err := c.expect(w, "; write IF NOT EXISTS"); err != nil {
			return false, err
		}
	}
	return true, nil
}

// columnDefs parses "col TYPE [constraint], ..." up to and including the
// closing operator close.
func (c *cursor) columnDefs(kind ast.SourceKind, close string) ([]ast.ColumnDef, error) {
	var cols []ast.ColumnDef
	seen := map[string]bool{}
	for {
		n, nt, err := c.name("a column name")
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, c.errAt(nt, "duplicate column "+n+"; give each column its own name")
		}
		seen[n] = true
		if t := c.peek(); !t.isName() {
			return nil, c.errAt(t, "expected a column type after '"+nt.text+"', e.g. VARCHAR, BIGINT")
		}
		typ, err := c.parseType("'" + nt.text + "'")
		if err != nil {
			return nil, err
		}
		col := ast.ColumnDef{Pos: c.pos(nt), Name: n, Type: typ}
		switch {
		case c.peek().is("KEY"):
			kt := c.next()
			if kind == ast.Table {
				return nil, c.errAt(kt, "a TABLE's key column is declared PRIMARY KEY, not KEY")
			}
			col.Constraint = ast.KeyColumn
		case c.peek().is("PRIMARY"):
			pt := c.next()
			if err := c.expect("KEY", "; write PRIMARY KEY"); err != nil {
				return nil, err
			}
			if kind == ast.Stream {
				return nil, c.errAt(pt, "a STREAM's key column is declared KEY, not PRIMARY KEY")
			}
			col.Constraint = ast.PrimaryKeyColumn
		case c.accept("HEADERS"):
			col.Constraint = ast.HeadersColumn
		case c.accept("HEADER"):
			if err := c.expectOp("(", "after HEADER, as in HEADER('key'),"); err != nil {
				return nil, err
			}
			k, err := c.stringLit("the header key")
			if err != nil {
				return nil, err
			}
			if err := c.expectOp(")", "to close HEADER('key')"); err != nil {
				return nil, err
			}
			col.Constraint, col.HeaderKey = ast.HeaderColumn, k
		}
		cols = append(cols, col)
		if c.acceptOp(",") {
			continue
		}
		if c.acceptOp(close) {
			return cols, nil
		}
		t := c.peek()
		return nil, c.errAt(t, "expected ',' or '"+close+"' after column "+n+" but found "+t.describe())
	}
}

// properties parses "(NAME = literal, ...)" after WITH.
func (c *cursor) properties() (ast.Properties, error) {
	if err := c.expectOp("(", "after WITH, as in WITH (KAFKA_TOPIC='t', VALUE_FORMAT='JSON'),"); err != nil {
		return nil, err
	}
	var ps ast.Properties
	for {
		t := c.peek()
		if !t.isName() {
			return nil, c.errAt(t, "expected a property name, e.g. KAFKA_TOPIC, but found "+t.describe())
		}
		c.next()
		name := t.val
		if t.kind == tkQIdent {
			name = strings.ToUpper(t.val)
		}
		if _, dup := ps.Get(name); dup {
			return nil, c.errAt(t, "duplicate property "+name)
		}
		if err := c.expectOp("=", "after property "+name+", as in "+name+"='value',"); err != nil {
			return nil, err
		}
		v, err := c.propValue(name)
		if err != nil {
			return nil, err
		}
		ps = append(ps, ast.Property{Pos: c.pos(t), Name: name, Value: v})
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

// propValue parses a property value: a string, a number or a boolean.
func (c *cursor) propValue(name string) (*ast.Literal, error) {
	t := c.peek()
	p := c.pos(t)
	switch {
	case t.kind == tkString:
		c.next()
		return &ast.Literal{Pos: p, Kind: ast.StringLit, Text: t.val}, nil
	case t.is("TRUE") || t.is("FALSE"):
		c.next()
		return &ast.Literal{Pos: p, Kind: ast.BoolLit, Text: t.upper()}, nil
	case t.kind == tkNumber || (t.isOp("-") && c.peekAt(1).kind == tkNumber):
		text := ""
		if t.isOp("-") {
			c.next()
			text = "-"
		}
		n := c.next()
		text += n.text
		k := ast.IntLit
		if dec, dbl := numberKind(n.text); dbl {
			k = ast.DoubleLit
		} else if dec {
			k = ast.DecimalLit
		}
		return &ast.Literal{Pos: p, Kind: k, Text: text}, nil
	}
	return nil, c.errAt(t, "expected a value for "+name+" (a 'string', a number, TRUE or FALSE) but found "+t.describe())
}

// durationUnits are the time units of a duration in a WITH property, as
// ksqlDB reads them: singular or plural, any case.
var durationUnits = map[string]bool{
	"NANOSECOND": true, "MICROSECOND": true, "MILLISECOND": true, "SECOND": true,
	"MINUTE": true, "HOUR": true, "DAY": true,
}

// checkWindowProps checks WINDOW_SIZE as ksqlDB's parser does: a duration
// such as '30 SECONDS', and not set for SESSION windows.
func (c *cursor) checkWindowProps(ps ast.Properties) error {
	size, ok := ps.Get("WINDOW_SIZE")
	if !ok {
		return nil
	}
	at := func(p ast.Pos) *Error { return &Error{Line: p.Line, Col: p.Col} }
	if wt, ok := ps.Get("WINDOW_TYPE"); ok && strings.EqualFold(wt.Value.Text, "SESSION") {
		e := at(size.Pos)
		e.Msg = "'WINDOW_SIZE' should not be set for SESSION windows."
		e.Hint = "WINDOW_SIZE is expected only with WINDOW_TYPE 'TUMBLING' or 'HOPPING': a session window's size comes from its records; remove WINDOW_SIZE."
		return e
	}
	v := size.Value.Text
	f := strings.Fields(v)
	bad := ""
	switch {
	case size.Value.Kind != ast.StringLit || len(f) != 2:
		bad = "Invalid duration: '" + v + "'"
	case strings.Trim(f[0], "0123456789") != "":
		bad = "Invalid duration: '" + v + "'. Not a number: '" + f[0] + "'"
	case !durationUnits[strings.TrimSuffix(strings.ToUpper(f[1]), "S")]:
		bad = "Invalid duration: '" + v + "'. Unknown time unit: '" + strings.ToUpper(f[1]) + "'"
	}
	if bad != "" {
		e := at(size.Value.Pos)
		e.Msg = "Configuration WINDOW_SIZE is invalid: " + bad + "; expected a duration such as '30 SECONDS'"
		return e
	}
	return nil
}

// createType parses the rest of CREATE TYPE [IF NOT EXISTS] name AS type.
func (c *cursor) createType(src ast.Source) (ast.Statement, error) {
	ct := &ast.CreateType{Source: src}
	var err error
	if ct.IfNotExists, err = c.ifNotExists(); err != nil {
		return nil, err
	}
	n, _, err := c.name("the name of the type")
	if err != nil {
		return nil, err
	}
	ct.Name = n
	if err := c.expect("AS", "; write CREATE TYPE name AS STRUCT<...>"); err != nil {
		return nil, err
	}
	if ct.Type, err = c.parseType("AS"); err != nil {
		return nil, err
	}
	return ct, c.end("the type")
}

// alter parses ALTER STREAM|TABLE name ADD [COLUMN] c type [, ADD [COLUMN] c type ...].
func (c *cursor) alter(src ast.Source) (ast.Statement, error) {
	c.next()
	kind, err := c.sourceKind("ALTER")
	if err != nil {
		return nil, err
	}
	n, _, err := c.name("the name of the " + kind.String())
	if err != nil {
		return nil, err
	}
	a := &ast.AlterSource{Source: src, Kind: kind, Name: n}
	for {
		if err := c.expect("ADD", "; write ALTER "+kind.String()+" name ADD COLUMN col TYPE"); err != nil {
			return nil, err
		}
		c.accept("COLUMN")
		cn, nt, err := c.name("a column name")
		if err != nil {
			return nil, err
		}
		if t := c.peek(); !t.isName() {
			return nil, c.errAt(t, "expected a column type after '"+nt.text+"', e.g. VARCHAR, BIGINT")
		}
		typ, err := c.parseType("'" + nt.text + "'")
		if err != nil {
			return nil, err
		}
		a.Columns = append(a.Columns, ast.ColumnDef{Pos: c.pos(nt), Name: cn, Type: typ})
		if !c.acceptOp(",") {
			break
		}
	}
	return a, c.end("ALTER")
}

// insert parses INSERT INTO name [WITH (...)] SELECT ... and INSERT INTO
// name [(cols)] VALUES (exprs).
func (c *cursor) insert(src ast.Source) (ast.Statement, error) {
	c.next()
	if err := c.expect("INTO", "; write INSERT INTO name ..."); err != nil {
		return nil, err
	}
	n, nt, err := c.name("the name of the stream or table to insert into")
	if err != nil {
		return nil, err
	}
	var cols []string
	if c.acceptOp("(") {
		for {
			cn, _, err := c.name("a column name")
			if err != nil {
				return nil, err
			}
			cols = append(cols, cn)
			if c.acceptOp(",") {
				continue
			}
			if err := c.expectOp(")", "or ',' in the column list"); err != nil {
				return nil, err
			}
			break
		}
	}
	if c.peek().is("VALUES") {
		vt := c.next()
		if err := c.expectOp("(", "after VALUES, as in VALUES (1, 'a'),"); err != nil {
			return nil, err
		}
		close, err := matchClose(c.src, c.toks[:len(c.toks)-1], c.i-1)
		if err != nil {
			return nil, err
		}
		body := c.toks[c.i:close]
		c.i = close + 1
		if err := c.end("VALUES (...)"); err != nil {
			return nil, err
		}
		iv := &ast.InsertValues{Source: src, Target: n, TargetPos: c.pos(nt), Columns: cols}
		if len(body) == 0 {
			e := c.errAt(c.toks[close], "Failed to prepare statement: Expected some values for INSERT INTO statement.")
			e.Hint = "write the values in VALUES (...), one per column"
			return nil, e
		}
		if iv.Values, err = c.exprList(body, c.toks[close].off); err != nil {
			return nil, err
		}
		if len(cols) > 0 && len(cols) != len(iv.Values) {
			e := c.errAt(vt, "Failed to prepare statement: Expected number columns and values to match: "+itoa(len(cols))+", "+itoa(len(iv.Values)))
			e.Hint = "Give one value per column."
			return nil, e
		}
		return iv, nil
	}
	if cols != nil {
		return nil, c.errAt(c.peek(), "expected VALUES after the column list but found "+c.peek().describe())
	}
	var props ast.Properties
	if c.accept("WITH") {
		if props, err = c.properties(); err != nil {
			return nil, err
		}
	}
	if !c.peek().is("SELECT") {
		return nil, c.errAt(c.peek(), "expected SELECT or VALUES after INSERT INTO "+n+" but found "+c.peek().describe())
	}
	q, err := c.query()
	if err != nil {
		return nil, err
	}
	return &ast.InsertInto{Source: src, Target: n, TargetPos: c.pos(nt), Props: props, Query: q}, nil
}
