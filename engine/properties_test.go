package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/kafka"
)

// TestOffsetResetUnderKsqlDBsNames: auto.offset.reset set under ksqlDB's
// ksql.streams. (and ksql.streams.consumer.) names, with SET or in the
// properties a request brings, makes a CREATE ... AS SELECT read the
// records already in its input, as the plain name does.
func TestOffsetResetUnderKsqlDBsNames(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	setup := engine.NewSession()
	if msg := execErr(h, setup, "CREATE STREAM events (id STRING KEY, n INT) WITH (KAFKA_TOPIC='events', VALUE_FORMAT='JSON', PARTITIONS=1);"); msg != "" {
		t.Fatal(msg)
	}
	produce(t, h, "events", []string{`a {"N":1}`, `b {"N":2}`})
	for i, tc := range []struct {
		name  string
		set   string
		props map[string]string
	}{
		{name: "SET ksql.streams.", set: "SET 'ksql.streams.auto.offset.reset'='earliest';"},
		{name: "SET ksql.streams.consumer.", set: "SET 'ksql.streams.consumer.auto.offset.reset'='earliest';"},
		{name: "request ksql.streams.", props: map[string]string{"ksql.streams.auto.offset.reset": "earliest"}},
		{name: "request consumer.", props: map[string]string{"consumer.auto.offset.reset": "earliest"}},
	} {
		s := engine.NewSession()
		for k, v := range tc.props {
			s.Properties[k] = v
		}
		if tc.set != "" {
			if msg := execErr(h, s, tc.set); msg != "" {
				t.Fatalf("%s: %s", tc.set, msg)
			}
		}
		sink := "COPY" + string(rune('A'+i))
		if msg := execErr(h, s, "CREATE STREAM "+sink+" AS SELECT id, n FROM events;"); msg != "" {
			t.Fatalf("%s: CSAS: %s", tc.name, msg)
		}
		if err := h.eng.Flush(h.ctx); err != nil {
			t.Fatal(err)
		}
		if n := topicEnd(t, h, sink); n != 2 {
			t.Errorf("%s: the CSAS wrote %d records, want the 2 already in its input", tc.name, n)
		}
	}
}

// TestUnknownPropertiesRefused: a name ksqlDB does not take is refused with
// ksqlDB's message, by SET and UNSET and in a request's properties (then
// with ksqlDB's 40000 and "Failed to set", before any statement runs); so
// is a value Sluice does not run of a property it uses. A secret's value
// never shows.
func TestUnknownPropertiesRefused(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	s := engine.NewSession()
	// The hint's last line lists the properties Sluice uses.
	const uses = "\nproperties Sluice uses: 'auto.offset.reset', "
	for _, tc := range []struct{ sql, want string }{
		{"SET 'auto.offset.rest'='earliest';", "Not recognizable as ksql, streams, consumer, or producer property: 'auto.offset.rest'\ndid you mean 'auto.offset.reset'?" + uses},
		{"SET 'ksql.streams.auto.ofset.reset'='earliest';", "Not recognizable as ksql, streams, consumer, or producer property: 'ksql.streams.auto.ofset.reset'\ndid you mean 'ksql.streams.auto.offset.reset'?" + uses},
		{"SET 'no.such.property'='1';", "Not recognizable as ksql, streams, consumer, or producer property: 'no.such.property'" + uses},
		{"UNSET 'ksql.no.such.setting';", "Not recognizable as ksql, streams, consumer, or producer property: 'ksql.no.such.setting'" + uses},
		{"SET 'ksql.streams.auto.offset.reset'='sometimes';", "Invalid value sometimes for configuration auto.offset.reset: String must be one of: latest, earliest, none"},
		{"SET 'auto.offset.reset'='none';", "'none' is not valid for this property within KSQL"},
	} {
		got := execErr(h, s, tc.sql)
		ok := got == tc.want
		if strings.HasSuffix(tc.want, uses) {
			ok = strings.HasPrefix(got, tc.want) && strings.Contains(got, "'processing.guarantee', 'sluice.max.record.bytes'") &&
				!strings.Contains(got[len(tc.want):], "\n")
		}
		if !ok {
			t.Errorf("%s\n got %q\nwant %q", tc.sql, got, tc.want)
		}
	}
	if len(s.Properties) != 0 {
		t.Errorf("refused SETs left %v", s.Properties)
	}

	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"auto.offset.rest": "earliest"},
			"Failed to set 'auto.offset.rest' to 'earliest'\nCaused by: Not recognizable as ksql, streams, consumer, or producer property: 'auto.offset.rest'"},
		{map[string]string{"ksql.streams.auto.offset.reset": "sometimes"},
			"Failed to set 'ksql.streams.auto.offset.reset' to 'sometimes'\nCaused by: Invalid value sometimes for configuration auto.offset.reset: String must be one of: latest, earliest, none"},
		{map[string]string{"ksql.streams.no.such.password": "pw-hunter2"},
			"Failed to set 'ksql.streams.no.such.password' to '[hidden]'\nCaused by: Not recognizable as ksql, streams, consumer, or producer property: 'ksql.streams.no.such.password'"},
	} {
		rs := engine.NewSession()
		for k, v := range tc.props {
			rs.Properties[k] = v
		}
		res, err := h.eng.Execute(h.ctx, rs, "CREATE STREAM never (id STRING KEY, n INT) WITH (KAFKA_TOPIC='never', VALUE_FORMAT='JSON', PARTITIONS=1);")
		var se *engine.StatementError
		if len(res) != 0 || !errors.As(err, &se) {
			t.Fatalf("%v: %v, %v; want a *StatementError and no result", tc.props, res, err)
		}
		if se.Message() != tc.want || se.Code != 40000 || se.Statement != "" || se.Line != 0 {
			t.Errorf("%v: code %d, statement %q, line %d, message\n %q\nwant 40000, none, 0,\n %q", tc.props, se.Code, se.Statement, se.Line, se.Message(), tc.want)
		}
	}
	for _, src := range h.eng.Sources(api.SourceStream) {
		if src.Name == "NEVER" {
			t.Error("a statement of a request with refused properties ran")
		}
	}
}

