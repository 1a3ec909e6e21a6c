package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/kafka"
)

// connectSettings are how the server reaches a Kafka Connect worker, for
// the connector statements. ksqlDB's property names map to its flags:
// ksql.connect.url, ksql.connect.basic.auth.credentials.source and .file,
// ksql.connect.request.timeout.ms and ksql.connect.worker.config.
type connectSettings struct {
	url               string
	user, password    string
	credentialsSource string
	credentialsFile   string
	timeout           time.Duration
	workerConfig      string
	ca, cert, key     string
	insecure          bool
}

func (c *connectSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "connect-url", "", "`URL` of a Kafka Connect worker's REST API (http://localhost:8083), for CREATE SOURCE|SINK CONNECTOR, DROP, DESCRIBE and SHOW CONNECTORS (ksql.connect.url); empty refuses them")
	fs.StringVar(&c.user, "connect-user", "", "HTTP basic authentication `user` for the Connect worker (with --connect-password or SLUICE_CONNECT_PASSWORD)")
	fs.StringVar(&c.password, "connect-password", "", "password of --connect-user; prefer the SLUICE_CONNECT_PASSWORD environment variable, which ps does not show")
	fs.StringVar(&c.credentialsSource, "connect-credentials-source", "NONE", "where the Connect worker's basic authentication comes from: NONE, or FILE (--connect-credentials-file) (ksql.connect.basic.auth.credentials.source)")
	fs.StringVar(&c.credentialsFile, "connect-credentials-file", "", "properties `file` with username= and password= lines for the Connect worker (ksql.connect.basic.auth.credentials.file)")
	fs.DurationVar(&c.timeout, "connect-timeout", connect.DefaultTimeout, "how long one call to the Connect worker may take, its retries included (ksql.connect.request.timeout.ms)")
	fs.StringVar(&c.workerConfig, "connect-worker-config", "", "the Connect worker's properties `file`: its config, offset and status storage topics become read-only (ksql.connect.worker.config); without it connect-configs, connect-offsets and connect-status are")
	fs.StringVar(&c.ca, "connect-tls-ca", "", "PEM CA `bundle` verifying an https:// Connect worker (default: the system's)")
	fs.StringVar(&c.cert, "connect-tls-cert", "", "PEM client certificate `file` for a Connect worker requiring mTLS")
	fs.StringVar(&c.key, "connect-tls-key", "", "PEM private key `file` of --connect-tls-cert")
	fs.BoolVar(&c.insecure, "connect-tls-insecure-skip-verify", false, "accept any Connect worker certificate (testing only)")
}

// connectAliases map ksqlDB's Connect property names to the flags.
var connectAliases = map[string]string{
	"ksql.connect.url":                           "connect-url",
	"ksql.connect.basic.auth.credentials.source": "connect-credentials-source",
	"ksql.connect.basic.auth.credentials.file":   "connect-credentials-file",
	"ksql.connect.request.timeout.ms":            "connect-timeout",
	"ksql.connect.worker.config":                 "connect-worker-config",
}

// millis converts ksql.connect.request.timeout.ms to a duration flag.
func millis(v string) (string, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return "", fmt.Errorf("%q is not a number of milliseconds", v)
	}
	return (time.Duration(n) * time.Millisecond).String(), nil
}

// check validates the settings without reaching the worker.
func (c *connectSettings) check() error {
	if c.url == "" {
		if c.user != "" || c.credentialsFile != "" || c.ca != "" || c.cert != "" {
			return errors.New("the Connect worker's authentication and TLS settings need --connect-url (ksql.connect.url)")
		}
		return nil
	}
	switch strings.ToUpper(c.credentialsSource) {
	case "NONE", "":
	case "FILE":
		if c.credentialsFile == "" {
			return errors.New("--connect-credentials-source FILE needs --connect-credentials-file (ksql.connect.basic.auth.credentials.file)")
		}
	default:
		return fmt.Errorf("--connect-credentials-source: %q is not NONE or FILE", c.credentialsSource)
	}
	if (c.user == "") != (c.password == "") {
		return errors.New("--connect-user and --connect-password (or SLUICE_CONNECT_PASSWORD) go together")
	}
	if (c.cert == "") != (c.key == "") {
		return errors.New("--connect-tls-cert and --connect-tls-key go together")
	}
	if c.timeout <= 0 {
		return errors.New("--connect-timeout must be positive")
	}
	_, err := connect.New(connect.Options{URL: c.url})
	return err
}

// client returns the Connect client (nil without --connect-url) and the
// worker's own topics.
func (c *connectSettings) client(log *slog.Logger) (*connect.Client, []string, error) {
	if c.url == "" {
		return nil, nil, nil
	}
	opts := connect.Options{URL: c.url, User: c.user, Password: c.password, Timeout: c.timeout, Logger: log}
	if strings.EqualFold(c.credentialsSource, "FILE") {
		u, p, err := readCredentials(c.credentialsFile)
		if err != nil {
			return nil, nil, err
		}
		opts.User, opts.Password = u, p
	}
	if c.ca != "" || c.cert != "" || c.insecure {
		t, err := kafka.TLSFiles{CA: c.ca, Cert: c.cert, Key: c.key, InsecureSkipVerify: c.insecure}.Config()
		if err != nil {
			return nil, nil, fmt.Errorf("Connect worker TLS: %w", err)
		}
		opts.TLS = t
	}
	cl, err := connect.New(opts)
	if err != nil {
		return nil, nil, err
	}
	topics := []string{"connect-configs", "connect-offsets", "connect-status"}
	if c.workerConfig != "" {
		if topics, err = workerTopics(c.workerConfig); err != nil {
			return nil, nil, err
		}
	}
	return cl, topics, nil
}

// readProperties reads a Java properties file's key=value (or key: value)
// lines.
func readProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			out[line] = ""
			continue
		}
		out[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return out, sc.Err()
}

// readCredentials reads ksqlDB's Connect credentials file: username and
// password properties. Its errors never quote the file.
func readCredentials(path string) (user, pass string, err error) {
	p, err := readProperties(path)
	if err != nil {
		return "", "", fmt.Errorf("--connect-credentials-file: %w", err)
	}
	if p["username"] == "" || p["password"] == "" {
		return "", "", fmt.Errorf("--connect-credentials-file %s: want username= and password= lines", path)
	}
	return p["username"], p["password"], nil
}

// workerTopics are the storage topics a Connect worker's properties name,
// Connect's defaults for those it does not.
func workerTopics(path string) ([]string, error) {
	p, err := readProperties(path)
	if err != nil {
		return nil, fmt.Errorf("--connect-worker-config: %w", err)
	}
	var out []string
	for key, def := range map[string]string{"config.storage.topic": "connect-configs", "offset.storage.topic": "connect-offsets", "status.storage.topic": "connect-status"} {
		t := p[key]
		if t == "" {
			t = def
		}
		out = append(out, t)
	}
	return out, nil
}

// connectURL is the worker's address for the logs, without credentials;
// empty without one.
func connectURL(c *connect.Client) string {
	if c == nil {
		return ""
	}
	return c.URL()
}
