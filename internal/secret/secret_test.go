package secret

import (
	"strings"
	"testing"
)

func TestIsSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"database.password":                    true,
		"connection.password":                  true,
		"DATABASE_PASSWORD":                    true,
		"ssl.key.password":                     true,
		"aws.secret.access.key":                true,
		"api.key":                              true,
		"es.apikey":                            true,
		"github.access.token":                  true,
		"sasl.jaas.config":                     true,
		"producer.override.sasl.jaas.config":   true,
		"basic.auth.user.info":                 true,
		"value.converter.basic.auth.user.info": true,
		"ssl.keystore.key":                     true,
		"gcs.credentials.json":                 true,
		"private.key":                          true,
		"key.converter":                        false,
		"key.converter.schemas.enable":         false,
		"primary.key.fields":                   false,
		"primary.key.mode":                     false,
		"message.key.columns":                  false,
		"key.ignore":                           false,
		"connector.class":                      false,
		"connection.url":                       false,
		"database.user":                        false,
		"topic.prefix":                         false,
		"transforms.unwrap.type":               false,
		"ssl.keymanager.algorithm":             false,
		"tokenizer":                            false,
		"":                                     false,
	} {
		if got := IsSecret(name); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestMaskURL(t *testing.T) {
	for in, want := range map[string]string{
		"jdbc:postgresql://h/db?user=u&password=p":                 "jdbc:postgresql://h/db?user=u&password=[hidden]",
		"jdbc:postgresql://h:5432/db?password=p&user=u":            "jdbc:postgresql://h:5432/db?password=[hidden]&user=u",
		"jdbc:postgresql://u:pass@h:5432/db":                       "jdbc:postgresql://u:[hidden]@h:5432/db",
		"https://elastic:changeme@es.example.com:9200":             "https://elastic:[hidden]@es.example.com:9200",
		"jdbc:sqlserver://h:1433;databaseName=d;user=u;password=p": "jdbc:sqlserver://h:1433;databaseName=d;user=u;password=[hidden]",
		"mongodb://u:p%40ss@h/db?authSource=admin":                 "mongodb://u:[hidden]@h/db?authSource=admin",
		"jdbc:postgresql://h/db":                                   "jdbc:postgresql://h/db",
		"http://h:9200":                                            "http://h:9200",
		"token=abc":                                                "token=[hidden]",
		"plain text":                                               "plain text",
	} {
		got := MaskURL(in)
		if got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValueAndConfig(t *testing.T) {
	cfg := map[string]string{
		"connector.class":   "io.debezium.connector.postgresql.PostgresConnector",
		"database.password": "s3cret",
		"connection.url":    "jdbc:postgresql://h/db?user=u&password=p4ss",
		"empty.password":    "",
	}
	got := Config(cfg)
	if got["connector.class"] != cfg["connector.class"] {
		t.Errorf("connector.class = %q", got["connector.class"])
	}
	if got["database.password"] != Hidden {
		t.Errorf("database.password = %q", got["database.password"])
	}
	if got["connection.url"] != "jdbc:postgresql://h/db?user=u&password=[hidden]" {
		t.Errorf("connection.url = %q", got["connection.url"])
	}
	if got["empty.password"] != "" {
		t.Errorf("an empty secret shows as %q; want empty (there is nothing to hide)", got["empty.password"])
	}
	if cfg["database.password"] != "s3cret" {
		t.Error("Config changed its argument")
	}
	if Config(nil) != nil {
		t.Error("Config(nil) is not nil")
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor(map[string]string{
		"database.password": "s3cret",
		"connection.url":    "jdbc:postgresql://u:urlpass@h/db?password=qp4ss",
		"sasl.jaas.config":  `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="jaaspw";`,
		"short.password":    "ab",
		"topic.prefix":      "s3cret-topic-is-not-secret-but-holds-one",
	})
	msg := "Invalid value s3cret for database.password; could not log in with urlpass or qp4ss; jaas jaaspw; ab stays; " +
		"url jdbc:postgresql://x:other@h/db"
	got := r.Text(msg)
	for _, s := range []string{"s3cret", "urlpass", "qp4ss", "jaaspw", "other"} {
		if strings.Contains(got, s) {
			t.Errorf("Text left %q in %q", s, got)
		}
	}
	if !strings.Contains(got, "ab stays") {
		t.Errorf("Text hid a secret shorter than %d bytes: %q", minSecretLen, got)
	}
	var nilR *Redactor
	if nilR.Text("a://u:p@h") != "a://u:[hidden]@h" {
		t.Error("a nil Redactor does not mask URLs")
	}
}
