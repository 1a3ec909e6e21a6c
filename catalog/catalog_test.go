package catalog

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
)

func stream(name, topic string) *Source {
	return &Source{Name: name, Kind: Stream, Topic: topic, Partitions: 1, KeyFormat: "KAFKA", ValueFormat: "JSON",
		Key:   []types.Column{{Name: "ID", Type: types.StringType}},
		Value: []types.Column{{Name: "V", Type: types.IntType}}, SQL: "CREATE STREAM " + name + " ..."}
}

func csas(id, from, sink string) *Command {
	return &Command{Kind: CreateQuery, Source: stream(sink, sink),
		Query: &Query{ID: id, Sink: sink, State: Running, SQL: "CREATE STREAM " + sink + " AS SELECT * FROM " + from + ";",
			Plan: &topology.Graph{QueryID: id, Source: stream(from, strings.ToLower(from)).PlanNode()}}}
}

// replay encodes every command as the engine writes it to the log, decodes
// it as a starting server reads it, and applies it to a new catalog.
func replay(t *testing.T, cmds []*Command) *Catalog {
	t.Helper()
	c := New()
	for i, cmd := range cmds {
		b, err := cmd.Encode()
		if err != nil {
			t.Fatalf("command %d: encode: %v", i, err)
		}
		d, err := DecodeCommand(b)
		if err != nil {
			t.Fatalf("command %d: decode: %v", i, err)
		}
		if err := c.Apply(d); err != nil {
			t.Fatalf("command %d: apply: %v", i, err)
		}
	}
	return c
}

func names(ss []*Source) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func TestApplyAndReplay(t *testing.T) {
	cmds := []*Command{
		{Kind: CreateSource, Source: stream("ORDERS", "orders")},
		csas("CSAS_BIG_1", "ORDERS", "BIG"),
		{Kind: CreateSource, Source: stream("MERGED", "merged")},
		{Kind: CreateQuery, Query: &Query{ID: "INSERTQUERY_2", Sink: "MERGED", State: Running,
			Plan: &topology.Graph{QueryID: "INSERTQUERY_2", Source: stream("BIG", "BIG").PlanNode()}}},
		{Kind: SetQueryState, QueryID: "CSAS_BIG_1", State: Paused},
		{Kind: CreateType, TypeName: "ADDRESS", Type: types.StringType},
	}
	c := replay(t, cmds)
	if got, want := names(c.Sources()), []string{"BIG", "MERGED", "ORDERS"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sources = %v, want %v", got, want)
	}
	q, ok := c.Query("CSAS_BIG_1")
	if !ok || q.State != Paused {
		t.Fatalf("CSAS_BIG_1 = %+v, %v; want it paused", q, ok)
	}
	if by, ok := c.CreatedBy("BIG"); !ok || by != "CSAS_BIG_1" {
		t.Errorf("CreatedBy(BIG) = %q, %v", by, ok)
	}
	if got := c.Writers("MERGED"); !reflect.DeepEqual(got, []string{"INSERTQUERY_2"}) {
		t.Errorf("Writers(MERGED) = %v", got)
	}
	if got := c.Readers("BIG"); !reflect.DeepEqual(got, []string{"INSERTQUERY_2"}) {
		t.Errorf("Readers(BIG) = %v", got)
	}
	if _, ok := c.Type("ADDRESS"); !ok {
		t.Error("type ADDRESS missing")
	}
	// A source read back from the log is the one written, statement
	// included; the plan's copy carries no statement.
	src, _ := c.Source("ORDERS")
	if !reflect.DeepEqual(src, stream("ORDERS", "orders")) {
		t.Errorf("ORDERS read back as %+v", src)
	}
	if q, _ := c.Query("INSERTQUERY_2"); q.Plan.Source.SQL != "" || q.Plan.Source.Kind != Stream {
		t.Errorf("plan source = %+v", q.Plan.Source)
	}

	// Terminating and dropping replay too.
	c = replay(t, append(cmds,
		&Command{Kind: TerminateQuery, QueryID: "INSERTQUERY_2"},
		&Command{Kind: TerminateQuery, QueryID: "CSAS_BIG_1"},
		&Command{Kind: DropSource, Name: "BIG"},
		&Command{Kind: DropType, TypeName: "ADDRESS"},
	))
	if got, want := names(c.Sources()), []string{"MERGED", "ORDERS"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sources after drops = %v, want %v", got, want)
	}
	if len(c.Queries()) != 0 {
		t.Errorf("queries after terminations = %d", len(c.Queries()))
	}
	if _, ok := c.CreatedBy("BIG"); ok {
		t.Error("BIG still has a creating query")
	}
	if _, ok := c.Type("ADDRESS"); ok {
		t.Error("type ADDRESS still there")
	}
}