// TestShowPropertiesScopes: SHOW PROPERTIES lists the properties Sluice
// uses, each once under ksqlDB's name, with its effective value and where
// it comes from: the session (under whichever name it was set), the
// server's settings, or the default; then the others the session sets.
func TestShowPropertiesScopes(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	h.configure = func(c *engine.Config) { c.ServiceID = "props_test"; c.MaxRecordBytes = 4096 }
	if err := h.shut(); err != nil {
		t.Fatal(err)
	}
	h.open()
	defer h.close()
	s := engine.NewSession()
	s.Properties["ksql.streams.consumer.auto.offset.reset"] = "earliest"
	s.Properties["ksql.streams.num.stream.threads"] = "4"
	s.Properties["ksql.functions.collect_list.limit"] = "10"
	res, err := h.eng.Execute(h.ctx, s, "SET 'ksql.streams.processing.guarantee'='at_least_once'; SHOW PROPERTIES;")
	if err != nil {
		t.Fatal(err)
	}
	l, ok := res[1].Entity.(*api.PropertyList)
	if !ok {
		t.Fatalf("SHOW PROPERTIES gave %#v", res[1])
	}
	var got []string
	for _, p := range l.Properties {
		got = append(got, p.Name+" "+p.Scope+" "+p.Value)
	}
	want := []string{
		"ksql.functions.collect_list.limit SESSION 10",
		"ksql.functions.collect_set.limit DEFAULT 1000",
		"ksql.persistence.default.format.key DEFAULT KAFKA",
		"ksql.persistence.default.format.value DEFAULT ",
		"ksql.query.pull.limit.clause.enabled DEFAULT true",
		"ksql.query.pull.range.scan.enabled DEFAULT true",
		"ksql.query.pull.stream.enabled DEFAULT true",
		"ksql.query.pull.table.scan.enabled DEFAULT true",
		"ksql.service.id SERVER props_test",
		"ksql.streams.auto.offset.reset SESSION earliest",
		"ksql.streams.num.stream.threads SESSION 4",
		"ksql.streams.processing.guarantee SESSION at_least_once",
		"sluice.max.record.bytes SERVER 4096",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("SHOW PROPERTIES:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The session keeps each property under one name.
	if len(s.Properties) != 4 || s.Properties["auto.offset.reset"] != "earliest" || s.Properties["processing.guarantee"] != "at_least_once" {
		t.Errorf("session properties %v", s.Properties)
	}
}

// TestConfigProperty: the names a server's config file takes are a
// session's and ksqlDB's server settings; the others are refused with
// ksqlDB's message.
func TestConfigProperty(t *testing.T) {
	for _, tc := range []struct {
		name, canonical string
		perSession      bool
		err             string
	}{
		{name: "ksql.streams.auto.offset.reset", canonical: "auto.offset.reset", perSession: true},
		{name: "ksql.streams.consumer.auto.offset.reset", canonical: "auto.offset.reset", perSession: true},
		{name: "ksql.streams.producer.acks", canonical: "producer.acks"},
		{name: "ksql.streams.processing.guarantee", canonical: "processing.guarantee", perSession: true},
		{name: "ksql.persistence.default.format.value", canonical: "ksql.persistence.default.format.value", perSession: true},
		{name: "ksql.streams.num.stream.threads", canonical: "num.stream.threads"},
		{name: "ksql.streams.topic.min.insync.replicas", canonical: "topic.min.insync.replicas"},
		{name: "security.protocol", canonical: "security.protocol"},
		{name: "listeners", canonical: "listeners"},
		{name: "authentication.method", canonical: "authentication.method"},
		{name: "ksql.logging.processing.topic.auto.create", canonical: "ksql.logging.processing.topic.auto.create"},
		{name: "ksql.schema.registry.basic.auth.user.info", canonical: "ksql.schema.registry.basic.auth.user.info"},
		{name: "auto.offset.rest", err: "Not recognizable as ksql, streams, consumer, or producer property: 'auto.offset.rest'"},
		{name: "ksql.streams.no.such.setting", err: "Not recognizable as ksql, streams, consumer, or producer property: 'ksql.streams.no.such.setting'"},
		{name: "ksql.streams.consumer.no.such.setting", err: "Not recognizable as ksql, streams, consumer, or producer property: 'ksql.streams.consumer.no.such.setting'"},
	} {
		c, perSession, err := engine.ConfigProperty(tc.name)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: %q, %v; want the error %q", tc.name, c, err, tc.err)
			}
			continue
		}
		if err != nil || c != tc.canonical || perSession != tc.perSession {
			t.Errorf("%s: %q, %v, %v; want %q, %v", tc.name, c, perSession, err, tc.canonical, tc.perSession)
		}
	}
	if err := engine.CheckPropertyValue("auto.offset.reset", "sometimes"); err == nil ||
		err.Error() != "Invalid value sometimes for configuration auto.offset.reset: String must be one of: latest, earliest, none" {
		t.Errorf("auto.offset.reset=sometimes: %v", err)
	}
}
