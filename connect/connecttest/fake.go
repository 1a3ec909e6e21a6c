package connecttest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
)

// Plugin is an installed connector class.
type Plugin struct{ Class, Type, Version string }

// DefaultPlugins are Debezium's PostgreSQL source and JDBC sink.
var DefaultPlugins = []Plugin{
	{Class: "io.debezium.connector.postgresql.PostgresConnector", Type: "source", Version: "3.6.1.Final"},
	{Class: "io.debezium.connector.jdbc.JdbcSinkConnector", Type: "sink", Version: "3.4.0.Final"},
}

type task struct {
	state, trace string
}

type connector struct {
	config map[string]string
	typ    string
	state  string
	tasks  []task
	topics []string
}

// Worker is a fake Connect worker. Its fields may be set before the first
// call; its methods are safe for concurrent use.
type Worker struct {
	*httptest.Server
	// Plugins are the installed classes; DefaultPlugins when nil.
	Plugins []Plugin
	// Validate, when set, gives each property's errors for a
	// configuration of class (Connect's validation); nil accepts all.
	Validate func(class string, config map[string]string) map[string][]string
	// User and Password, when User is set, are required as basic
	// authentication.
	User, Password string

	mu         sync.Mutex
	connectors map[string]*connector
	fail       []failure
	calls      []string
}

type failure struct {
	method string
	path   string
	status int
	msg    string
}

// WorkerID is the worker_id the fake reports.
const WorkerID = "127.0.0.1:8083"

// New starts a fake worker; Close stops it.
func New() *Worker {
	w := &Worker{connectors: map[string]*connector{}}
	w.Server = httptest.NewServer(http.HandlerFunc(w.serve))
	return w
}

// FailNext makes the next n calls of method (any when empty) whose path
// starts with path answer status with Connect's error body of msg.
func (w *Worker) FailNext(method, path string, n int, status int, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for range n {
		w.fail = append(w.fail, failure{method: method, path: path, status: status, msg: msg})
	}
}

// FailTask marks task id of connector name FAILED with trace.
func (w *Worker) FailTask(name string, id int, trace string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.connectors[name]; c != nil && id < len(c.tasks) {
		c.tasks[id] = task{state: "FAILED", trace: trace}
	}
}

// SetTopics sets the topics GET /connectors/{name}/topics lists.
func (w *Worker) SetTopics(name string, topics ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.connectors[name]; c != nil {
		c.topics = topics
	}
}

// Config is connector name's configuration as the worker keeps it; nil
// when there is none.
func (w *Worker) Config(name string) map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.connectors[name]; c != nil {
		out := map[string]string{}
		for k, v := range c.config {
			out[k] = v
		}
		return out
	}
	return nil
}

// Names are the connectors' names, sorted.
func (w *Worker) Names() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for n := range w.connectors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Calls are the calls made so far, "METHOD path".
func (w *Worker) Calls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(v)
}

func writeError(rw http.ResponseWriter, status int, msg string) {
	writeJSON(rw, status, map[string]any{"error_code": status, "message": msg})
}

func (w *Worker) plugins() []Plugin {
	if w.Plugins != nil {
		return w.Plugins
	}
	return DefaultPlugins
}

func (w *Worker) plugin(class string) (Plugin, bool) {
	for _, p := range w.plugins() {
		simple := p.Class[strings.LastIndex(p.Class, ".")+1:]
		if class == p.Class || class == simple || class == strings.TrimSuffix(simple, "Connector") {
			return p, true
		}
	}
	return Plugin{}, false
}

func (w *Worker) info(name string, c *connector) map[string]any {
	tasks := []any{}
	for i := range c.tasks {
		tasks = append(tasks, map[string]any{"connector": name, "task": i})
	}
	return map[string]any{"name": name, "config": c.config, "tasks": tasks, "type": c.typ}
}

func (w *Worker) status(name string, c *connector) map[string]any {
	tasks := []any{}
	for i, t := range c.tasks {
		m := map[string]any{"id": i, "state": t.state, "worker_id": WorkerID}
		if t.trace != "" {
			m["trace"] = t.trace
		}
		tasks = append(tasks, m)
	}
	return map[string]any{"name": name, "connector": map[string]any{"state": c.state, "worker_id": WorkerID}, "tasks": tasks, "type": c.typ}
}

