package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/secret"
	"github.com/sluice-sql/sluice/parser/ast"
)

// This file runs the connector statements against the Kafka Connect worker
// of Config.Connect, as ksqlDB does: the worker does the work and keeps the
// state, which every statement asks it for (Sluice keeps no copy). Errors
// start with ksqlDB's message; Sluice's hint follows on a line of its own.
// Secrets of a connector's configuration are hidden in what the statements
// answer, in their errors (Connect's messages may echo a value) and in
// logs.

// connectorStatement runs st, a connector statement; ok is false for
// another statement.
func (e *Engine) connectorStatement(ctx context.Context, st ast.Statement) (r Result, ok bool, err error) {
	switch st.(type) {
	case *ast.CreateConnector, *ast.DropConnector, *ast.DescribeConnector, *ast.ShowConnectors:
	default:
		return Result{}, false, nil
	}
	c := e.cfg.Connect
	if c == nil {
		return Result{}, true, &StatementError{Statement: st.SQL(), Line: st.Position().Line, Col: st.Position().Col, Code: CodeBadStatement,
			Msg: "No Kafka Connect worker is configured for this server",
			Hint: fmt.Sprintf("start sluice-server with %s http://HOST:8083 (or set %s in its --config file) to use CREATE, DROP, DESCRIBE and SHOW CONNECTOR(S)",
				connect.URLFlag, connect.URLProperty)}
	}
	switch st := st.(type) {
	case *ast.CreateConnector:
		r, err = e.createConnector(ctx, c, st)
	case *ast.DropConnector:
		r, err = e.dropConnector(ctx, c, st)
	case *ast.DescribeConnector:
		r, err = e.describeConnector(ctx, c, st)
	case *ast.ShowConnectors:
		r, err = e.showConnectors(ctx, c, st)
	}
	return r, true, err
}

// connectError is a connector statement's failure: ksqlDB's message msg
// (Connect's own at its end, secrets hidden by red), the hint, and the
// error code ksqlDB gives (the worker's HTTP status times 100 for its
// refusals, 50000 for a worker that did not answer).
func connectError(st ast.Statement, red *secret.Redactor, msg, hint string, cause error) error {
	p := st.Position()
	code := CodeBadStatement
	var ce *connect.Error
	var ue *connect.UnreachableError
	var te *connect.TimeoutError
	switch {
	case errors.As(cause, &ce):
		if ce.Status >= 400 && ce.Status <= 599 {
			code = ce.Status * 100
		}
		msg += ce.Message
	case errors.As(cause, &ue), errors.As(cause, &te):
		code = CodeServerError
		msg += cause.Error()
	case cause != nil:
		if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
			// The statement's context ended: the engine says why.
			return cause
		}
		code = CodeServerError
		msg += cause.Error()
	}
	return &StatementError{Statement: st.SQL(), Line: p.Line, Col: p.Col, Code: code, Msg: red.Text(msg), Hint: red.Text(hint)}
}

// connectorConfig is the configuration CREATE CONNECTOR sends: its WITH
// properties, and its name as "name", as ksqlDB sends it.
func connectorConfig(st *ast.CreateConnector) map[string]string {
	cfg := make(map[string]string, len(st.Props)+1)
	for _, p := range st.Props {
		cfg[p.Name] = p.Value
	}
	cfg["name"] = st.Name
	return cfg
}

