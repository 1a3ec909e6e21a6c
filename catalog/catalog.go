package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
)

// Kind says whether a source is a stream or a table.
type Kind = topology.SourceKind

// The source kinds.
const (
	Stream = topology.Stream
	Table  = topology.Table
)

// Source is a stream or table: the same type a plan's source node is
// (topology.Source), as the catalog keeps it, with the statement that
// created it.
type Source = topology.Source

// QueryState is a persistent query's desired state.
type QueryState string

// The query states.
const (
	Running QueryState = "RUNNING"
	Paused  QueryState = "PAUSED"
)

// Query is a persistent query.
type Query struct {
	ID    string          `json:"id"`
	SQL   string          `json:"sql"`
	Sink  string          `json:"sink"`
	State QueryState      `json:"state"`
	Plan  *topology.Graph `json:"plan"`
	// Guarantee is the processing guarantee the query was created with
	// (at_least_once or exactly_once_v2); empty for the server's.
	Guarantee string `json:"guarantee,omitempty"`
	// MaxRecordBytes is the sluice.max.record.bytes the query was created
	// with; 0 for the server's.
	MaxRecordBytes int `json:"maxRecordBytes,omitempty"`
	// Compression is the compression.type the query was created with
	// (for what it produces); empty for the default (snappy).
	Compression string `json:"compression,omitempty"`
}

// Sources lists the names of the sources the query reads: its input and
// the right side of each of its joins, in plan order, each once.
func (q *Query) Sources() []string {
	var out []string
	seen := map[string]bool{}
	var walk func(g *topology.Graph)
	walk = func(g *topology.Graph) {
		if g == nil {
			return
		}
		if g.Source != nil && !seen[g.Source.Name] {
			seen[g.Source.Name] = true
			out = append(out, g.Source.Name)
		}
		for i := range g.Steps {
			if j := g.Steps[i].Join; j != nil {
				walk(j.Right)
			}
		}
	}
	walk(q.Plan)
	return out
}

// CommandKind names a catalog change.
type CommandKind string

// The command kinds.
const (
	CreateSource   CommandKind = "create_source"
	DropSource     CommandKind = "drop_source"
	CreateQuery    CommandKind = "create_query"
	TerminateQuery CommandKind = "terminate_query"
	CreateType     CommandKind = "create_type"
	DropType       CommandKind = "drop_type"
	// SetQueryState pauses (State PAUSED) or resumes (RUNNING) the query
	// QueryID.
	SetQueryState CommandKind = "set_query_state"
	// ReplaceQuery upgrades the persistent query Query.ID in place (CREATE
	// OR REPLACE ... AS SELECT): its SQL and plan change, its state (RUNNING
	// or PAUSED) stays, and Source replaces its sink's declaration.
	ReplaceQuery CommandKind = "replace_query"
)

// PlanVersion is the version of the command log records this server
// writes and the newest it reads: a record of a newer version was written
// by a newer Sluice, whose plans this one may run wrongly.
const PlanVersion = 1

// Command is one entry of the command log. Exactly the fields its Kind
// needs are set.
type Command struct {
	Kind CommandKind `json:"kind"`
	// Version is the PlanVersion of the server that wrote the command; a
	// record without one is of version 1.
	Version int `json:"version,omitempty"`
	// Source is set for CreateSource, and for CreateQuery when the query
	// declares its sink (CREATE ... AS SELECT); it may replace an existing
	// source of the same name when Replace is set.
	Source  *Source `json:"source,omitempty"`
	Replace bool    `json:"replace,omitempty"`
	// Name is the source dropped by DropSource.
	Name string `json:"name,omitempty"`
	// Query is set for CreateQuery; QueryID names the query of
	// TerminateQuery.
	Query   *Query `json:"query,omitempty"`
	QueryID string `json:"queryId,omitempty"`
	// TypeName and Type are set for CreateType; TypeName for DropType.
	TypeName string      `json:"typeName,omitempty"`
	Type     *types.Type `json:"type,omitempty"`
	// State is set for SetQueryState.
	State QueryState `json:"state,omitempty"`
}

// Encode returns the command's log record value, stamped with
// PlanVersion.
func (c *Command) Encode() ([]byte, error) {
	v := *c
	v.Version = PlanVersion
	return json.Marshal(&v)
}

