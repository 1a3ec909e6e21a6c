package rest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// need skips a test whose outside tool is missing, except under CI=true
// where .ci/run installs it and its absence is a failure.
func need(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing under CI; .ci/run installs it", what)
	}
	t.Skipf("%s is missing; install it as .ci/run does to run this test", what)
}

// runClient runs an outside client script against a served handler and
// fails the test unless it prints PASS.
func runClient(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, append(args, e.url)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("the client failed: %v", err)
	}
}

// TestNodeClient runs the npm package ksqldb-client (installed into
// interop/node by npm ci) against the API.
func TestNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	need(t, err == nil, "node")
	dir, _ := filepath.Abs(filepath.Join("interop", "node"))
	_, err = os.Stat(filepath.Join(dir, "node_modules", "ksqldb-client", "package.json"))
	need(t, err == nil, "the npm package ksqldb-client (cd server/rest/interop/node && npm ci)")
	runClient(t, dir, node, "client.js")
}

// TestPythonClient runs the Python package ksql-python-ng against the API,
// with the interpreter $SLUICE_PYTHON, else the virtualenv .ci/run makes,
// else python3.
func TestPythonClient(t *testing.T) {
	var python string
	for _, p := range []string{os.Getenv("SLUICE_PYTHON"), "/tmp/sluice-rest-venv/bin/python", "python3"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import ksql, h2").Run() == nil {
			python = path
			break
		}
	}
	need(t, python != "", "a Python with the ksql-python-ng package (pip install -r server/rest/interop/python/requirements.txt)")
	dir, _ := filepath.Abs(filepath.Join("interop", "python"))
	runClient(t, dir, python, "client.py")
}

// TestKsqldbClient runs the PyPI package ksqldb (1.0.1) against the API,
// with the interpreter TestPythonClient uses.
func TestKsqldbClient(t *testing.T) {
	var python string
	for _, p := range []string{os.Getenv("SLUICE_PYTHON"), "/tmp/sluice-rest-venv/bin/python", "python3"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import ksqldb").Run() == nil {
			python = path
			break
		}
	}
	need(t, python != "", "a Python with the ksqldb package (pip install -r server/rest/interop/python/requirements.txt)")
	dir, _ := filepath.Abs(filepath.Join("interop", "python"))
	runClient(t, dir, python, "ksqldb_client.py")
}
