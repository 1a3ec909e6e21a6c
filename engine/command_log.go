package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/kafka"
)

// SkippedCommand is a record of the command log that the engine did not
// apply: it could not be read, or the catalog or the topic rules refused
// it, or it depends on one skipped before it.
type SkippedCommand struct {
	// Offset is the record's offset in the command log.
	Offset int64
	// Kind is the command's kind; empty when the record could not be read.
	Kind string
	// Reason says why it was skipped.
	Reason string
}

// skipped is the engine's account of the skipped commands; guarded by
// Engine.skipMu.
type skipped struct {
	list []SkippedCommand
	// sources and queries name what a skipped command would have
	// created, with its offset, to explain the commands that need them.
	sources map[string]int64
	queries map[string]int64
}

// SkippedCommands returns the command log records the engine skipped since
// it opened, oldest first.
func (e *Engine) SkippedCommands() []SkippedCommand {
	e.skipMu.Lock()
	defer e.skipMu.Unlock()
	return append([]SkippedCommand(nil), e.skips.list...)
}

// replay reads the command log from its start to its current end and
// applies every command; it returns that end. A record that cannot be
// read, or that the catalog refuses, is skipped with an error in the log
// (see applyRecord): one bad record never stops a start. A record of a
// newer plan version does.
func (e *Engine) replay(ctx context.Context) (int64, error) {
	bounds, err := e.cfg.Kafka.ListOffsets(ctx, e.commands)
	if err != nil {
		return 0, fmt.Errorf("engine: command log offsets: %w", err)
	}
	if len(bounds) != 1 {
		return 0, fmt.Errorf("engine: command log %s has %d partitions; it must have exactly 1", e.commands, len(bounds))
	}
	end := bounds[0].End
	if bounds[0].Start >= end {
		return end, nil
	}
	c, err := e.cfg.Kafka.NewConsumer(kafka.ConsumerOptions{ClientID: "sluice-command-replay"})
	if err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	defer c.Close()
	c.Assign(map[string]map[int32]int64{e.commands: {0: bounds[0].Start}})
	n := 0
	for next := bounds[0].Start; next < end; {
		recs, err := c.Poll(ctx)
		if err != nil {
			return 0, fmt.Errorf("engine: read command log: %w", err)
		}
		for _, r := range recs {
			if r.Offset >= end {
				break
			}
			next = r.Offset + 1
			if r.Control {
				continue
			}
			ok, err := e.applyRecord(r)
			if err != nil {
				return 0, err
			}
			if ok {
				n++
			}
		}
	}
	if skips := e.SkippedCommands(); len(skips) > 0 {
		offsets := make([]int64, len(skips))
		for i, s := range skips {
			offsets[i] = s.Offset
		}
		e.log.Error("command log: records were skipped; the rest of the catalog is applied. The server never rewrites the command log: "+
			"recreate what they stood for with statements, and keep the topic writable by Sluice alone (Kafka ACLs)",
			"topic", e.commands, "skipped", len(skips), "offsets", offsets)
	}
	e.log.Info("catalog rebuilt from command log", "commands", n, "topic", e.commands)
	return end, nil
}

// applyRecord applies the command in record r of the command log and
// reports whether it did. A record it cannot read, or whose command the
// topic rules or the catalog refuse, is skipped: logged as an error with
// the topic and offset and counted (SkippedCommands). Its error is for a
// record of a newer plan version only, which this server cannot apply
// without running its plans wrongly.
func (e *Engine) applyRecord(r *kafka.Record) (bool, error) {
	cmd, err := catalog.DecodeCommand(r.Value)
	var newer *catalog.NewerVersionError
	if errors.As(err, &newer) {
		return false, fmt.Errorf("engine: the command log %s holds at offset %d a record of plan version %d, which a newer Sluice wrote; this server reads plan versions up to %d. Run this server's newer version (it never rewrites the log)",
			e.commands, r.Offset, newer.Version, catalog.PlanVersion)
	}
	if err != nil {
		e.skipCommand(r.Offset, nil, err.Error())
		return false, nil
	}
	if reason := e.refusedCommand(cmd); reason != "" {
		e.skipCommand(r.Offset, cmd, reason)
		return false, nil
	}
	var before *catalog.Source
	if cmd.Kind == catalog.DropSource {
		before, _ = e.cat.Source(cmd.Name)
	}
	if err := e.cat.Apply(cmd); err != nil {
		e.skipCommand(r.Offset, cmd, e.dependency(cmd, err))
		return false, nil
	}
	if cs, ok := e.replayedStatus(r.Offset, cmd, before); ok {
		e.statuses.record(cs)
	}
	return true, nil
}