// NewerVersionError is the error of DecodeCommand for a record a newer
// Sluice wrote.
type NewerVersionError struct{ Version int }

func (e *NewerVersionError) Error() string {
	return fmt.Sprintf("catalog: command log record of plan version %d, newer than this server's %d", e.Version, PlanVersion)
}

// DecodeCommand reads a command log record value and checks that it has
// the fields its kind needs. A record of a newer plan version is a
// *NewerVersionError.
func DecodeCommand(b []byte) (*Command, error) {
	if b == nil {
		return nil, fmt.Errorf("catalog: undecodable command log record: a null value")
	}
	var c Command
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("catalog: undecodable command log record: %w", err)
	}
	if c.Version > PlanVersion {
		return nil, &NewerVersionError{Version: c.Version}
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("catalog: undecodable command log record: %w", err)
	}
	return &c, nil
}

// check reports a command that lacks what its kind needs: such a record
// was not written by a server.
func (c *Command) check() error {
	switch c.Kind {
	case CreateSource:
		if c.Source == nil {
			return fmt.Errorf("create_source without a source")
		}
		return checkSource(c.Source)
	case DropSource:
		if c.Name == "" {
			return fmt.Errorf("drop_source without a name")
		}
	case CreateQuery, ReplaceQuery:
		if c.Query == nil || c.Query.ID == "" || c.Query.Plan == nil || c.Query.Plan.Source == nil {
			return fmt.Errorf("%s without a query id and plan", c.Kind)
		}
		if c.Query.Sink == "" {
			return fmt.Errorf("%s of query %s without a sink", c.Kind, c.Query.ID)
		}
		if c.Kind == ReplaceQuery && c.Source == nil {
			return fmt.Errorf("replace_query of query %s without its sink's declaration", c.Query.ID)
		}
		if c.Source != nil {
			if c.Source.Name != c.Query.Sink {
				return fmt.Errorf("%s of query %s declares source %s, not its sink %s", c.Kind, c.Query.ID, c.Source.Name, c.Query.Sink)
			}
			return checkSource(c.Source)
		}
	case TerminateQuery, SetQueryState:
		if c.QueryID == "" {
			return fmt.Errorf("%s without a query id", c.Kind)
		}
	case CreateType:
		if c.TypeName == "" || c.Type == nil {
			return fmt.Errorf("create_type without a name or type")
		}
	case DropType:
		if c.TypeName == "" {
			return fmt.Errorf("drop_type without a name")
		}
	default:
		return fmt.Errorf("unknown command kind %q", c.Kind)
	}
	return nil
}

// check reports a source declaration that lacks a name, kind, topic,
// formats or column types.
func checkSource(s *Source) error {
	switch {
	case s.Name == "":
		return fmt.Errorf("a source without a name")
	case s.Kind != Stream && s.Kind != Table:
		return fmt.Errorf("source %s of unknown kind %q", s.Name, s.Kind)
	case s.Topic == "":
		return fmt.Errorf("source %s without a topic", s.Name)
	case s.KeyFormat == "" || s.ValueFormat == "":
		return fmt.Errorf("source %s without its formats", s.Name)
	case s.System:
		return fmt.Errorf("source %s is marked as declared by the server, which the command log never holds", s.Name)
	}
	for _, c := range s.Columns() {
		if c.Name == "" || c.Type == nil {
			return fmt.Errorf("source %s has a column without a name or type", s.Name)
		}
	}
	return nil
}

// Catalog is the current set of sources and persistent queries. Its methods
// are safe for concurrent use; returned values must not be modified.
type Catalog struct {
	mu      sync.RWMutex
	sources map[string]*Source
	queries map[string]*Query
	types   map[string]*types.Type
	// createdBy maps a source created with its query (CREATE ... AS
	// SELECT, a CREATE SOURCE TABLE's materialization) to that query's id.
	createdBy map[string]string
	// seq counts applied CreateQuery commands; query ids end with it.
	seq int
}

// New returns an empty catalog.
func New() *Catalog {
	return &Catalog{sources: map[string]*Source{}, queries: map[string]*Query{}, types: map[string]*types.Type{}, createdBy: map[string]string{}}
}

