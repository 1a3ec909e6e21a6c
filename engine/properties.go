package engine

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

const (
	propOffsetReset        = "auto.offset.reset"
	propDefaultKeyFormat   = "ksql.persistence.default.format.key"
	propDefaultValueFormat = "ksql.persistence.default.format.value"
	propCollectListLimit   = "ksql.functions.collect_list.limit"
	propCollectSetLimit    = "ksql.functions.collect_set.limit"
)

// settable lists the properties SET accepts and uses, with a check of the
// value.
var settable = map[string]func(string) error{
	propOffsetReset: func(v string) error {
		switch v {
		case "earliest", "latest":
			return nil
		}
		return fmt.Errorf("'%s' takes 'earliest' or 'latest', not '%s'", propOffsetReset, v)
	},
	propDefaultKeyFormat:   checkFormatName,
	propDefaultValueFormat: checkFormatName,
	propCollectListLimit:   checkLimit,
	propCollectSetLimit:    checkLimit,
	propGuarantee:          checkGuarantee,
	propStreamsGuarantee:   checkGuarantee,
	propMaxRecordBytes:     checkMaxRecordBytes,
	propPullTableScan:      checkBool(propPullTableScan),
	propPullRangeScan:      checkBool(propPullRangeScan),
	propPullLimit:          checkBool(propPullLimit),
	propPullStream:         checkBool(propPullStream),
}

func checkGuarantee(v string) error {
	_, _, err := ParseGuarantee(v)
	return err
}

// limitProps maps the properties that limit an aggregate to its name.
var limitProps = map[string]string{
	propCollectListLimit: "COLLECT_LIST",
	propCollectSetLimit:  "COLLECT_SET",
}

func checkLimit(v string) error {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return fmt.Errorf("a limit must be a whole number from 1 to %d, not '%s'", math.MaxInt32, v)
	}
	return nil
}

// aggregateLimits are the session's configured aggregate limits, by
// aggregate name.
func aggregateLimits(s *Session) map[string]int64 {
	var out map[string]int64
	for prop, agg := range limitProps {
		v, ok := s.Properties[prop]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[agg] = n
	}
	return out
}

func checkFormatName(v string) error {
	switch strings.ToUpper(v) {
	case "JSON", "KAFKA", "DELIMITED", "NONE", "AVRO", "PROTOBUF", "PROTOBUF_NOSR", "JSON_SR":
		return nil
	}
	return fmt.Errorf("Unknown format: %s", v)
}

// ignoredPrefixes are the families of ksqlDB and Kafka properties that SET
// accepts, for scripts written for ksqlDB, though Sluice does not use them;
// the reply says so.
var ignoredPrefixes = []string{"ksql.", "commit.interval.ms", "cache.max.bytes.buffering", "num.stream.threads"}

func setProperty(s *Session, st *ast.SetProperty) (Result, error) {
	v := strings.TrimSpace(st.Value)
	check, ok := settable[st.Name]
	note := ""
	switch {
	case ok:
		if err := check(v); err != nil {
			return Result{}, userError(st.Pos, "%v", err)
		}
		if _, deprecated, _ := ParseGuarantee(v); deprecated && (st.Name == propGuarantee || st.Name == propStreamsGuarantee) {
			note = fmt.Sprintf(" '%s' is deprecated: new queries run '%s'.", v, ExactlyOnceV2)
		}
	case ignored(st.Name):
		note = " Sluice accepts this property but does not use it."
	default:
		return Result{}, userError(st.Pos, "Not recognizable as ksql, streams, consumer, or producer property: '%s'; properties Sluice uses: %s", st.Name, settableNames())
	}
	s.Properties[st.Name] = v
	return Result{Kind: ResultStatus, Message: fmt.Sprintf("Successfully changed local property '%s' to '%s'. Use the UNSET command to revert your change.%s", st.Name, Redact(st.Name, v), note)}, nil
}

func ignored(name string) bool {
	for _, p := range ignoredPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// defaults are the session's default formats for new sources.
func defaults(s *Session) planner.Defaults {
	return planner.Defaults{
		KeyFormat:   strings.ToUpper(s.Properties[propDefaultKeyFormat]),
		ValueFormat: strings.ToUpper(s.Properties[propDefaultValueFormat]),
	}
}

func unsetProperty(s *Session, st *ast.UnsetProperty) (Result, error) {
	if _, ok := settable[st.Name]; !ok && !ignored(st.Name) {
		return Result{}, userError(st.Pos, "unknown property '%s'; properties Sluice uses: %s", st.Name, settableNames())
	}
	delete(s.Properties, st.Name)
	return Result{Kind: ResultStatus, Message: fmt.Sprintf("Successfully unset local property '%s'.", st.Name)}, nil
}

func settableNames() string {
	names := make([]string, 0, len(settable))
	for k := range settable {
		names = append(names, "'"+k+"'")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// offsetReset is where new queries of the session start reading.
func offsetReset(s *Session) string {
	if v := s.Properties[propOffsetReset]; v != "" {
		return v
	}
	return "latest"
}

func define(s *Session, st *ast.Define) (Result, error) {
	if s.Variables == nil {
		s.Variables = map[string]string{}
	}
	s.Variables[strings.ToUpper(st.Name)] = st.Value
	return Result{Kind: ResultStatus}, nil
}

func undefine(s *Session, st *ast.Undefine) (Result, error) {
	name := strings.ToUpper(st.Name)
	if _, ok := s.Variables[name]; !ok {
		return Result{Kind: ResultStatus, Message: fmt.Sprintf("Cannot undefine variable '%s' which was never defined.", st.Name)}, nil
	}
	delete(s.Variables, name)
	return Result{Kind: ResultStatus}, nil
}
