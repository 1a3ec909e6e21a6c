package engine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

// This file takes properties as ksqlDB does, wherever they come from: SET
// and UNSET, the properties a request brings (REST's streamsProperties and
// properties, gRPC's), and a server's config file. A name is resolved as
// ksqlDB's KsqlConfigResolver resolves it: ksql.* names are ksqlDB's own;
// any other, with or without the ksql.streams. prefix, is Kafka Streams'
// or, under consumer. and producer., the consumer's or the producer's; a
// name none of them knows is refused with ksqlDB's message. A session keeps
// each property under one canonical name (canonicalProperty), so that every
// spelling of a property Sluice uses takes effect and SHOW PROPERTIES shows
// it once.

const (
	propOffsetReset        = "auto.offset.reset"
	propDefaultKeyFormat   = "ksql.persistence.default.format.key"
	propDefaultValueFormat = "ksql.persistence.default.format.value"
	propCollectListLimit   = "ksql.functions.collect_list.limit"
	propCollectSetLimit    = "ksql.functions.collect_set.limit"
	propServiceID          = "ksql.service.id"
	// propCompression is the producer's compression.type (also read as
	// ksql.streams.compression.type and
	// ksql.streams.producer.compression.type): the codec of what a
	// persistent query created in the session produces.
	propCompression = "compression.type"
)

// ksqlDB's prefixes: ksqlStreamsPrefix marks a Kafka Streams (or client)
// property; consumerPrefix and producerPrefix one of the consumer or the
// producer only; topicPrefix a configuration of the topics Kafka Streams
// creates.
const (
	ksqlPrefix          = "ksql."
	ksqlStreamsPrefix   = "ksql.streams."
	ksqlFunctionsPrefix = "ksql.functions."
	consumerPrefix      = "consumer."
	producerPrefix      = "producer."
	topicPrefix         = "topic."
)

// codeBadRequest is ksqlDB's error code of a request it refuses as a
// whole, such as one whose properties it does not take.
const codeBadRequest = 40000

// settable lists the properties Sluice uses, by canonical name, with a
// check of the value. Every other name ksqlDB takes is accepted and
// ignored: SET takes it, for scripts written for ksqlDB, and says so.
var settable = map[string]func(string) error{
	propOffsetReset:        checkOffsetReset,
	propDefaultKeyFormat:   checkFormatName,
	propDefaultValueFormat: checkFormatName,
	propCollectListLimit:   checkLimit,
	propCollectSetLimit:    checkLimit,
	propGuarantee:          checkGuarantee,
	propMaxRecordBytes:     checkMaxRecordBytes,
	propCompression:        kafka.CheckCompression,
	propPullTableScan:      checkBool(propPullTableScan),
	propPullRangeScan:      checkBool(propPullRangeScan),
	propPullLimit:          checkBool(propPullLimit),
	propPullStream:         checkBool(propPullStream),
	propPushV2:             checkBool(propPushV2),
}

