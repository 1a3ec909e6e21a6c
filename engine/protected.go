package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/parser/ast"
)

// InternalTopicPrefix starts the name of every topic a Sluice server owns:
// _sluice-<service id>-command-log, -replays, each query's changelogs,
// repartition and offsets topics. Topics with this prefix are internal
// whatever their service id, as ksqlDB treats every _confluent-ksql-
// topic.
const InternalTopicPrefix = "_sluice-"

// DefaultReadOnlyTopics is ksqlDB's default ksql.readonly.topics: the
// topics of Confluent's components, the schema registry, Kafka itself and
// Kafka Connect. Each is a regular expression matching whole names.
var DefaultReadOnlyTopics = []string{
	"_confluent.*", "__confluent.*", "_schemas", "__consumer_offsets", "__transaction_state",
	"connect-configs", "connect-offsets", "connect-status", "connect-statuses",
}

// ReadOnlyTopicsProperty is the setting that lists the read-only topics.
const ReadOnlyTopicsProperty = "ksql.readonly.topics"

// ParseReadOnlyTopics reads a ksql.readonly.topics value: regular
// expressions separated by commas, each matching a whole topic name. An
// empty value is no topic.
func ParseReadOnlyTopics(v string) ([]string, error) {
	out := []string{}
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, err := regexp.Compile("^(?:" + p + ")$"); err != nil {
			return nil, fmt.Errorf("%s: %q is not a regular expression: %v", ReadOnlyTopicsProperty, p, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// topicGuard knows which topics statements may not touch: the server's
// own (InternalTopicPrefix, and the topics the server names in
// Config.OwnTopics), the read-only ones (Config.ReadOnlyTopics), and the
// processing log, which statements read but never write.
type topicGuard struct {
	own           map[string]bool
	readOnly      []*regexp.Regexp
	patterns      []string
	processingLog string
}

func newTopicGuard(cfg Config, processingLog string) (*topicGuard, error) {
	g := &topicGuard{own: map[string]bool{}, processingLog: processingLog}
	for _, t := range cfg.OwnTopics {
		g.own[t] = true
	}
	patterns := cfg.ReadOnlyTopics
	if patterns == nil {
		patterns = DefaultReadOnlyTopics
	}
	// The Kafka Connect worker's own topics are read-only whatever
	// ksql.readonly.topics says.
	for _, t := range cfg.ConnectTopics {
		patterns = append(slices.Clip(patterns), regexp.QuoteMeta(t))
	}
	for _, p := range patterns {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("engine: %s: %q is not a regular expression: %v", ReadOnlyTopicsProperty, p, err)
		}
		g.readOnly = append(g.readOnly, re)
		g.patterns = append(g.patterns, p)
	}
	return g, nil
}

// topicUse is what a statement would do with a topic.
type topicUse int

const (
	// useRead registers a source over the topic, or PRINTs it.
	useRead topicUse = iota
	// useWrite writes query output into it (CSAS, CTAS, INSERT INTO ...
	// SELECT).
	useWrite
	// useInsertValues writes rows into it (INSERT VALUES, the API's
	// inserts).
	useInsertValues
	// useDelete deletes it (DROP ... DELETE TOPIC).
	useDelete
	// usePrint prints it.
	usePrint
)

// rule says why topic is protected: "" when it is not. processingLog
// reports the processing log, which may be read.
func (g *topicGuard) rule(topic string) (rule string, processingLog bool) {
	switch {
	case topic == g.processingLog:
		return fmt.Sprintf("%s is the processing log: only the server writes it; read it through the stream %s, or PRINT it", topic, ProcessingLogStream), true
	case strings.HasPrefix(topic, InternalTopicPrefix):
		return fmt.Sprintf("%s is an internal topic of Sluice (its name starts with %s): only the server that owns it reads and writes it", topic, InternalTopicPrefix), false
	case g.own[topic]:
		return fmt.Sprintf("%s is an internal topic of this server (the built-in schema registry keeps its schemas in it): only the server reads and writes it", topic), false
	}
	for i, re := range g.readOnly {
		if re.MatchString(topic) {
			return fmt.Sprintf("%s matches %s (%s): the topics of Kafka, Kafka Connect and the schema registry are read-only for statements; the server's %s setting lists them", topic, ReadOnlyTopicsProperty, g.patterns[i], ReadOnlyTopicsProperty), false
		}
	}
	return "", false
}

// refusal is the reason statements may not use topic as use says, "" when
// they may. The first line is ksqlDB's message where ksqlDB has one.
func (g *topicGuard) refusal(use topicUse, topic string) string {
	rule, log := g.rule(topic)
	if rule == "" || log && (use == useRead || use == usePrint) {
		return ""
	}
	var head string
	switch use {
	case useRead:
		head = "Cannot create a source over read-only topic: " + topic
	case usePrint:
		head = "Cannot print read-only topic: " + topic
	case useWrite:
		head = "Cannot insert into read-only topic: " + topic
	case useInsertValues:
		head = "Cannot insert values into read-only topic: " + topic
	case useDelete:
		head = "Cannot delete read-only topic: " + topic
	}
	return head + "\n" + rule + "."
}

// checkTopic refuses a statement at pos that would use topic as use says.
func (e *Engine) checkTopic(pos ast.Pos, use topicUse, topic string) error {
	if msg := e.guard.refusal(use, topic); msg != "" {
		return userError(pos, "%s", msg)
	}
	return nil
}

// propPos is the position of property name in props, else def.
func propPos(props ast.Properties, name string, def ast.Pos) ast.Pos {
	for _, p := range props {
		if strings.EqualFold(p.Name, name) {
			return p.Pos
		}
	}
	return def
}