// refusedCommand applies the topic rules to a command read from the log,
// as the statement that wrote it met them: a command that registers a
// source over a protected topic, or writes one, is refused. It returns ""
// for one that passes.
func (e *Engine) refusedCommand(cmd *catalog.Command) string {
	switch cmd.Kind {
	case catalog.CreateSource:
		return e.guard.refusal(useRead, cmd.Source.Topic)
	case catalog.CreateQuery, catalog.ReplaceQuery:
		if cmd.Source != nil && cmd.Source.IsSource {
			// CREATE SOURCE TABLE: its query materializes the source it
			// declares and writes no topic of its own.
			return e.guard.refusal(useRead, cmd.Source.Topic)
		}
		sink := cmd.Source
		if sink == nil {
			sink, _ = e.cat.Source(cmd.Query.Sink)
		}
		if sink != nil { // else Apply refuses it
			return e.guard.refusal(useWrite, sink.Topic)
		}
	}
	return ""
}

// dependency explains err, the catalog's refusal of cmd, naming the
// skipped command cmd depends on when there is one.
func (e *Engine) dependency(cmd *catalog.Command, err error) string {
	var upgrade *catalog.UpgradeError
	if errors.As(err, &upgrade) {
		// A plan stored by an older server that this one cannot run: the
		// error says what to do.
		return err.Error()
	}
	e.skipMu.Lock()
	defer e.skipMu.Unlock()
	var missing *catalog.MissingSourceError
	name, id := "", ""
	switch {
	case errors.As(err, &missing):
		name = missing.Name
	case cmd.Kind == catalog.DropSource:
		name = cmd.Name
	case cmd.Kind == catalog.TerminateQuery || cmd.Kind == catalog.SetQueryState:
		id = cmd.QueryID
	case cmd.Kind == catalog.ReplaceQuery:
		id = cmd.Query.ID
	}
	if off, ok := e.skips.sources[name]; ok && name != "" {
		return fmt.Sprintf("it depends on source %s, whose command at offset %d was skipped (%v)", name, off, err)
	}
	if off, ok := e.skips.queries[id]; ok && id != "" {
		return fmt.Sprintf("it depends on query %s, whose command at offset %d was skipped (%v)", id, off, err)
	}
	return fmt.Sprintf("the catalog refuses it in the log's order (%v); a statement that raced another server's is refused so on every server", err)
}

// skipCommand records and logs a skipped record; cmd is nil when the
// record could not be read.
func (e *Engine) skipCommand(offset int64, cmd *catalog.Command, reason string) {
	e.skipMu.Lock()
	sc := SkippedCommand{Offset: offset, Reason: reason}
	if cmd != nil {
		sc.Kind = string(cmd.Kind)
		if e.skips.sources == nil {
			e.skips.sources, e.skips.queries = map[string]int64{}, map[string]int64{}
		}
		if cmd.Source != nil {
			e.skips.sources[cmd.Source.Name] = offset
		}
		if cmd.Query != nil && cmd.Kind == catalog.CreateQuery {
			e.skips.queries[cmd.Query.ID] = offset
		}
	}
	e.skips.list = append(e.skips.list, sc)
	e.skipMu.Unlock()
	e.log.Error("command log: a record is skipped", "topic", e.commands, "offset", offset, "kind", sc.Kind, "reason", reason)
}
