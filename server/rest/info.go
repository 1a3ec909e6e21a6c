package rest

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// maxCommands bounds the statuses /status remembers.
const maxCommands = 10000

// recordCommand remembers a command's status for /status and returns its
// sequence number.
func (h *Handler) recordCommand(id string, cs commandStatus) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	if _, ok := h.commands[id]; !ok {
		h.order = append(h.order, id)
	}
	h.commands[id] = cs
	if len(h.order) > maxCommands {
		delete(h.commands, h.order[0])
		h.order = h.order[1:]
	}
	return h.seq
}

// serveStatuses answers GET /status: every command's status by id.
func (h *Handler) serveStatuses(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	out := make(map[string]string, len(h.commands))
	for id, cs := range h.commands {
		out[id] = cs.Status
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"commandStatuses": out})
}

// serveStatus answers GET /status/{type}/{entity}/{action}; the entity may
// be given with or without its backquotes.
func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request) {
	want := strings.ReplaceAll(r.PathValue("commandId"), "`", "")
	h.mu.Lock()
	var cs commandStatus
	found := false
	for id, s := range h.commands {
		if strings.EqualFold(strings.ReplaceAll(id, "`", ""), want) {
			cs, found = s, true
			break
		}
	}
	h.mu.Unlock()
	if !found {
		writeError(w, http.StatusNotFound, errorBody{Type: "generic_error", Code: codeNotFound,
			Message: "Command not found: " + want + "; GET /status lists the commands this server ran"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": cs.Status, "message": cs.Message, "queryId": cs.QueryID})
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
