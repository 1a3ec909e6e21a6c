package api

import "github.com/sluice-sql/sluice/internal/types"

// Entity is what a listing or description statement answers. Its
// concrete types are this file's.
type Entity interface{ entity() }

// SourceKind says whether a source is a stream or a table.
type SourceKind string

// The source kinds, as ksqlDB names them.
const (
	SourceStream SourceKind = "STREAM"
	SourceTable  SourceKind = "TABLE"
)

// SourceColumn is a column of a stream or table.
type SourceColumn struct {
	types.Column
	Role ColumnRole
	// Header is the header key a HEADER('key') column reads; empty for a
	// HEADERS column and the other roles.
	Header string
}

// SourceInfo describes a stream or table.
type SourceInfo struct {
	Name                   string
	Kind                   SourceKind
	Topic                  string
	Partitions             int32
	KeyFormat, ValueFormat string
	// Window is a windowed key's window ("TUMBLING (SIZE 1 MINUTES)"),
	// WindowType its kind (TUMBLING, HOPPING, SESSION); empty when the
	// key is not windowed.
	Window, WindowType string
	// Timestamp names the column holding record time; empty for ROWTIME.
	Timestamp string
	Columns   []SourceColumn
	SQL       string
	// Writers and Readers are the ids of the persistent queries writing
	// into and reading from the source.
	Writers, Readers []string
	// ReadOnly is set for a source created with CREATE SOURCE.
	ReadOnly bool
}

// Windowed reports whether the source's key is windowed.
func (s *SourceInfo) Windowed() bool { return s.WindowType != "" }

// QueryType says whether a query is persistent or a push query.
type QueryType string

// The query types, as ksqlDB names them.
const (
	Persistent QueryType = "PERSISTENT"
	Push       QueryType = "PUSH"
)

// QueryInfo describes a persistent or push query.
type QueryInfo struct {
	ID   string
	Type QueryType
	// Status is RUNNING, PAUSED, NOT_RUNNING, "RESTORING 40 %" or
	// "ERROR: <why>"; State is its first word (ksqlDB's query state).
	Status, State   string
	Sink, SinkTopic string
	SQL             string
	Sources         []string
	// Columns are the output columns, the first KeyColumns of them the
	// key.
	Columns    []types.Column
	KeyColumns int
	// Guarantee is the processing guarantee the query runs with.
	Guarantee string
	// Running is set when the query runs on this server: Stats are its
	// figures.
	Running bool
	Stats   Stats
	// Partitions says which servers run the query's partitions, in a
	// cluster; empty on a server alone.
	Partitions string
}

// SourceList answers SHOW STREAMS and SHOW TABLES.
type SourceList struct {
	Kind     SourceKind
	Extended bool
	Sources  []SourceInfo
}

// SourceDescription answers DESCRIBE.
type SourceDescription struct {
	Source   SourceInfo
	Extended bool
	// Writers and Readers describe the queries of Source.Writers and
	// Source.Readers.
	Writers, Readers []QueryInfo
	// Cluster says which servers run which partitions, in a cluster.
	Cluster string
}

// QueryList answers SHOW QUERIES.
type QueryList struct {
	Extended bool
	// Cluster is set when the server runs in a cluster (QueryInfo.Partitions
	// is then set).
	Cluster bool
	Queries []QueryInfo
}

// Topic is a Kafka topic.
type Topic struct {
	Name              string
	Partitions        int32
	ReplicationFactor int
}

// TopicList answers SHOW TOPICS.
type TopicList struct {
	// All is set when internal topics (those whose names start with '_')
	// are listed too.
	All    bool
	Topics []Topic
}

// Property is a property's value and where it comes from.
type Property struct {
	Name string
	// Scope is SESSION (set with SET), SERVER or DEFAULT.
	Scope string
	Value string
}

// PropertyList answers SHOW PROPERTIES.
type PropertyList struct{ Properties []Property }

// Variable is a session variable.
type Variable struct{ Name, Value string }

// VariableList answers SHOW VARIABLES.
type VariableList struct{ Variables []Variable }

// NamedType is a custom type.
type NamedType struct {
	Name string
	Type *types.Type
}

// TypeList answers SHOW TYPES.
type TypeList struct{ Types []NamedType }

// FunctionInfo describes a function.
type FunctionInfo struct {
	Name string
	// Type is SCALAR, AGGREGATE or TABLE.
	Type string
	// Category is ksqlDB's category of the function: MATHEMATICAL,
	// STRING, REGULAR EXPRESSION, JSON, DATE / TIME, ARRAY, MAP, URL,
	// LAMBDA, CONDITIONAL, CONVERSIONS, OTHER, AGGREGATE or TABLE.
	Category    string
	Description string
	// Variations are the argument lists it accepts, e.g. ABS(INTEGER|BIGINT);
	// set by DESCRIBE FUNCTION.
	Variations []string
}

// FunctionList answers SHOW FUNCTIONS.
type FunctionList struct{ Functions []FunctionInfo }

// FunctionDescription answers DESCRIBE FUNCTION.
type FunctionDescription struct{ Function FunctionInfo }

// PlanLine is one operator of an execution plan, drawn at Depth below
// the output: Operator is its kind in brackets' words (SINK, FILTER,
// PROJECT ...), Details its "name: value" parts.
type PlanLine struct {
	Depth    int
	Operator string
	Details  []string
}

// PullReads says what a pull query reads: the Source's topic from its
// start to its end (Query empty), or the state Query last committed,
// narrowed by Lookup.
type PullReads struct {
	Source string
	Query  string
	Lookup string
}

