package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestConfigFileProperties: the config file takes ksqlDB's names as ksqlDB
// takes them, with its prefixes (ksql.streams., ksql.streams.consumer.,
// ...); a name ksqlDB does not know stops the start with ksqlDB's message,
// naming the file and line, and so does a value Sluice does not run.
func TestConfigFileProperties(t *testing.T) {
	dir := t.TempDir()
	write := func(props string) string {
		t.Helper()
		file := filepath.Join(dir, "ksql-server.properties")
		if err := os.WriteFile(file, []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	none := func(string) string { return "" }

	file := write(`# a ksqlDB server's file
listeners=http://127.0.0.1:18088
ksql.logging.processing.topic.auto.create=true
ksql.schema.registry.basic.auth.user.info=u:pw
ksql.streams.consumer.max.poll.records=500
ksql.streams.producer.acks=all
ksql.streams.num.stream.threads=2
ksql.streams.consumer.auto.offset.reset=earliest
ksql.streams.producer.processing.guarantee=exactly_once_v2
security.protocol=PLAINTEXT
`)
	_, err := parseConfig([]string{"--config", file}, none, io.Discard)
	const bad = "config file %s line 9: Not recognizable as ksql, streams, consumer, or producer property: 'ksql.streams.producer.processing.guarantee'"
	if err == nil || err.Error() != fmt.Sprintf(bad, file) {
		t.Fatalf("processing.guarantee under producer.: %v\nwant %s", err, fmt.Sprintf(bad, file))
	}

	file = write(`listeners=http://127.0.0.1:18088
ksql.logging.processing.topic.auto.create=true
ksql.schema.registry.basic.auth.user.info=u:pw
ksql.streams.consumer.max.poll.records=500
ksql.streams.producer.acks=all
ksql.streams.num.stream.threads=2
ksql.streams.consumer.auto.offset.reset=earliest
`)
	c, err := parseConfig([]string{"--config", file}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ksql.logging.processing.topic.auto.create", "ksql.schema.registry.basic.auth.user.info", "ksql.streams.consumer.auto.offset.reset",
		"ksql.streams.consumer.max.poll.records", "ksql.streams.num.stream.threads", "ksql.streams.producer.acks"}
	if !slices.Equal(c.ignored, want) || c.httpAddr != "127.0.0.1:18088" {
		t.Errorf("ignored %q, http %q; want %q, 127.0.0.1:18088", c.ignored, c.httpAddr, want)
	}

	for _, tc := range []struct{ props, want string }{
		{"service-id=s\n\nauto.offset.rest=earliest\n", "config file %s line 3: Not recognizable as ksql, streams, consumer, or producer property: 'auto.offset.rest'"},
		{"ksql.streams.nope=1\n", "config file %s line 1: Not recognizable as ksql, streams, consumer, or producer property: 'ksql.streams.nope'"},
		{"ksql.streams.auto.offset.reset=sometimes\n", "config file %s line 1: ksql.streams.auto.offset.reset: Invalid value sometimes for configuration auto.offset.reset: String must be one of: latest, earliest, none"},
	} {
		file := write(tc.props)
		if _, err := parseConfig([]string{"--config", file}, none, io.Discard); err == nil || err.Error() != fmt.Sprintf(tc.want, file) {
			t.Errorf("%q: %v\nwant %s", tc.props, err, fmt.Sprintf(tc.want, file))
		}
	}

	// ksqlDB's spellings of a setting the server has find its flag.
	file = write("ksql.streams.consumer.client.id=x\nksql.streams.processing.guarantee=exactly_once_v2\n")
	if c, err := parseConfig([]string{"--config", file}, none, io.Discard); err != nil || c.guarantee != "exactly_once_v2" {
		t.Errorf("ksql.streams.processing.guarantee: %q, %v", c.guarantee, err)
	}
}
