package config

import (
	"errors"
	"strings"
	"testing"
)

// TestResolve: a key naming no flag nor alias goes to Resolve, which may
// refuse it (the error names the file and the line) or give its canonical
// name, whose alias then applies.
func TestResolve(t *testing.T) {
	file := "# ksqlDB's names\nksql.streams.consumer.service=file_service\nksql.streams.num.stream.threads=4\ndata-dir=/from/file\n"
	var asked []string
	l := &Loader{
		ConfigFlag: "config",
		Aliases:    map[string]Alias{"ksql.service.id": {Flag: "service-id"}},
		Getenv:     func(string) string { return "" },
		ReadFile:   func(string) ([]byte, error) { return []byte(file), nil },
		Resolve: func(key, value string) (string, error) {
			asked = append(asked, key+"="+value)
			switch key {
			case "ksql.streams.consumer.service":
				return "ksql.service.id", nil
			case "ksql.streams.num.stream.threads":
				return "num.stream.threads", nil
			}
			return "", errors.New("unknown: " + key)
		},
	}
	fs, v := newFlags()
	res, err := l.Load(fs, []string{"--config", "sluice.properties"})
	if err != nil {
		t.Fatal(err)
	}
	if *v["service-id"] != "file_service" || *v["data-dir"] != "/from/file" {
		t.Errorf("service-id %q, data-dir %q", *v["service-id"], *v["data-dir"])
	}
	if strings.Join(res.Ignored, ",") != "ksql.streams.num.stream.threads" {
		t.Errorf("ignored %v", res.Ignored)
	}
	if strings.Join(asked, ",") != "ksql.streams.consumer.service=file_service,ksql.streams.num.stream.threads=4" {
		t.Errorf("Resolve asked about %v; flags and aliases need no resolving", asked)
	}

	file = "data-dir=/from/file\n\nauto.offset.rest=earliest\n"
	fs, _ = newFlags()
	_, err = l.Load(fs, []string{"--config", "sluice.properties"})
	if err == nil || err.Error() != "config file sluice.properties line 3: unknown: auto.offset.rest" {
		t.Errorf("an unknown key: %v", err)
	}
}
