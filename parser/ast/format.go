package ast

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/internal/types"
)

// Format prints a statement as canonical SQL that the parser reads back to
// the same tree (positions and statement text aside). Identifiers are
// back-quoted when they would not read back as written; binary and predicate
// expressions are fully parenthesized. The result has no trailing ';'.
func Format(stmt Statement) string {
	var p printer
	p.stmt(stmt)
	return p.String()
}

// FormatExpr prints an expression as canonical SQL (see Format).
func FormatExpr(e Expr) string {
	var p printer
	p.expr(e)
	return p.String()
}

// FormatExprQualified is FormatExpr with every column reference qualified
// by qualifier instead of its own qualifier (none when qualifier is
// empty). It leaves e unchanged.
func FormatExprQualified(e Expr, qualifier string) string {
	p := printer{qualifier: &qualifier}
	p.expr(e)
	return p.String()
}

// FormatType prints a type as SQL that the parser reads back: like
// types.Type.String, but a custom type prints as its name and STRUCT field
// names are quoted only when they need it.
func FormatType(t *types.Type) string {
	var p printer
	p.typ(t)
	return p.String()
}

// QuoteIdent returns name as an identifier: bare when it reads back as name
// unquoted (upper-case ASCII letters, digits, '_', and not a keyword),
// otherwise back-quoted with any back-quote doubled.
func QuoteIdent(name string) string {
	if isBareIdent(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// QuoteString returns s as a SQL string literal, doubling any quote.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func isBareIdent(name string) bool {
	if name == "" || reservedWords[name] || ksqlReserved[name] {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '@' || c == '$'):
		default:
			return false
		}
	}
	return true
}