// javaMap writes cfg as Java prints a map, {k=v, k2=v2}, in key order with
// secrets hidden: ksqlDB's message names the configuration so.
func javaMap(cfg map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		parts = append(parts, k+"="+secret.Value(k, cfg[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (e *Engine) createConnector(ctx context.Context, c *connect.Client, st *ast.CreateConnector) (Result, error) {
	cfg := connectorConfig(st)
	red := secret.NewRedactor(cfg)
	ctx = connect.WithRedaction(ctx, red.Text)
	class, ok := cfg["connector.class"]
	if !ok {
		return Result{}, connectError(st, red, "Validation error: Connector config "+javaMap(cfg)+" contains no connector type",
			"name the connector's class in the WITH list, e.g. 'connector.class'='io.debezium.connector.postgresql.PostgresConnector'", nil)
	}
	if strings.TrimSpace(class) == "" {
		return Result{}, connectError(st, red, "Validation error: Connector type cannot be empty",
			"give 'connector.class' the class of an installed connector; the worker lists them at GET /connector-plugins", nil)
	}
	names, err := c.Connectors(ctx)
	if err != nil {
		return Result{}, connectError(st, red, "Failed to check for existing connector: ", "", err)
	}
	if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, st.Name) }) {
		msg := fmt.Sprintf("Connector %s already exists", st.Name)
		if st.IfNotExists {
			return entity(&api.Warning{Message: msg}), nil
		}
		p := st.Position()
		return Result{}, &StatementError{Statement: st.SQL(), Line: p.Line, Col: p.Col, Code: 40900, Msg: msg,
			Hint: "drop it first (DROP CONNECTOR " + ast.QuoteIdent(st.Name) + "), or write CREATE ... CONNECTOR IF NOT EXISTS"}
	}
	plugins, err := c.Plugins(ctx)
	if err != nil {
		return Result{}, connectError(st, red, "Failed to list the worker's connector plugins: ", "", err)
	}
	i := slices.IndexFunc(plugins, func(p connect.Plugin) bool { return p.Matches(class) })
	if i < 0 {
		return Result{}, connectError(st, red, fmt.Sprintf("Validation error: Connector class %s is not installed on the Kafka Connect worker at %s", class, c.URL()),
			installed(plugins), nil)
	}
	plugin := plugins[i]
	want := connect.Source
	if st.Kind == ast.SinkConnector {
		want = connect.Sink
	}
	if plugin.Type != want && (plugin.Type == connect.Source || plugin.Type == connect.Sink) {
		return Result{}, connectError(st, red, fmt.Sprintf("%s is a %s connector, not a %s connector", plugin.Class, plugin.Type, want),
			"write CREATE "+strings.ToUpper(plugin.Type)+" CONNECTOR", nil)
	}
	v, err := c.Validate(ctx, plugin.Class, cfg)
	if err != nil {
		return Result{}, connectError(st, red, "Validation error: ", "", err)
	}
	if errs := v.Errors(); len(errs) > 0 {
		lines := make([]string, len(errs))
		for i, ce := range errs {
			lines[i] = ce.Name + " - " + strings.Join(slices.Compact(slices.Clone(ce.Errors)), ". ")
		}
		return Result{}, connectError(st, red, "Validation error: "+strings.Join(lines, "\n"), "", nil)
	}
	info, err := c.Create(ctx, st.Name, cfg)
	if err != nil {
		return Result{}, connectError(st, red, "Failed to create connector: ", "", err)
	}
	e.log.Info("connector created", "connector", info.Name, "class", plugin.Class, "type", info.Type, "worker", c.URL())
	out := &api.ConnectorInfo{Name: info.Name, Type: orUnknown(info.Type), Config: secret.Config(info.Config)}
	for _, t := range info.Tasks {
		out.Tasks = append(out.Tasks, t.Task)
	}
	return entity(out), nil
}

// installed is the hint listing the worker's connector classes.
func installed(plugins []connect.Plugin) string {
	if len(plugins) == 0 {
		return "the worker has no connector plugins installed: add them to a directory of its plugin.path and restart it"
	}
	parts := make([]string, len(plugins))
	for i, p := range plugins {
		parts[i] = p.Class + " (" + p.Type
		if p.Version != "" {
			parts[i] += " " + p.Version
		}
		parts[i] += ")"
	}
	return "installed: " + strings.Join(parts, ", ")
}

func orUnknown(t string) string {
	if t == connect.Source || t == connect.Sink {
		return t
	}
	return connect.Unknown
}

func (e *Engine) dropConnector(ctx context.Context, c *connect.Client, st *ast.DropConnector) (Result, error) {
	if err := c.Delete(ctx, st.Name); err != nil {
		if st.IfExists && connect.IsNotFound(err) {
			return entity(&api.Warning{Message: "Connector '" + st.Name + "' does not exist."}), nil
		}
		hint := ""
		if connect.IsNotFound(err) {
			hint = "SHOW CONNECTORS lists the worker's connectors; write DROP CONNECTOR IF EXISTS to drop one that may be gone"
		}
		return Result{}, connectError(st, nil, "Failed to drop connector: ", hint, err)
	}
	e.log.Info("connector dropped", "connector", st.Name, "worker", c.URL())
	return entity(&api.ConnectorDropped{Name: st.Name}), nil
}

func (e *Engine) describeConnector(ctx context.Context, c *connect.Client, st *ast.DescribeConnector) (Result, error) {
	status, err := c.Status(ctx, st.Name)
	if err != nil {
		hint := ""
		if connect.IsNotFound(err) {
			hint = "SHOW CONNECTORS lists the worker's connectors"
		}
		return Result{}, connectError(st, nil, "Failed to query connector status: ", hint, err)
	}
	info, err := c.Info(ctx, st.Name)
	if err != nil {
		return Result{}, connectError(st, nil, "Failed to describe connector: ", "", err)
	}
	red := secret.NewRedactor(info.Config)
	ctx = connect.WithRedaction(ctx, red.Text)
	d := &api.ConnectorDescription{Name: st.Name, Class: info.Class(), Type: orUnknown(info.Type),
		Connector: connectorState(red, status.Connector), Config: secret.Config(info.Config)}
	for _, t := range status.Tasks {
		d.Tasks = append(d.Tasks, api.ConnectorTask{ID: t.ID, ConnectorState: connectorState(red, t.State)})
	}
	sort.Slice(d.Tasks, func(i, j int) bool { return d.Tasks[i].ID < d.Tasks[j].ID })
	topics, err := c.Topics(ctx, st.Name)
	switch {
	case connect.IsNotFound(err):
		// A worker without the topics endpoint (before Kafka 2.5).
	case err != nil:
		if ctx.Err() != nil {
			return Result{}, err
		}
		d.Warnings = append(d.Warnings, red.Text("Could not list related topics due to error: "+err.Error()))
	}
	// A sink's configured topics are its topics before it read any.
	if info.Type == connect.Sink {
		for _, t := range strings.Split(info.Config["topics"], ",") {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
		sort.Strings(topics)
	}
	d.Topics = topics
	for _, kind := range []api.SourceKind{api.SourceStream, api.SourceTable} {
		for _, src := range e.Sources(kind) {
			if slices.Contains(topics, src.Topic) {
				d.Sources = append(d.Sources, src)
			}
		}
	}
	sort.Slice(d.Sources, func(i, j int) bool { return d.Sources[i].Name < d.Sources[j].Name })
	return entity(d), nil
}

func connectorState(red *secret.Redactor, s connect.State) api.ConnectorState {
	return api.ConnectorState{State: s.State, WorkerID: s.WorkerID, Trace: red.Text(s.Trace)}
}

func (e *Engine) showConnectors(ctx context.Context, c *connect.Client, st *ast.ShowConnectors) (Result, error) {
	all, err := c.ConnectorsExpanded(ctx)
	if err != nil {
		return Result{}, connectError(st, nil, "Failed to list connectors: ", "", err)
	}
	l := &api.ConnectorList{Connectors: []api.ConnectorSummary{}}
	for _, n := range slices.Sorted(maps.Keys(all)) {
		x := all[n]
		if x.Info == nil {
			if st.Scope == ast.AllConnectors {
				l.Connectors = append(l.Connectors, api.ConnectorSummary{Name: n, Type: connect.Unknown})
			}
			l.Warnings = append(l.Warnings, fmt.Sprintf("Could not describe connector %s: the worker gave no configuration", n))
			continue
		}
		typ := orUnknown(x.Info.Type)
		if st.Scope == ast.SourceConnectors && typ != connect.Source || st.Scope == ast.SinkConnectors && typ != connect.Sink {
			continue
		}
		s := api.ConnectorSummary{Name: n, Type: typ, Class: x.Info.Class()}
		if x.Status != nil {
			s.State = summarizeState(x.Status)
		}
		l.Connectors = append(l.Connectors, s)
	}
	return entity(l), nil
}

// summarizeState is ksqlDB's state of a connector in SHOW CONNECTORS: its
// own state unless RUNNING, then how many of its tasks run ("WARNING" when
// none of several does).
func summarizeState(s *connect.Status) string {
	if s.Connector.State != "RUNNING" {
		return s.Connector.State
	}
	running := 0
	for _, t := range s.Tasks {
		if t.State.State == "RUNNING" {
			running++
		}
	}
	state := "RUNNING"
	if len(s.Tasks) > 0 && running == 0 {
		state = "WARNING"
	}
	return fmt.Sprintf("%s (%d/%d tasks RUNNING)", state, running, len(s.Tasks))
}
