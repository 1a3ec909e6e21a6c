package planner

import (
	"strings"

	"github.com/sluice-sql/sluice/internal/javatime"
	"github.com/sluice-sql/sluice/internal/types"
)

// timestampColumn resolves the TIMESTAMP and TIMESTAMP_FORMAT properties
// against cols: the column that gives record time, and the Java date
// pattern its strings are written in. Both are empty when TIMESTAMP is not
// given.
func timestampColumn(p props, cols []types.Column) (name, pattern string, err error) {
	ts, tpos, err := p.str("TIMESTAMP", "")
	if err != nil {
		return "", "", err
	}
	pattern, fpos, err := p.str("TIMESTAMP_FORMAT", "")
	if err != nil {
		return "", "", err
	}
	if ts == "" {
		if fpos != nil {
			return "", "", errorf(*fpos, "TIMESTAMP_FORMAT needs TIMESTAMP: name the STRING column its pattern reads")
		}
		return "", "", nil
	}
	want := strings.ToUpper(ts)
	var found *types.Column
	for i := range cols {
		if cols[i].Name == want || cols[i].Name == ts {
			found = &cols[i]
			break
		}
	}
	if found == nil {
		return "", "", errorf(*tpos, "The TIMESTAMP column set in the WITH clause does not exist in the schema: '%s'. Name one of the columns.", want)
	}
	switch {
	case found.Type.Kind == types.Bigint || found.Type.Kind == types.Timestamp:
		if fpos != nil {
			return "", "", errorf(*fpos, "TIMESTAMP_FORMAT applies to a STRING TIMESTAMP column, and %s is %s; remove TIMESTAMP_FORMAT", found.Name, found.Type)
		}
	case found.Type.Kind == types.String && fpos != nil:
		if _, err := javatime.Cached(pattern); err != nil {
			return "", "", errorf(*fpos, "invalid TIMESTAMP_FORMAT '%s': %v", pattern, err)
		}
	default:
		return "", "", errorf(*tpos, "Timestamp column, `%s`, should be LONG(INT64), TIMESTAMP, or a String with a timestamp_format specified.", found.Name)
	}
	return found.Name, pattern, nil
}