// reservedWords are the words Format back-quotes when they name something:
// words with a meaning somewhere in the dialect's grammar.
var reservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		SELECT FROM WHERE GROUP BY HAVING AS JOIN LEFT RIGHT FULL OUTER INNER ON
		AND OR NOT NULL TRUE FALSE IS IN BETWEEN LIKE ESCAPE CASE WHEN THEN ELSE
		END DISTINCT WINDOW TUMBLING HOPPING SESSION SIZE ADVANCE RETENTION GRACE
		PERIOD PARTITION EMIT CHANGES FINAL LIMIT WITHIN ORDER CAST MAP STRUCT
		ARRAY TIMESTAMP DATE TIME BOOLEAN BOOL INT INTEGER BIGINT DOUBLE STRING
		VARCHAR BYTES DECIMAL KEY PRIMARY HEADERS HEADER WITH VALUES INTO INSERT
		CREATE REPLACE SOURCE STREAM TABLE TYPE IF EXISTS DROP DELETE TOPIC SHOW
		LIST DESCRIBE EXTENDED FUNCTION EXPLAIN TERMINATE PAUSE RESUME ALL ALTER
		ADD COLUMN SET UNSET DEFINE UNDEFINE PRINT BEGINNING INTERVAL SAMPLE RUN
		SCRIPT STREAMS TABLES QUERIES TOPICS FUNCTIONS PROPERTIES VARIABLES TYPES
		ASC DESC UNION EXCEPT INTERSECT USING NATURAL CROSS STRAIGHT_JOIN DIV MOD
		XOR REGEXP RLIKE ILIKE DEFAULT EXISTS ROW INTERVAL SECOND SECONDS MINUTE
		MINUTES HOUR HOURS DAY DAYS MILLISECOND MILLISECONDS`) {
		m[w] = true
	}
	return m
}()

// ksqlReserved are the words of ksqlDB's grammar that cannot be names
// unquoted: its keywords less those it lists as non-reserved (SHOW, KEY,
// TIMESTAMP, SOURCE, ...).
var ksqlReserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`SELECT FROM AS ALL DISTINCT WHERE WITHIN WINDOW GROUP BY HAVING
		LIMIT AT OR AND IN NOT EXISTS BETWEEN LIKE IS NULL TRUE FALSE MILLISECOND YEARS
		MONTHS DAYS HOURS MINUTES SECONDS MILLISECONDS TUMBLING HOPPING SIZE ADVANCE
		RETENTION CASE WHEN THEN ELSE END JOIN FULL OUTER INNER LEFT RIGHT ON WITH
		VALUES CREATE TABLE TOPIC STREAM STREAMS INSERT DELETE INTO DESCRIBE EXTENDED
		PRINT CAST LIST TOPICS QUERY QUERIES TERMINATE LOAD DROP TO RENAME SAMPLE
		EXPORT CATALOG PROPERTIES BEGINNING UNSET RUN SCRIPT DECIMAL CONNECTOR
		CONNECTORS NAMESPACE MATERIALIZED VIEW`) {
		m[w] = true
	}
	return m
}()

// IsReserved reports whether the upper-case word w is one ksqlDB reserves:
// written unquoted, it cannot name a stream, table, column, field or type.
func IsReserved(w string) bool { return ksqlReserved[w] }

// printer accumulates SQL text.
type printer struct {
	strings.Builder
	// qualifier, when set, replaces every column reference's qualifier
	// (an empty one prints none).
	qualifier *string
}

func (p *printer) ident(name string) { p.WriteString(QuoteIdent(name)) }

func (p *printer) stmt(s Statement) {
	switch s := s.(type) {
	case *CreateSource:
		p.WriteString("CREATE ")
		if s.OrReplace {
			p.WriteString("OR REPLACE ")
		}
		if s.IsSource {
			p.WriteString("SOURCE ")
		}
		p.WriteString(s.Kind.String() + " ")
		if s.IfNotExists {
			p.WriteString("IF NOT EXISTS ")
		}
		p.ident(s.Name)
		if len(s.Columns) > 0 {
			p.WriteString(" (")
			p.columns(s.Columns, "")
			p.WriteString(")")
		}
		p.props(s.Props)
	case *CreateAsSelect:
		p.WriteString("CREATE ")
		if s.OrReplace {
			p.WriteString("OR REPLACE ")
		}
		p.WriteString(s.Kind.String() + " ")
		if s.IfNotExists {
			p.WriteString("IF NOT EXISTS ")
		}
		p.ident(s.Name)
		p.props(s.Props)
		p.WriteString(" AS ")
		p.query(s.Query)
	case *InsertInto:
		p.WriteString("INSERT INTO ")
		p.ident(s.Target)
		p.props(s.Props)
		p.WriteString(" ")
		p.query(s.Query)
	case *InsertValues:
		p.WriteString("INSERT INTO ")
		p.ident(s.Target)
		if len(s.Columns) > 0 {
			p.WriteString(" (")
			for i, c := range s.Columns {
				p.sep(i)
				p.ident(c)
			}
			p.WriteString(")")
		}
		p.WriteString(" VALUES (")
		p.exprs(s.Values)
		p.WriteString(")")
	case *Select:
		p.query(s.Query)
	case *Show:
		p.WriteString("SHOW " + showNames[s.What])
		if s.Extended {
			p.WriteString(" EXTENDED")
		}
	case *Describe:
		p.WriteString("DESCRIBE ")
		if s.Extended {
			p.WriteString("EXTENDED ")
		}
		p.ident(s.Name)
	case *DescribeFunction:
		p.WriteString("DESCRIBE FUNCTION ")
		p.ident(s.Name)
	case *Explain:
		p.WriteString("EXPLAIN ")
		if s.Statement != nil {
			p.stmt(s.Statement)
		} else {
			p.ident(s.QueryID)
		}
	case *Terminate:
		p.WriteString("TERMINATE ")
		p.queryID(s.QueryID, s.All)
	case *PauseResume:
		if s.Resume {
			p.WriteString("RESUME ")
		} else {
			p.WriteString("PAUSE ")
		}
		p.queryID(s.QueryID, s.All)
	case *Drop:
		p.WriteString("DROP " + s.Kind.String() + " ")
		if s.IfExists {
			p.WriteString("IF EXISTS ")
		}
		p.ident(s.Name)
		if s.DeleteTopic {
			p.WriteString(" DELETE TOPIC")
		}
	case *SetProperty:
		p.WriteString("SET " + QuoteString(s.Name) + " = " + QuoteString(s.Value))
	case *UnsetProperty:
		p.WriteString("UNSET " + QuoteString(s.Name))
	case *Define:
		p.WriteString("DEFINE " + s.Name + " = " + QuoteString(s.Value))
	case *Undefine:
		p.WriteString("UNDEFINE " + s.Name)
	case *CreateType:
		p.WriteString("CREATE TYPE ")
		if s.IfNotExists {
			p.WriteString("IF NOT EXISTS ")
		}
		p.ident(s.Name)
		p.WriteString(" AS ")
		p.typ(s.Type)
	case *DropType:
		p.WriteString("DROP TYPE ")
		if s.IfExists {
			p.WriteString("IF EXISTS ")
		}
		p.ident(s.Name)
	case *AlterSource:
		p.WriteString("ALTER " + s.Kind.String() + " ")
		p.ident(s.Name)
		p.WriteString(" ")
		p.columns(s.Columns, "ADD COLUMN ")
	case *AssertTopic:
		p.WriteString("ASSERT ")
		if s.NotExists {
			p.WriteString("NOT EXISTS ")
		}
		p.WriteString("TOPIC " + QuoteString(s.Topic))
		p.props(s.Props)
		p.timeout(s.Timeout)
	case *AssertSchema:
		p.WriteString("ASSERT ")
		if s.NotExists {
			p.WriteString("NOT EXISTS ")
		}
		p.WriteString("SCHEMA")
		if s.Subject != "" {
			p.WriteString(" SUBJECT " + QuoteString(s.Subject))
		}
		if s.ID != nil {
			p.WriteString(" ID " + strconv.Itoa(*s.ID))
		}
		p.timeout(s.Timeout)
	case *Print:
		p.WriteString("PRINT " + QuoteString(s.Topic))
		if s.FromBeginning {
			p.WriteString(" FROM BEGINNING")
		}
		if s.Interval != 0 {
			p.WriteString(" INTERVAL " + strconv.FormatInt(s.Interval, 10))
		}
		if s.Limit != nil {
			p.WriteString(" LIMIT " + strconv.FormatInt(*s.Limit, 10))
		}
	case *RunScript:
		p.WriteString("RUN SCRIPT " + QuoteString(s.Path))
	case *CreateConnector:
		p.WriteString("CREATE " + s.Kind.String() + " CONNECTOR ")
		if s.IfNotExists {
			p.WriteString("IF NOT EXISTS ")
		}
		p.ident(s.Name)
		p.WriteString(" WITH (")
		for i, pr := range s.Props {
			p.sep(i)
			p.WriteString(QuoteString(pr.Name) + "=" + QuoteString(pr.Value))
		}
		p.WriteString(")")
	case *DropConnector:
		p.WriteString("DROP CONNECTOR ")
		if s.IfExists {
			p.WriteString("IF EXISTS ")
		}
		p.ident(s.Name)
	case *DescribeConnector:
		p.WriteString("DESCRIBE CONNECTOR ")
		p.ident(s.Name)
	case *ShowConnectors:
		p.WriteString("SHOW ")
		switch s.Scope {
		case SourceConnectors:
			p.WriteString("SOURCE ")
		case SinkConnectors:
			p.WriteString("SINK ")
		}
		p.WriteString("CONNECTORS")
	}
}

var showNames = [...]string{
	ShowStreams: "STREAMS", ShowTables: "TABLES", ShowQueries: "QUERIES", ShowTopics: "TOPICS",
	ShowFunctions: "FUNCTIONS", ShowProperties: "PROPERTIES", ShowVariables: "VARIABLES", ShowTypes: "TYPES",
}

func (p *printer) sep(i int) {
	if i > 0 {
		p.WriteString(", ")
	}
}

func (p *printer) queryID(id string, all bool) {
	if all {
		p.WriteString("ALL")
		return
	}
	p.ident(id)
}

// columns prints column definitions, each preceded by prefix.
func (p *printer) columns(cols []ColumnDef, prefix string) {
	for i, c := range cols {
		p.sep(i)
		p.WriteString(prefix)
		p.ident(c.Name)
		p.WriteString(" ")
		p.typ(c.Type)
		switch c.Constraint {
		case KeyColumn:
			p.WriteString(" KEY")
		case PrimaryKeyColumn:
			p.WriteString(" PRIMARY KEY")
		case HeadersColumn:
			p.WriteString(" HEADERS")
		case HeaderColumn:
			p.WriteString(" HEADER(" + QuoteString(c.HeaderKey) + ")")
		}
	}
}

// timeout prints " TIMEOUT n MILLISECONDS" when d is set.
func (p *printer) timeout(d *time.Duration) {
	if d != nil {
		p.WriteString(" TIMEOUT " + strconv.FormatInt(d.Milliseconds(), 10) + " MILLISECONDS")
	}
}

// props prints " WITH (...)" when ps is not empty.
func (p *printer) props(ps Properties) {
	if len(ps) == 0 {
		return
	}
	p.WriteString(" WITH (")
	for i, pr := range ps {
		p.sep(i)
		p.ident(pr.Name)
		p.WriteString("=")
		p.literal(pr.Value)
	}
	p.WriteString(")")
}

func (p *printer) typ(t *types.Type) {
	switch t.Kind {
	case types.Unknown:
		p.ident(t.Name)
	case types.Decimal:
		p.WriteString("DECIMAL(" + strconv.Itoa(t.Precision) + ", " + strconv.Itoa(t.Scale) + ")")
	case types.Array:
		p.WriteString("ARRAY<")
		p.typ(t.Elem)
		p.WriteString(">")
	case types.Map:
		p.WriteString("MAP<")
		p.typ(t.Key)
		p.WriteString(", ")
		p.typ(t.Elem)
		p.WriteString(">")
	case types.Struct:
		p.WriteString("STRUCT<")
		if len(t.Fields) == 0 {
			p.WriteString(" ") // "<>" would read as one operator
		}
		for i, f := range t.Fields {
			p.sep(i)
			p.ident(f.Name)
			p.WriteString(" ")
			p.typ(f.Type)
		}
		p.WriteString(">")
	default:
		p.WriteString(t.Kind.String())
	}
}

func (p *printer) query(q *Query) {
	p.WriteString("SELECT ")
	for i, it := range q.Items {
		p.sep(i)
		switch {
		case it.Star && it.StarSource != "":
			p.ident(it.StarSource)
			p.WriteString(".*")
		case it.Star:
			p.WriteString("*")
		case it.StructStar:
			p.operand(it.Expr)
			p.WriteString("->*")
		default:
			p.expr(it.Expr)
			if it.Alias != "" {
				p.WriteString(" AS ")
				p.ident(it.Alias)
			}
		}
	}
	p.WriteString(" FROM ")
	p.relation(q.From)
	if w := q.Window; w != nil {
		p.WriteString(" WINDOW ")
		switch w.Type {
		case Tumbling:
			p.WriteString("TUMBLING (SIZE " + duration(w.Size))
		case Hopping:
			p.WriteString("HOPPING (SIZE " + duration(w.Size) + ", ADVANCE BY " + duration(w.Advance))
		case Session:
			p.WriteString("SESSION (" + duration(w.Size))
		}
		if w.Retention != nil {
			p.WriteString(", RETENTION " + duration(*w.Retention))
		}
		if w.Grace != nil {
			p.WriteString(", GRACE PERIOD " + duration(*w.Grace))
		}
		p.WriteString(")")
	}
	if q.Where != nil {
		p.WriteString(" WHERE ")
		p.expr(q.Where)
	}
	if len(q.GroupBy) > 0 {
		p.WriteString(" GROUP BY ")
		p.exprs(q.GroupBy)
	}
	if q.Having != nil {
		p.WriteString(" HAVING ")
		p.expr(q.Having)
	}
	if len(q.PartitionBy) > 0 {
		p.WriteString(" PARTITION BY ")
		p.exprs(q.PartitionBy)
	}
	switch q.Emit {
	case EmitChanges:
		p.WriteString(" EMIT CHANGES")
	case EmitFinal:
		p.WriteString(" EMIT FINAL")
	}
	if q.Limit != nil {
		p.WriteString(" LIMIT " + strconv.FormatInt(*q.Limit, 10))
	}
}

func (p *printer) relation(r Relation) {
	switch r := r.(type) {
	case *TableRef:
		p.ident(r.Name)
		if r.Alias != "" {
			p.WriteString(" AS ")
			p.ident(r.Alias)
		}
	case *Join:
		p.relation(r.Left)
		switch r.Type {
		case LeftJoin:
			p.WriteString(" LEFT JOIN ")
		case RightJoin:
			p.WriteString(" RIGHT JOIN ")
		case FullJoin:
			p.WriteString(" FULL OUTER JOIN ")
		default:
			p.WriteString(" JOIN ")
		}
		p.relation(r.Right)
		if w := r.Within; w != nil {
			p.WriteString(" WITHIN ")
			if w.Before == w.After {
				p.WriteString(duration(w.Before))
			} else {
				p.WriteString("(" + duration(w.Before) + ", " + duration(w.After) + ")")
			}
			if w.Grace != nil {
				p.WriteString(" GRACE PERIOD " + duration(*w.Grace))
			}
		}
		p.WriteString(" ON ")
		p.expr(r.On)
	}
}

// duration prints d as a whole number of the largest unit that divides it.
func duration(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "DAYS"}, {time.Hour, "HOURS"}, {time.Minute, "MINUTES"}, {time.Second, "SECONDS"}}
	for _, u := range units {
		if d != 0 && d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + " " + u.name
		}
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + " MILLISECONDS"
}

func (p *printer) exprs(es []Expr) {
	for i, e := range es {
		p.sep(i)
		p.expr(e)
	}
}

func (p *printer) literal(l *Literal) {
	switch l.Kind {
	case NullLit:
		p.WriteString("NULL")
	case StringLit:
		p.WriteString(QuoteString(l.Text))
	case BytesLit:
		p.WriteString("X'" + strings.ToUpper(hex.EncodeToString([]byte(l.Text))) + "'")
	default:
		p.WriteString(l.Text)
	}
}

// operand prints e so that a postfix ->field or [index] can follow it.
func (p *printer) operand(e Expr) {
	switch e.(type) {
	case *ColumnRef, *FuncCall, *Dereference, *Subscript, *Cast, *ArrayCtor, *MapCtor, *StructCtor:
		p.expr(e)
	default:
		p.WriteString("(")
		p.expr(e)
		p.WriteString(")")
	}
}

func (p *printer) expr(e Expr) {
	switch e := e.(type) {
	case *ColumnRef:
		q := e.Qualifier
		if p.qualifier != nil {
			q = *p.qualifier
		}
		if q != "" {
			p.ident(q)
			p.WriteString(".")
		}
		p.ident(e.Name)
	case *Literal:
		p.literal(e)
	case *TypedLiteral:
		p.WriteString(e.Type.Kind.String() + " " + QuoteString(e.Text))
	case *Binary:
		p.WriteString("(")
		p.expr(e.L)
		p.WriteString(" " + e.Op.String() + " ")
		p.expr(e.R)
		p.WriteString(")")
	case *Nary:
		// As the left-nested binary tree it stands for: ((A + B) + C).
		op := " " + e.Op.String() + " "
		p.WriteString(strings.Repeat("(", len(e.Args)-1))
		for i, x := range e.Args {
			if i > 0 {
				p.WriteString(op)
			}
			p.expr(x)
			if i > 0 {
				p.WriteString(")")
			}
		}
	case *Unary:
		switch e.Op {
		case OpNeg:
			p.WriteString("(- ")
		case OpPlus:
			p.WriteString("(+ ")
		default:
			p.WriteString("(NOT ")
		}
		p.expr(e.X)
		p.WriteString(")")
	case *IsNull:
		p.WriteString("(")
		p.expr(e.X)
		if e.Not {
			p.WriteString(" IS NOT NULL)")
		} else {
			p.WriteString(" IS NULL)")
		}
	case *IsDistinct:
		p.WriteString("(")
		p.expr(e.L)
		if e.Not {
			p.WriteString(" IS NOT DISTINCT FROM ")
		} else {
			p.WriteString(" IS DISTINCT FROM ")
		}
		p.expr(e.R)
		p.WriteString(")")
	case *In:
		p.WriteString("(")
		p.expr(e.X)
		if e.Not {
			p.WriteString(" NOT")
		}
		p.WriteString(" IN (")
		p.exprs(e.List)
		p.WriteString("))")
	case *Between:
		p.WriteString("(")
		p.expr(e.X)
		if e.Not {
			p.WriteString(" NOT")
		}
		p.WriteString(" BETWEEN ")
		p.expr(e.Lo)
		p.WriteString(" AND ")
		p.expr(e.Hi)
		p.WriteString(")")
	case *Like:
		p.WriteString("(")
		p.expr(e.X)
		if e.Not {
			p.WriteString(" NOT")
		}
		p.WriteString(" LIKE ")
		p.expr(e.Pattern)
		if e.Escape != nil {
			p.WriteString(" ESCAPE ")
			p.expr(e.Escape)
		}
		p.WriteString(")")
	case *Case:
		p.WriteString("CASE")
		if e.Operand != nil {
			p.WriteString(" ")
			p.expr(e.Operand)
		}
		for _, w := range e.Whens {
			p.WriteString(" WHEN ")
			p.expr(w.Cond)
			p.WriteString(" THEN ")
			p.expr(w.Result)
		}
		if e.Else != nil {
			p.WriteString(" ELSE ")
			p.expr(e.Else)
		}
		p.WriteString(" END")
	case *Cast:
		p.WriteString("CAST(")
		p.expr(e.X)
		p.WriteString(" AS ")
		p.typ(e.Type)
		p.WriteString(")")
	case *FuncCall:
		p.ident(e.Name)
		p.WriteString("(")
		switch {
		case e.Star:
			p.WriteString("*")
		case e.Distinct:
			p.WriteString("DISTINCT ")
			p.exprs(e.Args)
		default:
			p.exprs(e.Args)
		}
		p.WriteString(")")
	case *Dereference:
		p.operand(e.X)
		p.WriteString("->")
		p.ident(e.Field)
	case *Subscript:
		p.operand(e.X)
		p.WriteString("[")
		p.expr(e.Index)
		p.WriteString("]")
	case *ArrayCtor:
		p.WriteString("ARRAY[")
		p.exprs(e.Elems)
		p.WriteString("]")
	case *MapCtor:
		p.WriteString("MAP(")
		for i := range e.Keys {
			p.sep(i)
			p.expr(e.Keys[i])
			p.WriteString(" := ")
			p.expr(e.Values[i])
		}
		p.WriteString(")")
	case *StructCtor:
		p.WriteString("STRUCT(")
		for i := range e.Names {
			p.sep(i)
			p.ident(e.Names[i])
			p.WriteString(" := ")
			p.expr(e.Values[i])
		}
		p.WriteString(")")
	case *Lambda:
		if len(e.Params) == 1 {
			p.ident(e.Params[0])
		} else {
			p.WriteString("(")
			for i, x := range e.Params {
				p.sep(i)
				p.ident(x)
			}
			p.WriteString(")")
		}
		p.WriteString(" => ")
		p.expr(e.Body)
	case *VariableRef:
		p.WriteString("${" + e.Name + "}")
	}
}
