package rest

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// serveStatuses answers GET /status: every command's status by id, those
// of the statements run before a restart too.
func (h *Handler) serveStatuses(w http.ResponseWriter, _ *http.Request) {
	out := map[string]string{}
	for _, cs := range h.eng.CommandStatuses() {
		out[cs.ID] = cs.Status
	}
	writeJSON(w, http.StatusOK, map[string]any{"commandStatuses": out})
}

// serveStatus answers GET /status/{type}/{entity}/{action}; the entity may
// be given with or without its backquotes.
func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request) {
	want := strings.ReplaceAll(r.PathValue("commandId"), "`", "")
	cs, found := h.eng.CommandStatus(want)
	if !found {
		writeError(w, http.StatusNotFound, errorBody{Type: "generic_error", Code: codeNotFound,
			Message: "Command not found: " + want + "; GET /status lists the commands the catalog holds"})
		return
	}
	var qid *string
	if cs.QueryID != "" {
		qid = &cs.QueryID
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": cs.Status, "message": cs.Message, "queryId": qid})
}

// serveInfo answers GET /info with ksqlDB's KsqlServerInfo.
func (h *Handler) serveInfo(w http.ResponseWriter, _ *http.Request) {
	status := "RUNNING"
	if h.shutdown.Err() != nil {
		status = "TERMINATING"
	}
	writeJSON(w, http.StatusOK, map[string]any{"KsqlServerInfo": map[string]any{
		"version":        h.opts.Version,
		"kafkaClusterId": h.opts.KafkaClusterID,
		"ksqlServiceId":  h.opts.ServiceID,
		"serverStatus":   status,
	}})
}

// serveRoot redirects to /info, as ksqlDB does.
func (h *Handler) serveRoot(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/info", http.StatusTemporaryRedirect)
}

// serveHealthcheck answers GET /healthcheck: the catalog is loaded once
// the engine runs; Kafka is asked. It answers 503 when unhealthy.
func (h *Handler) serveHealthcheck(w http.ResponseWriter, r *http.Request) {
	kafkaOK := true
	if h.opts.CheckKafka != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		kafkaOK = h.opts.CheckKafka(ctx) == nil
		cancel()
	}
	running := h.shutdown.Err() == nil
	healthy := kafkaOK && running
	state := "READY"
	if !running {
		state = "TERMINATING"
	}
	status := http.StatusOK
	if !healthy {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]any{
		"isHealthy": healthy,
		"details": map[string]any{
			"metastore":     map[string]bool{"isHealthy": true},
			"kafka":         map[string]bool{"isHealthy": kafkaOK},
			"commandRunner": map[string]bool{"isHealthy": running},
		},
		"serverState": state,
	})
}
