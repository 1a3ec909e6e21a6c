package topology

import (
	"testing"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

func pseudo() []types.Column {
	return []types.Column{{Name: RowTime, Type: types.BigintType}, {Name: RowPartition, Type: types.IntType}, {Name: RowOffset, Type: types.BigintType}}
}

func cols(cs ...types.Column) []types.Column { return append(pseudo(), cs...) }

func col(name string) types.Column { return types.Column{Name: name, Type: types.StringType} }

// A windowed aggregate grouped by a value column: its rows are rekeyed and
// repartitioned, and the second stage keeps the windows.
func TestTopologyWindowedAggregate(t *testing.T) {
	clicks := &Source{Name: "CLICKS", Kind: Stream, Topic: "clicks", Partitions: 4, KeyFormat: "KAFKA", ValueFormat: "JSON",
		Key: []types.Column{col("ID")}, Value: []types.Column{col("USER_ID"), col("PAGE")}}
	keyed := cols(col("KSQL_GROUP_KEY_0"), col("ID"), col("USER_ID"), col("PAGE"))
	agg := cols(col("USER_ID"), types.Column{Name: WindowStart, Type: types.BigintType}, types.Column{Name: WindowEnd, Type: types.BigintType},
		types.Column{Name: "KSQL_AGG_VARIABLE_0", Type: types.BigintType})
	exprs := make([]*expr.Expr, len(keyed))
	for i := range keyed {
		exprs[i] = expr.Column(i, keyed[i].Name, keyed[i].Type)
	}
	exprs[PseudoColumns] = expr.Column(4, "USER_ID", types.StringType)
	g := &Graph{QueryID: "CTAS_BUSY_1", Source: clicks, OffsetReset: "earliest",
		Steps: []Step{
			{Kind: Rekey, Schema: keyed, Keys: 1, Exprs: exprs},
			{Kind: Repartition, Schema: keyed, Keys: 1, Topic: "_sluice-CTAS_BUSY_1-repartition", Partitions: 4, NullKeysLogged: true},
			{Kind: Aggregate, Schema: agg, Keys: 1, GroupBy: []*expr.Expr{expr.Column(3, "KSQL_GROUP_KEY_0", types.StringType)},
				Aggs: []AggCall{{Func: "COUNT", Star: true}}, StateTable: "aggregate", Changelog: "_sluice-CTAS_BUSY_1-aggregate-changelog",
				Window: &Window{Type: Hopping, Size: 60000, Advance: 10000, Grace: 0, Retention: 60000, Final: true}},
			{Kind: Filter, Schema: agg, Predicate: expr.Column(6, "KSQL_AGG_VARIABLE_0", types.BigintType)},
		},
		Sink:   &Sink{Name: "BUSY", Topic: "BUSY", Partitions: 4, KeyFormat: "KAFKA", ValueFormat: "JSON", Window: &KeyWindow{Type: Hopping, Size: 60000}},
		Output: agg, KeyColumns: 1,
	}
	if err := Complete(g); err != nil {
		t.Fatal(err)
	}
	want := `Sub-topology: 0
  Source: clicks (stream CLICKS, partitions: 4)
  > PARTITION BY | Key: KSQL_GROUP_KEY_0 = USER_ID
  > REPARTITION | Key: KSQL_GROUP_KEY_0
  Sink: _sluice-CTAS_BUSY_1-repartition (repartition, partitions: 4)
Sub-topology: 1
  Source: _sluice-CTAS_BUSY_1-repartition (repartition, partitions: 4)
  > AGGREGATE | Key: USER_ID | Window: HOPPING (SIZE 60000 ms, ADVANCE BY 10000 ms, GRACE PERIOD 0 ms, RETENTION 60000 ms) EMIT FINAL | Emits each group's previous row too
      Store: aggregate (aggregate; key: USER_ID; value: KSQL_AGG_VARIABLE_0 COUNT; windowed; changelog: _sluice-CTAS_BUSY_1-aggregate-changelog)
  > FILTER | Predicate: KSQL_AGG_VARIABLE_0
  Sink: BUSY (sink, partitions: 4, table changes)
Topics:
  _sluice-CTAS_BUSY_1-repartition (repartition, partitions: 4) cleanup.policy=delete
  _sluice-CTAS_BUSY_1-aggregate-changelog (changelog, partitions: 4) cleanup.policy=compact,delete retention.ms=86460000
  BUSY (sink, partitions: 4)
`
	if got := g.Topology(); got != want {
		t.Errorf("topology:\n%s\nwant:\n%s", got, want)
	}
	// Drawing is deterministic: the topic configs come out sorted.
	for i := 0; i < 10; i++ {
		if got := g.Topology(); got != want {
			t.Fatalf("topology changed between calls:\n%s", got)
		}
	}
}

// A stream-table join: the table's rows are materialized by the right
// input's stage, which runs inside the join's.
func TestTopologyJoin(t *testing.T) {
	orders := &Source{Name: "ORDERS", Kind: Stream, Topic: "orders", Partitions: 2, KeyFormat: "KAFKA", ValueFormat: "JSON",
		Key: []types.Column{col("CUSTOMER_ID")}, Value: []types.Column{col("ITEM")}}
	customers := &Source{Name: "CUSTOMERS", Kind: Table, Topic: "customers", Partitions: 2, KeyFormat: "KAFKA", ValueFormat: "JSON",
		Key: []types.Column{col("ID")}, Value: []types.Column{col("NAME")}}
	right := &Graph{Source: customers, Steps: []Step{{Kind: Materialize, Schema: customers.Schema(), Keys: 1,
		StateTable: "join-right", Changelog: "_sluice-CSAS_ENRICHED_2-join-right-changelog"}},
		Output: customers.Schema(), KeyColumns: 1}
	joined := cols(col("O_CUSTOMER_ID"), col("CUSTOMER_ID"), col("ITEM"), col("ID"), col("NAME"))
	out := []types.Column{col("CUSTOMER_ID"), col("ITEM"), col("NAME")}
	g := &Graph{QueryID: "CSAS_ENRICHED_2", Source: orders, OffsetReset: "earliest",
		Steps: []Step{
			{Kind: Join, Schema: joined, Keys: 1, Join: &JoinSpec{Type: LeftJoin, RightTable: true, Right: right,
				LeftKey:    []*expr.Expr{expr.Column(3, "CUSTOMER_ID", types.StringType)},
				RightKey:   []*expr.Expr{expr.Column(3, "ID", types.StringType)},
				RightState: "join-right", RightChangelog: "_sluice-CSAS_ENRICHED_2-join-right-changelog"}},
			{Kind: Project, Schema: out, Exprs: []*expr.Expr{expr.Column(3, "O_CUSTOMER_ID", types.StringType),
				expr.Column(5, "ITEM", types.StringType), expr.Column(7, "NAME", types.StringType)}},
		},
		Sink:   &Sink{Name: "ENRICHED", Topic: "enriched", Partitions: 2, KeyFormat: "KAFKA", ValueFormat: "JSON"},
		Output: out, KeyColumns: 1,
	}
	if err := Complete(g); err != nil {
		t.Fatal(err)
	}
	want := `Sub-topology: 0
  Source: orders (stream ORDERS, partitions: 2)
  > JOIN | LEFT STREAM-TABLE | On: CUSTOMER_ID = ID | Key: O_CUSTOMER_ID | Right input: sub-topology 1 | Right rows: store join-right
  > PROJECT | Columns: CUSTOMER_ID, ITEM, NAME
  Sink: enriched (sink, partitions: 2)
Sub-topology: 1 (right input of the JOIN of sub-topology 0, runs in its tasks)
  Source: customers (table CUSTOMERS, partitions: 2)
  > MATERIALIZE | Key: ID
      Store: join-right (materialize; key: ID; value: NAME; changelog: _sluice-CSAS_ENRICHED_2-join-right-changelog)
  Output: the JOIN of sub-topology 0
Topics:
  _sluice-CSAS_ENRICHED_2-join-right-changelog (changelog, partitions: 2) cleanup.policy=compact
  enriched (sink, partitions: 2)
`
	if got := g.Topology(); got != want {
		t.Errorf("topology:\n%s\nwant:\n%s", got, want)
	}
}

// A plan without its physical part says its topology is unknown.
func TestTopologyUnknown(t *testing.T) {
	g := &Graph{Source: &Source{Name: "S", Topic: "s"}}
	d := g.Describe()
	if !d.Unknown || len(d.Stages) != 0 {
		t.Errorf("description of a plan without Physical: %+v", d)
	}
	if got := g.Topology(); got != "(unknown: the plan has no physical plan)\n" {
		t.Errorf("topology %q", got)
	}
}
