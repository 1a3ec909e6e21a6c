package ast

import (
	"time"

	"github.com/sluice-sql/sluice/internal/types"
)

// Pos is a position in the user's text: 1-based line and column, and the
// 0-based byte offset.
type Pos struct {
	Line, Col, Offset int
}

// Node is anything with a position.
type Node interface {
	Position() Pos
}

// Position returns p; it makes every struct embedding Pos a Node.
func (p Pos) Position() Pos { return p }

// Statement is one SQL statement.
type Statement interface {
	Node
	// SQL returns the statement's own text as the user wrote it, without the
	// trailing semicolon.
	SQL() string
	stmt()
}

// Source is embedded in every statement: its position and text.
type Source struct {
	Pos
	Text string
}

// SQL returns the statement text.
func (s Source) SQL() string { return s.Text }
func (Source) stmt()         {}

// SourceKind says whether a source is a STREAM or a TABLE.
type SourceKind uint8

// The source kinds.
const (
	Stream SourceKind = iota
	Table
)

func (k SourceKind) String() string {
	if k == Table {
		return "TABLE"
	}
	return "STREAM"
}

// ColumnConstraint marks a column as a key or header column.
type ColumnConstraint uint8

// The column constraints.
const (
	ValueColumn      ColumnConstraint = iota
	KeyColumn                         // KEY (streams)
	PrimaryKeyColumn                  // PRIMARY KEY (tables)
	HeadersColumn                     // HEADERS: all headers as ARRAY<STRUCT<KEY STRING, VALUE BYTES>>
	HeaderColumn                      // HEADER('k'): one header's bytes
)

// ColumnDef is one column of CREATE STREAM/TABLE.
type ColumnDef struct {
	Pos
	Name       string
	Type       *types.Type
	Constraint ColumnConstraint
	HeaderKey  string // for HeaderColumn
}

// Property is one entry of a WITH (...) list. Name is upper-cased. Value is a
// *Literal (string, number or boolean).
type Property struct {
	Pos
	Name  string
	Value *Literal
}

// Properties is a WITH (...) list in the order written.
type Properties []Property

// Get returns the property named name (upper-case) and whether it is set.
func (ps Properties) Get(name string) (*Property, bool) {
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i], true
		}
	}
	return nil, false
}

// CreateSource is CREATE [OR REPLACE] [SOURCE] STREAM|TABLE [IF NOT EXISTS]
// name (columns) WITH (...).
type CreateSource struct {
	Source
	Kind        SourceKind
	OrReplace   bool
	IsSource    bool // CREATE SOURCE STREAM/TABLE: read-only, materialized
	IfNotExists bool
	Name        string
	NamePos     Pos
	Columns     []ColumnDef
	Props       Properties
}

// CreateAsSelect is CREATE [OR REPLACE] STREAM|TABLE [IF NOT EXISTS] name
// [WITH (...)] AS SELECT ...
type CreateAsSelect struct {
	Source
	Kind        SourceKind
	OrReplace   bool
	IfNotExists bool
	Name        string
	NamePos     Pos
	Props       Properties
	Query       *Query
}

// InsertInto is INSERT INTO target [WITH (...)] SELECT ...
type InsertInto struct {
	Source
	Target    string
	TargetPos Pos
	Props     Properties
	Query     *Query
}

// InsertValues is INSERT INTO target [(columns)] VALUES (values).
type InsertValues struct {
	Source
	Target    string
	TargetPos Pos
	Columns   []string // empty: all columns in schema order
	Values    []Expr
}

// Select is a query statement: a push query (EMIT CHANGES) or a pull query.
type Select struct {
	Source
	Query *Query
}

// EmitKind is the EMIT clause of a query.
type EmitKind uint8

// The EMIT kinds.
const (
	EmitNone    EmitKind = iota // no EMIT clause: a pull query, or a persistent query's default
	EmitChanges                 // EMIT CHANGES
	EmitFinal                   // EMIT FINAL
)

// Query is a SELECT.
type Query struct {
	Pos
	Items       []SelectItem
	From        Relation
	Where       Expr
	Window      *Window
	GroupBy     []Expr
	PartitionBy []Expr
	Having      Expr
	Emit        EmitKind
	Limit       *int64
}

// SelectItem is one item of the select list: an expression with an optional
// alias, or `*` / `src.*`, or `col->*`.
type SelectItem struct {
	Pos
	Star       bool
	StarSource string // for src.*
	Expr       Expr
	Alias      string
	// StructStar marks `expr->*`: every field of the struct Expr, each as
	// its own column (Star is false).
	StructStar bool
}

// Relation is what a query reads: a source, or a join.
type Relation interface {
	Node
	relation()
}

// TableRef names a stream or table, with an optional alias.
type TableRef struct {
	Pos
	Name  string
	Alias string
}

func (*TableRef) relation() {}

// JoinType is the kind of a join.
type JoinType uint8

// The join types.
const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
)

// Join is left JOIN right [WITHIN ...] ON cond.
type Join struct {
	Pos
	Type   JoinType
	Left   Relation
	Right  *TableRef
	On     Expr
	Within *Within
}

func (*Join) relation() {}

// Within is a join window: WITHIN n or WITHIN (before, after), with GRACE
// PERIOD.
type Within struct {
	Pos
	Before, After time.Duration
	Grace         *time.Duration
}

// WindowType is the kind of a window.
type WindowType uint8

// The window types.
const (
	Tumbling WindowType = iota
	Hopping
	Session
)

// Window is WINDOW TUMBLING|HOPPING|SESSION (...).
type Window struct {
	Pos
	Type      WindowType
	Size      time.Duration // TUMBLING/HOPPING SIZE, SESSION gap
	Advance   time.Duration // HOPPING ADVANCE BY
	Retention *time.Duration
	Grace     *time.Duration
}

