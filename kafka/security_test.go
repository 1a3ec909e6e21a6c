package kafka_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

func TestSASLHidesPassword(t *testing.T) {
	s := kafka.SASL{Mechanism: kafka.SASLScramSHA512, Username: "u", Password: "hunter2"}
	for _, text := range []string{s.String(), fmt.Sprint(s), fmt.Sprintf("%v", &s), s.LogValue().String()} {
		if strings.Contains(text, "hunter2") {
			t.Errorf("%q shows the password", text)
		}
	}
	if err := (kafka.SASL{Mechanism: "GSSAPI", Username: "u"}).Validate(); err == nil {
		t.Error("GSSAPI accepted")
	}
	if _, err := kafka.NewFranz(kafka.Config{Brokers: []string{"127.0.0.1:1"}, SASL: &kafka.SASL{Mechanism: "PLAIN"}}); err == nil {
		t.Error("SASL without a username accepted")
	}
}

// TestSASLBroker authenticates with each mechanism and adapter to a broker
// that requires SASL: SLUICE_TEST_KAFKA_SASL names it (scripts/kafka.sh up
// --sasl, user sluice, password sluice-secret), and when
// SLUICE_TEST_KAFKA_CA names a CA's PEM file the connections use TLS
// verified by it (scripts/kafka.sh up --sasl --tls), with the client
// certificate beside it. A wrong password fails; without TLS a TLS broker
// cannot be reached.
func TestSASLBroker(t *testing.T) {
	addr := os.Getenv("SLUICE_TEST_KAFKA_SASL")
	var tlsCfg *tls.Config
	if ca := os.Getenv("SLUICE_TEST_KAFKA_CA"); ca != "" {
		dir := filepath.Dir(ca)
		var err error
		tlsCfg, err = kafka.TLSFiles{CA: ca, Cert: filepath.Join(dir, "client.pem"), Key: filepath.Join(dir, "client-key.pem")}.Config()
		if err != nil {
			t.Fatal(err)
		}
	}
	if addr == "" {
		if os.Getenv("CI") == "true" && os.Getenv("SLUICE_TEST_KAFKA") != "" {
			t.Fatal("SLUICE_TEST_KAFKA_SASL is not set: make test-kafka starts a SASL broker")
		}
		t.Skip("SLUICE_TEST_KAFKA_SASL is not set; run make test-kafka")
	}
	for _, a := range adapters {
		for _, mech := range []string{kafka.SASLPlain, kafka.SASLScramSHA512} {
			t.Run(a.name+"/"+mech, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				c, err := a.new(kafka.Config{Brokers: strings.Split(addr, ","), TLS: tlsCfg, SASL: &kafka.SASL{Mechanism: mech, Username: "sluice", Password: "sluice-secret"}})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				topic := fmt.Sprintf("sasl-%s-%s-%d", a.name, strings.ToLower(mech), time.Now().UnixNano())
				if err := c.CreateTopic(ctx, kafka.TopicSpec{Name: topic, Partitions: 1}); err != nil {
					t.Fatal(err)
				}
				p, err := c.NewProducer(kafka.ProducerOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				if err := p.Produce(ctx, []*kafka.Record{{Topic: topic, Partition: -1, Key: []byte("k"), Value: []byte("v")}}); err != nil {
					t.Fatal(err)
				}
				offs, err := c.ListOffsets(ctx, topic)
				if err != nil {
					t.Fatal(err)
				}
				if offs[0].End != 1 {
					t.Fatalf("end offset %d, want 1", offs[0].End)
				}
			})
		}
		t.Run(a.name+"/wrong-password", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := a.new(kafka.Config{Brokers: strings.Split(addr, ","), TLS: tlsCfg, SASL: &kafka.SASL{Mechanism: kafka.SASLScramSHA512, Username: "sluice", Password: "wrong"}, RequestTimeout: 5 * time.Second})
			if err != nil {
				return // refused at once
			}
			defer c.Close()
			if _, err := c.ListTopics(ctx); err == nil || errors.Is(err, context.Canceled) {
				t.Fatalf("a wrong password listed topics (err %v)", err)
			}
		})
		if tlsCfg != nil {
			t.Run(a.name+"/no-tls", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, err := a.new(kafka.Config{Brokers: strings.Split(addr, ","), SASL: &kafka.SASL{Mechanism: kafka.SASLPlain, Username: "sluice", Password: "sluice-secret"}, RequestTimeout: 5 * time.Second})
				if err != nil {
					return
				}
				defer c.Close()
				if _, err := c.ListTopics(ctx); err == nil {
					t.Fatal("a plaintext connection to a TLS broker listed topics")
				}
			})
		}
	}
}
