package topology_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// completeDDL declares the sources the tests of Complete plan over.
const completeDDL = `
CREATE STREAM clicks (user_id BIGINT KEY, page VARCHAR, ms BIGINT) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE STREAM views (user_id BIGINT KEY, page VARCHAR) WITH (KAFKA_TOPIC='views', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE TABLE users (id BIGINT PRIMARY KEY, name VARCHAR, region_id INT) WITH (KAFKA_TOPIC='users', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE TABLE accounts (user_id BIGINT PRIMARY KEY, balance DOUBLE) WITH (KAFKA_TOPIC='accounts', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE TABLE regions (id INT PRIMARY KEY, rname VARCHAR) WITH (KAFKA_TOPIC='regions', VALUE_FORMAT='JSON', PARTITIONS=3);
`

const testPrefix = "_sluice-test-"

func completeCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	stmts, err := parser.Parse(completeDDL)
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New()
	for _, st := range stmts {
		spec, err := planner.PlanCreateSource(cat, st.(*ast.CreateSource), planner.Defaults{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.Apply(&catalog.Command{Kind: catalog.CreateSource, Source: spec.Source}); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

// planned plans sql, a CREATE ... AS SELECT (query id Q_1) or a push
// query, and checks what holds of every completed plan: Complete is
// idempotent, and the plan reads back from JSON unchanged and stable.
func planned(t *testing.T, sql string) *topology.Graph {
	t.Helper()
	cat := completeCatalog(t)
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	opts := planner.QueryOptions{OffsetReset: "earliest"}
	var q *ast.Query
	switch st := stmts[0].(type) {
	case *ast.Select:
		q = st.Query
	case *ast.CreateAsSelect:
		q = st.Query
		opts.QueryID, opts.InternalPrefix = "Q_1", testPrefix
		opts.Sink, opts.SinkPos, opts.SinkProps = st.Name, st.NamePos, st.Props
		if st.Kind == ast.Table {
			opts.SinkKind = catalog.Table
		}
	default:
		t.Fatalf("planned takes a query, got %T", st)
	}
	p, err := planner.PlanSelect(cat, q, opts)
	if err != nil {
		t.Fatal(err)
	}
	g := p.Graph
	if g.Version != topology.Version || g.Physical == nil {
		t.Fatalf("planned plan of version %d, physical %v", g.Version, g.Physical)
	}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var again topology.Graph
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if err := topology.Complete(&again); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&again, g) {
		a, _ := json.Marshal(&again)
		t.Errorf("Complete is not idempotent:\n%s\nthen\n%s", b, a)
	}
	if b2, _ := json.Marshal(&again); string(b2) != string(b) {
		t.Errorf("plan JSON is not stable:\n%s\n%s", b, b2)
	}
	var back topology.Graph
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, g) {
		t.Errorf("a completed plan reads back changed from JSON")
	}
	if changed, err := topology.Upgrade(&back); changed || err != nil {
		t.Errorf("a completed plan upgrades: %v, %v", changed, err)
	}
	return g
}

// topicsOf lists g's topics as "role name partitions config".
func topicsOf(g *topology.Graph) []string {
	var out []string
	for _, tp := range g.Physical.Topics {
		line := fmt.Sprintf("%s %s %d", tp.Role, tp.Name, tp.Partitions)
		keys := make([]string, 0, len(tp.Config))
		for k := range tp.Config {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			line += " " + k + "=" + tp.Config[k]
		}
		out = append(out, line)
	}
	return out
}

// storesOf lists g's stores as "role name stage changelog".
func storesOf(g *topology.Graph) []string {
	var out []string
	for _, st := range g.Physical.Stores {
		out = append(out, fmt.Sprintf("%s %s %d %s", st.Role, st.Name, st.Stage, st.Changelog))
	}
	return out
}

// stagesOf lists g's stages as "id path source from-to sink joins".
func stagesOf(g *topology.Graph) []string {
	var out []string
	for _, s := range g.Physical.Stages {
		out = append(out, fmt.Sprintf("%d %v %s %d-%d %s %v", s.ID, s.Path, s.Source, s.From, s.To, s.Sink, s.Joins))
	}
	return out
}

func check(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func joinOf(t *testing.T, g *topology.Graph) *topology.JoinSpec {
	t.Helper()
	for _, st := range g.Steps {
		if st.Kind == topology.Join && st.Join != nil {
			return st.Join
		}
	}
	t.Fatalf("no join in\n%s", g)
	return nil
}

// A windowed aggregate with HAVING: the aggregate gives each group's
// previous row to the filter (WithOld), and its changelog is compacted and
// deleted a day after the window's retention.
func TestCompleteWindowedHaving(t *testing.T) {
	g := planned(t, `CREATE TABLE busy AS SELECT user_id, COUNT(*) AS n FROM clicks WINDOW TUMBLING (SIZE 1 MINUTE, GRACE PERIOD 10 SECONDS) GROUP BY user_id HAVING COUNT(*) > 1;`)
	if g.Steps[0].Kind != topology.Aggregate || !g.Steps[0].WithOld {
		t.Errorf("the aggregate before HAVING: kind %s, WithOld %v", g.Steps[0].Kind, g.Steps[0].WithOld)
	}
	check(t, "stages", stagesOf(g), []string{"0 [] clicks 0-3 BUSY []"})
	retention := strconv.FormatInt(70000+topology.ChangelogExtraRetention, 10)
	check(t, "topics", topicsOf(g), []string{
		"changelog _sluice-test-Q_1-aggregate-changelog 2 cleanup.policy=compact,delete retention.ms=" + retention,
		"sink BUSY 2",
	})
	check(t, "stores", storesOf(g), []string{"aggregate aggregate 0 _sluice-test-Q_1-aggregate-changelog"})
	if w := g.Physical.Stores[0].Window; w == nil || w.Retention != 70000 {
		t.Errorf("the aggregate store's window: %+v", w)
	}

	// Without HAVING the aggregate gives new rows only.
	g = planned(t, `CREATE TABLE n AS SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id;`)
	if g.Steps[0].Kind != topology.Aggregate || g.Steps[0].WithOld {
		t.Errorf("the aggregate without HAVING: kind %s, WithOld %v", g.Steps[0].Kind, g.Steps[0].WithOld)
	}
	check(t, "topics", topicsOf(g), []string{"changelog _sluice-test-Q_1-aggregate-changelog 2 cleanup.policy=compact", "sink N 2"})
}

// A table-table join reads both sides from the Materialize steps before
// it, and the sink's Materialize passes every row on.
func TestCompleteTableTableJoin(t *testing.T) {
	g := planned(t, `CREATE TABLE ua AS SELECT u.id, u.name, a.balance FROM users u JOIN accounts a ON u.id = a.user_id;`)
	j := joinOf(t, g)
	if !j.LeftMaterialized || !j.RightMaterialized || j.ExtraState != "" {
		t.Errorf("join: left materialized %v, right materialized %v, extra state %q", j.LeftMaterialized, j.RightMaterialized, j.ExtraState)
	}
	if last := g.Steps[len(g.Steps)-1]; last.Kind != topology.Materialize || !last.PassAll {
		t.Errorf("the sink's step: kind %s, PassAll %v", last.Kind, last.PassAll)
	}
	check(t, "stages", stagesOf(g), []string{"0 [] users 0-4 UA [1]", "1 [1] accounts 0-1  []"})
	check(t, "stores", storesOf(g), []string{
		"materialize join-left 0 _sluice-test-Q_1-KafkaTopic_Left-Reduce-changelog",
		"materialize join-right 1 _sluice-test-Q_1-KafkaTopic_Right-Reduce-changelog",
		"materialize sink 0 _sluice-test-Q_1-sink-changelog",
	})
	check(t, "topics", topicsOf(g), []string{
		"changelog _sluice-test-Q_1-KafkaTopic_Left-Reduce-changelog 2 cleanup.policy=compact",
		"changelog _sluice-test-Q_1-KafkaTopic_Right-Reduce-changelog 2 cleanup.policy=compact",
		"changelog _sluice-test-Q_1-sink-changelog 2 cleanup.policy=compact",
		"sink UA 2",
	})
}

// A stream-table join keeps nothing of the stream, and reads the table
// from the right input's Materialize.
func TestCompleteStreamTableJoin(t *testing.T) {
	g := planned(t, `CREATE STREAM cu AS SELECT c.user_id, c.page, u.name FROM clicks c LEFT JOIN users u ON c.user_id = u.id;`)
	j := joinOf(t, g)
	if j.LeftMaterialized || !j.RightMaterialized || j.ExtraState != "" {
		t.Errorf("join: left materialized %v, right materialized %v, extra state %q", j.LeftMaterialized, j.RightMaterialized, j.ExtraState)
	}
	check(t, "stages", stagesOf(g), []string{"0 [] clicks 0-2 CU [1]", "1 [0] users 0-1  []"})
	check(t, "stores", storesOf(g), []string{"materialize join-right 1 _sluice-test-Q_1-KafkaTopic_Right-Reduce-changelog"})
	if v := g.Physical.Stores[0].Value; !reflect.DeepEqual(v, []string{"NAME", "REGION_ID"}) {
		t.Errorf("the table's store values: %q", v)
	}
	check(t, "topics", topicsOf(g), []string{
		"changelog _sluice-test-Q_1-KafkaTopic_Right-Reduce-changelog 2 cleanup.policy=compact",
		"sink CU 2",
	})
	if g.Physical.Stages[1].TableRows != true || g.Physical.Stages[0].TableRows {
		t.Errorf("table rows: %+v", g.Physical.Stages)
	}
}

// An outer stream-stream join with a grace period keeps its unmatched rows
// in a third store, "-outer"; without a grace period, or inner, it keeps
// none.
func TestCompleteOuterStreamStreamJoin(t *testing.T) {
	g := planned(t, `CREATE STREAM cv AS SELECT c.user_id, c.page, v.page AS vpage FROM clicks c LEFT JOIN views v WITHIN 1 MINUTE GRACE PERIOD 10 SECONDS ON c.user_id = v.user_id;`)
	j := joinOf(t, g)
	if j.LeftMaterialized || j.RightMaterialized {
		t.Errorf("a stream-stream join's sides are materialized: %v, %v", j.LeftMaterialized, j.RightMaterialized)
	}
	if j.ExtraState != "join-left-outer" || j.ExtraChangelog != "_sluice-test-Q_1-KSTREAM-LEFTSHARED-0000000010-store-changelog" {
		t.Errorf("the outer join's extra state %q, changelog %q", j.ExtraState, j.ExtraChangelog)
	}
	check(t, "stages", stagesOf(g), []string{"0 [] clicks 0-2 CV [1]", "1 [0] views 0-0  []"})
	check(t, "stores", storesOf(g), []string{
		"join-left join-left 0 _sluice-test-Q_1-KSTREAM-JOINTHIS-0000000008-store-changelog",
		"join-right join-right 0 _sluice-test-Q_1-KSTREAM-OUTEROTHER-0000000009-store-changelog",
		"join-outer join-left-outer 0 _sluice-test-Q_1-KSTREAM-LEFTSHARED-0000000010-store-changelog",
	})
	// Both sides' stores name their rows' columns alike: without the
	// pseudo-columns.
	if l, r := g.Physical.Stores[0].Value, g.Physical.Stores[1].Value; !reflect.DeepEqual(l, []string{"USER_ID", "PAGE", "MS"}) || !reflect.DeepEqual(r, []string{"USER_ID", "PAGE"}) {
		t.Errorf("join store values: left %q, right %q", l, r)
	}
	check(t, "topics", topicsOf(g), []string{
		"changelog _sluice-test-Q_1-KSTREAM-JOINTHIS-0000000008-store-changelog 2 cleanup.policy=compact",
		"changelog _sluice-test-Q_1-KSTREAM-OUTEROTHER-0000000009-store-changelog 2 cleanup.policy=compact",
		"changelog _sluice-test-Q_1-KSTREAM-LEFTSHARED-0000000010-store-changelog 2 cleanup.policy=compact",
		"sink CV 2",
	})

	for _, sql := range []string{
		`CREATE STREAM cv AS SELECT c.user_id, c.page, v.page AS vpage FROM clicks c LEFT JOIN views v WITHIN 1 MINUTE ON c.user_id = v.user_id;`,
		`CREATE STREAM cv AS SELECT c.user_id, c.page, v.page AS vpage FROM clicks c JOIN views v WITHIN 1 MINUTE GRACE PERIOD 10 SECONDS ON c.user_id = v.user_id;`,
	} {
		g := planned(t, sql)
		if j := joinOf(t, g); j.ExtraState != "" || len(g.Physical.Stores) != 2 {
			t.Errorf("%s: extra state %q, stores %q", sql, j.ExtraState, storesOf(g))
		}
	}
}

// A foreign-key join keeps its index in a third store, "-fk-index".
func TestCompleteForeignKeyJoin(t *testing.T) {
	g := planned(t, `CREATE TABLE ur AS SELECT u.id, u.name, r.rname FROM users u LEFT JOIN regions r ON u.region_id = r.id;`)
	j := joinOf(t, g)
	if j.ForeignKey == nil || !j.LeftMaterialized || !j.RightMaterialized {
		t.Fatalf("not a foreign-key join of materialized tables: %+v", j)
	}
	if j.ExtraState != "join-left-fk-index" || j.ExtraChangelog != "_sluice-test-Q_1-KafkaTopic_Left-Reduce-changelog-fk-index" {
		t.Errorf("the foreign-key join's extra state %q, changelog %q", j.ExtraState, j.ExtraChangelog)
	}
	check(t, "stages", stagesOf(g), []string{"0 [] users 0-4 UR [1]", "1 [1] regions 0-1  []"})
	check(t, "stores", storesOf(g), []string{
		"materialize join-left 0 _sluice-test-Q_1-KafkaTopic_Left-Reduce-changelog",
		"materialize join-right 1 _sluice-test-Q_1-KafkaTopic_Right-Reduce-changelog",
		"join-fk-index join-left-fk-index 0 _sluice-test-Q_1-KafkaTopic_Left-Reduce-changelog-fk-index",
		"materialize sink 0 _sluice-test-Q_1-sink-changelog",
	})
	// Every changelog has the query's source's partitions, the right
	// table's (3) too: a task of the query owns one partition of each.
	check(t, "topics", topicsOf(g), []string{
		"changelog _sluice-test-Q_1-KafkaTopic_Left-Reduce-changelog 2 cleanup.policy=compact",
		"changelog _sluice-test-Q_1-KafkaTopic_Right-Reduce-changelog 2 cleanup.policy=compact",
		"changelog _sluice-test-Q_1-KafkaTopic_Left-Reduce-changelog-fk-index 2 cleanup.policy=compact",
		"changelog _sluice-test-Q_1-sink-changelog 2 cleanup.policy=compact",
		"sink UR 2",
	})
}

// A GROUP BY of a non-key column repartitions: two stages, the second
// reading what the first writes.
func TestCompleteGroupByRepartition(t *testing.T) {
	g := planned(t, `CREATE TABLE pages AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page;`)
	check(t, "stages", stagesOf(g), []string{
		"0 [] clicks 0-2 _sluice-test-Q_1-repartition []",
		"1 [] _sluice-test-Q_1-repartition 2-4 PAGES []",
	})
	if s := g.Physical.Stages; s[0].TableRows || !s[1].TableRows {
		t.Errorf("table rows: %+v", s)
	}
	check(t, "topics", topicsOf(g), []string{
		"repartition _sluice-test-Q_1-repartition 2 cleanup.policy=delete",
		"changelog _sluice-test-Q_1-aggregate-changelog 2 cleanup.policy=compact",
		"sink PAGES 2",
	})
	check(t, "stores", storesOf(g), []string{"aggregate aggregate 1 _sluice-test-Q_1-aggregate-changelog"})
}

// A push query owns no topics: its stores have no changelog, and its
// repartition topic is named per run (then Complete lists it).
func TestCompletePushQuery(t *testing.T) {
	g := planned(t, `SELECT page, COUNT(*) AS n FROM clicks GROUP BY page EMIT CHANGES;`)
	if len(g.Physical.Topics) != 0 {
		t.Errorf("a push query's topics: %q", topicsOf(g))
	}
	check(t, "stores", storesOf(g), []string{"aggregate aggregate 1 "})
	check(t, "stages", stagesOf(g), []string{"0 [] clicks 0-2  []", "1 []  2-4  []"})

	g.Steps[1].Topic = "run-repartition"
	if err := topology.Complete(g); err != nil {
		t.Fatal(err)
	}
	check(t, "topics once named", topicsOf(g), []string{"repartition run-repartition 2 cleanup.policy=delete"})
	check(t, "stages once named", stagesOf(g), []string{"0 [] clicks 0-2 run-repartition []", "1 [] run-repartition 2-4  []"})

	g = planned(t, `SELECT * FROM clicks EMIT CHANGES;`)
	if len(g.Physical.Topics) != 0 || len(g.Physical.Stores) != 0 || len(g.Physical.Stages) != 1 {
		t.Errorf("a stateless push query: %+v", g.Physical)
	}
}

// Complete refuses a plan it cannot derive a physical plan from, rather
// than failing on it.
func TestCompleteMalformed(t *testing.T) {
	g := planned(t, `CREATE TABLE n AS SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id;`)
	g.Steps[0].Schema = g.Steps[0].Schema[:2]
	if err := topology.Complete(g); err == nil || !strings.Contains(err.Error(), "Q_1") {
		t.Errorf("an aggregate without its columns: %v", err)
	}
	g = planned(t, `CREATE STREAM cu AS SELECT c.user_id, c.page, u.name FROM clicks c LEFT JOIN users u ON c.user_id = u.id;`)
	joinOf(t, g).Right.Source = nil
	if err := topology.Complete(g); err == nil {
		t.Errorf("a join's right input without a source: no error")
	}
	if _, err := topology.Upgrade(&topology.Graph{QueryID: "X"}); err == nil {
		t.Errorf("a plan without a source upgrades")
	}
}
