package config

import (
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

func newFlags() (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	v := map[string]*string{}
	for _, n := range []string{"config", "data-dir", "grpc", "http", "service-id", "bootstrap-servers", "log-level"} {
		v[n] = fs.String(n, "default-"+n, "")
	}
	return fs, v
}

func TestPrecedence(t *testing.T) {
	file := `# a ksql-server.properties
data-dir = /from/file
grpc=file:1
http: file:2
listeners=http://0.0.0.0:8088
ksql.service.id=file_service
bootstrap.servers = k1:9092,\
   k2:9092
ksql.streams.num.stream.threads=4
! another comment
`
	env := map[string]string{"SLUICE_GRPC": "env:1", "SLUICE_DATA_DIR": "/from/env", "SLUICE_CONFIG": "sluice.properties"}
	l := &Loader{
		EnvPrefix: "SLUICE_", ConfigFlag: "config",
		Aliases: map[string]Alias{
			"listeners":         {Flag: "http", Convert: StripScheme},
			"ksql.service.id":   {Flag: "service-id"},
			"bootstrap.servers": {Flag: "bootstrap-servers"},
		},
		Getenv: func(k string) string { return env[k] },
		ReadFile: func(p string) ([]byte, error) {
			if p != "sluice.properties" {
				return nil, os.ErrNotExist
			}
			return []byte(file), nil
		},
	}
	fs, v := newFlags()
	res, err := l.Load(fs, []string{"--data-dir", "/from/flag"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"data-dir":          "/from/flag", // flag beats env and file
		"grpc":              "env:1",      // env beats file
		"http":              "0.0.0.0:8088",
		"service-id":        "file_service",
		"bootstrap-servers": "k1:9092,k2:9092",
		"log-level":         "default-log-level", // nowhere: the default
		"config":            "sluice.properties",
	}
	for k, w := range want {
		if *v[k] != w {
			t.Errorf("%s = %q, want %q", k, *v[k], w)
		}
	}
	if res.Source["data-dir"] != "flag" || res.Source["grpc"] != "env" || res.Source["service-id"] != "file" || res.Source["log-level"] != "" {
		t.Errorf("sources = %v", res.Source)
	}
	if strings.Join(res.Ignored, ",") != "ksql.streams.num.stream.threads" {
		t.Errorf("ignored = %v", res.Ignored)
	}
}

func TestErrors(t *testing.T) {
	l := &Loader{EnvPrefix: "SLUICE_", ConfigFlag: "config", Getenv: func(string) string { return "" },
		ReadFile: func(string) ([]byte, error) { return nil, os.ErrNotExist }}
	fs, _ := newFlags()
	if _, err := l.Load(fs, []string{"--config", "missing.properties"}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	fs, _ = newFlags()
	if _, err := l.Load(fs, []string{"--nope"}); err == nil {
		t.Error("unknown flag accepted")
	}
	if _, err := Parse(strings.NewReader("=x\n")); err == nil {
		t.Error("a property without a name accepted")
	}
}
