package render

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// TestQueryListCells: SHOW QUERIES EXTENDED's figures are typed cells; a
// lag not measured and a push query's missing sink are null, written as
// empty text.
func TestQueryListCells(t *testing.T) {
	l := &api.QueryList{Extended: true, Queries: []api.QueryInfo{
		{ID: "CSAS_X_1", Type: api.Persistent, Status: "RUNNING", Sink: "X", SinkTopic: "x", SQL: "CREATE STREAM x AS SELECT * FROM s;",
			Guarantee: "at_least_once", Running: true, Stats: api.Stats{RecordsIn: 5, RecordsOut: 4, Filtered: 1, RestorePercent: 100,
				LagMeasured: true, LagRecords: 2, LagSeconds: 1.25}},
		{ID: "transient_S_2", Type: api.Push, Status: "RUNNING", Guarantee: "at_least_once", Running: true, Stats: api.Stats{RestorePercent: 100}},
	}}
	tb := Entity(wire.EncodeEntity("SHOW QUERIES EXTENDED;", l))
	want := `Query ID | Query Type | Status | Sink Name | Sink Kafka Topic | Query String | Processing Guarantee | Records In | Records Out | Filtered | Errors | Late | Nulls Dropped | Lag | Lag Seconds | Restored
CSAS_X_1 | PERSISTENT | RUNNING | X | x | CREATE STREAM x AS SELECT * FROM s; | at_least_once | 5 | 4 | 1 | 0 | 0 | 0 | 2 | 1.2 | 100 %
transient_S_2 | PUSH | RUNNING |  |  |  | at_least_once | 0 | 0 | 0 | 0 | 0 | 0 |  |  | 100 %
For detailed information on a Query run: EXPLAIN <Query ID>;
`
	if got := tb.Text(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if v := tb.Rows[0][7]; v.GetIntValue() != 5 {
		t.Errorf("Records In cell = %v, want the number 5", v)
	}
	for _, c := range []int{3, 13, 14} { // Sink Name, Lag, Lag Seconds
		if _, null := tb.Rows[1][c].GetKind().(*sluicev1.Value_NullValue); !null || tb.Cell(tb.Rows[1][c]) != "" {
			t.Errorf("push query's %s = %v, want null", tb.Columns[c], tb.Rows[1][c])
		}
	}
}

// TestDescribeText: DESCRIBE EXTENDED draws the source's columns and the
// runtime figures of the queries that run here.
func TestDescribeText(t *testing.T) {
	d := &api.SourceDescription{Extended: true,
		Source: api.SourceInfo{Name: "T", Kind: api.SourceTable, Topic: "t", Partitions: 2, KeyFormat: "KAFKA", ValueFormat: "JSON",
			SQL: "CREATE TABLE t AS ...", Writers: []string{"CTAS_T_1"},
			Columns: []api.SourceColumn{{Column: types.Column{Name: "ID", Type: types.StringType}, Role: api.RoleKey},
				{Column: types.Column{Name: "H", Type: types.BytesType}, Role: api.RoleHeader, Header: "h"},
				{Column: types.Column{Name: "C", Type: types.BigintType}}}},
		Writers: []api.QueryInfo{{ID: "CTAS_T_1", Guarantee: "exactly_once_v2", Running: true,
			Stats: api.Stats{RecordsIn: 3, RecordsOut: 2, LastRecord: time.UnixMilli(0)}}}}
	got := Entity(wire.EncodeEntity("DESCRIBE t EXTENDED;", d)).Text()
	for _, want := range []string{
		"Name                 : T\nField | Type\nID | STRING  (primary key)\nC | BIGINT\nH | BYTES  (header('h'))\n",
		"Type                 : TABLE\n", "Kafka topic          : t (partitions: 2)\n",
		"Processing guarantee : exactly_once_v2 (CTAS_T_1)\n",
		"Local runtime statistics\n------------------------\nCTAS_T_1: total-messages: 3  messages-out: 2  filtered-messages: 0",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("DESCRIBE text lacks %q:\n%s", want, got)
		}
	}
}

// TestPlanText: a plan's lines draw as EXPLAIN prints them.
func TestPlanText(t *testing.T) {
	p := wire.EncodePlan(&api.QueryDescription{Statement: "SELECT * FROM s EMIT CHANGES;", Plan: []api.PlanLine{
		{Depth: 0, Operator: "OUTPUT", Details: []string{"Schema: A STRING"}},
		{Depth: 1, Operator: "FILTER", Details: []string{"Predicate: (A = 'x | y')"}},
		{Depth: 2, Operator: "SOURCE"},
	}})
	want := " > [ OUTPUT ] | Schema: A STRING\n   > [ FILTER ] | Predicate: (A = 'x | y')\n     > [ SOURCE ]\n"
	if got := PlanText(p.GetLines()); got != want {
		t.Errorf("plan:\n%q\nwant:\n%q", got, want)
	}
	if got := Description(p); got != "Query String         : SELECT * FROM s EMIT CHANGES;" {
		t.Errorf("description %q", got)
	}
}

