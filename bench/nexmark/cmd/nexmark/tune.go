package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/sluice-sql/sluice/engine"
)

// engineMemory are the memory settings the engine runs with, as
// sluice-server's --memory-limit, --gc-percent and --state-memory: the
// driver passes them on to its engine child, which applies them as the
// server does.
type engineMemory struct {
	limit     string
	gcPercent int
	state     string
}

func (m *engineMemory) register(fs *flag.FlagSet) {
	fs.StringVar(&m.limit, "memory-limit", "", "Sluice's soft memory `limit` (512MiB), as sluice-server's --memory-limit; empty for none")
	fs.IntVar(&m.gcPercent, "gc-percent", 0, "Sluice's garbage collector `target`, as sluice-server's --gc-percent; 0 for the server's default, or GOGC's when set")
	fs.StringVar(&m.state, "state-memory", "", "Sluice's state memory budget (`bytes`, 64MiB), as sluice-server's --state-memory; empty for the server's default")
}

// args are the engine child's flags for m.
func (m engineMemory) args() []string {
	var a []string
	if m.limit != "" {
		a = append(a, "--memory-limit", m.limit)
	}
	if m.gcPercent != 0 {
		a = append(a, "--gc-percent", strconv.Itoa(m.gcPercent))
	}
	if m.state != "" {
		a = append(a, "--state-memory", m.state)
	}
	return a
}

// apply sets the runtime as sluice-server does with the same settings,
// and returns the engine's state memory budget in bytes.
func (m engineMemory) apply() (int64, error) {
	var limit, state int64
	if m.limit != "" {
		var err error
		if limit, err = engine.ParseBytes(m.limit); err != nil {
			return 0, fmt.Errorf("--memory-limit: %w", err)
		}
	}
	if m.state != "" {
		var err error
		if state, err = engine.ParseStateMemory(m.state); err != nil {
			return 0, fmt.Errorf("--state-memory: %w", err)
		}
	} else {
		state = engine.StateMemoryFor(limit)
	}
	gc := m.gcPercent
	switch {
	case gc < 0:
		return 0, fmt.Errorf("--gc-percent: %d is not a positive percentage", gc)
	case gc == 0 && os.Getenv("GOGC") != "":
		gc = -1 // the runtime read GOGC
	case gc == 0:
		gc = engine.DefaultGCPercent
	}
	engine.TuneMemory(limit, gc)
	return state, nil
}
