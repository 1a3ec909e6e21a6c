package state

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleLogger adapts Pebble's printf-style logger to slog. Pebble's
// informational messages go to Debug so that a default slog level keeps
// them quiet.
type pebbleLogger struct{ l *slog.Logger }

var _ pebble.Logger = pebbleLogger{}

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf reports an invariant failure inside Pebble. It logs and panics:
// the store cannot be used any further.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	panic("state: pebble fatal error: " + msg)
}
