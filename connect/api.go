package connect

import (
	"context"
	"net/http"
	"sort"
	"strings"
)

// The connector types, as Connect names them.
const (
	Source  = "source"
	Sink    = "sink"
	Unknown = "unknown"
)

// Info is a connector's configuration (GET /connectors/{name}).
type Info struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Type   string            `json:"type"`
	Tasks  []struct {
		Connector string `json:"connector"`
		Task      int    `json:"task"`
	} `json:"tasks"`
}

// Class is the connector's connector.class.
func (i *Info) Class() string { return i.Config["connector.class"] }

// State is the state of a connector or of one of its tasks: RUNNING,
// PAUSED, STOPPED, FAILED, UNASSIGNED or RESTARTING; Trace is the stack
// trace of a FAILED one.
type State struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskState is a task's State.
type TaskState struct {
	ID int `json:"id"`
	State
}

// Status is a connector's state and its tasks' (GET
// /connectors/{name}/status).
type Status struct {
	Name      string      `json:"name"`
	Connector State       `json:"connector"`
	Tasks     []TaskState `json:"tasks"`
	Type      string      `json:"type"`
}

// Plugin is an installed connector class (GET /connector-plugins).
type Plugin struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// Matches reports whether class names the plugin as Connect accepts it:
// its full class name, its simple name, or its simple name without the
// "Connector" suffix (Connect's alias).
func (p Plugin) Matches(class string) bool {
	if class == p.Class {
		return true
	}
	simple := p.Class[strings.LastIndex(p.Class, ".")+1:]
	return class == simple || class == strings.TrimSuffix(simple, "Connector")
}

// ConfigValue is one property's verdict in a validation.
type ConfigValue struct {
	Name   string   `json:"name"`
	Errors []string `json:"errors"`
}

// Validation is Connect's verdict on a configuration (PUT
// /connector-plugins/{class}/config/validate).
type Validation struct {
	Name       string `json:"name"`
	ErrorCount int    `json:"error_count"`
	Configs    []struct {
		Value ConfigValue `json:"value"`
	} `json:"configs"`
}

// Errors are the refused properties, each with its messages.
func (v *Validation) Errors() []ConfigValue {
	var out []ConfigValue
	for _, c := range v.Configs {
		if len(c.Value.Errors) > 0 {
			out = append(out, c.Value)
		}
	}
	return out
}

// Expanded is a connector as GET /connectors?expand=info&expand=status
// lists it.
type Expanded struct {
	Info   *Info   `json:"info"`
	Status *Status `json:"status"`
}

// Connectors lists the connectors' names, sorted.
func (c *Client) Connectors(ctx context.Context) ([]string, error) {
	var names []string
	if err := c.do(ctx, http.MethodGet, "/connectors", nil, &names); err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// ConnectorsExpanded lists every connector with its configuration and
// status, in one call.
func (c *Client) ConnectorsExpanded(ctx context.Context) (map[string]Expanded, error) {
	out := map[string]Expanded{}
	if err := c.do(ctx, http.MethodGet, "/connectors?expand=info&expand=status", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Info returns a connector's configuration.
func (c *Client) Info(ctx context.Context, name string) (*Info, error) {
	var out Info
	if err := c.do(ctx, http.MethodGet, "/connectors/"+esc(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Status returns a connector's state and its tasks'.
func (c *Client) Status(ctx context.Context, name string) (*Status, error) {
	var out Status
	if err := c.do(ctx, http.MethodGet, "/connectors/"+esc(name)+"/status", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Topics returns the topics a connector used since it was created or its
// topics were last reset (GET /connectors/{name}/topics), sorted.
func (c *Client) Topics(ctx context.Context, name string) ([]string, error) {
	var out map[string]struct {
		Topics []string `json:"topics"`
	}
	if err := c.do(ctx, http.MethodGet, "/connectors/"+esc(name)+"/topics", nil, &out); err != nil {
		return nil, err
	}
	topics := append([]string(nil), out[name].Topics...)
	sort.Strings(topics)
	return topics, nil
}

// Plugins lists the installed connector classes.
func (c *Client) Plugins(ctx context.Context) ([]Plugin, error) {
	var out []Plugin
	if err := c.do(ctx, http.MethodGet, "/connector-plugins", nil, &out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Class < out[j].Class })
	return out, nil
}

// Validate asks Connect's verdict on config for the connector class.
func (c *Client) Validate(ctx context.Context, class string, config map[string]string) (*Validation, error) {
	var out Validation
	if err := c.do(ctx, http.MethodPut, "/connector-plugins/"+esc(class)+"/config/validate", config, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Create creates the connector name with config.
func (c *Client) Create(ctx context.Context, name string, config map[string]string) (*Info, error) {
	var out Info
	body := map[string]any{"name": name, "config": config}
	if err := c.do(ctx, http.MethodPost, "/connectors", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete deletes the connector name.
func (c *Client) Delete(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/connectors/"+esc(name), nil, nil)
}
