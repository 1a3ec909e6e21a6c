package nexmark

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/kafka"
)

// Result sums up a query's output so that two systems that wrote the same
// result compare equal, whatever their update streams: an append-only
// query's rows as a multiset, an updating query's last row per key (and
// window), each row in canonical JSON.
type Result struct {
	// Rows is how many records the output topic holds.
	Rows int
	// Final is how many rows the checksum covers: Rows for an append-only
	// query, the keys (and windows) left for an updating one.
	Final int
	// Checksum is the hex SHA-256 of the sorted canonical rows.
	Checksum string
}

// Summarize computes the Result of q's output records. Keys are read as
// Sluice writes them: a KAFKA BIGINT (8 bytes) or a JSON object, followed
// by the window's bounds for windowed tables (as Kafka Streams writes
// them: the start for time windows, the end then the start for sessions),
// and merged into the
// row under lower-case names; the first key column is "key" for a BIGINT
// key.
func Summarize(q Query, recs []*kafka.Record) (Result, error) {
	res := Result{Rows: len(recs)}
	var rows []string
	final := map[string]string{}
	for _, r := range recs {
		key, err := canonicalKey(r.Key, q.Windowed)
		if err != nil {
			return res, fmt.Errorf("%s: record key: %w", q.Name, err)
		}
		if !q.Updating {
			row, err := canonicalRow(key, r.Value)
			if err != nil {
				return res, fmt.Errorf("%s: record value: %w", q.Name, err)
			}
			rows = append(rows, row)
			continue
		}
		k, _ := json.Marshal(key)
		if r.Value == nil {
			delete(final, string(k))
			continue
		}
		row, err := canonicalRow(key, r.Value)
		if err != nil {
			return res, fmt.Errorf("%s: record value: %w", q.Name, err)
		}
		final[string(k)] = row
	}
	for _, row := range final {
		rows = append(rows, row)
	}
	sort.Strings(rows)
	h := sha256.New()
	for _, row := range rows {
		h.Write([]byte(row))
		h.Write([]byte{'\n'})
	}
	res.Final = len(rows)
	res.Checksum = hex.EncodeToString(h.Sum(nil))
	return res, nil
}

// canonicalKey reads a record key into named fields.
func canonicalKey(b []byte, windowed string) (map[string]any, error) {
	out := map[string]any{}
	if b == nil {
		return out, nil
	}
	switch windowed {
	case TimeWindows:
		if len(b) < 8 {
			return nil, fmt.Errorf("windowed key of %d bytes", len(b))
		}
		out["window_start"] = float64(int64(binary.BigEndian.Uint64(b[len(b)-8:])))
		b = b[:len(b)-8]
	case SessionWindows:
		if len(b) < 16 {
			return nil, fmt.Errorf("session key of %d bytes", len(b))
		}
		out["window_end"] = float64(int64(binary.BigEndian.Uint64(b[len(b)-16:])))
		out["window_start"] = float64(int64(binary.BigEndian.Uint64(b[len(b)-8:])))
		b = b[:len(b)-16]
	}
	if len(b) > 0 && b[0] == '{' {
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, err
		}
		for k, v := range obj {
			out[strings.ToLower(k)] = v
		}
		return out, nil
	}
	if len(b) == 8 {
		out["key"] = float64(int64(binary.BigEndian.Uint64(b)))
		return out, nil
	}
	out["key"] = string(b)
	return out, nil
}

// canonicalRow merges key fields and the JSON value into one object with
// lower-case names, sorted, numbers to 10 significant digits.
func canonicalRow(key map[string]any, value []byte) (string, error) {
	row := map[string]any{}
	for k, v := range key {
		row[k] = v
	}
	if value != nil {
		var obj map[string]any
		if err := json.Unmarshal(value, &obj); err != nil {
			return "", err
		}
		for k, v := range obj {
			row[strings.ToLower(k)] = v
		}
	}
	var b strings.Builder
	writeCanonical(&b, row)
	return b.String(), nil
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			b.WriteString(strconv.FormatInt(int64(x), 10))
		} else {
			b.WriteString(strconv.FormatFloat(x, 'g', 10, 64))
		}
	case string:
		b.WriteString(strconv.Quote(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil:
		b.WriteString("null")
	default:
		fmt.Fprintf(b, "%v", x)
	}
}
