package engine

import (
	"fmt"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine/api"
)

// maxStatuses bounds the command statuses kept for /status: the newest.
const maxStatuses = 10_000

// statuses are the statuses of the commands the catalog holds, by ksqlDB's
// command id (stream/`X`/create ...): those of the statements run here,
// and those rebuilt from the command log at start and as other servers of
// the cluster write it, so that they survive a restart.
type statuses struct {
	mu    sync.Mutex
	byID  map[string]api.CommandStatus
	order []string
}

func (s *statuses) record(cs api.CommandStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]api.CommandStatus{}
	}
	if _, ok := s.byID[cs.ID]; !ok {
		s.order = append(s.order, cs.ID)
	}
	s.byID[cs.ID] = cs
	if len(s.order) > maxStatuses {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
}

// CommandStatus returns the status of command id, matched without its
// backquotes and case, as ksqlDB's /status/{type}/{entity}/{action} does.
func (e *Engine) CommandStatus(id string) (api.CommandStatus, bool) {
	want := strings.ReplaceAll(id, "`", "")
	e.statuses.mu.Lock()
	defer e.statuses.mu.Unlock()
	if cs, ok := e.statuses.byID[id]; ok {
		return cs, true
	}
	for _, k := range e.statuses.order {
		if strings.EqualFold(strings.ReplaceAll(k, "`", ""), want) {
			return e.statuses.byID[k], true
		}
	}
	return api.CommandStatus{}, false
}

// CommandStatuses returns the statuses of the commands, oldest first.
func (e *Engine) CommandStatuses() []api.CommandStatus {
	e.statuses.mu.Lock()
	defer e.statuses.mu.Unlock()
	out := make([]api.CommandStatus, 0, len(e.statuses.order))
	for _, id := range e.statuses.order {
		out = append(out, e.statuses.byID[id])
	}
	return out
}

// replayedStatus is the status of a command applied from the log at
// offset (before: the catalog before it applied): its statement's command
// id and the message the statement gave, as far as the command tells.
func (e *Engine) replayedStatus(offset int64, cmd *catalog.Command, before *catalog.Source) (api.CommandStatus, bool) {
	cs := api.CommandStatus{Status: api.StatusSuccess, Seq: offset}
	kind := func(k catalog.Kind) string { return strings.ToLower(string(k)) }
	created := func(k catalog.Kind) string {
		if k == catalog.Table {
			return "Table created"
		}
		return "Stream created"
	}
	switch cmd.Kind {
	case catalog.CreateSource:
		cs.ID, cs.Message = kind(cmd.Source.Kind)+"/`"+cmd.Source.Name+"`/create", created(cmd.Source.Kind)
	case catalog.CreateQuery:
		cs.QueryID, cs.Message = cmd.Query.ID, "Created query with ID "+cmd.Query.ID
		switch {
		case cmd.Source != nil && cmd.Source.IsSource:
			cs.ID, cs.QueryID, cs.Message = "table/`"+cmd.Source.Name+"`/create", "", created(cmd.Source.Kind)
		case cmd.Source != nil:
			cs.ID = kind(cmd.Source.Kind) + "/`" + cmd.Source.Name + "`/create"
		default:
			cs.ID = "stream/`" + cmd.Query.Sink + "`/create"
		}
	case catalog.ReplaceQuery:
		cs.ID, cs.QueryID, cs.Message = kind(cmd.Source.Kind)+"/`"+cmd.Source.Name+"`/create", cmd.Query.ID, "Replaced query with ID "+cmd.Query.ID
	case catalog.DropSource:
		if before == nil {
			return cs, false
		}
		cs.ID, cs.Message = kind(before.Kind)+"/`"+cmd.Name+"`/drop", fmt.Sprintf("Source `%s` (topic: %s) was dropped.", cmd.Name, before.Topic)
	case catalog.TerminateQuery:
		cs.ID, cs.Message = "terminate/"+cmd.QueryID+"/execute", "Query terminated."
	case catalog.SetQueryState:
		verb := "resume"
		if cmd.State == catalog.Paused {
			verb = "pause"
		}
		cs.ID, cs.Message = verb+"/"+cmd.QueryID+"/execute", fmt.Sprintf("Query %s %sd.", cmd.QueryID, verb)
	case catalog.CreateType:
		cs.ID, cs.Message = "type/`"+cmd.TypeName+"`/create", fmt.Sprintf("Registered custom type with name '%s' and SQL type %s", cmd.TypeName, cmd.Type)
	case catalog.DropType:
		cs.ID, cs.Message = "type/`"+cmd.TypeName+"`/drop", fmt.Sprintf("Dropped type '%s'", cmd.TypeName)
	default:
		return cs, false
	}
	return cs, true
}
