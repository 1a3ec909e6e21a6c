package qtt

import "testing"

// TestSkipReason checks that nothing is skipped, the schema-registry
// formats included.
func TestSkipReason(t *testing.T) {
	src := "CREATE STREAM S (ID INT KEY, V STRING) WITH (kafka_topic='t', value_format='JSON');"
	for _, tc := range []struct {
		name  string
		stmts []string
		props map[string]string
		topic Topic
		want  string
	}{
		{"stateless", []string{src, "CREATE STREAM O AS SELECT * FROM S WHERE V = 'GROUP BY a JOIN b';"}, nil, Topic{}, ""},
		{"quoted identifier", []string{src, "CREATE STREAM O AS SELECT V AS `JOIN` FROM S;"}, nil, Topic{}, ""},
		{"value format", []string{"CREATE STREAM S (ID INT KEY) WITH (kafka_topic='t', value_format='Avro');"}, nil, Topic{}, ""},
		{"key format", []string{"CREATE STREAM S (ID INT KEY) WITH (kafka_topic='t', key_format = 'PROTOBUF_NOSR', value_format='JSON');"}, nil, Topic{}, ""},
		{"format", []string{src, "CREATE STREAM O WITH (FORMAT='JSON_SR') AS SELECT * FROM S;"}, nil, Topic{}, ""},
		{"default format", []string{"CREATE STREAM S (ID INT KEY) WITH (kafka_topic='t');"}, map[string]string{"ksql.persistence.default.format.value": "AVRO"}, Topic{}, ""},
		{"declared topic", []string{src}, nil, Topic{Name: "t", ValueFormat: "PROTOBUF"}, ""},
		{"group by", []string{src, "CREATE TABLE O AS SELECT ID, COUNT(*) FROM S\n  group\n by ID;"}, nil, Topic{}, ""},
		{"window", []string{src, "CREATE TABLE O AS SELECT ID FROM S WINDOW TUMBLING (SIZE 1 SECOND);"}, nil, Topic{}, ""},
		{"windowed source", []string{"CREATE TABLE S (ID INT PRIMARY KEY, V INT) WITH (kafka_topic='t', value_format='JSON', WINDOW_TYPE='Session');"}, nil, Topic{}, ""},
		{"join after group by", []string{src, "CREATE TABLE O AS SELECT S.ID, COUNT(*) FROM S JOIN T ON S.ID = T.ID GROUP BY S.ID;"}, nil, Topic{}, ""},
		{"join", []string{src, "CREATE STREAM O AS SELECT * FROM S LEFT JOIN T ON S.ID = T.ID;"}, nil, Topic{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Case{Name: tc.name, Statements: tc.stmts}
			if tc.topic.Name != "" {
				c.Topics = []Topic{tc.topic}
			}
			if got := SkipReason(Run{Case: c, Statements: tc.stmts, Properties: tc.props}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