func TestApplyRefusals(t *testing.T) {
	base := []*Command{{Kind: CreateSource, Source: stream("ORDERS", "orders")}}
	for _, tt := range []struct {
		cmd  *Command
		want string
	}{
		{&Command{Kind: CreateSource, Source: stream("ORDERS", "other")}, "source ORDERS already exists"},
		{&Command{Kind: DropSource, Name: "NOBODY"}, "drop of unknown source NOBODY"},
		{csas("CSAS_X_1", "GHOST", "X"), "needs source GHOST"},
		{&Command{Kind: CreateQuery, Query: &Query{ID: "INSERTQUERY_1", Sink: "NOWHERE", Plan: &topology.Graph{Source: stream("ORDERS", "orders").PlanNode()}}}, "needs source NOWHERE"},
		{&Command{Kind: TerminateQuery, QueryID: "CSAS_NONE_9"}, "terminate of unknown query"},
		{&Command{Kind: SetQueryState, QueryID: "CSAS_NONE_9", State: Paused}, "state change of unknown query"},
		{&Command{Kind: DropType, TypeName: "NOPE"}, "drop of unknown type"},
	} {
		c := replay(t, base)
		err := c.Apply(tt.cmd)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Apply error = %v, want one containing %q", tt.cmd.Kind, err, tt.want)
		}
	}
	c := replay(t, base)
	var missing *MissingSourceError
	if err := c.Apply(csas("CSAS_X_1", "GHOST", "X")); !errors.As(err, &missing) || missing.Name != "GHOST" || missing.Query != "CSAS_X_1" {
		t.Errorf("missing input error = %v", err)
	}
}

func TestDecodeCommandRefusals(t *testing.T) {
	for _, tt := range []struct {
		record string
		want   string
	}{
		{`not json`, "undecodable"},
		{`{"kind":"create_source"}`, "without a source"},
		{`{"kind":"launch_missiles"}`, `unknown command kind "launch_missiles"`},
		{`{"kind":"create_source","source":{"name":"S","kind":"RIVER","topic":"t","keyFormat":"KAFKA","valueFormat":"JSON"}}`, "unknown kind"},
		{`{"kind":"create_source","source":{"name":"S","kind":"STREAM","keyFormat":"KAFKA","valueFormat":"JSON"}}`, "without a topic"},
		{`{"kind":"create_source","source":{"name":"S","kind":"STREAM","topic":"t","keyFormat":"KAFKA","valueFormat":"JSON","system":true}}`, "declared by the server"},
	} {
		_, err := DecodeCommand([]byte(tt.record))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeCommand(%s) error = %v, want one containing %q", tt.record, err, tt.want)
		}
	}
	_, err := DecodeCommand([]byte(`{"kind":"create_source","version":999}`))
	var newer *NewerVersionError
	if !errors.As(err, &newer) || newer.Version != 999 {
		t.Errorf("newer record error = %v", err)
	}
	if _, err := DecodeCommand(nil); err == nil {
		t.Error("a null record decoded")
	}
}
