package render

import (
	"fmt"
	"sort"
	"strings"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// connectorEntity draws the connector statements' answers; ok is false for
// another entity.
func connectorEntity(e *sluicev1.Entity) (t *Table, ok bool) {
	switch k := e.GetKind().(type) {
	case *sluicev1.Entity_Connector:
		return &Table{Title: "Created connector " + k.Connector.GetName()}, true
	case *sluicev1.Entity_DroppedConnector:
		return &Table{Title: `Dropped connector "` + k.DroppedConnector.GetName() + `"`}, true
	case *sluicev1.Entity_Warning:
		return &Table{Title: k.Warning.GetMessage()}, true
	case *sluicev1.Entity_Connectors:
		l := k.Connectors
		t := &Table{Columns: []string{"Connector Name", "Type", "Class", "Status"}}
		for _, c := range l.GetConnectors() {
			typ := c.GetType()
			if typ == "" {
				typ = "unknown"
			}
			t.Rows = append(t.Rows, strs(c.GetName(), strings.ToUpper(typ), c.GetClass(), c.GetState()))
		}
		t.Footer = warnings(l.GetWarnings())
		return t, true
	case *sluicev1.Entity_ConnectorDescription:
		return describeConnector(k.ConnectorDescription), true
	}
	return nil, false
}

func warnings(ws []string) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString("WARNING: " + w + "\n")
	}
	return b.String()
}

// describeConnector draws DESCRIBE CONNECTOR: the connector's lines, its
// tasks as rows, then the failed tasks' traces, the Sluice sources over its
// topics, its topics and its configuration.
func describeConnector(d *sluicev1.ConnectorDescription) *Table {
	var title strings.Builder
	fmt.Fprintf(&title, "Name                 : %s\n", d.GetName())
	fmt.Fprintf(&title, "Class                : %s\n", d.GetClass())
	fmt.Fprintf(&title, "Type                 : %s\n", d.GetType())
	fmt.Fprintf(&title, "State                : %s\n", d.GetConnector().GetState())
	fmt.Fprintf(&title, "WorkerId             : %s", d.GetConnector().GetWorkerId())
	if tr := d.GetConnector().GetTrace(); tr != "" {
		fmt.Fprintf(&title, "\nTrace                : %s", strings.TrimRight(tr, "\n"))
	}
	t := &Table{Title: title.String(), Columns: []string{"Task ID", "State", "Worker"}}
	var b strings.Builder
	for _, task := range d.GetTasks() {
		st := task.GetState()
		t.Rows = append(t.Rows, []*sluicev1.Value{num(int64(task.GetId())), str(st.GetState()), str(st.GetWorkerId())})
		if tr := st.GetTrace(); tr != "" {
			fmt.Fprintf(&b, "Task %d trace:\n%s\n", task.GetId(), strings.TrimRight(tr, "\n"))
		}
	}
	if srcs := d.GetSources(); len(srcs) > 0 {
		b.WriteString("Sluice sources over its topics:\n")
		for _, s := range srcs {
			kind := "STREAM"
			if s.GetKind() == sluicev1.SourceKind_SOURCE_KIND_TABLE {
				kind = "TABLE"
			}
			fmt.Fprintf(&b, "  %s (%s, topic %s)\n", s.GetName(), kind, s.GetTopic())
		}
	}
	if ts := d.GetTopics(); len(ts) > 0 {
		b.WriteString("Related topics:\n")
		for _, tp := range ts {
			b.WriteString("  " + tp + "\n")
		}
	}
	if cfg := d.GetConfig(); len(cfg) > 0 {
		keys := make([]string, 0, len(cfg))
		for k := range cfg {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("Configuration:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s = %s\n", k, cfg[k])
		}
	}
	b.WriteString(warnings(d.GetWarnings()))
	t.Footer = b.String()
	return t
}