// Apply applies one command. A command that does not fit the catalog (a
// duplicate name, an unknown query) is an error: the engine validates before
// writing, so this means the log and the catalog disagree.
func (c *Catalog) Apply(cmd *Command) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch cmd.Kind {
	case CreateSource:
		if cmd.Source == nil {
			return fmt.Errorf("catalog: create_source command without a source")
		}
		if _, ok := c.sources[cmd.Source.Name]; ok && !cmd.Replace {
			return fmt.Errorf("catalog: source %s already exists", cmd.Source.Name)
		}
		c.sources[cmd.Source.Name] = cmd.Source
	case DropSource:
		if _, ok := c.sources[cmd.Name]; !ok {
			return fmt.Errorf("catalog: drop of unknown source %s", cmd.Name)
		}
		delete(c.sources, cmd.Name)
		delete(c.createdBy, cmd.Name)
	case CreateQuery:
		if cmd.Query == nil || cmd.Query.Plan == nil {
			return fmt.Errorf("catalog: create_query command without a query plan")
		}
		if _, ok := c.queries[cmd.Query.ID]; ok {
			return fmt.Errorf("catalog: query %s already exists", cmd.Query.ID)
		}
		if err := upgrade(cmd.Query); err != nil {
			return err
		}
		declared := ""
		if cmd.Source != nil {
			declared = cmd.Source.Name // a CREATE SOURCE TABLE's query reads it
		}
		if err := c.missingInputs(cmd.Query, declared); err != nil {
			return err
		}
		if cmd.Source == nil {
			if _, ok := c.sources[cmd.Query.Sink]; !ok {
				return &MissingSourceError{Name: cmd.Query.Sink, Query: cmd.Query.ID}
			}
		}
		if cmd.Source != nil {
			if _, ok := c.sources[cmd.Source.Name]; ok && !cmd.Replace {
				return fmt.Errorf("catalog: source %s already exists", cmd.Source.Name)
			}
			c.sources[cmd.Source.Name] = cmd.Source
			c.createdBy[cmd.Source.Name] = cmd.Query.ID
		}
		c.queries[cmd.Query.ID] = cmd.Query
		c.seq++
	case TerminateQuery:
		if _, ok := c.queries[cmd.QueryID]; !ok {
			return fmt.Errorf("catalog: terminate of unknown query %s", cmd.QueryID)
		}
		if q := c.queries[cmd.QueryID]; c.createdBy[q.Sink] == cmd.QueryID {
			delete(c.createdBy, q.Sink)
		}
		delete(c.queries, cmd.QueryID)
	case ReplaceQuery:
		if cmd.Query == nil || cmd.Query.Plan == nil || cmd.Source == nil {
			return fmt.Errorf("catalog: replace_query command without a query plan or sink")
		}
		old, ok := c.queries[cmd.Query.ID]
		if !ok {
			return fmt.Errorf("catalog: replace of unknown query %s", cmd.Query.ID)
		}
		if _, ok := c.sources[cmd.Source.Name]; !ok {
			return fmt.Errorf("catalog: replace of query %s into unknown source %s", cmd.Query.ID, cmd.Source.Name)
		}
		if err := c.missingInputs(cmd.Query, cmd.Source.Name); err != nil {
			return err
		}
		if err := upgrade(cmd.Query); err != nil {
			return err
		}
		changed := *cmd.Query
		changed.State = old.State
		c.queries[cmd.Query.ID] = &changed
		c.sources[cmd.Source.Name] = cmd.Source
	case SetQueryState:
		q, ok := c.queries[cmd.QueryID]
		if !ok {
			return fmt.Errorf("catalog: state change of unknown query %s", cmd.QueryID)
		}
		if cmd.State != Running && cmd.State != Paused {
			return fmt.Errorf("catalog: unknown query state %q", cmd.State)
		}
		changed := *q
		changed.State = cmd.State
		c.queries[cmd.QueryID] = &changed
	case CreateType:
		if cmd.TypeName == "" || cmd.Type == nil {
			return fmt.Errorf("catalog: create_type command without a name or type")
		}
		c.types[cmd.TypeName] = cmd.Type
	case DropType:
		if _, ok := c.types[cmd.TypeName]; !ok {
			return fmt.Errorf("catalog: drop of unknown type %s", cmd.TypeName)
		}
		delete(c.types, cmd.TypeName)
	default:
		return fmt.Errorf("catalog: unknown command kind %q", cmd.Kind)
	}
	return nil
}

