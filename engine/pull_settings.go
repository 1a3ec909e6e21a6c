package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

// ksqlDB's settings of pull queries that Sluice honours, each true unless
// the session sets it to false (see planner.PullOptions).
const (
	propPullTableScan = planner.PullTableScanProperty
	propPullRangeScan = planner.PullRangeScanProperty
	propPullLimit     = planner.PullLimitProperty
	propPullStream    = planner.PullStreamProperty
)

// checkBool checks the value of the boolean property name as Kafka's
// configuration does: true or false, in any case.
func checkBool(name string) func(string) error {
	return func(v string) error {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "false":
			return nil
		}
		return fmt.Errorf("Invalid value %s for configuration %s: Expected value to be either true or false", v, name)
	}
}

// disabled reports whether the session sets the boolean property name to
// false; a session without it, or a nil one, keeps ksqlDB's default, true.
func disabled(s *Session, name string) bool {
	if s == nil {
		return false
	}
	v, ok := s.Properties[name]
	return ok && strings.EqualFold(strings.TrimSpace(v), "false")
}

// pullOptions are the options a pull query of session s (nil for none) is
// planned with.
func pullOptions(ctx context.Context, s *Session) planner.PullOptions {
	return planner.PullOptions{
		Materialized:       exec.Materialized,
		RowTime:            exec.RowTime,
		Ctx:                ctx,
		TableScansDisabled: disabled(s, propPullTableScan),
		RangeScansDisabled: disabled(s, propPullRangeScan),
		LimitDisabled:      disabled(s, propPullLimit),
		StreamsDisabled:    disabled(s, propPullStream),
	}
}
