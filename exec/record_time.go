package exec

import (
	"fmt"
	"time"

	"github.com/sluice-sql/sluice/internal/javatime"
	"github.com/sluice-sql/sluice/internal/types"
)

// timestampReader reads record time from a TIMESTAMP column: a BIGINT of
// milliseconds, a TIMESTAMP, or a STRING in a Java date pattern.
type timestampReader struct {
	column string
	format *javatime.Format // for STRING columns
}

func newTimestampReader(column, pattern string) (*timestampReader, error) {
	r := &timestampReader{column: column}
	if pattern != "" {
		f, err := javatime.Cached(pattern)
		if err != nil {
			return nil, fmt.Errorf("exec: TIMESTAMP_FORMAT %q: %w", pattern, err)
		}
		r.format = f
	}
	return r, nil
}

// read returns the record time in v, or why there is none.
func (r *timestampReader) read(v any) (int64, error) {
	var ts int64
	switch x := v.(type) {
	case int64:
		ts = x
	case types.TimestampValue:
		ts = int64(x)
	case string:
		if r.format == nil {
			return 0, fmt.Errorf("timestamp column %s holds a string but has no TIMESTAMP_FORMAT", r.column)
		}
		t, err := r.format.ParseTimestamp(x, time.UTC)
		if err != nil {
			return 0, fmt.Errorf("timestamp column %s: cannot parse %q: %v", r.column, x, err)
		}
		ts = t.UnixMilli()
	case nil:
		return 0, fmt.Errorf("timestamp column %s is null", r.column)
	default:
		return 0, fmt.Errorf("timestamp column %s has an unexpected %T", r.column, v)
	}
	if ts < 0 {
		return 0, fmt.Errorf("timestamp column %s is negative (%d)", r.column, ts)
	}
	return ts, nil
}

// RecordTime reads record time from v, the value of TIMESTAMP column
// column whose strings (if it is a STRING column) follow the Java date
// pattern pattern. INSERT VALUES uses it as queries do.
func RecordTime(v any, column, pattern string) (int64, error) {
	r, err := newTimestampReader(column, pattern)
	if err != nil {
		return 0, err
	}
	return r.read(v)
}