func (w *Worker) serve(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, r.Method+" "+r.URL.RequestURI())
	if w.User != "" {
		if u, p, ok := r.BasicAuth(); !ok || u != w.User || p != w.Password {
			writeError(rw, http.StatusUnauthorized, "User cannot access the resource.")
			return
		}
	}
	for i, f := range w.fail {
		if (f.method == "" || f.method == r.Method) && strings.HasPrefix(r.URL.Path, f.path) {
			w.fail = append(w.fail[:i], w.fail[i+1:]...)
			writeError(rw, f.status, f.msg)
			return
		}
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/connector-plugins":
		out := []any{}
		for _, p := range w.plugins() {
			out = append(out, map[string]any{"class": p.Class, "type": p.Type, "version": p.Version})
		}
		writeJSON(rw, http.StatusOK, out)
	case r.Method == http.MethodPut && len(parts) == 4 && parts[0] == "connector-plugins" && parts[2] == "config" && parts[3] == "validate":
		var cfg map[string]string
		if err := json.NewDecoder(r.Body).Decode(&cfg); err != nil {
			writeError(rw, http.StatusBadRequest, err.Error())
			return
		}
		p, ok := w.plugin(parts[1])
		if !ok {
			writeError(rw, http.StatusInternalServerError, "Failed to find any class that implements Connector and which name matches "+parts[1])
			return
		}
		var errs map[string][]string
		if w.Validate != nil {
			errs = w.Validate(p.Class, cfg)
		}
		configs := []any{}
		count := 0
		keys := make([]string, 0, len(cfg))
		for k := range cfg {
			keys = append(keys, k)
		}
		for k := range errs {
			if _, ok := cfg[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := errs[k]
			if e == nil {
				e = []string{}
			}
			count += len(e)
			var v any
			if s, ok := cfg[k]; ok {
				v = s
			}
			configs = append(configs, map[string]any{"definition": map[string]any{"name": k},
				"value": map[string]any{"name": k, "value": v, "recommended_values": []any{}, "errors": e, "visible": true}})
		}
		writeJSON(rw, http.StatusOK, map[string]any{"name": p.Class, "error_count": count, "groups": []any{}, "configs": configs})
	case r.Method == http.MethodGet && r.URL.Path == "/connectors":
		if r.URL.Query().Has("expand") {
			out := map[string]any{}
			for n, c := range w.connectors {
				out[n] = map[string]any{"info": w.info(n, c), "status": w.status(n, c)}
			}
			writeJSON(rw, http.StatusOK, out)
			return
		}
		names := []string{}
		for n := range w.connectors {
			names = append(names, n)
		}
		sort.Strings(names)
		writeJSON(rw, http.StatusOK, names)
	case r.Method == http.MethodPost && r.URL.Path == "/connectors":
		var body struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeError(rw, http.StatusBadRequest, err.Error())
			return
		}
		if w.connectors[body.Name] != nil {
			writeError(rw, http.StatusConflict, "Connector "+body.Name+" already exists")
			return
		}
		p, ok := w.plugin(body.Config["connector.class"])
		if !ok {
			writeError(rw, http.StatusBadRequest, "Failed to find any class that implements Connector and which name matches "+body.Config["connector.class"])
			return
		}
		c := &connector{config: body.Config, typ: p.Type, state: "RUNNING", tasks: []task{{state: "RUNNING"}}}
		w.connectors[body.Name] = c
		writeJSON(rw, http.StatusCreated, w.info(body.Name, c))
	case len(parts) >= 2 && parts[0] == "connectors":
		name := parts[1]
		c := w.connectors[name]
		if c == nil {
			writeError(rw, http.StatusNotFound, "Connector "+name+" not found")
			return
		}
		switch {
		case r.Method == http.MethodDelete && len(parts) == 2:
			delete(w.connectors, name)
			rw.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodGet && len(parts) == 2:
			writeJSON(rw, http.StatusOK, w.info(name, c))
		case r.Method == http.MethodGet && len(parts) == 3 && parts[2] == "status":
			writeJSON(rw, http.StatusOK, w.status(name, c))
		case r.Method == http.MethodGet && len(parts) == 3 && parts[2] == "topics":
			topics := c.topics
			if topics == nil {
				topics = []string{}
			}
			writeJSON(rw, http.StatusOK, map[string]any{name: map[string]any{"topics": topics}})
		default:
			writeError(rw, http.StatusNotFound, "HTTP 404 Not Found")
		}
	default:
		writeError(rw, http.StatusNotFound, "HTTP 404 Not Found")
	}
}