// checkOffsetReset checks an auto.offset.reset as ksqlDB does: Kafka's
// check of the value, then ksqlDB's refusal of none.
func checkOffsetReset(v string) error {
	switch v {
	case "earliest", "latest":
		return nil
	case "none":
		return fmt.Errorf("'none' is not valid for this property within KSQL")
	}
	return fmt.Errorf("Invalid value %s for configuration %s: String must be one of: latest, earliest, none", v, propOffsetReset)
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

func checkFormatName(v string) error {
	switch strings.ToUpper(v) {
	case "JSON", "KAFKA", "DELIMITED", "NONE", "AVRO", "PROTOBUF", "PROTOBUF_NOSR", "JSON_SR":
		return nil
	}
	return fmt.Errorf("Unknown format: %s", v)
}

// notRecognizable is ksqlDB's refusal of a property name it does not know
// (its LocalPropertyParser's).
func notRecognizable(name string) error {
	return fmt.Errorf("Not recognizable as ksql, streams, consumer, or producer property: '%s'", name)
}

// canonicalProperty resolves a property name as ksqlDB does and returns
// the name a session keeps it under; ok is false for a name ksqlDB does
// not take. The canonical name of a Kafka Streams or client property is
// its own name, without ksql.streams. (auto.offset.reset for
// ksql.streams.auto.offset.reset); a consumer or producer property keeps
// its consumer. or producer. prefix (it is not the other client's), except
// one Sluice uses, which means the same under either (auto.offset.reset
// for ksql.streams.consumer.auto.offset.reset). ksqlDB's and Sluice's own
// names are their own.
func canonicalProperty(name string) (canonical string, ok bool) {
	if name == propMaxRecordBytes || ksqlConfigNames[name] {
		return name, true
	}
	if strings.HasPrefix(name, ksqlFunctionsPrefix) && len(name) > len(ksqlFunctionsPrefix) {
		// The functions' properties are free-form, as in ksqlDB.
		return name, true
	}
	if strings.HasPrefix(name, ksqlPrefix) && !strings.HasPrefix(name, ksqlStreamsPrefix) {
		return "", false
	}
	key := strings.TrimPrefix(name, ksqlStreamsPrefix)
	for _, c := range []struct {
		prefix string
		names  map[string]bool
	}{{consumerPrefix, consumerConfigNames}, {producerPrefix, producerConfigNames}} {
		if rest, found := strings.CutPrefix(key, c.prefix); found && c.names[rest] {
			if settable[rest] != nil {
				return rest, true
			}
			return key, true
		}
	}
	if consumerConfigNames[key] || producerConfigNames[key] || streamsConfigNames[key] {
		return key, true
	}
	if rest, found := strings.CutPrefix(key, topicPrefix); found && topicConfigNames[rest] {
		return key, true
	}
	return "", false
}

// checkValue checks the value of the property canonical, when Sluice uses
// it.
func checkValue(canonical, v string) error {
	if check := settable[canonical]; check != nil {
		return check(v)
	}
	return nil
}

// propertyError is ksqlDB's refusal of a request whose properties it does
// not take: "Failed to set 'name' to 'value'", caused by why.
func propertyError(name, value string, cause error) *StatementError {
	return &StatementError{Code: codeBadRequest, Msg: fmt.Sprintf("Failed to set '%s' to '%s'", name, Redact(name, value)),
		Hint: "Caused by: " + cause.Error()}
}

// checkSession checks the properties a session arrived with (a REST
// request's streamsProperties or properties, a gRPC request's) as ksqlDB
// checks a request's: each name must be one ksqlDB takes, and the value of
// a property Sluice uses must be one it runs. It then keeps each under its
// canonical name; of two spellings of one property, the canonical one wins,
// else the first in name order.
func checkSession(s *Session) error {
	if len(s.Properties) == 0 {
		return nil
	}
	out := make(map[string]string, len(s.Properties))
	renamed := false
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		v := s.Properties[k]
		c, ok := canonicalProperty(k)
		if !ok {
			return propertyError(k, v, notRecognizable(k))
		}
		if err := checkValue(c, v); err != nil {
			return propertyError(k, v, err)
		}
		if c != k {
			renamed = true
			if _, dup := out[c]; dup {
				continue
			}
		}
		out[c] = v
	}
	if renamed {
		clear(s.Properties)
		for k, v := range out {
			s.Properties[k] = v
		}
	}
	return nil
}

// prop is the session's value of the property canonical, under whichever
// of its names the session holds it: Execute keeps them canonical, a
// typed call's session may not be.
func prop(s *Session, canonical string) (string, bool) {
	if s == nil {
		return "", false
	}
	if v, ok := s.Properties[canonical]; ok {
		return v, true
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		if c, ok := canonicalProperty(k); ok && c == canonical {
			return s.Properties[k], true
		}
	}
	return "", false
}

// setCanonical sets the property canonical in s, dropping its other
// spellings.
func setCanonical(s *Session, canonical, v string) {
	deleteProperty(s, canonical)
	s.Properties[canonical] = v
}