// TestTopologyText: the processing topology goes over the wire as
// values and draws below the execution plan under its heading; a plan
// without one says so, and a pull query's has no heading.
func TestTopologyText(t *testing.T) {
	d := &api.QueryDescription{Statement: "CREATE TABLE n AS SELECT k, COUNT(*) AS c FROM s WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY k;",
		Plan: []api.PlanLine{{Operator: "SINK"}},
		Topology: &api.Topology{Stages: []api.TopologyStage{{ID: 0, JoinStage: -1, Source: "s", SourceRole: "stream S", SourcePartitions: 1,
			Nodes: []api.TopologyNode{{Operator: "AGGREGATE", Details: []string{"Key: K"},
				Stores: []api.TopologyStore{{Name: "aggregate", Role: "aggregate", Key: []string{"K"}, Value: []string{"C COUNT"}, Windowed: true, Changelog: "n-changelog"}}}},
			Sink: "N", SinkRole: "sink", SinkPartitions: 1, TableRows: true}},
			Topics: []api.TopologyTopic{{Name: "n-changelog", Role: "changelog", Partitions: 1, Config: map[string]string{"retention.ms": "1", "cleanup.policy": "compact,delete"}},
				{Name: "N", Role: "sink", Partitions: 1}}},
	}
	want := `Execution plan
 > [ SINK ]
Processing topology
Sub-topology: 0
  Source: s (stream S, partitions: 1)
  > AGGREGATE | Key: K
      Store: aggregate (aggregate; key: K; value: C COUNT; windowed; changelog: n-changelog)
  Sink: N (sink, partitions: 1, table changes)
Topics:
  n-changelog (changelog, partitions: 1) cleanup.policy=compact,delete retention.ms=1
  N (sink, partitions: 1)
`
	if got := Entity(wire.EncodeEntity("EXPLAIN ...;", d)).Footer; got != want {
		t.Errorf("footer:\n%s\nwant:\n%s", got, want)
	}
	d.Topology = &api.Topology{Unknown: true}
	if got := PlanFooter(wire.EncodePlan(d)); !strings.HasSuffix(got, "Processing topology\n(unknown: the plan has no physical plan)\n") {
		t.Errorf("unknown topology drawn as:\n%s", got)
	}
	d.Topology, d.Pull = nil, true
	if got := PlanFooter(wire.EncodePlan(d)); strings.Contains(got, "Processing topology") {
		t.Errorf("pull query's plan drawn as:\n%s", got)
	}
}

// TestDescriptionJSON: a description is one JSON object with its numbers
// and booleans typed, enums by their short names and empty strings null.
func TestDescriptionJSON(t *testing.T) {
	d := &api.SourceDescription{Source: api.SourceInfo{Name: "S", Kind: api.SourceStream, Partitions: 3}}
	got := DescriptionJSON(wire.EncodeEntity("DESCRIBE s;", d))
	for _, want := range []string{`"name":"S"`, `"kind":"STREAM"`, `"partitions":3,`, `"windowed":false`, `"timestamp":null`, `"extended":false`} {
		if !strings.Contains(got, want) {
			t.Errorf("JSON lacks %s: %s", want, got)
		}
	}
}

func TestConnectorEntities(t *testing.T) {
	d := &sluicev1.Entity{Kind: &sluicev1.Entity_ConnectorDescription{ConnectorDescription: &sluicev1.ConnectorDescription{
		Name: "PG", Class: "io.debezium.connector.postgresql.PostgresConnector", Type: "source",
		Connector: &sluicev1.ConnectorState{State: "RUNNING", WorkerId: "w:8083"},
		Tasks: []*sluicev1.ConnectorTask{
			{Id: 1, State: &sluicev1.ConnectorState{State: "FAILED", WorkerId: "w:8083", Trace: "java.lang.Boom\n\tat x\n"}},
		},
		Topics:   []string{"pg.public.orders"},
		Sources:  []*sluicev1.SourceDescription{{Name: "ORDERS", Kind: sluicev1.SourceKind_SOURCE_KIND_TABLE, Topic: "pg.public.orders"}},
		Config:   map[string]string{"database.password": "[hidden]", "connector.class": "x"},
		Warnings: []string{"Could not list related topics due to error: boom"},
	}}}
	got := Entity(d).Text()
	want := "Name                 : PG\nClass                : io.debezium.connector.postgresql.PostgresConnector\nType                 : source\n" +
		"State                : RUNNING\nWorkerId             : w:8083\nTask ID | State | Worker\n1 | FAILED | w:8083\n" +
		"Task 1 trace:\njava.lang.Boom\n\tat x\nSluice sources over its topics:\n  ORDERS (TABLE, topic pg.public.orders)\n" +
		"Related topics:\n  pg.public.orders\nConfiguration:\n  connector.class = x\n  database.password = [hidden]\n" +
		"WARNING: Could not list related topics due to error: boom\n"
	if got != want {
		t.Errorf("DESCRIBE CONNECTOR:\n%s\nwant:\n%s", got, want)
	}
	if !Described(d) || !strings.Contains(DescriptionJSON(d), `"config":{"connector.class":"x","database.password":"[hidden]"}`) {
		t.Errorf("JSON: %s", DescriptionJSON(d))
	}
	for e, want := range map[*sluicev1.Entity]string{
		{Kind: &sluicev1.Entity_Connector{Connector: &sluicev1.ConnectorInfo{Name: "PG"}}}:                   "Created connector PG\n",
		{Kind: &sluicev1.Entity_DroppedConnector{DroppedConnector: &sluicev1.DroppedConnector{Name: "PG"}}}:  "Dropped connector \"PG\"\n",
		{Kind: &sluicev1.Entity_Warning{Warning: &sluicev1.Warning{Message: "Connector PG already exists"}}}: "Connector PG already exists\n",
		{Kind: &sluicev1.Entity_Connectors{Connectors: &sluicev1.ConnectorList{Connectors: []*sluicev1.ConnectorSummary{
			{Name: "PG", Type: "source", Class: "C", State: "RUNNING (1/1 tasks RUNNING)"}, {Name: "X"}}}}}: "Connector Name | Type | Class | Status\nPG | SOURCE | C | RUNNING (1/1 tasks RUNNING)\nX | UNKNOWN |  | \n",
	} {
		if got := Entity(e).Text(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
