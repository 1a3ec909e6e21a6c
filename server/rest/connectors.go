package rest

import (
	"github.com/sluice-sql/sluice/engine/api"
)

// connectorEntityJSON draws the connector statements' answers as ksqlDB's
// entities: connector_info (CreateConnectorEntity), connector_list,
// connector_description, drop_connector and warning_entity; nil for
// another entity. Configurations come with their secrets hidden already.
func connectorEntityJSON(base func(string) map[string]any, en api.Entity) map[string]any {
	switch en := en.(type) {
	case *api.ConnectorInfo:
		tasks := []any{}
		for _, id := range en.Tasks {
			tasks = append(tasks, map[string]any{"connector": en.Name, "task": id})
		}
		cfg := en.Config
		if cfg == nil {
			cfg = map[string]string{}
		}
		e := base("connector_info")
		e["info"] = map[string]any{"name": en.Name, "config": cfg, "tasks": tasks, "type": en.Type}
		return e
	case *api.ConnectorList:
		list := []any{}
		for _, c := range en.Connectors {
			info := map[string]any{"name": c.Name, "type": c.Type}
			// ksqlDB leaves out what it could not learn.
			if c.Class != "" {
				info["className"] = c.Class
			}
			if c.State != "" {
				info["state"] = c.State
			}
			list = append(list, info)
		}
		e := base("connector_list")
		e["connectors"], e["warnings"] = list, warningsJSON(en.Warnings)
		return e
	case *api.ConnectorDescription:
		tasks := []any{}
		for _, t := range en.Tasks {
			task := connectorStateJSON(t.ConnectorState)
			task["id"] = t.ID
			tasks = append(tasks, task)
		}
		sources := []any{}
		for i := range en.Sources {
			sources = append(sources, sourceDescription(&api.SourceDescription{Source: en.Sources[i]}))
		}
		topics := en.Topics
		if topics == nil {
			topics = []string{}
		}
		cfg := en.Config
		if cfg == nil {
			cfg = map[string]string{}
		}
		e := base("connector_description")
		e["connectorClass"] = en.Class
		e["status"] = map[string]any{"name": en.Name, "connector": connectorStateJSON(en.Connector), "tasks": tasks, "type": en.Type}
		e["sources"], e["topics"], e["config"], e["warnings"] = sources, topics, cfg, warningsJSON(en.Warnings)
		return e
	case *api.ConnectorDropped:
		e := base("drop_connector")
		e["connectorName"] = en.Name
		return e
	case *api.Warning:
		e := base("warning_entity")
		e["message"] = en.Message
		return e
	}
	return nil
}

// connectorStateJSON is Connect's state of a connector or task: its trace
// only when it has one.
func connectorStateJSON(s api.ConnectorState) map[string]any {
	out := map[string]any{"state": s.State, "worker_id": s.WorkerID}
	if s.Trace != "" {
		out["trace"] = s.Trace
	}
	return out
}

// warningsJSON are ksqlDB's KsqlWarnings.
func warningsJSON(ws []string) []any {
	out := []any{}
	for _, w := range ws {
		out = append(out, map[string]any{"message": w})
	}
	return out
}