// ShowKind is what SHOW / LIST lists.
type ShowKind uint8

// The SHOW kinds.
const (
	ShowStreams ShowKind = iota
	ShowTables
	ShowQueries
	ShowTopics
	ShowFunctions
	ShowProperties
	ShowVariables
	ShowTypes
)

// Show is SHOW|LIST STREAMS|TABLES|QUERIES|... [EXTENDED].
type Show struct {
	Source
	What     ShowKind
	Extended bool
}

// Describe is DESCRIBE [EXTENDED] name.
type Describe struct {
	Source
	Name     string
	NamePos  Pos
	Extended bool
}

// DescribeFunction is DESCRIBE FUNCTION name.
type DescribeFunction struct {
	Source
	Name string
}

// Explain is EXPLAIN queryId or EXPLAIN statement. Exactly one of QueryID and
// Statement is set.
type Explain struct {
	Source
	QueryID   string
	Statement Statement
}

// Terminate is TERMINATE queryId or TERMINATE ALL.
type Terminate struct {
	Source
	QueryID string
	All     bool
}

// Replay is REPLAY PROCESSING LOG FOR queryId [WHERE expr]: it re-feeds
// the query's records logged in the processing log (those Where, over
// the log's columns, keeps) through the query's current pipeline.
type Replay struct {
	Source
	QueryID    string
	QueryIDPos Pos
	Where      Expr
}

// PauseResume is PAUSE|RESUME queryId|ALL.
type PauseResume struct {
	Source
	Resume  bool
	QueryID string
	All     bool
}

// Drop is DROP STREAM|TABLE [IF EXISTS] name [DELETE TOPIC].
type Drop struct {
	Source
	Kind        SourceKind
	Name        string
	NamePos     Pos
	IfExists    bool
	DeleteTopic bool
}

// SetProperty is SET 'name' = 'value'.
type SetProperty struct {
	Source
	Name  string
	Value string
}

// UnsetProperty is UNSET 'name'.
type UnsetProperty struct {
	Source
	Name string
}

// Define is DEFINE name = 'value'.
type Define struct {
	Source
	Name  string
	Value string
}

// Undefine is UNDEFINE name.
type Undefine struct {
	Source
	Name string
}

// CreateType is CREATE TYPE [IF NOT EXISTS] name AS type.
type CreateType struct {
	Source
	Name        string
	IfNotExists bool
	Type        *types.Type
}

// DropType is DROP TYPE [IF EXISTS] name.
type DropType struct {
	Source
	Name     string
	IfExists bool
}

// AlterSource is ALTER STREAM|TABLE name ADD [COLUMN] c type, ...
type AlterSource struct {
	Source
	Kind    SourceKind
	Name    string
	Columns []ColumnDef
}

// Print is PRINT topic [FROM BEGINNING] [INTERVAL n] [LIMIT n].
type Print struct {
	Source
	Topic         string
	FromBeginning bool
	Interval      int64
	Limit         *int64
}

// AssertTopic is ASSERT [NOT EXISTS] TOPIC name [WITH (...)] [TIMEOUT n
// UNIT]: it waits up to the timeout for the topic to exist (or not),
// with the PARTITIONS and REPLICAS the WITH clause names.
type AssertTopic struct {
	Source
	Topic     string
	NotExists bool
	Props     Properties
	// Timeout is how long to wait; nil means the server's default
	// (ksql.assert.topic.default.timeout.ms).
	Timeout *time.Duration
}

// AssertSchema is ASSERT [NOT EXISTS] SCHEMA [SUBJECT name] [ID n]
// [TIMEOUT n UNIT]: it waits up to the timeout for the schema registry to
// hold (or not) the subject's latest schema, the schema with the id, or
// the schema with the id under the subject.
type AssertSchema struct {
	Source
	Subject   string // empty when not given
	ID        *int
	NotExists bool
	Timeout   *time.Duration
}

// RunScript is RUN SCRIPT 'path'.
type RunScript struct {
	Source
	Path string
}

// ConnectorKind says whether a connector is a SOURCE (into Kafka) or a
// SINK (out of it).
type ConnectorKind uint8

// The connector kinds.
const (
	SourceConnector ConnectorKind = iota
	SinkConnector
)

func (k ConnectorKind) String() string {
	if k == SinkConnector {
		return "SINK"
	}
	return "SOURCE"
}

// ConnectorProperty is one entry of a connector's WITH (...) list, as
// Kafka Connect takes it: Name keeps its case when quoted ('connector.class'
// or "connector.class"), and Value is the literal's text (a boolean in
// lower case).
type ConnectorProperty struct {
	Pos
	Name  string
	Value string
}

// CreateConnector is CREATE SOURCE|SINK CONNECTOR [IF NOT EXISTS] name
// WITH (...). Its statement text (SQL) shows secret-looking property values
// as [hidden]; Props hold them.
type CreateConnector struct {
	Source
	Kind        ConnectorKind
	IfNotExists bool
	Name        string
	NamePos     Pos
	Props       []ConnectorProperty
}

// DropConnector is DROP CONNECTOR [IF EXISTS] name.
type DropConnector struct {
	Source
	Name     string
	NamePos  Pos
	IfExists bool
}

// DescribeConnector is DESCRIBE CONNECTOR name.
type DescribeConnector struct {
	Source
	Name    string
	NamePos Pos
}

// ConnectorScope is which connectors SHOW CONNECTORS lists.
type ConnectorScope uint8

// The connector scopes.
const (
	AllConnectors ConnectorScope = iota
	SourceConnectors
	SinkConnectors
)

// ShowConnectors is SHOW|LIST [SOURCE|SINK] CONNECTORS.
type ShowConnectors struct {
	Source
	Scope ConnectorScope
}
