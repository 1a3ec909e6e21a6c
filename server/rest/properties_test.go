package rest_test

import (
	"net/http"
	"slices"
	"testing"
)

// TestStreamsPropertiesAsKsqlDBTakesThem: a request's streamsProperties
// under ksqlDB's ksql.streams. names set what they name, so that a CREATE
// ... AS SELECT sent with ksql.streams.auto.offset.reset=earliest reads
// the records already in its input; SHOW PROPERTIES answers with ksqlDB's
// PropertiesList.
func TestStreamsPropertiesAsKsqlDBTakesThem(t *testing.T) {
	e := newEnv(t)
	e.ksql(t, "CREATE STREAM events (id STRING KEY, n INT) WITH (KAFKA_TOPIC='events', VALUE_FORMAT='JSON', PARTITIONS=1);"+
		"INSERT INTO events (id, n) VALUES ('a', 1); INSERT INTO events (id, n) VALUES ('b', 2);", nil)
	earliest := map[string]any{"ksql.streams.auto.offset.reset": "earliest"}
	ents := e.ksql(t, "CREATE STREAM copied AS SELECT id, n FROM events; SHOW PROPERTIES;", earliest)
	if err := e.eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	bounds, err := e.client.ListOffsets(t.Context(), "COPIED")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, b := range bounds {
		n += b.End
	}
	if n != 2 {
		t.Errorf("the CSAS sent with ksql.streams.auto.offset.reset=earliest wrote %d records, want the 2 already in its input", n)
	}

	props := ents[1]
	values := map[string]any{}
	for _, p := range props["properties"].([]any) {
		m := p.(map[string]any)
		if m["scope"] != "KSQL" {
			t.Errorf("property %v: scope %v, want KSQL", m["name"], m["scope"])
		}
		name := m["name"].(string)
		if _, dup := values[name]; dup {
			t.Errorf("%s listed twice", name)
		}
		values[name] = m["value"]
	}
	if values["ksql.streams.auto.offset.reset"] != "earliest" || values["ksql.persistence.default.format.key"] != "KAFKA" ||
		values["ksql.persistence.default.format.value"] != nil || values["ksql.service.id"] != "sluice" {
		t.Errorf("properties = %v", values)
	}
	if _, ok := values["auto.offset.reset"]; ok {
		t.Errorf("auto.offset.reset listed under its Kafka name: %v", values)
	}
	overwritten := toStrings(props["overwrittenProperties"])
	if !slices.Equal(overwritten, []string{"ksql.streams.auto.offset.reset"}) {
		t.Errorf("overwrittenProperties = %v", overwritten)
	}
	if atDefault := toStrings(props["defaultProperties"]); !slices.Contains(atDefault, "ksql.persistence.default.format.key") ||
		slices.Contains(atDefault, "ksql.streams.auto.offset.reset") || slices.Contains(atDefault, "ksql.service.id") {
		t.Errorf("defaultProperties = %v", atDefault)
	}
}

// TestUnknownStreamsPropertyRefused: a request whose properties hold a name
// ksqlDB does not take, or a value Sluice does not run, is refused as
// ksqlDB refuses it (HTTP 400, error_code 40000, "Failed to set ...
// Caused by: ..."), on every endpoint, before any statement runs.
func TestUnknownStreamsPropertyRefused(t *testing.T) {
	e := newEnv(t)
	const unknown = "Failed to set 'auto.offset.rest' to 'earliest'\nCaused by: Not recognizable as ksql, streams, consumer, or producer property: 'auto.offset.rest'"
	const badValue = "Failed to set 'ksql.streams.auto.offset.reset' to 'sometimes'\nCaused by: Invalid value sometimes for configuration auto.offset.reset: String must be one of: latest, earliest, none"
	create := "CREATE STREAM never (id STRING KEY, n INT) WITH (KAFKA_TOPIC='never', VALUE_FORMAT='JSON', PARTITIONS=1);"
	for _, tc := range []struct {
		path string
		body map[string]any
		want string
	}{
		{"/ksql", map[string]any{"ksql": create, "streamsProperties": map[string]any{"auto.offset.rest": "earliest"}}, unknown},
		{"/ksql", map[string]any{"ksql": create, "properties": map[string]any{"auto.offset.rest": "earliest"}}, unknown},
		{"/ksql", map[string]any{"ksql": create, "streamsProperties": map[string]any{"ksql.streams.auto.offset.reset": "sometimes"}}, badValue},
		{"/query", map[string]any{"ksql": "SELECT * FROM never;", "streamsProperties": map[string]any{"auto.offset.rest": "earliest"}}, unknown},
		{"/query-stream", map[string]any{"sql": "SELECT * FROM never;", "properties": map[string]any{"auto.offset.rest": "earliest"}}, unknown},
	} {
		status, body, _ := e.post(t, e.h2, tc.path, "application/json", tc.body)
		got := decode(t, body)
		if status != http.StatusBadRequest || got["@type"] != "generic_error" || got["error_code"] != float64(40000) || got["message"] != tc.want {
			t.Errorf("%s %v: %d %s\nwant 400, generic_error 40000 %q", tc.path, tc.body, status, body, tc.want)
		}
		if _, ok := got["statementText"]; ok {
			t.Errorf("%s: the refusal names a statement: %s", tc.path, body)
		}
	}
	ents := e.ksql(t, "SHOW STREAMS;", nil)
	for _, s := range ents[0]["streams"].([]any) {
		if s.(map[string]any)["name"] == "NEVER" {
			t.Error("the statement of a request with refused properties ran")
		}
	}
}