// deleteProperty removes the property canonical from s, under each of its
// names.
func deleteProperty(s *Session, canonical string) {
	for k := range s.Properties {
		if c, ok := canonicalProperty(k); k == canonical || ok && c == canonical {
			delete(s.Properties, k)
		}
	}
}

func setProperty(s *Session, st *ast.SetProperty) (Result, error) {
	v := strings.TrimSpace(st.Value)
	c, ok := canonicalProperty(st.Name)
	if !ok {
		return Result{}, userError(st.Pos, "%v\n%s", notRecognizable(st.Name), unknownHint(st.Name))
	}
	if err := checkValue(c, v); err != nil {
		return Result{}, userError(st.Pos, "%v", err)
	}
	note := ""
	if settable[c] == nil {
		note = " Sluice accepts this property but does not use it."
	} else if _, deprecated, _ := ParseGuarantee(v); deprecated && c == propGuarantee {
		note = fmt.Sprintf(" '%s' is deprecated: new queries run '%s'.", v, ExactlyOnceV2)
	}
	setCanonical(s, c, v)
	return Result{Kind: ResultStatus, Message: fmt.Sprintf("Successfully changed local property '%s' to '%s'. Use the UNSET command to revert your change.%s", st.Name, Redact(st.Name, v), note)}, nil
}

func unsetProperty(s *Session, st *ast.UnsetProperty) (Result, error) {
	c, ok := canonicalProperty(st.Name)
	if !ok {
		return Result{}, userError(st.Pos, "%v\n%s", notRecognizable(st.Name), unknownHint(st.Name))
	}
	deleteProperty(s, c)
	return Result{Kind: ResultStatus, Message: fmt.Sprintf("Successfully unset local property '%s'.", st.Name)}, nil
}

// unknownHint says what to write instead of name, a property name no one
// takes: the name it is likely a typo of, and the properties Sluice uses.
func unknownHint(name string) string {
	hint := "properties Sluice uses: " + settableNames()
	if near := nearestProperty(name); near != "" {
		hint = "did you mean '" + near + "'?\n" + hint
	}
	return hint
}