// upgrade brings the plan of q, as a command carries it, to
// topology.Version: a plan stored before the physical plan existed gets
// it (topology.Upgrade). A plan just planned is already of that version.
func upgrade(q *Query) error {
	if q.Plan.Version >= topology.Version && q.Plan.Physical != nil {
		return nil
	}
	if _, err := topology.Upgrade(q.Plan); err != nil {
		return &UpgradeError{Query: q.ID, Version: q.Plan.Version, Err: err}
	}
	return nil
}

// UpgradeError is Apply's error for a query whose stored plan cannot be
// brought to the current plan version: the query is not created.
type UpgradeError struct {
	Query   string
	Version int
	Err     error
}

func (e *UpgradeError) Error() string {
	return fmt.Sprintf("catalog: the stored plan of query %s (plan version %d) cannot be upgraded to version %d (%v); the query is not run: run its statement again to plan it anew",
		e.Query, e.Version, topology.Version, e.Err)
}

func (e *UpgradeError) Unwrap() error { return e.Err }

// MissingSourceError is Apply's error for a query that reads or writes a
// source the catalog does not hold.
type MissingSourceError struct {
	// Name is the missing source; Query the query that needs it.
	Name, Query string
}

func (e *MissingSourceError) Error() string {
	return fmt.Sprintf("catalog: query %s needs source %s, which does not exist", e.Query, e.Name)
}

// missingInputs reports the first source q reads that the catalog does not
// hold, but for declared, which the command declares. The caller holds
// c.mu.
func (c *Catalog) missingInputs(q *Query, declared string) error {
	for _, name := range q.Sources() {
		if _, ok := c.sources[name]; !ok && name != declared {
			return &MissingSourceError{Name: name, Query: q.ID}
		}
	}
	return nil
}

// NextQueryID returns the id the next persistent query would get, as ksqlDB
// names them: CSAS_<SINK>_<N> for streams, CTAS_<SINK>_<N> for tables.
// An empty sink gives <PREFIX>_<N>, as INSERTQUERY_3.
func (c *Catalog) NextQueryID(prefix, sink string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if sink == "" {
		return fmt.Sprintf("%s_%d", prefix, c.seq+1)
	}
	return fmt.Sprintf("%s_%s_%d", prefix, sink, c.seq+1)
}

// Source returns the source named name.
func (c *Catalog) Source(name string) (*Source, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.sources[name]
	return s, ok
}

// Sources returns every source, sorted by name.
func (c *Catalog) Sources() []*Source {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Source, 0, len(c.sources))
	for _, s := range c.sources {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Query returns the persistent query with id.
func (c *Catalog) Query(id string) (*Query, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	q, ok := c.queries[id]
	return q, ok
}

// Queries returns every persistent query, sorted by id.
func (c *Catalog) Queries() []*Query {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Query, 0, len(c.queries))
	for _, q := range c.queries {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CreatedBy returns the id of the query source name was created with
// (CREATE ... AS SELECT, or a CREATE SOURCE TABLE's materialization), while
// it runs; the other queries that write into a source are INSERT INTO
// queries.
func (c *Catalog) CreatedBy(name string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	id, ok := c.createdBy[name]
	return id, ok
}

// Writers returns the ids of the queries that write into source name.
func (c *Catalog) Writers(name string) []string {
	var out []string
	for _, q := range c.Queries() {
		if q.Sink == name {
			out = append(out, q.ID)
		}
	}
	return out
}

// Readers returns the ids of the queries that read source name.
func (c *Catalog) Readers(name string) []string {
	var out []string
	for _, q := range c.Queries() {
		for _, s := range q.Sources() {
			if s == name {
				out = append(out, q.ID)
				break
			}
		}
	}
	return out
}

// Type returns the custom type named name (CREATE TYPE).
func (c *Catalog) Type(name string) (*types.Type, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.types[name]
	return t, ok
}

// TypeNames returns the names of the custom types, sorted.
func (c *Catalog) TypeNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.types))
	for n := range c.types {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
