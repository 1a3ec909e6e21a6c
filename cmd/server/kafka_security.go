package main

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"

	"github.com/sluice-sql/sluice/kafka"
)

// kafkaSecurity is how the server reaches a secured Kafka cluster: TLS
// and SASL. ksqlDB's (Kafka's) property names map to its flags:
// security.protocol, sasl.mechanism, sasl.jaas.config and, for a PEM
// bundle, ssl.truststore.location.
type kafkaSecurity struct {
	protocol                string
	tls, insecureSkipVerify bool
	ca, cert, key, server   string
	mechanism, user, pass   string
	jaas                    string
}

func (k *kafkaSecurity) register(fs *flag.FlagSet) {
	fs.StringVar(&k.protocol, "kafka-security-protocol", "", "Kafka's security.protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (default: from the other --kafka-* flags)")
	fs.BoolVar(&k.tls, "kafka-tls", false, "connect to the brokers over TLS")
	fs.StringVar(&k.ca, "kafka-tls-ca", "", "PEM CA `bundle` verifying the brokers (default: the system's); implies --kafka-tls")
	fs.StringVar(&k.cert, "kafka-tls-cert", "", "PEM client certificate `file` for brokers requiring mTLS; implies --kafka-tls")
	fs.StringVar(&k.key, "kafka-tls-key", "", "PEM private key `file` of --kafka-tls-cert")
	fs.StringVar(&k.server, "kafka-tls-server-name", "", "`name` checked in the brokers' certificates, when not their address")
	fs.BoolVar(&k.insecureSkipVerify, "kafka-tls-insecure-skip-verify", false, "accept any broker certificate (testing only)")
	fs.StringVar(&k.mechanism, "kafka-sasl-mechanism", "", "SASL `mechanism`: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (default PLAIN with a user)")
	fs.StringVar(&k.user, "kafka-sasl-username", "", "SASL `user` for the brokers")
	fs.StringVar(&k.pass, "kafka-sasl-password", "", "SASL password; prefer the SLUICE_KAFKA_SASL_PASSWORD environment variable or the config file")
	fs.StringVar(&k.jaas, "kafka-sasl-jaas-config", "", "Kafka's sasl.jaas.config: a PlainLoginModule or ScramLoginModule line with username and password")
}

// kafkaAliases map Kafka's client property names in a config file to the
// flags.
var kafkaAliases = map[string]string{
	"security.protocol":       "kafka-security-protocol",
	"sasl.mechanism":          "kafka-sasl-mechanism",
	"sasl.jaas.config":        "kafka-sasl-jaas-config",
	"ssl.truststore.location": "kafka-tls-ca",
}

var jaasField = regexp.MustCompile(`(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"`)

// parseJAAS reads username and password of a PlainLoginModule or
// ScramLoginModule configuration. Its errors never quote the text.
func parseJAAS(s string) (user, pass string, err error) {
	if !strings.Contains(s, "PlainLoginModule") && !strings.Contains(s, "ScramLoginModule") {
		return "", "", errors.New("sasl.jaas.config: only PlainLoginModule and ScramLoginModule are supported")
	}
	for _, m := range jaasField.FindAllStringSubmatch(s, -1) {
		v := strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[2])
		if m[1] == "username" {
			user = v
		} else {
			pass = v
		}
	}
	if user == "" {
		return "", "", errors.New(`sasl.jaas.config: no username="..."`)
	}
	return user, pass, nil
}

// apply checks the settings and sets kc's TLS and SASL.
func (k *kafkaSecurity) apply(kc *kafka.Config) error {
	if k.jaas != "" {
		u, p, err := parseJAAS(k.jaas)
		if err != nil {
			return err
		}
		if k.user == "" {
			k.user = u
		}
		if k.pass == "" {
			k.pass = p
		}
		if k.mechanism == "" && strings.Contains(k.jaas, "ScramLoginModule") {
			return errors.New("sasl.jaas.config: a ScramLoginModule needs sasl.mechanism (SCRAM-SHA-256 or SCRAM-SHA-512)")
		}
	}
	useTLS := k.tls || k.ca != "" || k.cert != "" || k.key != "" || k.insecureSkipVerify || k.server != ""
	useSASL := k.user != "" || k.mechanism != ""
	switch strings.ToUpper(k.protocol) {
	case "":
	case "PLAINTEXT":
		if useTLS || useSASL {
			return errors.New("--kafka-security-protocol PLAINTEXT contradicts the TLS or SASL settings")
		}
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return fmt.Errorf("--kafka-security-protocol: %q is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", k.protocol)
	}
	if useTLS {
		c, err := kafka.TLSFiles{CA: k.ca, Cert: k.cert, Key: k.key, ServerName: k.server, InsecureSkipVerify: k.insecureSkipVerify}.Config()
		if err != nil {
			return err
		}
		kc.TLS = c
	}
	if useSASL {
		if k.mechanism == "" {
			k.mechanism = kafka.SASLPlain
		}
		if k.pass == "" {
			return errors.New("Kafka SASL needs a password: SLUICE_KAFKA_SASL_PASSWORD, --kafka-sasl-password or sasl.jaas.config")
		}
		s := &kafka.SASL{Mechanism: strings.ToUpper(k.mechanism), Username: k.user, Password: k.pass}
		if err := s.Validate(); err != nil {
			return err
		}
		kc.SASL = s
	}
	return nil
}

// set reports whether any Kafka security setting is given.
func (k *kafkaSecurity) set() bool {
	return *k != kafkaSecurity{}
}