func settableNames() string {
	names := make([]string, 0, len(settable))
	for k := range settable {
		names = append(names, "'"+k+"'")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// nearestProperty is the known property name within two edits of name
// (under the same ksql.streams. prefix), or "" when there is none.
func nearestProperty(name string) string {
	prefix := ""
	key := name
	if rest, found := strings.CutPrefix(name, ksqlStreamsPrefix); found {
		prefix, key = ksqlStreamsPrefix, rest
	}
	// bestD starts just beyond the two edits allowed; of names as near,
	// the first in order wins.
	best, bestD := "", 3
	consider := func(candidate string) {
		d := editDistance(key, candidate, bestD+1)
		if d < bestD || d == bestD && best != "" && candidate < best {
			best, bestD = candidate, d
		}
	}
	for _, set := range []map[string]bool{consumerConfigNames, producerConfigNames, streamsConfigNames} {
		for n := range set {
			consider(n)
		}
	}
	if prefix == "" {
		for n := range ksqlConfigNames {
			consider(n)
		}
		consider(propMaxRecordBytes)
	}
	if best == "" || len(key) < 5 {
		return ""
	}
	return prefix + best
}

// editDistance is the Levenshtein distance of a and b, or limit when it is
// limit or more.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			low = min(low, cur[j])
		}
		if low >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// aggregateLimits are the session's configured aggregate limits, by
// aggregate name.
func aggregateLimits(s *Session) map[string]int64 {
	var out map[string]int64
	for p, agg := range limitProps {
		v, ok := prop(s, p)
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

// defaults are the session's default formats for new sources.
func defaults(s *Session) planner.Defaults {
	key, _ := prop(s, propDefaultKeyFormat)
	value, _ := prop(s, propDefaultValueFormat)
	return planner.Defaults{KeyFormat: strings.ToUpper(key), ValueFormat: strings.ToUpper(value)}
}

// offsetReset is where new queries of the session start reading.
func offsetReset(s *Session) string {
	if v, ok := prop(s, propOffsetReset); ok && checkOffsetReset(v) == nil {
		return v
	}
	return "latest"
}

// effectiveProperties are the properties Sluice uses with the value each
// has in session s, and where it comes from: the session's (SESSION), the
// server's settings (SERVER) or Sluice's default (DEFAULT); then the
// other properties the session sets. Each is named as ksqlDB's SHOW
// PROPERTIES names it (see displayName), secrets are hidden, and the list
// is in name order.
func (e *Engine) effectiveProperties(s *Session) []api.Property {
	out := []api.Property{
		{Name: propOffsetReset, Scope: "DEFAULT", Value: "latest"},
		{Name: propDefaultKeyFormat, Scope: "DEFAULT", Value: "KAFKA"},
		{Name: propDefaultValueFormat, Scope: "DEFAULT"},
		{Name: propCollectListLimit, Scope: "DEFAULT", Value: strconv.Itoa(eval.DefaultCollectLimit)},
		{Name: propCollectSetLimit, Scope: "DEFAULT", Value: strconv.Itoa(eval.DefaultCollectLimit)},
		{Name: propPullTableScan, Scope: "DEFAULT", Value: "true"},
		{Name: propPullRangeScan, Scope: "DEFAULT", Value: "true"},
		{Name: propPullLimit, Scope: "DEFAULT", Value: "true"},
		{Name: propPullStream, Scope: "DEFAULT", Value: "true"},
		{Name: propGuarantee, Scope: "SERVER", Value: e.cfg.ProcessingGuarantee},
		{Name: propMaxRecordBytes, Scope: "SERVER", Value: strconv.Itoa(e.cfg.MaxRecordBytes)},
		{Name: propServiceID, Scope: "SERVER", Value: e.cfg.ServiceID},
	}
	seen := map[string]bool{}
	for i := range out {
		p := &out[i]
		seen[p.Name] = true
		if v, ok := prop(s, p.Name); ok {
			p.Scope, p.Value = "SESSION", v
		}
	}
	if s != nil {
		for k, v := range s.Properties {
			c, ok := canonicalProperty(k)
			if !ok {
				c = k
			}
			if seen[c] || c == PullLocalProperty {
				continue
			}
			seen[c] = true
			out = append(out, api.Property{Name: c, Scope: "SESSION", Value: v})
		}
	}
	for i := range out {
		out[i].Name = displayName(out[i].Name)
		out[i].Value = Redact(out[i].Name, out[i].Value)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// displayName is the name ksqlDB's SHOW PROPERTIES gives the property
// canonical: ksqlDB's (ksql.*) and Sluice's (sluice.*) as they are, Kafka
// Streams' and the clients' under ksql.streams.
// (ksql.streams.auto.offset.reset).
func displayName(canonical string) string {
	if strings.HasPrefix(canonical, ksqlPrefix) || strings.HasPrefix(canonical, "sluice.") {
		return canonical
	}
	return ksqlStreamsPrefix + canonical
}

// ConfigProperty resolves a name of a server's config file that is not
// one of the server's own settings, as ksqlDB takes the names of its
// ksql-server.properties: the names a session takes, ksqlDB's server
// settings (ksql.* names, listeners, ssl.*, authentication.*, ...) and
// Kafka's config providers. It returns the canonical name; perSession
// reports a property Sluice uses per session only (SET, a request's
// properties), such as auto.offset.reset. A name ksqlDB does not know is
// refused with its message.
func ConfigProperty(name string) (canonical string, perSession bool, err error) {
	if c, ok := canonicalProperty(name); ok {
		return c, settable[c] != nil, nil
	}
	if serverConfigNames[name] {
		return name, false, nil
	}
	if !strings.HasPrefix(name, ksqlStreamsPrefix) {
		for _, p := range serverOnlyPrefixes {
			if strings.HasPrefix(name, p) {
				return name, false, nil
			}
		}
	}
	return "", false, notRecognizable(name)
}

// CheckPropertyValue checks the value of a property, by canonical name
// (see ConfigProperty), as SET checks it.
func CheckPropertyValue(canonical, value string) error {
	return checkValue(canonical, value)
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
