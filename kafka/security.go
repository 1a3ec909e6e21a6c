package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The SASL mechanisms Sluice authenticates with.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// SASL is how a client authenticates to the brokers. Its String and
// LogValue never show the password.
type SASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	Mechanism string
	Username  string
	Password  string
}

// String describes s without its password.
func (s SASL) String() string {
	return fmt.Sprintf("SASL %s as %q", s.Mechanism, s.Username)
}

// LogValue logs s without its password.
func (s SASL) LogValue() slog.Value {
	return slog.GroupValue(slog.String("mechanism", s.Mechanism), slog.String("username", s.Username))
}

// Validate checks the mechanism is known and a username is set.
func (s SASL) Validate() error {
	switch strings.ToUpper(s.Mechanism) {
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
	default:
		return fmt.Errorf("kafka: SASL mechanism %q is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.Mechanism)
	}
	if s.Username == "" {
		return errors.New("kafka: SASL needs a username")
	}
	return nil
}

// mechanism is s as a franz-go SASL mechanism.
func (s SASL) mechanism() sasl.Mechanism {
	switch strings.ToUpper(s.Mechanism) {
	case SASLScramSHA256:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism()
	case SASLScramSHA512:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism()
	}
	return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()
}

// franzOpts are the options that make a kgo client authenticate as s.
func (s SASL) franzOpts() []kgo.Opt {
	return []kgo.Opt{kgo.SASL(s.mechanism())}
}

// configureSarama makes sc authenticate as s.
func (s SASL) configureSarama(sc *sarama.Config) {
	sc.Net.SASL.Enable = true
	sc.Net.SASL.Handshake = true
	sc.Net.SASL.User = s.Username
	sc.Net.SASL.Password = s.Password
	switch strings.ToUpper(s.Mechanism) {
	case SASLScramSHA256:
		sc.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
	case SASLScramSHA512:
		sc.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
	default:
		sc.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		return
	}
	sc.Net.SASL.Version = sarama.SASLHandshakeV1
	sc.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{sasl: s} }
}

// scramClient runs a SCRAM exchange for sarama with franz-go's SCRAM
// implementation: sarama asks for the client's first message with an empty
// challenge, then hands over each server message.
type scramClient struct {
	sasl    SASL
	session sasl.Session
	done    bool
}

func (c *scramClient) Begin(user, pass, _ string) error {
	c.sasl.Username, c.sasl.Password = user, pass
	c.session, c.done = nil, false
	return nil
}

func (c *scramClient) Step(challenge string) (string, error) {
	if c.session == nil {
		session, first, err := c.sasl.mechanism().Authenticate(context.Background(), "")
		if err != nil {
			return "", err
		}
		c.session = session
		return string(first), nil
	}
	done, resp, err := c.session.Challenge([]byte(challenge))
	if err != nil {
		return "", err
	}
	c.done = done
	return string(resp), nil
}

func (c *scramClient) Done() bool { return c.done }

// TLSFiles names the PEM files of a TLS connection to the brokers.
type TLSFiles struct {
	// CA verifies the brokers' certificates; empty uses the system's.
	CA string
	// Cert and Key, both or neither, are the client certificate for
	// brokers that ask for one (mTLS).
	Cert, Key string
	// ServerName overrides the name checked in the brokers' certificates.
	ServerName string
	// InsecureSkipVerify accepts any broker certificate: for tests only.
	InsecureSkipVerify bool
}

// Config returns the TLS configuration f describes.
func (f TLSFiles) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName, InsecureSkipVerify: f.InsecureSkipVerify}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("kafka: TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kafka: TLS CA %s holds no PEM certificate", f.CA)
		}
		cfg.RootCAs = pool
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, errors.New("kafka: a TLS client certificate needs both its certificate and its key file")
	}
	if f.Cert != "" {
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("kafka: TLS client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
