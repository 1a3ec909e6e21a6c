package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/cmd/cli/shell"
)

// TestKafkaSASLServer runs the server against a broker that requires SASL
// over TLS (SLUICE_TEST_KAFKA_SASL, with SLUICE_TEST_KAFKA_CA; make
// test-kafka starts one), configured by its flags: a stream, inserted rows
// and a persistent query go through the secured connection.
func TestKafkaSASLServer(t *testing.T) {
	addr, ca := os.Getenv("SLUICE_TEST_KAFKA_SASL"), os.Getenv("SLUICE_TEST_KAFKA_CA")
	if addr == "" || ca == "" {
		t.Skip("SLUICE_TEST_KAFKA_SASL and SLUICE_TEST_KAFKA_CA are not set; make test-kafka runs this test")
	}
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			id := fmt.Sprintf("sasl%d", time.Now().UnixNano())
			s := startServer(t, t.TempDir(), "--bootstrap-servers", addr, "--service-id", id,
				"--kafka-tls-ca", ca, "--kafka-sasl-mechanism", mech,
				"--kafka-sasl-username", "sluice", "--kafka-sasl-password", "sluice-secret")
			defer s.stop()
			sess := &shell.Shell{}
			s.sh(t, sess, "SET 'auto.offset.reset'='earliest';")
			s.sh(t, sess, fmt.Sprintf(`CREATE STREAM %s_in (id VARCHAR KEY, n INT) WITH (KAFKA_TOPIC='%s_in', VALUE_FORMAT='JSON', PARTITIONS=1);
INSERT INTO %s_in (id, n) VALUES ('a', 1);
INSERT INTO %s_in (id, n) VALUES ('b', 20);
INSERT INTO %s_in (id, n) VALUES ('c', 30);
CREATE STREAM %s_big AS SELECT id, n FROM %s_in WHERE n > 10;`, id, id, id, id, id, id, id))
			out := s.sh(t, sess, fmt.Sprintf("SELECT id, n FROM %s_big EMIT CHANGES LIMIT 2;", id))
			for _, want := range []string{"b", "20", "c", "30"} {
				if !strings.Contains(out, want) {
					t.Fatalf("push query over the secured connection printed\n%s\nwithout %q", out, want)
				}
			}
		})
	}
}