// QueryDescription answers EXPLAIN: of a persistent query (Query set),
// or of a statement planned without running (Statement set).
type QueryDescription struct {
	// Query describes the persistent query EXPLAIN names.
	Query *QueryInfo
	// Statement is the statement EXPLAIN planned; Pull is set when it is a
	// pull query, and Reads says what it would read.
	Statement string
	Pull      bool
	Reads     PullReads
	// Plan is the execution plan, the output first.
	Plan []PlanLine
	// Topology is the processing topology: the stages the query runs as,
	// their operators and state stores, and the topics it owns. Nil for a
	// pull query, which runs as no stages.
	Topology *Topology
}

// Topology is a query's physical plan as EXPLAIN shows it (Kafka
// Streams' TopologyDescription: a stage is a sub-topology). Unknown says
// the plan has none (one stored before plans had it).
type Topology struct {
	Unknown bool
	Stages  []TopologyStage
	Topics  []TopologyTopic
}

// TopologyStage is one stage of a query: it reads Source (a
// SourceRole such as "stream CLICKS", or "repartition"), runs Nodes and
// writes Sink (SinkRole "sink" or "repartition"), or, without a Sink,
// hands its rows to Output. A stage of a join's right input (Right) feeds
// the join of stage JoinStage; Inside says it runs in that stage's tasks,
// which list it in Joins.
type TopologyStage struct {
	ID               int
	Right            bool
	JoinStage        int
	Inside           bool
	Source           string
	SourceRole       string
	SourcePartitions int32
	Nodes            []TopologyNode
	Sink             string
	SinkRole         string
	SinkPartitions   int32
	Output           string
	// TableRows says the rows leaving the stage are a table's changes.
	TableRows bool
	Joins     []int
}

// TopologyNode is one operator of a stage: its kind as the execution plan
// names it, its settings ("Key: A", "Window: ..."), and the state stores
// it keeps.
type TopologyNode struct {
	Operator string
	Details  []string
	Stores   []TopologyStore
}

// TopologyStore is a state store: its role (aggregate, materialize,
// join-left ...), the layout of its keys and values, whether it is kept
// per window, and its changelog topic (empty for a push query's).
type TopologyStore struct {
	Name      string
	Role      string
	Key       []string
	Value     []string
	Windowed  bool
	Changelog string
}

// TopologyTopic is a topic a query owns: its role (sink, changelog,
// repartition), partition count and the configuration it is created with.
type TopologyTopic struct {
	Name       string
	Role       string
	Partitions int32
	Config     map[string]string
}

// The connector types, as Kafka Connect names them.
const (
	ConnectorSource  = "source"
	ConnectorSink    = "sink"
	ConnectorUnknown = "unknown"
)

// ConnectorState is the state of a connector or of one of its tasks, as
// the Kafka Connect worker reports it: RUNNING, PAUSED, STOPPED, FAILED,
// UNASSIGNED or RESTARTING; Trace is a FAILED one's stack trace.
type ConnectorState struct {
	State    string
	WorkerID string
	Trace    string
}

// ConnectorTask is a connector's task.
type ConnectorTask struct {
	ID int
	ConnectorState
}

// ConnectorInfo answers CREATE CONNECTOR: the connector the worker
// created (ksqlDB's CreateConnectorEntity). Config shows secrets as
// [hidden].
type ConnectorInfo struct {
	Name string
	// Type is ConnectorSource, ConnectorSink or ConnectorUnknown.
	Type   string
	Config map[string]string
	// Tasks are the ids of its tasks, when the worker made them already.
	Tasks []int
}

// ConnectorSummary is a connector of SHOW CONNECTORS: State is ksqlDB's
// summary, "RUNNING (1/1 tasks RUNNING)", or the connector's state when it
// does not run.
type ConnectorSummary struct {
	Name, Type, Class, State string
}

// ConnectorList answers SHOW CONNECTORS.
type ConnectorList struct {
	Connectors []ConnectorSummary
	// Warnings say which connectors could not be described.
	Warnings []string
}

// ConnectorDescription answers DESCRIBE CONNECTOR, from what the worker
// says now: the connector's class, type, state and tasks, its topics and
// the Sluice sources over them, and its configuration (secrets as
// [hidden]).
type ConnectorDescription struct {
	Name, Class, Type string
	Connector         ConnectorState
	Tasks             []ConnectorTask
	Topics            []string
	Sources           []SourceInfo
	Config            map[string]string
	// Warnings say what could not be found out (the topics, when the
	// worker did not list them).
	Warnings []string
}

// ConnectorDropped answers DROP CONNECTOR (ksqlDB's DropConnectorEntity).
type ConnectorDropped struct{ Name string }

// Warning answers a statement that did nothing and says why (ksqlDB's
// WarningEntity): CREATE CONNECTOR IF NOT EXISTS of one that exists, DROP
// CONNECTOR IF EXISTS of one that does not.
type Warning struct{ Message string }

func (*ConnectorInfo) entity()        {}
func (*ConnectorList) entity()        {}
func (*ConnectorDescription) entity() {}
func (*ConnectorDropped) entity()     {}
func (*Warning) entity()              {}
func (*SourceList) entity()           {}
func (*SourceDescription) entity()    {}
func (*QueryList) entity()            {}
func (*TopicList) entity()            {}
func (*PropertyList) entity()         {}
func (*VariableList) entity()         {}
func (*TypeList) entity()             {}
func (*FunctionList) entity()         {}
func (*FunctionDescription) entity()  {}
func (*QueryDescription) entity()     {}
