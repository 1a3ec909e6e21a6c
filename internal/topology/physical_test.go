package topology_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// replayPrefix is the internal topic prefix of the plans of
// testdata/replay (service id "sluice").
const replayPrefix = "_sluice-sluice-"

// replayCommands returns the command log of a testdata/replay file.
func replayCommands(t *testing.T, file string) []*catalog.Command {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "replay", file))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Commands []string `json:"commands"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var out []*catalog.Command
	for _, v := range f.Commands {
		c, err := catalog.DecodeCommand([]byte(v))
		if err != nil {
			continue // the bad records some logs hold on purpose
		}
		out = append(out, c)
	}
	return out
}

// storedPlan reads the plan of a command log record value as it was
// stored, without the catalog.
func storedPlan(t *testing.T, raw json.RawMessage) *topology.Graph {
	t.Helper()
	var g topology.Graph
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// replan plans the statement of stored query q again on cat, with the
// names it was first planned with.
func replan(t *testing.T, cat *catalog.Catalog, q *catalog.Query) (*topology.Graph, bool) {
	t.Helper()
	stmts, err := parser.Parse(q.SQL)
	if err != nil || len(stmts) != 1 {
		return nil, false
	}
	opts := planner.QueryOptions{QueryID: q.ID, OffsetReset: q.Plan.OffsetReset, InternalPrefix: replayPrefix, Sink: q.Sink}
	var sel *ast.Query
	switch st := stmts[0].(type) {
	case *ast.CreateAsSelect:
		sel, opts.SinkPos, opts.SinkProps = st.Query, st.NamePos, st.Props
		if st.Kind == ast.Table {
			opts.SinkKind = catalog.Table
		}
	case *ast.InsertInto:
		target, ok := cat.Source(st.Target)
		if !ok {
			return nil, false
		}
		sel, opts.Target = st.Query, target
	default:
		return nil, false
	}
	p, err := planner.PlanSelect(cat, sel, opts)
	if err != nil {
		t.Logf("%s: not planned again: %v", q.ID, err)
		return nil, false
	}
	return p.Graph, true
}

// settingsOf lists the operator settings of g's steps, those of its joins'
// right inputs included.
func settingsOf(g *topology.Graph) []string {
	var out []string
	for i, st := range g.Steps {
		if st.WithOld {
			out = append(out, "withOld "+strconv.Itoa(i))
		}
		if st.PassAll {
			out = append(out, "passAll "+strconv.Itoa(i))
		}
		if j := st.Join; j != nil {
			out = append(out, strings.Join([]string{"join", j.ExtraState, j.ExtraChangelog, boolText(j.LeftMaterialized), boolText(j.RightMaterialized)}, " "))
			if j.Right != nil {
				out = append(out, settingsOf(j.Right)...)
			}
		}
	}
	return out
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// ssStore matches the changelog of a stream-stream join's store, as
// plans named it before they took ksqlDB's names (Join-left-changelog,
// Join2-right-changelog, Join-left-changelog-outer) and after
// (KSTREAM-JOINTHIS-0000000008-store-changelog).
var ssStore = regexp.MustCompile(`Join\d*-(?:left|right)-changelog(?:-outer)?|KSTREAM-[A-Z]+-\d{10}-store-changelog`)

// ssStores blanks the names of stream-stream join stores' changelogs: a
// stored plan keeps the names it was planned with, which its running
// query's topics have.
func ssStores(b []byte) []byte { return ssStore.ReplaceAll(b, []byte("SS-STORE-changelog")) }

// TestUpgradeStoredPlans takes every plan of the command logs of
// testdata/replay, written before plans had a version: each reads with
// version 0 and no physical plan, upgrades, and then has the physical
// plan and operator settings that planning its statement again today
// gives. An upgraded plan reads back from JSON unchanged, and upgrades no
// further.
func TestUpgradeStoredPlans(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "replay", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no replay fixture: %v", err)
	}
	plans, compared := 0, 0
	for _, file := range files {
		cat := catalog.New()
		for _, cmd := range replayCommands(t, filepath.Base(file)) {
			if cmd.Kind == catalog.CreateQuery || cmd.Kind == catalog.ReplaceQuery {
				// The plan as the log holds it: Apply upgrades the
				// command's own.
				raw, err := json.Marshal(cmd.Query.Plan)
				if err != nil {
					t.Fatal(err)
				}
				g := storedPlan(t, raw)
				if g.Version != 0 || g.Physical != nil {
					t.Fatalf("%s %s: a stored plan of version %d with physical %v; the fixture predates plan versions", file, cmd.Query.ID, g.Version, g.Physical != nil)
				}
				changed, err := topology.Upgrade(g)
				if err != nil || !changed {
					t.Fatalf("%s %s: upgrade: changed %v, %v", file, cmd.Query.ID, changed, err)
				}
				plans++
				if g.Version != topology.Version || g.Physical == nil || len(g.Physical.Stages) == 0 {
					t.Fatalf("%s %s: upgraded to version %d with physical %+v", file, cmd.Query.ID, g.Version, g.Physical)
				}
				b, err := json.Marshal(g)
				if err != nil {
					t.Fatal(err)
				}
				back := storedPlan(t, b)
				if !reflect.DeepEqual(back, g) {
					t.Errorf("%s %s: an upgraded plan reads back changed from JSON", file, cmd.Query.ID)
				}
				if b2, _ := json.Marshal(back); string(b2) != string(b) {
					t.Errorf("%s %s: the JSON of an upgraded plan is not stable:\n%s\n%s", file, cmd.Query.ID, b, b2)
				}
				if changed, err := topology.Upgrade(back); changed || err != nil {
					t.Errorf("%s %s: an upgraded plan upgrades again: %v, %v", file, cmd.Query.ID, changed, err)
				}
				if cmd.Source == nil || !cmd.Source.IsSource {
					if fresh, ok := replan(t, cat, cmd.Query); ok {
						compared++
						a, _ := json.Marshal(g.Physical)
						f, _ := json.Marshal(fresh.Physical)
						if string(ssStores(a)) != string(ssStores(f)) {
							t.Errorf("%s %s: the upgraded plan's physical plan is\n%s\nplanning it again gives\n%s", file, cmd.Query.ID, a, f)
						}
						if a, f := ssStores([]byte(strings.Join(settingsOf(g), "\n"))), ssStores([]byte(strings.Join(settingsOf(fresh), "\n"))); string(a) != string(f) {
							t.Errorf("%s %s: upgraded settings %q, planned again %q", file, cmd.Query.ID, a, f)
						}
					}
				}
			}
			_ = cat.Apply(cmd)
		}
	}
	t.Logf("%d stored plans upgraded, %d compared with their statement planned again", plans, compared)
	if compared < plans/2 {
		t.Errorf("only %d of %d stored plans were planned again", compared, plans)
	}
}
